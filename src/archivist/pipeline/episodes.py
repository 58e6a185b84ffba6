"""Episodes: what was said, kept beside what was extracted (seed 004's evidence view). Pure.

Extraction keeps a few facts from a conversation; everything else a person said — and
everything the assistant said — would be gone. An episode keeps one turn that passed
the message filter as it was said: who said it (role and name), when (the message's own
time, else the session's), the thread, and the text, with what the turn needs to be
found later (the turn it answers, what its pronouns point to — the same context a fact
citing it gets, :mod:`archivist.index.conversation`). Episodes are recalled beside facts
and shown only as attributed, dated excerpts tagged as external data, never as memory
the model should follow.

What is never kept as said:

* a secret: the sentence holding it is replaced by ``[redacted: <kind>]`` (the gate's
  secret detector decides); when the secret only shows across sentences, the whole turn
  is redacted; words of a redacted sentence that look like the secret are redacted
  where a later turn repeats them;
* a grant, a standing order or text aimed at the model's instructions — alone, or read
  together with the turn before it — and a turn in a language the gate does not read
  (:mod:`archivist.pipeline.language`): the turn is not kept at all (``skipped`` says
  which and why), so no recall can bring it back.

A long turn becomes several episodes of at most :data:`MAX_EPISODE_CHARS` characters, each
saying which part it is. The id of an episode is derived from the scope, the thread, the
message id and the part, so the same message delivered twice is one episode.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import (
    content_hash,
    sanitize,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Identity,
    Kind,
    Provenance,
    SourceType,
    Status,
)
from .filtering import Row
from .governance import Rejection, screen
from .language import language_of, readable, simplified
from .recognise import doubt
from .secrets import find_secret

MAX_EPISODE_CHARS = 4000  # one episode's text; a longer turn is kept in parts
EXTRACTOR = "episode"

# a sentence ends at CJK end punctuation, a newline, or . ! ? ; followed by a space
# ("Qw3rty!Zx9Lm" is one word, not two sentences)
_SENTENCE_END = re.compile(r"(?<=[。！？；\n])|(?<=[.!?;])\s+")
_TOKEN = re.compile(r"\S{6,}")
_EDGES = ".,;:!?()[]{}\"'“”‘’，。：；！？"  # punctuation around a word, not part of it
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """What is kept of a turn's text: no control or invisible characters (tab and newline
    stay), a lone surrogate (not text) as U+FFFD."""
    return sanitize(_SURROGATE.sub("\ufffd", text))


@dataclass(frozen=True, slots=True)
class EpisodePolicy:
    """Whether episodes are kept, and for how long (``ttl``: from when they are stored;
    ``None`` keeps them until forgotten)."""

    enabled: bool = True
    ttl: timedelta | None = None


def episode_id(identity: Identity, thread_id: str | None, message_id: str, part: int) -> str:
    """Stable: one message of one thread of one scope is one episode (per part)."""
    key = json.dumps([identity.tenant, identity.user, identity.agent, identity.project, thread_id, message_id, part])
    return "ep-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def redact_secrets(text: str) -> tuple[str, list[str]]:
    """``text`` with every sentence that holds a secret replaced by ``[redacted: kind]``
    (the whole text when a secret only shows across sentences), and the words those
    sentences held that could be the secret itself — repeated later without the word
    that names it ("Got it: Hx7pL2q9Wz8k"), they are redacted there too."""
    if find_secret(text) is None:
        return text, []
    parts = [p for p in _SENTENCE_END.split(text) if p]
    out, removed = [], []
    for part in parts:
        kind = find_secret(part)
        if kind:
            out.append(f"[redacted: {kind}]")
            removed += [t.strip(_EDGES) for t in _TOKEN.findall(part) if _looks_secret(t)]
        else:
            out.append(part)
    joined = " ".join(out)
    kind = find_secret(joined)
    if kind:
        return f"[redacted: {kind}]", removed + [t for t in _TOKEN.findall(text) if _looks_secret(t)]
    return joined, removed


def _looks_secret(token: str) -> bool:
    """A token that could be a password or key: letters and digits mixed, or symbols among them."""
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    return (has_digit and has_alpha) or (has_digit and len(token) >= 6 and not token.isdigit()) or \
        (has_alpha and any(not c.isalnum() for c in token.strip(".,;:!?")) and any(c.isupper() for c in token))


_PART = "(part "


def part_label(context: str | None) -> str | None:
    """The line of an episode's context that says which part of a long message it is."""
    last = (context or "").rsplit("\n", 1)[-1]
    return last if last.startswith(_PART) and last.endswith("-character message)") else None


def _parts(text: str) -> list[str]:
    if len(text) <= MAX_EPISODE_CHARS:
        return [text]
    return [text[i:i + MAX_EPISODE_CHARS] for i in range(0, len(text), MAX_EPISODE_CHARS)]


def screen_turn(text: str, *, detect_grants: bool = True,
                passed: bool = False) -> tuple[str | None, Rejection | None, list[str]]:
    """(text to keep, why not kept, words redacted as possible secrets): a turn in a
    language the gate cannot read is not kept; secrets are redacted; grants and
    injections are not kept. Traditional Chinese is read in its Simplified form too.
    ``passed``: the content policy already let ``text`` itself through."""
    if not readable(text):
        return None, Rejection("unreadable_language", f"written in a language the gate does not read "
                                                       f"({language_of(text)}); not kept as said"), []
    forms = [t for t in dict.fromkeys((text, simplified(text))) if not (passed and t == text)]
    problem = next((p for p in (screen(t, detect_grants=detect_grants) for t in forms) if p), None)
    unsure = doubt(text, addressed_ok=True, requests_ok=True, orders_ok=not detect_grants) if problem is None else None
    if unsure:  # a standing order, a disguised turn, one in another language: not kept as said
        return None, Rejection(*unsure), []
    if problem is None:
        return text, None, []
    if problem.code != "secret":
        return None, problem, []
    kept, removed = redact_secrets(text)
    if kept == text:  # found only in the simplified form: the sentence cannot be located, keep none of it
        kept, removed = f"[redacted: {problem.detail or 'secret'}]", [t for t in _TOKEN.findall(text) if _looks_secret(t)]
    again = next((p for p in (screen(t, detect_grants=detect_grants) for t in dict.fromkeys((kept, simplified(kept))))
                  if p), None)
    if again is None:
        return kept, None, removed
    if again.code == "secret":
        return f"[redacted: {again.detail or 'secret'}]", None, removed
    return None, again, removed


def build_episodes(
    rows: Sequence[Row],
    identity: Identity,
    *,
    thread_id: str | None,
    now: datetime,
    contexts: dict[str, str] | None = None,
    policy: EpisodePolicy = EpisodePolicy(),
    detect_grants: bool = True,
    verdicts: dict[str, Rejection | None] | None = None,
    passed: frozenset[str] = frozenset(),
    known_secrets: frozenset[str] = frozenset(),
) -> tuple[list[Fact], list[tuple[str, Rejection]], list[str]]:
    """Episodes of the filtered ``rows`` (in order) and the turns not kept, with why.
    ``contexts`` maps a message id to its retrieval context; ``verdicts`` may say in
    advance that a turn is not kept (the gate refused what it says, or the content policy
    refused it together with the turn before it); ``passed`` names the turns the content
    policy already let through as they are; ``known_secrets`` holds the hashes
    (:func:`~archivist.model.content_hash`) of words redacted from earlier turns, redacted
    here too. Also returns the words redacted as possible secrets now (to remember by hash)."""
    if not policy.enabled:
        return [], [], []
    contexts = contexts or {}
    verdicts = verdicts or {}
    kept: list[tuple[Row, str]] = []
    skipped: list[tuple[str, Rejection]] = []
    secrets: list[str] = []  # words redacted as possible secrets: redacted wherever they are repeated
    for row in rows:
        verdict = verdicts.get(row.id)
        if verdict is not None:
            skipped.append((row.id, verdict))
            continue
        if _SURROGATE.search(row.id) or (row.speaker and _SURROGATE.search(row.speaker)):
            skipped.append((row.id, Rejection("invalid_message", "the message id or name is not valid text")))
            continue
        content = clean_text(row.content)
        text, problem, removed = screen_turn(content, detect_grants=detect_grants,
                                             passed=row.id in passed and content == row.content)
        secrets += [t for t in removed if t]
        if problem is not None or not text:
            skipped.append((row.id, problem or Rejection("empty", "nothing left to keep")))
            continue
        kept.append((row, text))
    episodes: list[Fact] = []
    until = now + policy.ttl if policy.ttl is not None else None
    for row, text in kept:
        for secret in secrets:
            text = text.replace(secret, "[redacted: repeated secret]")
        if known_secrets:
            for token in {t.strip(_EDGES) for t in _TOKEN.findall(text)}:
                if content_hash(token) in known_secrets:
                    text = text.replace(token, "[redacted: repeated secret]")
        parts = _parts(text)
        said = row.at or now
        for n, part in enumerate(parts):
            context = contexts.get(row.id)
            if len(parts) > 1:
                label = f"{_PART}{n + 1} of {len(parts)} of a {len(text):,}-character message)"
                context = f"{context}\n{label}" if context else label
            episodes.append(Fact(
                id=episode_id(identity, thread_id, row.id, n), identity=identity, content=part,
                category=Category.CONTEXT, kind=Kind.FACT, scope=FactScope.THREAD, durability=Durability.DURABLE,
                authority=Authority.DESCRIPTIVE, confidence=1.0, status=Status.EPISODE,
                provenance=Provenance(SourceType.USER_MESSAGE if row.role == "user" else SourceType.ASSISTANT_MESSAGE,
                                      thread_id, row.id, None, EXTRACTOR, None),
                created_at=said, updated_at=now, last_confirmed_at=said, valid_until=until, context=context,
                valid_from=said, recorded_at=now, role=row.role, speaker=row.speaker,
            ))
    return episodes, skipped, secrets


__all__ = ["EXTRACTOR", "MAX_EPISODE_CHARS", "EpisodePolicy", "build_episodes", "episode_id", "part_label",
           "redact_secrets",
           "screen_turn"]

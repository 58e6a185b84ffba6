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
  is redacted;
* a grant, a standing order or text aimed at the model's instructions: the turn is not
  kept at all (``skipped`` says which and why) — so no recall can bring it back.

A long turn becomes several episodes of at most :data:`MAX_EPISODE_CHARS` characters, each
saying which part it is. The id of an episode is derived from the scope, the thread, the
message id and the part, so the same message delivered twice is one episode.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import (
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
from .secrets import find_secret

MAX_EPISODE_CHARS = 4000  # one episode's text; a longer turn is kept in parts
EXTRACTOR = "episode"

_SENTENCE = re.compile(r"[^。！？!?；;\n]*(?:[。！？!?；;\n]+|$)|[^.]*(?:\.\s+|$)")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")


@dataclass(frozen=True, slots=True)
class EpisodePolicy:
    """Whether episodes are kept, and for how long (``ttl``: from when they are stored;
    ``None`` keeps them until forgotten)."""

    enabled: bool = True
    ttl: timedelta | None = None


def episode_id(identity: Identity, thread_id: str | None, message_id: str, part: int) -> str:
    """Stable: one message of one thread of one scope is one episode (per part)."""
    key = "\x1f".join((identity.tenant, identity.user, identity.agent, identity.project or "", thread_id or "",
                       message_id, str(part)))
    return "ep-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def redact_secrets(text: str) -> str:
    """``text`` with every sentence that holds a secret replaced by ``[redacted: kind]``;
    the whole text is replaced when a secret only shows across sentences."""
    if find_secret(text) is None:
        return text
    parts = [p for p in _SENTENCE_END.split(text) if p]
    out = []
    for part in parts:
        kind = find_secret(part)
        out.append(f"[redacted: {kind}]" if kind else part)
    joined = " ".join(out) if not any("\n" in p for p in parts) else "\n".join(out)
    kind = find_secret(joined)
    return f"[redacted: {kind}]" if kind else joined


def _parts(text: str) -> list[str]:
    if len(text) <= MAX_EPISODE_CHARS:
        return [text]
    return [text[i:i + MAX_EPISODE_CHARS] for i in range(0, len(text), MAX_EPISODE_CHARS)]


def screen_turn(text: str, *, detect_grants: bool = True) -> tuple[str | None, Rejection | None]:
    """(text to keep, why not kept): secrets redacted, grants and injections not kept."""
    problem = screen(text, detect_grants=detect_grants)
    if problem is None:
        return text, None
    if problem.code == "secret":
        kept = redact_secrets(text)
        problem = screen(kept, detect_grants=detect_grants)
        if problem is None or problem.code == "secret":
            return (kept if problem is None else f"[redacted: {problem.detail or 'secret'}]"), None
    return None, problem


def build_episodes(
    rows: Sequence[Row],
    identity: Identity,
    *,
    thread_id: str | None,
    now: datetime,
    contexts: dict[str, str] | None = None,
    policy: EpisodePolicy = EpisodePolicy(),
    detect_grants: bool = True,
    screened: Callable[[Row], tuple[str | None, Rejection | None]] | None = None,
) -> tuple[list[Fact], list[tuple[str, Rejection]]]:
    """Episodes of the filtered ``rows`` (in order) and the turns not kept, with why.
    ``contexts`` maps a message id to its retrieval context."""
    if not policy.enabled:
        return [], []
    contexts = contexts or {}
    episodes: list[Fact] = []
    skipped: list[tuple[str, Rejection]] = []
    until = now + policy.ttl if policy.ttl is not None else None
    for row in rows:
        text, problem = screened(row) if screened else screen_turn(row.content, detect_grants=detect_grants)
        if problem is not None or not text:
            skipped.append((row.id, problem or Rejection("empty", "nothing left to keep")))
            continue
        parts = _parts(text)
        said = row.at or now
        for n, part in enumerate(parts):
            context = contexts.get(row.id)
            if len(parts) > 1:
                label = f"part {n + 1} of {len(parts)} of a {len(text):,}-character message"
                context = f"{context}\n({label})" if context else f"({label})"
            episodes.append(Fact(
                id=episode_id(identity, thread_id, row.id, n), identity=identity, content=part,
                category=Category.CONTEXT, kind=Kind.FACT, scope=FactScope.THREAD, durability=Durability.DURABLE,
                authority=Authority.DESCRIPTIVE, confidence=1.0, status=Status.EPISODE,
                provenance=Provenance(SourceType.USER_MESSAGE if row.role == "user" else SourceType.ASSISTANT_MESSAGE,
                                      thread_id, row.id, None, EXTRACTOR, None),
                created_at=said, updated_at=now, last_confirmed_at=said, valid_until=until, context=context,
                valid_from=said, recorded_at=now, role=row.role, speaker=row.speaker,
            ))
    return episodes, skipped


__all__ = ["EXTRACTOR", "MAX_EPISODE_CHARS", "EpisodePolicy", "build_episodes", "episode_id", "redact_secrets",
           "screen_turn"]

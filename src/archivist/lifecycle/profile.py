"""The profile as a projection of live facts (seed 000 §6). Pure but for :func:`read_profile`
and :func:`settle_stored`, which read (and write) through the store they are given.

A profile section is a list of sentences, and each sentence cites the facts it states.
A sentence lasts as long as every fact it cites is live: when a fact is superseded,
expires, is archived, retired by a correction or forgotten, the sentences citing it go
in the same unit of work (:func:`settle`), and a forgotten fact's sentences leave no
byte behind (:func:`without`). Of two sentences that contradict each other ("喜欢喝咖啡"
/ "不喜欢喝咖啡"), only the one resting on the newer fact stays, so a section never
holds two values at once.

Where a sentence's facts come from:

* the offline extractor writes a section as its facts' own sentences — each cites the
  fact it is;
* an LLM writes a section in its own words — each clause of each sentence must share
  most of its meaning words with a live fact, and the sentence cites those facts; a
  sentence with a clause no live fact backs is left out (:func:`cite_sentences`);
* the trusted application (``update_profile``) writes sentences that cite nothing and
  rest on the application's word alone; they stay until it rewrites the section, and
  forgetting a fact still takes out any such sentence that repeats it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from ..index.text import query_terms
from ..model import Fact, Identity, Profile, ProfileSection, ProfileSentence, Status
from ..model.folding import normalize
from ..pipeline.contradictions import contradicts

MAX_SECTION_CHARS = 600  # a section is a summary: past this, its oldest sentences make room
_SENTENCE = re.compile(r"[^。.!！?？；;\n]+(?:[。.!！?？；;]+|$)")
_USER_WORDS = re.compile(r"^\s*(?:the user(?:'s)?|user|用户|该用户)\s*", re.I)


def split_sentences(text: str) -> list[str]:
    """The sentences of a summary, each with its end mark ("3.5 years" stays whole)."""
    protected = re.sub(r"(?<=\d)\.(?=\d)", "\0", text)
    return [s.strip().replace("\0", ".") for s in _SENTENCE.findall(protected) if s.strip(" \0")]


def _meaning(text: str) -> set[str]:
    return set(query_terms(_USER_WORDS.sub("", text)))


def states(sentence: str, fact: Fact) -> bool:
    """Whether ``sentence`` (or a clause of one) states ``fact``: it is the fact's
    sentence, contains it, or shares most of the meaning words of the fact or of itself
    (the user words "用户", "the user" aside)."""
    said, own = normalize(sentence), normalize(fact.content)
    if own and (said == own or own.rstrip("。.") in said):
        return True
    words, theirs = _meaning(fact.content), _meaning(sentence)
    shared = len(words & theirs)
    if not words or not theirs or shared < min(2, len(words), len(theirs)):
        return False
    return shared * 2 >= len(words) or shared * 2 >= len(theirs)


_CLAUSE = re.compile(r"\s*[，,;；]\s*(?:and\s+|but\s+|以及|并且|而且|并)?")


def cite_sentences(summary: str, facts: Sequence[Fact]) -> tuple[list[ProfileSentence], list[str]]:
    """The sentences of ``summary`` with the live ``facts`` each states, and the sentences
    left out: every clause of a sentence must state a fact ("用户住在上海，是一位素食主义者"
    needs a fact for each half), else no fact backs what the sentence says."""
    cited, unbacked = [], []
    for sentence in split_sentences(summary):
        clauses = [c for c in _CLAUSE.split(sentence.rstrip("。.!！?？")) if _meaning(c)] or [sentence]
        found: list[str] = []
        for clause in clauses:
            ids = [f.id for f in facts if states(clause, f)]
            if not ids:
                unbacked.append(sentence)
                break
            found += ids
        else:
            cited.append(ProfileSentence(sentence, tuple(dict.fromkeys(found))))
    return cited, unbacked


def section(name: str, sentences: Sequence[ProfileSentence], now: datetime,
            source_message_ids: Sequence[str] = ()) -> ProfileSection:
    """A section of ``sentences`` (repeats dropped, oldest first out past the size limit)."""
    kept: dict[str, ProfileSentence] = {}
    for s in sentences:
        key = normalize(s.text)
        prior = kept.pop(key, None)
        kept[key] = ProfileSentence(s.text, tuple(dict.fromkeys((*(prior.facts if prior else ()), *s.facts))))
    items = list(kept.values())
    while len(" ".join(s.text for s in items)) > MAX_SECTION_CHARS and len(items) > 1:
        items.pop(0)
    return ProfileSection(name, " ".join(s.text for s in items), now, tuple(dict.fromkeys(source_message_ids)),
                          tuple(items))


def written(old: ProfileSection | None, name: str, summary: str, now: datetime, *,
            cited: Sequence[ProfileSentence] | None, source_message_ids: Sequence[str] = ()) -> ProfileSection:
    """A section after an update: ``cited`` are the new summary's sentences with their
    facts (``None``: an application's summary, which cites nothing and replaces the
    section). An update that cites facts replaces the sentences citing the same facts
    and keeps the section's others — the offline extractor adds one fact at a time."""
    if cited is None:  # the application's words, as written
        return ProfileSection(name, summary, now, tuple(dict.fromkeys(source_message_ids)),
                              tuple(ProfileSentence(s) for s in split_sentences(summary)))
    new_facts = {i for s in cited for i in s.facts}
    new_text = {normalize(s.text) for s in cited}
    kept = [s for s in (old.sentences if old else ()) if s.facts and not (set(s.facts) & new_facts)
            and normalize(s.text) not in new_text and not any(contradicts(s.text, n.text) for n in cited)]
    ids = (*(old.source_message_ids if old and kept else ()), *source_message_ids)
    return section(name, [*kept, *cited], now, ids)


def settle(current: ProfileSection, lookup: Callable[[str], Fact | None], now: datetime) -> ProfileSection:
    """``current`` with only the sentences whose facts are all live at ``now`` and, of two
    contradicting sentences, only the newer one. ``lookup`` finds a fact by id; a fact it
    cannot find (another agent's) is left as it is — forgetting removes those by name."""
    facts: dict[str, Fact | None] = {i: lookup(i) for i in current.cited}

    def live(s: ProfileSentence) -> bool:
        found = [facts[i] for i in s.facts]
        return all(f is None or (f.status is Status.COMMITTED and not f.is_expired(now)) for f in found)

    def when(s: ProfileSentence) -> datetime:
        times = [f.valid_from or f.created_at for i in s.facts if (f := facts.get(i)) is not None]
        return max(times) if times else current.updated_at

    kept = [s for s in current.sentences if live(s)]
    kept = [s for s in kept if not any(o is not s and contradicts(s.text, o.text) and when(o) > when(s)
                                         for o in kept)]
    if len(kept) == len(current.sentences):
        return current
    return section(current.name, kept, now, current.source_message_ids)


def without(current: ProfileSection, gone: Collection[str], facts: Sequence[Fact], now: datetime) -> ProfileSection:
    """``current`` without the sentences citing the forgotten facts ``gone`` and without
    any sentence — cited or the application's — that states one of ``facts``; a legacy
    summary with no sentences loses the facts' text."""
    if not current.sentences:
        summary = current.summary
        for f in facts:
            summary = summary.replace(f.content, "")
        if summary == current.summary:
            return current
        return written(None, current.name, summary, now, cited=None, source_message_ids=current.source_message_ids)
    kept = [s for s in current.sentences if not (set(s.facts) & set(gone)) and not any(states(s.text, f)
                                                                                       for f in facts)]
    if len(kept) == len(current.sentences):
        return current
    messages = {f.provenance.message_id for f in facts}
    return section(current.name, kept, now, [m for m in current.source_message_ids if m not in messages])


def _lookup(store: Store, identity: Identity) -> Callable[[str], Fact | None]:
    found: dict[str, Fact | None] = {}

    def lookup(fact_id: str) -> Fact | None:
        if fact_id not in found:
            found[fact_id] = store.get_fact(identity, fact_id)
        return found[fact_id]

    return lookup


def read_profile(store: Store, identity: Identity, now: datetime) -> Profile:
    """The profile as every reader sees it: the stored sections, settled against the
    facts as they are at ``now`` (a fact that expired since the last write is not
    stated), without the sentences of facts in an open conflict — the fact list shows
    those, marked disputed, until the review queue settles them."""
    lookup = _lookup(store, identity)
    disputed = {i for item in store.review_items(identity) if item["kind"] == "conflict" for i in item["fact_ids"]}
    sections = {}
    for name, stored in store.get_profile(identity).sections.items():
        current = settle(stored, lookup, now)
        if disputed & current.cited:
            current = section(name, [s for s in current.sentences if not disputed & set(s.facts)], current.updated_at,
                              current.source_message_ids)
        if current.summary.strip():  # a section whose sentences all went says nothing
            sections[name] = current
    return Profile(sections)


def settle_stored(writer: Writer) -> None:
    """Store the settled profile in ``writer``'s unit of work: the sentences whose facts
    the unit superseded, retired or expired go before it commits."""
    lookup = _lookup(writer.store, writer.identity)
    for section in writer.store.get_profile(writer.identity).sections.values():
        if section.sentences and (settled := settle(section, lookup, writer.now)) is not section:
            writer.profile(settled)


__all__ = ["MAX_SECTION_CHARS", "cite_sentences", "read_profile", "section", "settle",
           "settle_stored", "split_sentences", "states", "without", "written"]

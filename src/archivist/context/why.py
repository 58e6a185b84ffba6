"""``trace why``: one line saying why something was or was not in a model call's view.

The answer comes from the stored trace alone (plus, for a fact id the trace never
mentions, the fact's own text): *selected*, *dropped for budget*, *filtered because …*,
or *not retrieved*. Pure but for that one read.
"""

from __future__ import annotations

from typing import Any

from ..model import Identity

_REASONS = {
    "expired": "it had expired",
    "unconfirmed": "it is an unconfirmed candidate",
    "low_confidence": "its confidence is below the threshold",
    "beyond_k": "it ranked below the memory items a call takes",
    "other_user": "it belongs to another user or agent",
    "untrusted": "it came from external material",
    "overridden": "the current request overrides it",
    "duplicate": "the same text was already a candidate",
    "not_found": "it was asked for by id and does not exist for this user",
    "source_failed": "its source failed",
}
MIN_ID_SUFFIX = 8
_CONVERSATION = frozenset({"system", "tools", "request", "goal", "history", "this_run", "turn_input",
                           "unfinished_tool_calls", "required_evidence"})


def _matches(entry: dict[str, Any], subject: str) -> bool:
    eid = str(entry.get("id", ""))
    if subject == eid or (len(subject) >= MIN_ID_SUFFIX and eid.endswith(subject)):
        return True
    excerpt = str(entry.get("excerpt") or "")
    return bool(excerpt) and subject.casefold() in excerpt.casefold()


def _label(entry: dict[str, Any]) -> str:
    what = f"{entry['section']} {entry['id']}"
    if entry.get("excerpt"):
        what += f" “{entry['excerpt']}”"
    return what


def _answer(entry: dict[str, Any]) -> str:
    reason, detail = entry["reason"], entry.get("detail")
    if entry["selected"]:
        kind = "selected (protected)" if reason == "protected" else "selected"
        extra = f"; {detail}" if detail else ""
        return f"{kind}: {_label(entry)} was in the view ({entry['tokens']} tokens{extra})"
    if reason in ("budget", "lower_priority"):
        why = ("higher-priority sections used the room first" if reason == "lower_priority"
               else "it did not fit in the room left")
        return f"dropped for budget: {_label(entry)} needed {entry['tokens']} tokens and {why}" + \
            (f" ({detail})" if detail else "")
    text = _REASONS.get(reason, reason)
    return f"filtered because {text}: {_label(entry)}" + (f" ({detail})" if detail else "")


def explain(trace: dict[str, Any], subject: str, *, facts: Any = None, identity: Identity | None = None) -> str:
    """Why ``subject`` — an item id (or a unique suffix of at least 8 characters), or
    words from its text — was or was not in the view of ``trace``."""
    subject = " ".join(str(subject).split())
    if not subject:
        return "nothing to explain: give an id or some words of the text"
    found = [e for e in trace.get("entries", []) if _matches(e, subject)]
    if found:
        # an id named exactly first; then what memory and context offered before the
        # conversation's own parts (the request quoting the words is rarely the question)
        found.sort(key=lambda e: (str(e.get("id")) != subject, e["section"] in _CONVERSATION, not e["selected"],
                                  e["reason"] not in ("budget", "lower_priority")))
        more = f" (and {len(found) - 1} more matching entries)" if len(found) > 1 else ""
        return _answer(found[0]) + more
    query = trace.get("query", "")
    if facts is not None and identity is not None:
        fact = facts.get_fact(identity, subject)
        if fact is not None:
            return (f"not retrieved: fact {fact.id} “{fact.content[:80]}” ({fact.status.value}) was not among "
                    f"the candidates the search found for “{query[:80]}”")
    return f"not retrieved: no candidate of this call matches “{subject[:80]}” (the request was “{query[:80]}”)"

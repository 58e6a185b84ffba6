"""The write gate (seed 000 §3, seed 004 §3): one pure decision per candidate.

A candidate goes through, in order — the first failing check decides, and every
decision carries a typed :class:`Rejection` (code, reason, detail) that the audit keeps:

1. shape: labels present and valid, confidence finite in [0, 1], content non-empty,
   not oversized, valid Unicode (``invalid_*``); control and invisible characters are
   removed from stored text, never a reason to lose a fact;
2. screening, on NFKC-folded text of the content and the quote: secrets and sensitive
   identifiers (``secret``), grants, waivers and standing action orders addressed to the
   assistant, whatever the label says (``transactional``), text aimed at the model's
   instructions (``prompt_injection``);
3. reach: statements about "this repo / 这个项目" are project facts, stored under the
   scope's project (``scope_project`` when the scope has none); ``scope=thread``
   (``scope_thread``) and ``durability=temporary`` (``temporary``) stay out;
4. confidence ≥ threshold (``low_confidence``);
5. source: tool or document content never becomes a fact about the user
   (``tool_preference``);
6. evidence: the cited message is a user message of the filtered turn, the quote occurs
   in it (whitespace ignored) as the user's own statement — not a question,
   hypothetical, pasted material or someone else's words — and it supports the content
   (``evidence_*``); a request for this turn only is not a standing wish (``one_off``);
   a fix of the task at hand stays in the thread (``scope_thread``);
7. keys: a single-valued attribute (see :mod:`archivist.model.attributes`) gets its key;
8. kind: ``inference`` and ``heuristic`` are kept as candidates, never injected,
   until the user confirms them.

:func:`compare` then settles a passing candidate against the facts the caller looked
up: a keyed value that differs supersedes (equal only when the folded content is
equal), a correction or change of state supersedes the live value of its attribute
group, and a near-identical unkeyed statement is a duplicate.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..clock import ensure_utc, parse_time
from ..errors import InvalidCandidate
from ..index.signatures import meaning, signatures_of, text_form
from ..index.text import indexed_text, segment_for_index
from ..model import (
    PROFILE_SECTIONS,
    Authority,
    Category,
    Durability,
    Fact,
    FactScope,
    Kind,
    SourceType,
    Status,
    compact,
    content_hash,
    normalize,
    sanitize,
)
from ..model.attributes import infer_key
from ..model.memo import Memo, memo
from ..model.screening import screening_form, windows
from .batch_reading import read_all
from .filtering import FilterResult
from .grants import find_grant
from .injection import find_injection
from .recognise import doubt, doubt_verdict, order_part
from .secrets import find_secret
from .statements import (
    is_attributed,
    is_hypothetical,
    is_one_off,
    is_question,
    is_quoted_material,
    is_sarcastic,
    is_task_fix,
    locate,
    names_project,
    sentence_of,
)
from .support import unsupported


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a write was refused: a machine ``code``, a human ``reason`` and an optional
    ``detail`` (for a secret, its kind; never the refused text)."""

    code: str
    reason: str
    detail: str | None = None

    def __str__(self) -> str:
        return f"{self.code}: {self.reason}"

    @classmethod
    def of(cls, exc: InvalidCandidate) -> Rejection:
        code, _, reason = exc.reason.partition(": ")
        return cls(code, reason or exc.reason)


# Codes whose text is never kept anywhere, not even in the audit trail: hash only. Words
# refused because the user had them forgotten are not written back by the refusal.
UNKEPT = frozenset({"transactional", "secret", "forgotten"})


@dataclass(frozen=True, slots=True)
class GovernanceConfig:
    confidence_threshold: float = 0.7
    max_content_chars: int = 1000
    max_key_chars: int = 80
    detect_grants: bool = True
    infer_keys: bool = True  # single-valued attributes get their key (model.attributes)
    detect_projects: bool = True  # "this repo / 这个项目" statements are project facts


@dataclass(frozen=True, slots=True)
class Candidate:
    """A validated fact candidate (seed 000's FactCandidate plus ``kind``)."""

    content: str
    category: Category
    scope: FactScope
    durability: Durability
    authority: Authority
    confidence: float
    key: str | None = None
    kind: Kind = Kind.FACT
    evidence_message_id: str | None = None
    evidence_text: str | None = None
    valid_until: datetime | None = None
    source_type: SourceType = SourceType.USER_MESSAGE
    context: str | None = None
    explicit: bool = False  # the user asked for it to be remembered ("记住…", "remember that…")

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


class Action(StrEnum):
    SAVE = "save"  # a new committed fact
    SUPERSEDE = "supersede"  # a new version of a keyed fact
    CANDIDATE = "candidate"  # kept, but not committed (inference / heuristic)
    DUPLICATE = "duplicate"  # already known: nothing written, confidence unchanged
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    code: str
    reason: str
    candidate: Candidate | None = None
    existing: Fact | None = None  # the fact superseded or duplicated
    retires: tuple[Fact, ...] = ()  # further live facts a correction retires with ``existing``
    detail: str | None = None

    @property
    def accepted(self) -> bool:
        return self.action in (Action.SAVE, Action.SUPERSEDE, Action.CANDIDATE)

    @property
    def rejection(self) -> Rejection:
        return Rejection(self.code, self.reason, self.detail)


def reject(code: str, reason: str, candidate: Candidate | None = None, detail: str | None = None) -> Decision:
    return Decision(Action.REJECT, code, reason, candidate, detail=detail)


# ---------------------------------------------------------------- shape checks


def _as_mapping(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if hasattr(raw, "model_dump"):  # pydantic models from structured output
        return raw.model_dump()
    if hasattr(raw, "__dataclass_fields__"):
        return {name: getattr(raw, name) for name in raw.__dataclass_fields__}
    raise InvalidCandidate(f"invalid_shape: a candidate must be a mapping, got {type(raw).__name__}")


def _enum(data: Mapping[str, Any], name: str, enum: type[StrEnum], default: StrEnum | None = None) -> Any:
    value = data.get(name)
    if value is None:
        if default is not None:
            return default
        raise InvalidCandidate(f"invalid_label: missing {name!r}")
    if isinstance(value, enum):
        return value
    if not isinstance(value, str):
        raise InvalidCandidate(f"invalid_label: {name} must be a string, got {type(value).__name__}")
    try:
        return enum(value.strip().lower())
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise InvalidCandidate(f"invalid_label: {name}={value!r} is not one of {allowed}") from None


def check_text(value: Any, name: str, *, max_chars: int, required: bool = True) -> str | None:
    """A clean, bounded, valid-Unicode string, or an :class:`InvalidCandidate`."""
    if value is None:
        if required:
            raise InvalidCandidate(f"invalid_{name}: missing {name!r}")
        return None
    if not isinstance(value, str):
        raise InvalidCandidate(f"invalid_{name}: {name} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidCandidate(f"invalid_{name}: {name} is not valid Unicode (lone surrogate)") from None
    text = sanitize(value).strip()  # stray control and invisible characters are dropped, not fatal
    if not text:
        if required:
            raise InvalidCandidate(f"invalid_{name}: {name} is empty")
        return None
    # the limit counts the characters given: normalisation may lengthen a text it allowed
    # (NFC writes U+0958 as two code points), and must not turn an allowed text away
    if len(text) > max_chars and len(value) > max_chars:
        raise InvalidCandidate(f"invalid_{name}: {name} has {len(text)} characters, the limit is {max_chars}")
    return text


def check_confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidCandidate(f"invalid_confidence: confidence must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidCandidate(f"invalid_confidence: confidence must be in [0, 1], got {value!r}")
    return float(value)


def _key(value: Any, max_chars: int) -> str | None:
    key = check_text(value, "key", max_chars=max_chars, required=False)
    if key is None:
        return None
    key = key.lower()
    if not all(c.isalnum() or c in "_.:-" for c in key):
        raise InvalidCandidate(f"invalid_key: {key!r} may only hold letters, digits and _ . : -")
    if re.search(r"[0-9a-f]{16,}|\d{8,}", key):  # "twilio:7c1e…", "cn_id:3205…": a value, maybe a secret
        raise InvalidCandidate("invalid_key: a key names an attribute and holds no value (long numbers or hex)")
    return key


def _time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        try:
            return ensure_utc(value) if value else None
        except ValueError:
            raise InvalidCandidate(f"invalid_valid_until: out of range: {value!r}") from None
    if isinstance(value, str):
        try:
            return parse_time(value)
        except ValueError:
            pass
    raise InvalidCandidate(f"invalid_valid_until: not an ISO-8601 time: {value!r}")


CANDIDATE_FIELDS = frozenset({"content", "category", "scope", "durability", "authority", "confidence", "key", "kind",
                              "evidence_message_id", "evidence_text", "valid_until", "explicit"})


def unknown_fields(names: Iterable[Any], known: Collection[str]) -> str | None:
    """What to say of the fields in ``names`` that ``known`` lacks (a misspelt field would
    otherwise be dropped without a word: "valid_untill"), or ``None`` when there are none."""
    unknown = sorted((_shown(n) for n in names if not isinstance(n, str) or n not in known), key=lambda x: x[1])
    if not unknown:
        return None
    said = []
    for text, shown in unknown[:5]:
        close = " or ".join(map(repr, difflib.get_close_matches(text.lower(), sorted(known), n=2, cutoff=0.75)))
        said.append(shown + (f" (did you mean {close}?)" if close else ""))
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    return (f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(said)}{more}; "
            f"known: {', '.join(sorted(known))}")


def _shown(name: Any) -> tuple[str, str]:
    """(a field name as text, as shown): a name that is not a string shows as what it is."""
    if isinstance(name, str):
        return name[:200], repr(name[:40])
    try:
        return "", repr(name)[:40]
    except Exception:  # noqa: BLE001 - a key whose repr fails is still named by its type
        return "", f"<{type(name).__name__}>"


def parse_candidate(
    raw: Any,
    config: GovernanceConfig = GovernanceConfig(),
    *,
    require_evidence: bool = True,
    source_type: SourceType = SourceType.USER_MESSAGE,
) -> Candidate:
    """Validate a raw candidate (dict, pydantic model or dataclass); raises
    :class:`InvalidCandidate` with a ``reason`` that starts with its code."""
    data = _as_mapping(raw)
    content = check_text(data.get("content"), "content", max_chars=config.max_content_chars)
    evidence_id = data.get("evidence_message_id")
    if evidence_id is not None and not isinstance(evidence_id, str):
        raise InvalidCandidate("invalid_evidence: evidence_message_id must be a string")
    evidence_id = check_text(evidence_id, "evidence", max_chars=200, required=False)
    evidence_text = check_text(
        data.get("evidence_text"), "evidence", max_chars=config.max_content_chars * 4, required=False
    )
    if require_evidence and (not evidence_id or not evidence_text):
        raise InvalidCandidate("invalid_evidence: evidence_message_id and evidence_text are required")
    return Candidate(
        content=content,  # type: ignore[arg-type]
        category=_enum(data, "category", Category),
        scope=_enum(data, "scope", FactScope),
        durability=_enum(data, "durability", Durability),
        authority=_enum(data, "authority", Authority),
        confidence=check_confidence(data.get("confidence")),
        key=_key(data.get("key"), config.max_key_chars),
        kind=_enum(data, "kind", Kind, Kind.FACT),
        evidence_message_id=evidence_id,
        evidence_text=evidence_text,
        valid_until=_time(data.get("valid_until")),
        source_type=source_type,
        explicit=_flag(data.get("explicit", False), "explicit"),
    )


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidCandidate(f"invalid_{name}: {name} must be true or false, got {value!r}")
    return value


def forgotten(candidate: Candidate) -> Decision:
    return reject("forgotten", "the user asked to forget this; only an explicit new statement brings it back",
                  candidate)


# ------------------------------------------------------------------ the gate

_ABOUT_THE_USER = frozenset(
    {Category.PREFERENCE, Category.CORRECTION, Category.GOAL, Category.BEHAVIOR, Category.CONTEXT}
)


def screen(text: str, *, detect_grants: bool = True) -> Rejection | None:
    """The content policy, written once and used by every write path (facts, profile,
    preferences, imports, the LangGraph store): secrets, grants and standing orders,
    and text aimed at the model's instructions. Reads the text's screening form; never
    raises. A turn is read by several stages of one write: the verdict is kept per text."""
    if not isinstance(text, str):
        return None
    return _screen(text, detect_grants)


@memo(8192)
def _screen(text: str, detect_grants: bool) -> Rejection | None:
    if not text or not text.strip():
        return None
    try:
        form = screening_form(text)
        seen = {normalize(form.plain)}  # as written (NFKC), then each unmasked view that reads differently
        views = [form.plain] + [v for v in form.views if normalize(v) not in seen and not seen.add(normalize(v))]
        pieces = [piece for view in views for piece in windows(view)]  # bounded pieces: linear in the text
        kind = next((k for piece in pieces if (k := find_secret(piece))), None)
        if kind:
            return Rejection("secret", f"holds a secret or sensitive identifier ({kind}); never stored", kind)
        if any(find_injection(piece) for piece in pieces):
            return Rejection("prompt_injection", "addresses the model's instructions; memory only describes the user")
        if detect_grants and any(find_grant(piece) for piece in pieces):
            return Rejection("transactional", "reads as a grant, waiver or standing order to the assistant; "
                             "never stored as memory")
    except (TypeError, ValueError, RecursionError) as exc:  # hostile text must never break the gate
        return Rejection("invalid_content", f"the text could not be checked ({type(exc).__name__})")
    return None


def gate(
    candidate: Candidate,
    config: GovernanceConfig = GovernanceConfig(),
    evidence: FilterResult | None = None,
    *,
    project: str | None = None,
) -> Decision:
    """The store-independent checks. ``evidence`` is required for user-message sources;
    ``project`` is the scope's project (``None``: the scope has none)."""
    c = candidate
    if c.authority is Authority.TRANSACTIONAL:
        return reject("transactional", "a grant or one-off instruction is never stored as memory", c)
    for text in (c.content, c.evidence_text or "", c.context or "", c.key or ""):
        problem = screen(text, detect_grants=config.detect_grants)
        if problem:
            return reject(problem.code, problem.reason, c, problem.detail)
    if c.scope is not FactScope.THREAD and config.detect_projects and (
            names_project(c.content) or names_project(c.evidence_text or "")):
        c = replace(c, scope=FactScope.PROJECT)
    if c.scope is FactScope.PROJECT and project is None:
        return reject("scope_project", "about a project, but this scope has no project: not stored as a user fact", c)
    if c.scope is FactScope.THREAD:
        return reject("scope_thread", "thread-scoped: it only holds for this conversation", c)
    if c.durability is Durability.TEMPORARY:
        return reject("temporary", "temporary: it will not hold in a later session", c)
    if c.confidence < config.confidence_threshold:
        return reject(
            "low_confidence", f"confidence {c.confidence:.2f} is below the threshold {config.confidence_threshold:.2f}", c
        )
    if c.source_type in (SourceType.TOOL, SourceType.DOCUMENT) and c.category in _ABOUT_THE_USER:
        return reject("tool_preference", f"{c.source_type.value} content never becomes a {c.category.value} of the user", c)
    if c.source_type is SourceType.USER_MESSAGE:
        problem = check_evidence(c, evidence)
        if problem:
            return problem
    if c.key is None and config.infer_keys and c.scope is not FactScope.PROJECT:
        key = infer_key(c.content)
        if key:
            c = replace(c, key=key)
    unsure = doubt_of(c, config)
    if unsure:
        return Decision(Action.CANDIDATE, unsure[0], unsure[1], c)
    if c.kind is not Kind.FACT:
        return Decision(Action.CANDIDATE, c.kind.value, f"{c.kind.value}: kept as a candidate until the user confirms it", c)
    if c.scope is FactScope.PROJECT:
        return Decision(Action.SAVE, "accepted", f"a fact of project {project!r}, with evidence", c)
    return Decision(Action.SAVE, "accepted", "user-scoped, durable, descriptive, with evidence", c)


def doubt_of(c: Candidate, config: GovernanceConfig = GovernanceConfig()) -> tuple[str, str] | None:
    """Why a candidate the checks passed is still not recognised (see
    :mod:`~archivist.pipeline.recognise`): its content (what a model is shown), or the
    user's words it quotes — a request there ("帮我列个流程") is how people talk, but
    one that asks for an action means the content describes an order as a habit."""
    lax = not config.detect_grants  # orders are not looked for (an evaluation's index of every turn)
    return doubt(c.content, addressed_ok=lax, orders_ok=lax) or \
        (doubt(c.evidence_text, addressed_ok=True, orders_ok=lax) if c.evidence_text else None)


def prejudge(candidates: Sequence[Any], config: GovernanceConfig = GovernanceConfig()) -> None:
    """Read each candidate's (or imported fact's) texts before a write transaction opens:
    the verdicts are kept per text, so the gate inside the transaction (which holds the
    store's write lock) does not spend its time reading, nor the keyword index its time
    segmenting. A large batch is read on every core (:mod:`.batch_reading`)."""
    lax = not config.detect_grants
    readings: list[tuple[Memo, tuple]] = []
    for c in candidates:
        if isinstance(c, Fact):
            quote = c.provenance.evidence_text
        elif isinstance(c, Candidate):
            quote = c.evidence_text
        else:
            continue
        readings += [(_screen, (text, config.detect_grants)) for text in (c.content, quote, c.context, c.key) if text]
        readings += [(doubt_verdict, (c.content, lax, lax, False, False)), (signatures_of, (c.content,)),
                     (order_part, (c.content,)), (segment_for_index, (indexed_text(c.content, c.context),))]
        if quote:
            readings.append((doubt_verdict, (quote, True, lax, False, False)))
        if c.key is None and config.infer_keys:
            readings.append((infer_key, (c.content,)))
    read_all(readings)


def held_reason(fact: Fact) -> tuple[str, str] | None:
    """Why a stored fact is held (its content or quote is not recognised), or ``None``."""
    quote = fact.provenance.evidence_text
    return doubt(fact.content) or (doubt(quote, addressed_ok=True) if quote else None)


def withheld(text: str, *, addressed_ok: bool = True, detect_grants: bool = True) -> str:
    """``text`` as it may be shown where there is no unconfirmed state to keep it in (a
    session summary's fields): itself, or ``[withheld: <code>]`` when the content policy
    refuses it or the gate does not recognise it."""
    problem = screen(text, detect_grants=detect_grants)
    code = problem.code if problem else (doubt(text, addressed_ok=addressed_ok, requests_ok=True) or (None,))[0]
    return text if code is None else f"[withheld: {code}]"


def vet_summary(fields: Mapping[str, Any], *, detect_grants: bool = True) -> dict[str, Any]:
    """A session summary's fields with each text the gate would not show withheld (a goal
    may be a request for this session's work; a standing order, or anything refused, is not kept)."""
    out: dict[str, Any] = {}
    joined = "\n".join(v if isinstance(v, str) else "\n".join(v) for v in fields.values()
                       if isinstance(v, str) or (isinstance(v, tuple | list) and all(isinstance(x, str) for x in v)))
    whole = screen(joined, detect_grants=detect_grants)  # a secret or an order split over two fields
    code = whole.code if whole else (doubt(joined, addressed_ok=True, requests_ok=True) or (None,))[0]
    if code is not None:
        return {name: (f"[withheld: {code}]" if isinstance(v, str) and v else
                       tuple(f"[withheld: {code}]" for _ in v) if isinstance(v, tuple | list) else v)
                for name, v in fields.items()}
    for name, value in fields.items():
        if isinstance(value, str):
            out[name] = withheld(value, detect_grants=detect_grants) if value else value
        elif isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
            out[name] = tuple(withheld(v, detect_grants=detect_grants) for v in value)
        else:
            out[name] = value
    return out


def is_held(code: str) -> bool:
    """A write kept as an unconfirmed candidate until the application confirms it."""
    return code.startswith("held_")


def check_evidence(c: Candidate, evidence: FilterResult | None) -> Decision | None:
    """The quote is the user's own statement in the cited message, and it supports the content."""
    if evidence is None:
        return reject("evidence_missing", "no conversation was given to check the evidence against", c)
    row = evidence.by_id().get(c.evidence_message_id or "")
    if row is None:
        why = dict(evidence.dropped).get(c.evidence_message_id or "")
        detail = f"it was filtered out ({why})" if why else "it is not in this conversation"
        return reject("evidence_not_found", f"cited message {c.evidence_message_id!r}: {detail}", c)
    if row.role != "user":
        return reject("evidence_assistant", "the cited message is assistant text, which never proves a user fact", c)
    if len(compact(c.evidence_text or "")) < 2:
        return reject("evidence_too_short", "the quoted evidence is too short to prove anything", c)
    where = locate(row.content, c.evidence_text or "")
    if where is None:
        return reject("evidence_mismatch", "the quoted evidence does not occur in the cited user message", c)
    checks = (
        (is_quoted_material, "evidence_quoted", "the quote is pasted material (a code block, a quotation or a "
                                                "document), not the user's own statement"),
        (is_attributed, "evidence_attributed", "the quote reports what someone else said"),
        (is_question, "evidence_question", "the quote is part of a question, which states nothing"),
        (is_hypothetical, "evidence_hypothetical", "the quote is hypothetical ('if…'), not a statement of fact"),
        (is_sarcastic, "evidence_sarcasm", "the quote is sarcasm or a complaint dressed as praise, not a preference"),
    )
    around = sentence_of(row.content, c.evidence_text or "")  # a quote cut short must not hide what is beside it
    problem = screen(around) if around != (c.evidence_text or "") else None
    if problem:
        return reject(problem.code, problem.reason + " (in the cited sentence)", c, problem.detail)
    for check, code, reason in checks:
        if check(where):
            return reject(code, reason, c)
    why = unsupported(c.content, c.evidence_text or "", context=row.content, inference=c.kind is not Kind.FACT)
    if why:
        return reject("evidence_unsupported", f"the quote does not support the content: {why}", c)
    if c.kind is Kind.FACT and is_one_off(where):
        return reject("one_off", "a request for this turn only, not a standing wish", c)
    if is_task_fix(where):
        return reject("scope_thread", "a fix of the task at hand: it belongs to this conversation, not to memory", c)
    return None


_CHANGE = re.compile(  # strong cues only: "I now work in Shanghai" alone does not say the home moved
    r"不对|错了|搞错|其实|实际上|搬到|搬去|搬家|转行|辞职|离职|跳槽|改成|换成|改用|不再|后来|"
    r"\b(?:actually|no longer|not any ?more|anymore|moved|relocated|switched|changed|left|quit|joined|instead|"
    r"correction)\b"
)


# a change of the user's situation, not only a correction of a word ("actually, a data
# engineer" corrects the role; the employer said with it stands)
_MOVED_ON = re.compile(
    r"搬到|搬去|搬家|转行|辞职|离职|跳槽|不再|后来|"
    r"\b(?:no longer|not any ?more|anymore|moved|relocated|switched|changed|left|quit|joined)\b"
)


def moves_on(candidate: Candidate) -> bool:
    """A change of state that takes the rest of its attribute group with it (a new job:
    the old employer and role both go) — a correction alone does not."""
    return bool(_MOVED_ON.search(normalize(candidate.evidence_text or "")) or _MOVED_ON.search(normalize(candidate.content)))


def is_change(candidate: Candidate) -> bool:
    """A correction or a change of state: it replaces what the user said before."""
    return candidate.category is Category.CORRECTION or bool(
        _CHANGE.search(normalize(candidate.evidence_text or "")) or _CHANGE.search(normalize(candidate.content)))


@dataclass(frozen=True, slots=True)
class Known:
    """What the store holds that a candidate must be compared with (looked up by the writer)."""

    same_key: Fact | None = None  # the live fact holding the candidate's key
    group: Sequence[Fact] = ()  # live facts holding another key of the same attribute group
    similar: Sequence[Fact] = ()  # live facts and candidates with similar words
    same_key_expired: bool = False  # the key's value ran out: anything said now is its next version


def compare(candidate: Candidate, decision: Decision, known: Known) -> Decision:
    """Turn an accepting gate decision into save / supersede / duplicate."""
    if not decision.accepted:
        return decision
    c = decision.candidate or candidate
    same_key = known.same_key
    if same_key is None and c.key:  # a fact stored before its attribute got a key
        same_key = next((f for f in known.similar if f.key is None and f.status is Status.COMMITTED
                         and infer_key(f.content) == c.key), None)
    if same_key is not None:
        if text_form(same_key.content) == text_form(c.content) and not known.same_key_expired:
            return Decision(Action.DUPLICATE, "duplicate", f"already remembered as {same_key.id}; nothing written, "
                            "confidence unchanged", c, same_key)
        if decision.action is Action.SAVE:
            others = tuple(known.group) if moves_on(c) else ()
            guesses = tuple(f for f in known.similar if f.status is Status.CANDIDATE and f.key == c.key
                            and is_near_duplicate(c.content, f.content))  # stated now: no longer to confirm
            return Decision(Action.SUPERSEDE, "supersedes", f"new value of {c.key!r} (replaces {same_key.id}, kept as "
                            "history)", c, same_key, others + guesses)
    elif known.group and decision.action is Action.SAVE and is_change(c):
        newest, *rest = sorted(known.group, key=lambda f: f.created_at, reverse=True)
        return Decision(Action.SUPERSEDE, "supersedes", f"a change of {newest.key!r} to {c.key!r} (replaces "
                        f"{newest.id}, kept as history)", c, newest, tuple(rest))
    same = [f for f in known.similar if (f.key is None or c.key is None or (f.status is Status.CANDIDATE
                                                                          and f.key == c.key))
            and is_near_duplicate(c.content, f.content)]
    kept = next((f for f in same if f.status is not Status.CANDIDATE), None)
    if kept is None and same and decision.action is Action.SAVE:  # said as a fact: it replaces the unconfirmed one
        return Decision(Action.SUPERSEDE, "supersedes", f"states {same[0].id} (unconfirmed) as a fact (replaces it, "
                        "kept as history)", c, same[0])
    if kept or same:
        return Decision(Action.DUPLICATE, "duplicate", f"already remembered as {(kept or same[0]).id}; nothing "
                        "written, confidence unchanged", c, kept or same[0])
    return decision


def is_near_duplicate(a: str, b: str) -> bool:
    """The same statement: the same text spacing and punctuation aside, with the same
    numbers and marks, or the same words in the same order but for articles and particles
    (so "每天早上喝绿茶" and "每天早上都喝绿茶" are one fact, "深色" and "浅色" two, "2.5 mg" and
    "25 mg" two, "Python over Java" and "Java over Python" two): see
    :mod:`archivist.index.signatures`. A missed restatement costs a second card, which
    consolidation can merge; a false one would lose a fact."""
    if text_form(a) == text_form(b):
        return True
    ma, mb = meaning(a), meaning(b)
    return bool(ma[0]) and ma == mb


# ------------------------------------------------------------------ imports


def admit(fact: Fact, config: GovernanceConfig = GovernanceConfig()) -> Fact | Rejection:
    """An imported fact (an archivist export, an edited card, another product's files)
    as it may be stored, or why it may not. The same content policy as every write;
    labels that never enter memory are refused; a committed user fact whose quote is
    missing or does not support it lands as an unconfirmed candidate."""
    try:
        check_text(fact.content, "content", max_chars=config.max_content_chars)
        _key(fact.key, config.max_key_chars)
    except InvalidCandidate as exc:
        return Rejection.of(exc)
    for text in (fact.content, fact.provenance.evidence_text or "", fact.context or "", fact.key or ""):
        problem = screen(text, detect_grants=config.detect_grants)
        if problem:
            return problem
    live = fact.status in (Status.COMMITTED, Status.CANDIDATE)
    if fact.authority is Authority.TRANSACTIONAL:
        return Rejection("transactional", "a grant or one-off instruction is never stored as memory")
    if live and fact.scope is FactScope.THREAD:
        return Rejection("scope_thread", "thread-scoped: it only holds for one conversation")
    if live and fact.durability is Durability.TEMPORARY and fact.valid_until is None:
        return Rejection("temporary", "temporary, with no end of validity")
    if fact.scope is FactScope.PROJECT and fact.identity.project is None:
        return Rejection("scope_project", "a project fact without a project")
    if fact.status is Status.COMMITTED and fact.confidence < config.confidence_threshold:
        return Rejection("low_confidence", f"confidence {fact.confidence:.2f} is below the threshold "
                         f"{config.confidence_threshold:.2f}")
    if fact.provenance.source_type in (SourceType.TOOL, SourceType.DOCUMENT) and fact.category in _ABOUT_THE_USER:
        return Rejection("tool_preference", f"{fact.provenance.source_type.value} content never becomes a "
                         f"{fact.category.value} of the user")
    quote = fact.provenance.evidence_text
    if fact.status is Status.COMMITTED and fact.provenance.source_type is SourceType.USER_MESSAGE and \
            (not quote or unsupported(fact.content, quote)):
        return fact.evolve(status=Status.CANDIDATE, recorded_at=None)
    if fact.status is Status.COMMITTED and held_reason(fact):
        return fact.evolve(status=Status.CANDIDATE, recorded_at=None)  # held: the writer queues it for review
    return fact


# ----------------------------------------------------------- profile updates


@dataclass(frozen=True, slots=True)
class ProfileUpdate:
    section: str
    summary: str
    source_message_ids: tuple[str, ...] = field(default=())


def parse_profile_update(raw: Any, config: GovernanceConfig = GovernanceConfig()) -> ProfileUpdate:
    data = _as_mapping(raw)
    section = data.get("section")
    if section not in PROFILE_SECTIONS:
        raise InvalidCandidate(f"invalid_section: {section!r} is not one of {', '.join(PROFILE_SECTIONS)}")
    summary = check_text(data.get("summary"), "summary", max_chars=config.max_content_chars * 4)
    scope = _enum(data, "scope", FactScope, FactScope.USER)
    authority = _enum(data, "authority", Authority, Authority.DESCRIPTIVE)
    ids = data.get("source_message_ids") or ([data["evidence_message_id"]] if data.get("evidence_message_id") else [])
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) and i for i in ids):
        raise InvalidCandidate("invalid_evidence: source_message_ids must be a list of message ids")
    if scope is not FactScope.USER:
        raise InvalidCandidate(f"scope_{scope.value}: profile updates must be scope=user")
    if authority is not Authority.DESCRIPTIVE:
        raise InvalidCandidate("transactional: a grant never goes into the profile")
    return ProfileUpdate(section, summary, tuple(ids))  # type: ignore[arg-type]


def gate_profile(update: ProfileUpdate, evidence: FilterResult | None, config: GovernanceConfig = GovernanceConfig()) -> tuple[str, str] | None:
    """``None`` when the update may be written, else ``(code, reason)``."""
    problem = screen(update.summary, detect_grants=config.detect_grants)
    if problem:
        return problem.code, problem.reason
    unsure = doubt(update.summary)
    if unsure:  # a profile has no unconfirmed state: the facts it would state wait in the review queue
        return unsure
    if evidence is None:
        return None  # an explicit write by the trusted application
    if not update.source_message_ids:
        return "evidence_missing", "a profile update needs the user messages it rests on"
    rows = evidence.by_id()
    for mid in update.source_message_ids:
        row = rows.get(mid)
        if row is None or row.role != "user":
            return "evidence_not_found", f"source message {mid!r} is not a user message of this conversation"
    return None


def as_status(decision: Decision) -> Status:
    return Status.CANDIDATE if decision.action is Action.CANDIDATE else Status.COMMITTED

"""Instructions in the current request that override a stored preference for this
turn only ("this time answer in English" beats a stored "中文", "show me Python"
beats a stored "use Java examples"). Pure and rule-based; the application may also
pass overrides explicitly.

One table, :data:`OVERRIDES`: each row names the attribute it overrides — a key of
the attribute table (:mod:`archivist.model.attributes`) where the attribute is one
there, so a fact keyed by extraction and a preference set by the application are
overridden alike — plus the preference keys applications commonly use for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..index.text import normalize


@dataclass(frozen=True, slots=True)
class Override:
    keys: tuple[str, ...]  # the preference and attribute keys it overrides
    value: str  # canonical value ("English", "Python", "brief")
    phrase: str  # the words of the request that asked for it
    words: tuple[str, ...] = ()  # ways of writing the value: a stored text naming one agrees with it

    def agrees_with(self, stored: str) -> bool:
        text = stored.casefold()
        return any(w.casefold() in text for w in (self.value, *self.words))


@dataclass(frozen=True, slots=True)
class OverrideRule:
    attribute: str  # the attribute key (in the attribute table, or a preference-only key)
    aliases: tuple[str, ...]  # other preference keys meaning the same thing
    values: dict[str, tuple[str, ...]]  # canonical value -> words naming it (casefolded, normalized text)
    patterns: tuple[str, ...]  # regexes with {v} (the words of any value): a request on their own
    cued: tuple[str, ...] = ()  # regexes that count only after a request word in the same clause


_LANG_VALUES = {
    "English": ("english", "英文", "英语"), "中文": ("chinese", "中文", "汉语", "简体中文", "普通话"),
    "日本語": ("japanese", "日文", "日语", "日本語"), "Français": ("french", "法语", "法文", "français"),
    "Deutsch": ("german", "德语", "德文", "deutsch"), "Español": ("spanish", "西班牙语", "español"),
    "한국어": ("korean", "韩语", "韩文", "한국어"),
}
_CODE_VALUES = {
    "Python": ("python",), "Java": ("java",), "Go": ("golang", "go"), "Rust": ("rust",), "C++": ("c++",),
    "JavaScript": ("javascript", "js"), "TypeScript": ("typescript", "ts"), "Kotlin": ("kotlin",),
    "Swift": ("swift",), "C#": ("c#",), "Ruby": ("ruby",), "PHP": ("php",),
}
_NOT_CODE = r"(?![a-z0-9_+#])"

OVERRIDES: tuple[OverrideRule, ...] = (
    OverrideRule("response_language", ("language", "reply_language"), _LANG_VALUES, (
        r"\b(?:answer|reply|respond|write|explain|speak|talk|say|translate)\b[^.!?。！？]{{0,30}}?\bin ({v})\b",
        r"\bin ({v})\b[^.!?。！？]{{0,20}}?\b(?:please|this time|for now)\b",
        r"(?:用|以|请用|改用|换成)({v})(?:来)?(?:回答|回复|解释|写|说|讲|作答)?",
        r"({v})(?:回答|回复|作答)",
    )),
    OverrideRule("example_language", ("programming_language", "code_language"), _CODE_VALUES, (
        rf"\b({{v}}){_NOT_CODE}\s+(?:examples?|snippets?|version|implementation)\b",
        rf"(?:用|改用|换成|写成)\s?({{v}}){_NOT_CODE}",
        r"({v})\s?(?:的)?(?:示例|例子|代码|版本|实现)",
    ), cued=(
        rf"\b(?:in|using|with)\s+({{v}}){_NOT_CODE}",
        rf"\b({{v}}){_NOT_CODE}\s+code\b",
    )),
    OverrideRule("response_length", ("verbosity", "answer_length", "reply_length"), {
        "brief": ("brief", "short", "concise", "one sentence", "a single sentence", "two sentences", "2 sentences",
                  "three sentences", "3 sentences", "a few sentences", "简短", "简洁", "简要", "一句话"),
        "detailed": ("detailed", "thorough", "in detail", "in depth", "in-depth", "elaborate", "详细", "展开"),
    }, (
        r"(简短|简要|简洁|一句话)", r"(详细|展开)讲?", r"\bkeep it (short|brief|concise)\b",
        r"\b(?:in )?(one sentence|a single sentence|two sentences|2 sentences|three sentences|3 sentences|"
        r"a few sentences)\b",
    ), cued=(
        r"\b(brief|concise)(?:ly)?\b", r"\b(short) (?:answers?|reply|replies|version|summary)\b",
        r"\b(in detail|in depth|in-depth|detailed|thorough)(?:ly)?\b", r"\b(elaborate)\b",
    )),
    OverrideRule("response_format", ("format", "output_format"), {
        "a table": ("table", "表格"),
        "bullet points": ("bullet points", "bullets", "bullet list", "bulleted list", "列表", "要点"),
        "JSON": ("json",), "Markdown": ("markdown",), "plain text": ("plain text", "纯文本"),
    }, (
        r"(?:用|以|做成|整理成|输出成?)({v})",
    ), cued=(
        r"\b(?:as|in)\s+(?:a\s+)?({v})\b",
    )),
    OverrideRule("tone", ("style",), {
        "formal": ("formal", "正式"), "casual": ("casual", "informal", "轻松", "随意", "口语化", "口语"),
    }, (
        r"\b(?:be|keep it|more|use a)\s+({v})\b", r"\b({v}) tone\b", r"(?:更|用)?({v})(?:一点|一些|些|的语气)",
    )),
)

# Guards on the clause before a match: a refusal ("not in Python", "别用英文"), a quotation
# ("what does 'answer in English' mean"), someone else's words ("told me to be brief"),
# the past ("why did it answer in English yesterday") or the user's own answering
# ("should I answer in English on my CV") is not a request to the assistant.
_NEGATED = re.compile(r"(?:\b(?:not|no|never|without|don'?t|do not|doesn'?t|isn'?t|rather than|instead of)\b"
                      r"[^.!?。！？,，]{0,20}|(?:不要|别|不用|不是|而不是)(?:用|以|再用)?)$")
_OPEN_QUOTE = re.compile(r"(?:^|[\s(:：])['\"“‘「『]")
_CLOSE_QUOTE = re.compile(r"['\"”’」』](?:$|[\s.,!?;:)])")
_REPORTED = re.compile(r"\b(?:told|tells?|asked|asks|said|says|wants?|wanted)\s+(?:me|us|him|her|them)?\s*to\b|"
                       r"\b(?:he|she|they|someone|somebody|my \w+|the \w+) (?:said|says|told|wrote|writes)\b|"
                       r"他说|她说|别人说|告诉我要")
_PAST = re.compile(r"\b(?:did|didn'?t|was|were|had|yesterday|last time|earlier|used to)\b|昨天|上次|之前")
_SELF = re.compile(r"\b(?:should|can|could|shall|may|must|do) (?:i|we)\b|\b(?:i|we)\s+(?:\w+\s+){0,2}?"
                   r"(?:answer|reply|respond|write|speak|say)\b")
_YOU = re.compile(r"\byou\b|你|您")
_CUE = re.compile(r"\b(?:show|write|give|rewrite|implement|redo|do|make|code (?:it|this|that)|convert|translate|port|examples?|"
                  r"snippets?|versions?|samples?|solution|answer|explain|reply|respond|demo|demonstrate|format|"
                  r"output|print|send|present|put|list|summari[sz]e|describe|tell|be|keep|please|can you|could you)\b")
_CLAUSE_START = re.compile(r"[.!?;。！？；\n]")


def _clause_before(text: str, start: int) -> str:
    cut = max((m.end() for m in _CLAUSE_START.finditer(text, 0, start)), default=0)
    return text[cut:start]


def _addressed(text: str, m: re.Match[str], cued: bool) -> bool:
    """Whether the match asks the assistant for this, now (see the guards above)."""
    before = _clause_before(text, m.start())
    if _NEGATED.search(text[max(0, m.start() - 30):m.start()]):
        return False
    opened = [q.end() for q in _OPEN_QUOTE.finditer(before)]
    if opened and not _CLOSE_QUOTE.search(before, opened[-1]):
        return False
    if _REPORTED.search(before) or _PAST.search(before):
        return False
    if _SELF.search(before + m.group(0)) and not _YOU.search(before):
        return False
    return not cued or bool(_CUE.search(before + " " + text[m.end():m.end() + 30]))


def _compile(rule: OverrideRule) -> list[tuple[re.Pattern[str], bool]]:
    words = sorted({w for ws in rule.values.values() for w in ws}, key=len, reverse=True)
    alternation = "|".join(re.escape(w) for w in words)
    return [(re.compile(p.format(v=alternation)), False) for p in rule.patterns] + \
        [(re.compile(p.format(v=alternation)), True) for p in rule.cued]


_COMPILED = [(rule, _compile(rule)) for rule in OVERRIDES]
_VALUE_OF = {rule.attribute: {w: canon for canon, ws in rule.values.items() for w in ws} for rule in OVERRIDES}


def keys_of(rule: OverrideRule) -> tuple[str, ...]:
    return (rule.attribute, *rule.aliases)


def detect_overrides(request: str) -> list[Override]:
    """The per-turn overrides the request asks for: at most one per attribute."""
    text = normalize(request)
    found: list[Override] = []
    for rule, patterns in _COMPILED:
        for pattern, cued in patterns:
            m = next((m for m in pattern.finditer(text) if _addressed(text, m, cued)), None)
            value = _VALUE_OF[rule.attribute].get(m.group(1).strip()) if m else None
            if value is not None:
                found.append(Override(keys_of(rule), value, m.group(0).strip(), rule.values[value]))
                break
    return found


def override_keys(key: str) -> tuple[str, ...]:
    """Every key that means the same attribute as ``key`` (for an explicit override)."""
    for rule in OVERRIDES:
        if key in keys_of(rule):
            return keys_of(rule)
    return (key,)


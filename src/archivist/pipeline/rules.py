"""The offline rule extractor (zh + en): what people say about themselves, anywhere in a message.

The default when no model is configured, so for many users it is the whole product.
Per user message it

1. cuts the text into sentences and clauses (。！？；, ". ", "? ", line breaks, "，但是/不过",
   ", but", ", so"), leaving out code blocks, quoted text and pasted material;
2. strips what carries no fact: greetings and acknowledgements in front ("好的，不过…",
   "hi!", "btw"), trailing politeness ("…, thanks", "谢谢"); cue words stay in the quote
   ("记住", "不对", "actually") so the gate sees the correction;
3. matches the clause against the table in ``patterns.py`` and writes a grammatical
   third-person fact in the clause's language, quoting the clause and citing its message;
4. anchors relative times ("yesterday", "下个月") to the message's own time, which
   also becomes the fact's time, so a history import keeps its order;
5. turns "forget that…", "别记…了" and "I no longer…" into removals of the live fact
   they name, and tags each fact with its profile section so the profile follows.

It never decides what is stored: questions, hypotheticals, one-off requests, sarcasm,
statements about other people, grants and secrets are refused by the write gate with a
reason in the audit, whoever proposed them.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..model.attributes import PEOPLE_ZH, infer_key
from ..model.folding import normalize, sanitize, simplified, traditional
from ..model.timerefs import anchor
from .filtering import FilterResult, Row
from .patterns import CITIES_ZH, FAMILY_ZH, PATTERNS, PETS_ZH, ZA_WORDS, Pattern
from .statements import names_project
from .support import meaning_words

NAME, VERSION = "rules", "2"

_HAN = re.compile(r"[\u4e00-\u9fff]")
_ONE_OFF = re.compile(r"这次|这一次|今天|今晚|刚才|暂时|本次|\b(this time|today|tonight|for now|right now|just now)\b", re.I)
_GRANT = re.compile(r"允许|授权|批准|同意你|不用再确认|\b(allowed to|authori[sz]e|permission|you may|you can go ahead)\b", re.I)


@dataclass
class Extraction:
    """What an extractor proposes; the memory core decides (``MemoryScope.apply``)."""

    facts: list[dict[str, Any]] = field(default_factory=list)
    profile_updates: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    reinforcements: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # output the parser could not use, with reasons
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (message id, code, reason): said, not kept


# ------------------------------------------------------------------ clauses
_MASKS = re.compile(
    # What the user asks to be written, translated or checked, and pasted logs: from the colon on, not the user's words.
    r"(?i:\b(?:write|draft|compose|generate|make up|create|roleplay|role-play)\b|写一?[封段篇个份]|起草|编一?[个段]|模拟)"
    r"[^:：\n]{0,80}[:：](?P<asked>.*\Z)|"
    r"(?i:\b(?:translate|proofread|rewrite|paraphrase|summari[sz]e|correct|polish|check|fix)\b|翻译|润色|改写|检查|校对|总结)"
    r"[^:：\n]{0,30}[:：](?P<checked>.*\Z)|(?i:\b(?:log|output|traceback|stack ?trace|error)\b|报错|日志)[^:：\n]{0,20}[:：]"
    r"(?P<logged>\s*\n.*\Z)|"
    r"(?<![A-Za-z])'[^'\n]{12,}'(?![A-Za-z])|"
    r"```.*?(?:```|\Z)|`[^`\n]*`|“[^”]{12,}”|「[^」]{12,}」|\"[^\"\n]{25,}\"|(?m:^[ \t]*>.*$)|"
    r"<(document|doc|email|file|pasted|quote|article|attachment)\b[^>]*>.*?</\4\s*>", re.S)
_SENTENCE = re.compile(r"[。！？；!?;\n]+|\.+(?=\s|$)|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|mr|ms|mrs|dr|st|no|approx|jr|sr|prof)|(?-i:\b[A-Z]))$", re.I)
_CLAUSE_ZH = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])|[，,、]\s*(?!叫|名字叫|\d|一只叫|一个叫|另一只叫|另一个叫|老大叫|老二叫|大的叫|小的叫)|(?=但是|不过(?!敏))")
_APPOSITION = re.compile(r"\s*my\s+(?:\w+\s+)?(?:dog|puppy|cat|kitten|guinea pig|hamster|rabbit|bunny|parrot|bird|turtle|"
                         r"tortoise|snake|lizard|ferret|horse|pony|son|daughter|wife|husband|partner|brother|sister|mom|dad)\b", re.I)
_MY_PARTNER = re.compile(r"^\s*my\s+(?:wife|husband|partner|girlfriend|boyfriend|fiancée?)\s*$", re.I)  # "my wife and i had twins"
_NAME_ONLY = re.compile(r"(?:^|\s)(?-i:[A-Z][a-z]+)\s*$")
_CLAUSE_EN = re.compile(r",?\s+(?:but|so|because|cause|though|although|and then|while|and)\s+(?=i\b|i'm|im\b|i've|i'd|my\b|we\b|"
                        r"it\b|that\b|you\b|can\b|could\b|please\b)|,\s*(?=(?:and\s+|also\s+|plus\s+)?(?:i\b|i'm|i've|i'd|my\b|"
                        r"please\b|can you|could you|would you|do you|what|how|why|is there|are there|any\b|thanks|"
                        r"thank you|btw\b|pls\b|plz\b))|,\s+so\s+|,\s+(?=\w+(?:\s\w+)?\s+(?:wasn't|isn't|didn't|doesn't|wasnt|isnt|"
                        r"didnt|doesnt)\b)|,\s+(?=(?:just|also|still)\s+\w+ing\b)|,\s+(?=(?:currently\s+)?(?:working|living|based|studying)\b)|"
                        r",\s+(?=(?:a\s+)?native\s+\w+\s+speaker\b)|,\s+(?=which\b)|"
                        r"\s+but\s+(?=(?:now\s+|currently\s+)?(?:live|work|moved|based|living)\b)|"
                        r"\s+so\s+(?=(?:my|i|im|i'm|please|pls|keep|make|use|don't|dont|avoid|no)\b)|(?<=\w)-\s+(?=\w)|\s+-{1,2}\s+|\s+—\s*", re.I)
_LEAD = re.compile(
    r"^(?:(?:(?:hi|hello|hey|hiya|yo|ok|okay|sure|yes|yeah|yep|oh|ah|um|uh|er|hmm|well|so|also|and|but|plus|btw|by the way|"
    r"fyi|anyway|anyways|haha|lol|cool|great|thanks|thank you|alright|right|oh and|good morning|good evening|morning|"
    r"just so you know|quick note|for context|quick context|for the record|fun fact|side note|honestly|tbh|to be honest|you know|"
    r"sadly|unfortunately|luckily|fortunately|anyhow|"
    r"guess what|oh yeah|oh and|yay|wow|woah|whoa|omg|ugh|fwiw|yo|heyy+|lmao|hey there|scratch that|wait)\b|"
    r"(?:你好|您好|嗨|哈喽|嘿|早上好|晚上好|早安|晚安|好的|好滴|好吧|嗯嗯?|哦|噢|啊|呃|哈哈+|谢谢|是的|好|行|对|那|所以)"
    r"(?:呀|啊|哈|啦|哦|呢)?(?=[，,:：!！.。~～\s]|$))"
    r"[，,:：!！.。~～\s]*|"
    r"^(?:跟你说个事|跟你说一下|跟你说下|说个事|告诉你个事|顺带一提|顺带说一下|对了|顺便说一下|顺便说下|顺便提一下|顺便|另外|还有|不过|"
    r"但是|可是|然后|所以|说起来|话说|跟你说|告诉你|说实话|老实说|嘿嘿|嘻嘻|哈哈+|呜呜|诶等下|等下|等等|诶|欸|哎|唉|救命|"
    r"实话说|补充一下|更新一下|更新|好消息|坏消息)[，,:：!！.。~～\s]*|"
    r"^(?:(?:quick|small|big|some|good|bad|little|an?)\s+)?(?:update|news|change|change of plans|heads up|note|context|fyi|"
    r"background)\s*[:!,.-]+\s*|"
    r"^(?:no|nope)[,!.]\s*)++", re.I)
_CUE = re.compile(
    r"^(?:(?:请?记住|记一下|记好|不对|不是|错了|搞错了|更正一下|更正|其实|实际上|"
    r"(?:please\s+)?remember(?:\s+that)?|note that|correction|actually|to be clear|just to clarify|wait|typo(?: earlier)?|"
    r"sorry|my bad|oops|i meant|i mean|scratch that|打错了|说错了|写错了|刚才打错了|不好意思)(?:[，,、:：!！.。\s]+|$)|"
    r"(?:请?记住|记一下|其实|实际上)(?=我)|"
    r"(?:不好意思|抱歉|我?(?:刚才)?(?:手快|手滑)?(?:打错了|说错了|写错了|搞错了|记错了))[，,、:：!！.。\s]*)++",
    re.I)
_TRAIL = re.compile(r"(?:(?:^|(?<=[\s,，.!?]))(?:thanks(?: a lot| so much)?|thank you(?: so much)?|thx|ty|please|pls|lol|haha|btw|fwiw|"
                    r"fyi|tbh|tho|though|anyway|just fyi|just so you know|hhh+|233+)\b|:\)|:-\)|"
                    r"谢谢你?|谢啦|多谢|哈哈+|呵呵|嘿嘿|哦|呀|啦|嘛|呢|吧|哈|~|～|[，,.。!！…\s]|[\U0001F300-\U0001FAFF\u2600-\u27BF])++$",
                    re.I)


MAX_CLAUSE = 400
_SPACE_RUN = re.compile(r"[ \t\u3000\u00a0]{3,}")


@dataclass(frozen=True, slots=True)
class Clause:
    quote: str  # the words quoted as evidence: cue words kept, greetings and politeness cut
    body: str  # what the patterns read: cue words cut as well
    question: bool
    cues: frozenset[str]
    inherits_subject: bool = False  # a zh clause that continues the previous one's "我" ("…，主要写 C++")


def _masked(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _MASKS.finditer(text):
        after = next((m.start(g) for g in ("asked", "checked", "logged") if m.group(g) is not None), m.start())
        spans.append((after, m.end()))
    return spans


def _spans(text: str, splitter: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    out, pos = [], start
    for m in splitter.finditer(text, start, end):
        if m.group(0) == "." and _ABBREVIATION.search(text[max(start, m.start() - 6):m.start()]):
            continue  # "e.g. ", "Dr. ": not the end of a sentence
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = max(pos, m.end())
    if pos < end:
        out.append((pos, end))
    return out


def clauses(text: str) -> list[Clause]:
    """The clauses of a user message, cleaned, in order."""
    text = _SPACE_RUN.sub("  ", text)  # long runs of blanks would make every split pattern rescan them (quotes still locate)
    masks = _masked(text)
    out: list[Clause] = []
    pending: frozenset[str] = frozenset()  # cues of a clause that was only a cue ("sorry my bad, it's Houston")
    for s_start, s_end in _spans(text, _SENTENCE, 0, len(text)):
        if any(a < s_end and s_start < b for a, b in masks):
            continue  # a sentence with quoted or pasted material in it is not plainly the user's own
        tail = text[s_end:s_end + 2]
        asked = "?" in tail or "？" in tail
        sentence_is_zh = bool(_HAN.search(text[s_start:s_end]))
        parts = _spans(text, _CLAUSE_ZH if sentence_is_zh else _CLAUSE_EN, s_start, s_end)
        merged: list[tuple[int, int]] = []
        for a, b in parts:  # a lone lead-in ("记住，" "不对，" "好的，") stays with what follows it, and so does
            # a lone name before an apposition ("Oscar, my guinea pig, …")
            if merged and (_is_lead_only(text[merged[-1][0]:merged[-1][1]]) or
                           (_NAME_ONLY.search(text[merged[-1][0]:merged[-1][1]]) and _APPOSITION.match(text[a:b])) or
                           _MY_PARTNER.search(text[merged[-1][0]:merged[-1][1]])):
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        previous_is_me = False
        for i, (a, b) in enumerate(merged):
            clause = _clean(text[a:b], question=asked and i == len(merged) - 1)
            if clause is None:
                continue
            if not clause.body:
                pending = clause.cues
                continue
            if pending:
                clause = Clause(clause.quote, clause.body, clause.question, clause.cues | pending, clause.inherits_subject)
                pending = frozenset()
            if sentence_is_zh:
                own = zh_subject_first(clause.body)
                if previous_is_me and not _ZH_SUBJECT.search(own) and not _ZH_RULE_LEAD.search(own):
                    clause = Clause(clause.quote, clause.body, clause.question, clause.cues, True)
                previous_is_me = (own.startswith("我") and not _ABOUT_SOMEONE.match(own)) or \
                    (previous_is_me and clause.inherits_subject)
            out.append(clause)
    return out


_ZH_TIME_START = re.compile(r"^(?:昨天|前天|上周末?|上个?星期|上个?月|去年|前年|前段时间|前阵子|刚刚?|最近|下周|下个?月|明年|今年|现在|目前|"
                            r"已经|终于)")
_ZH_SUBJECT = re.compile(r"我|你|您|他|她|它|咱|大家|别人|用户|这|那|有人")
_ZH_RULE_LEAD = re.compile(r"^(?:以后|之后|今后|往后|每次|默认)|请|麻烦|别|不要|千万|吗$")


_STANDING_LEAD = re.compile(r"(?:from now on|going forward|in (?:the )?future|by default|always|以后|今后|往后|平时)[,，:：]?",
                            re.I)


def _is_lead_only(part: str) -> bool:
    stripped = part.strip()
    return bool(stripped) and len(stripped) <= 24 and (_LEAD.sub("", stripped + " ").strip() == "" or _CUE.sub("", stripped + " ").strip() == ""
                               or _STANDING_LEAD.fullmatch(stripped) is not None)


def _clean(raw: str, *, question: bool) -> Clause | None:
    text = raw.strip()
    if len(text) > MAX_CLAUSE:
        return None  # no statement the patterns know is this long; and long runs of spaces or dots are not read twice
    while True:
        shorter = _LEAD.sub("", text).strip()
        if shorter == text:
            break
        text = shorter
    text = _TRAIL.sub("", text).strip()
    cue = _CUE.match(text)
    cues: set[str] = set()
    body = text
    if cue:
        words = normalize(cue.group(0))
        if re.search(r"记|remember|note", words):
            cues.add("explicit")
        if re.search(r"不对|不是|错|更正|其实|实际上|actually|correction|clarify|wait|typo|sorry|my bad|oops|meant", words):
            cues.add("correction")
        body = _LEAD.sub("", text[cue.end():].strip()).strip()
    body = re.sub(r"^我[：:]\s*", "我", body)
    body = re.sub(r"\s*[(（][^()（）]{1,60}[)）]\s*$", "", body) if not re.match(r"^[(（]", body) else body
    body = re.sub(r",?\s+not\s+(?-i:[A-Z])[\w\-]*(?:\s(?-i:[A-Z])[\w\-]*)*\s*$", "", body)  # "Austin, not Boston"
    if len(body) < 2:
        return Clause(text, "", question, frozenset(cues)) if cues else None  # "sorry my bad,": a cue for what follows
    is_question = question or bool(re.search(r"[?？]\s*$", raw)) or bool(_ASKS.search(body))
    return Clause(text, body, is_question, frozenset(cues))


_ASKS = re.compile(r"^(?:do|does|did|can|could|would|should|is|are|was|were|will|what|how|why|where|who|which|when|"
                   r"have you|has anyone)\b|^(?:请问|是不是|要不要|能不能|可不可以|有没有|为什么|为啥|怎么|如何)|"
                   r"什么|怎么|为什么|为啥|哪里|哪儿|哪个|哪些|多少|来着|是不是|能不能|要不要|[吗呢么]$", re.I)


# ------------------------------------------------------------- third person
_ZH_ADVERBS = re.compile(rf"^(?P<adv>(?:(?:{ZA_WORDS}|接下来|这几个月|这段时间|平常|一般来说)\s*)*)(?P<me>我们家|我家|我们?|本人)")


def zh_subject_first(body: str) -> str:
    """"平时我主要负责…" -> "我平时主要负责…": what the zh patterns read."""
    m = _ZH_ADVERBS.match(body)
    if m and m.group("adv"):
        return m.group("me") + m.group("adv") + body[m.end():]
    return body


def _zh_third(body: str) -> str:
    text = zh_subject_first(body)
    text = re.sub(r"^(?:我们|我|本人)(?!的)|^我的", lambda m: "用户的" if m.group(0) == "我的" else "用户", text)
    if re.match(rf"^用户(?:{FAMILY_ZH})", text):
        text = "用户的" + text[2:]
    if not text.startswith("用户"):
        text = "用户" + text
    text = re.sub(r"(?<![自])我们?", "用户", text[2:])
    return _zh_end("用户" + text)


def _zh_end(text: str) -> str:
    text = re.sub(r"[吧呀啊哦呢嘛啦哈~～]+$", "", text.rstrip("。.！!；;，, "))
    return text + "。"


def _zh_rule(body: str) -> str:
    text = re.sub(r"^(?:请你?|麻烦你?)", "", body)
    if "请" in text:
        before, after = text.split("请", 1)
        before = re.sub(r"^(?:请|你)", "", before)
        lead = re.match(r"^(?:以后|之后|今后|往后|平时|每次|默认|从现在起|从现在开始)", before)
        if lead and len(before) > lead.end() and not before.endswith(("时", "的时候")):
            before += "时"
        text = before + after
    text = re.sub(r"^(以后|之后|今后|往后|平时|每次)?(都|也)?(?:你)?", r"\1\2", text)
    text = re.sub(r"^(?:也|还|都)(?=别|不要|不用|少|多)", "", text)
    text = re.sub(r"给我|帮我", "", text)
    text = re.sub(r"了$", "", text.rstrip("。.！!"))
    return _zh_end("用户希望" + text.replace("我", "用户"))


_PAST = frozenset("""left quit got went made took began became bought lost found met had was did saw ran wrote sold grew came felt
    thought knew spent won broke flew drove chose fell gave kept built paid sent taught caught brought put set cut hurt
    read led won't""".split())
_MODALS = {"can", "could", "will", "would", "should", "must", "might", "may", "can't", "cannot", "won't", "wouldn't",
           "couldn't", "shouldn't", "used"}
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "don't": "doesn't", "am": "is", "'m": "is", "'ve": "has",
              "'d": "would", "'ll": "will", "haven't": "hasn't", "aren't": "isn't", "wanna": "wants to",
              "gonna": "is going to", "gotta": "has to"}
_ADVERBS = r"(?:no longer|just|really|also|mostly|mainly|usually|always|never|still|now|recently|finally|actually|only|often|" \
           r"sometimes|currently|even|already|definitely|totally|absolutely|generally|normally|kind of|kinda|sort of|" \
           r"basically|primarily|mostly|rarely|seldom|occasionally|literally|officially)"
_IMPLICIT_IM = re.compile(r"^(?:just\s+|also\s+|still\s+)?(?:gonna|going to|researching|learning|studying|working on|thinking (?:of|about)|"
                          r"planning|training for|looking (?:for|into)|starting|hosting|getting ready|wrapping up|finishing up|"
                          r"offering|expanding|saving (?:up|for))\b", re.I)
_OWN_SUBJECT_ONLY = frozenset({"zh.age"})
_THIS_ONE = re.compile(r"这个问题|这道题|这段|这篇|这封|这份|\bthis (?:question|one|email|answer|draft|reply)\b", re.I)
_JOB_CHANGE = re.compile(r"离职|辞职|跳槽|入职|新工作|换工作|换了工作|被裁|新公司|offer")
_ABOUT_FAMILY = frozenset({"zh.family", "zh.family_named", "zh.pet", "zh.event"})  # patterns that are about them by design
_ABOUT_SOMEONE = re.compile(rf"^(?:我|别记我|不要记我)(?:的|家的?|家里的?)?(?:{PEOPLE_ZH}|{PETS_ZH})|^(?:{PEOPLE_ZH})", re.I)
_NEAR_TERM = re.compile(r"\b(?:tonight|tomorrow|today|this (?:morning|afternoon|evening|weekend)|on (?:mon|tues|wednes|thurs|fri|satur|"
                        r"sun)day)\b|今晚|今天|明天|后天|这周末|今天下午|今天晚上", re.I)
_GERUND_SUBJECT = re.compile(r"^\w+ing\b.*?\b(?:is|was|are|were|takes|took|has|had|makes|made|can|feels|seems|gives|brings|means|"
                             r"helps|keeps|requires|needs)\b", re.I)  # "Starting a business takes courage"
_IMPLICIT_I = re.compile(r"^(?:(?:now|currently)\s+(?=(?:live|work)\s+(?:in|at|for|from)\b)|(?:just|finally|recently|also)\s+)?(?:live|work|lost|got|started|adopted|finished|joined|moved|quit|bought|"
                         r"left|took|signed up|picked up|became|went|had|made|ran|did|landed|switched|began|graduated|"
                         r"retired|passed|failed|won|broke|hurt|turned|teamed up|partnered|emailed|posted|launched|opened)\b(?!\s+(?:it|that|this)\b)", re.I)


def _third_person_verb(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _MODALS or low in _PAST or low.endswith("ed") or low.endswith("n't"):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _en_third(body: str) -> str:
    text = body.replace("’", "'").replace("‘", "'").strip().strip(",:; ")
    head = re.match(r"^(?:i|we)\b\s*(?P<aux>'m|am|'ve|have|'d|'ll|will|was|were|are|'re)?\b\s*", text, re.I)
    if head:
        we = text[:2].lower() == "we"
        rest = text[head.end():]
        aux = (head.group("aux") or "").lower()
        subject = "The user and their family" if we else "The user"
        if aux:
            verb = {"'m": "is", "am": "is", "'ve": "has", "have": "has", "'d": "would", "'ll": "will", "will": "will",
                    "was": "was", "were": "were", "are": "are", "'re": "are"}[aux]
            if we:
                verb = {"is": "are", "has": "have", "was": "were"}.get(verb, verb)
            text = f"{subject} {verb} {rest}"
        else:
            m = re.match(rf"^((?:{_ADVERBS}\s+)*)([\w']+)", rest, re.I)
            if m and not we:
                text = f"{subject} {m.group(1)}{_third_person_verb(m.group(2))}{rest[m.end():]}"
            else:
                text = f"{subject} {rest}"
    elif re.match(r"^my\b", text, re.I):
        text = "The user's" + text[2:]
    elif re.match(r"^our\b", text, re.I):
        text = "The user's" + text[3:]
    else:
        text = "The user: " + text
    text = re.sub(r"\bi'm\b", "they're", text, flags=re.I)
    text = re.sub(r"\bi've\b", "they've", text, flags=re.I)
    text = re.sub(r"\bi'd\b", "they'd", text, flags=re.I)
    text = re.sub(r"\bi'll\b", "they'll", text, flags=re.I)
    text = re.sub(r"(?<!')\b(?:I|i) was\b", "they were", text)
    text = re.sub(r"(?<!')\bI\b|\bi\b(?!')", "they", text)
    text = re.sub(r"\bmy\b", "their", text, flags=re.I)
    text = re.sub(r"\bmine\b", "theirs", text, flags=re.I)
    text = re.sub(r"\bmyself\b", "themselves", text, flags=re.I)
    text = re.sub(r"\bme\b", "them", text, flags=re.I)
    text = re.sub(r"\bour\b", "their", text, flags=re.I)
    text = re.sub(r"\b(is|are) gonna\b", r"\1 going to", text)
    text = re.sub(r"\bgonna\b", "going to", text)
    text = re.sub(r"\bwanna\b", "want to", text)
    return _en_end(text)


def _en_end(text: str) -> str:
    text = text.strip().rstrip(".!,;: ")
    return text[0].upper() + text[1:] + "."


def _en_rule(body: str) -> str:
    text = re.sub(r"^(?:please|pls|and)\s+", "", body.replace("’", "'").strip(), flags=re.I).rstrip(".! ")
    when = ""
    m = re.match(r"^(from now on|going forward|in (?:the )?future|by default)\b[,:]?\s*(?:please\s+)?", text, re.I)
    if m:
        when, text = " " + m.group(1).lower(), text[m.end():]
    text = text[:1].lower() + text[1:] if not text[:2].isupper() else text
    negative = re.match(r"^(?:don't|do not|stop|quit|no more)\s+(?:ever\s+)?", text, re.I)
    if negative:
        text = text[negative.end():]
        verb = re.match(r"^(\w+ing)\b", text)
        if verb and verb.group(1).lower() not in ("bring", "thing", "string"):
            text = verb.group(1)[:-3] + text[verb.end():]  # "stop adding" -> "add"
            text = re.sub(r"^(us|ad|writ|includ|giv|putt|apologis|apologiz)(?=\s|$)",
                          lambda v: {"us": "use", "ad": "add", "writ": "write", "includ": "include", "giv": "give",
                                     "putt": "put", "apologis": "apologise", "apologiz": "apologize"}[v.group(1)], text)
        text = "not to " + text
    elif re.match(r"^avoid\b", text, re.I):
        text = "avoid" + text[5:]
        text = "to " + text
    else:
        text = "to " + text
    text = re.sub(r"\bme\b", "the user", text, flags=re.I)
    text = re.sub(r"\bmy\b", "the user's", text, flags=re.I)
    text = re.sub(r"\byour\b\s*", "", text, flags=re.I) if re.match(r"to keep your", text, re.I) else \
        re.sub(r"\byour\b", "its", text, flags=re.I)
    return _en_end(f"The user wants the assistant {text}{when}")


def render(pattern: Pattern, match: re.Match[str], body: str, zh: bool) -> str:
    if pattern.drop:
        body = re.sub(pattern.drop, "", body, count=1, flags=re.I)
    if pattern.rewrite == "self" and not zh and match.groupdict().get("x"):  # "Blue's my fave, …"
        x = match.group("x").strip()
        return _en_end(f"{x[0].upper() + x[1:]} is the user's favourite")
    if pattern.rewrite == "self":
        return _zh_third(body) if zh else _en_third(body)
    if pattern.rewrite == "rule":
        return _zh_rule(body) if zh else _en_rule(body)
    if pattern.rewrite == "prefer":  # "平时请用中文解释" -> "用户偏好用中文解释。"
        body = re.sub(rf"^我(?:(?:{ZA_WORDS})\s*)*(?:更|还是|比较)?(?:希望|想要|想让|要)(?=你)", "", body)  # "我更希望你用英文"
        return _zh_end("用户偏好" + re.sub(r"^(?:以后|之后|今后|平时|往后|每次)?(?:都|也|还是)?请?(?:你)?(?:都|也|还是)?", "", body)
                       .replace("回答我", "回答").replace("给我", "").replace("我", "用户"))
    groups = {k: v for k, v in match.groupdict().items() if v}
    for name in list(groups):
        if name[-1].isdigit():  # an alternative spelling of the same group
            groups.setdefault(name[:-1], groups[name])
    values = {k: (v.lower() if k in ("what", "who") and not v[:1].isdigit() and "UCSD" not in v else v)
              for k, v in groups.items()}
    return str(pattern.rewrite).format_map(_Blank(values))


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


# --------------------------------------------------------------- extraction
def extract_rules(filtered: FilterResult, existing: Sequence[Any] = ()) -> Extraction:
    """Candidates (and removals) from the user's statements in ``filtered``."""
    out = Extraction()
    previous: frozenset[str] = frozenset()
    for row in filtered.rows:
        if row.role == "user":
            _from_row(row, existing, out, previous | {row.id})
            previous = frozenset({row.id})
    return out


# Full-width letters, digits and apostrophes read as ASCII; Chinese punctuation (，：！) stays as written.
_FULL_WIDTH = {c: unicodedata.normalize("NFKC", chr(c)) for c in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B),
                                                                  *range(0xFF41, 0xFF5B), 0xFF07, 0x3000,
                                                                  *range(0x1D400, 0x1D7FF))}  # and 𝐏𝐚𝐫𝐢𝐬


def reading(clause: Clause) -> tuple[str, bool]:
    """What the patterns read: zh with the subject first (and in Simplified characters), en with the dropped "I" back
    ("Lost my job yesterday") and typographic apostrophes folded."""
    # Read on folded text (full-width letters, zero-width and bidi characters); the quote keeps the user's own.
    clause = Clause(clause.quote, sanitize(clause.body).translate(_FULL_WIDTH), clause.question, clause.cues,
                    clause.inherits_subject)
    zh = bool(_HAN.search(clause.body))
    if zh:  # Traditional Chinese is read as Simplified ("我對花生過敏" -> "用户对花生过敏。"); the quote stays as written
        clause = Clause(clause.quote, simplified(clause.body), clause.question, clause.cues, clause.inherits_subject)
    if zh:
        fronted = _ZH_FRONTED.match(clause.body)
        clause = Clause(clause.quote, re.sub(r"^俺|^咱(?!们)", "我", clause.body), clause.question, clause.cues,
                        clause.inherits_subject)
        body = zh_subject_first(clause.body[fronted.end():] if fronted else clause.body)
        implicit = clause.inherits_subject or (not _ZH_SUBJECT.search(body) and not _ZH_RULE_LEAD.search(body))
        return ("我" + body if implicit else body), True
    body = clause.body.replace("’", "'").replace("‘", "'")
    if body.isupper():
        body = body.lower()  # "GUESS WHO GOT THEIR GREEN CARD"
    guess = re.match(r"^guess who\s+(?P<rest>.+)$", body, re.I)
    if guess:  # "guess who got their green card" -> "I got my green card"
        body = "I " + re.sub(r"\b(?:their|his|her)\b", "my", guess.group("rest"), count=1)
    body = re.sub(r"^my\s+(?:wife|husband|partner|girlfriend|boyfriend|fiancée?)\s+and\s+i\b", "we", body, flags=re.I)
    body = re.sub(r"\s*\((?=[^)]*\b(?:lol|lmao|haha|jk|yes i|i know|sorry)\b)[^)]*\)\s*$", "", body, flags=re.I)
    body = re.sub(r"^(?:im|i m|i am)\b", "I'm", body, flags=re.I)
    body = re.sub(r"^(?:ive)\b", "I've", body, flags=re.I)
    fronted = _FRONTED.match(body)
    if fronted:  # "This quarter I'm focused on Rust" -> "I'm focused on Rust this quarter"
        lead = fronted.group("lead").strip()
        body = fronted.group("rest") + " " + (lead[0].lower() + lead[1:])
    if _IMPLICIT_IM.match(body) and not _GERUND_SUBJECT.match(body):  # "Researching adoption agencies", "Gonna …"
        body = "I'm " + body[0].lower() + body[1:]
    elif re.match(r"^been\s+(?:\w+ing|vegan|vegetarian|pescatarian|married|sober|single|divorced|an?)\b", body, re.I):
        # "Been nursing for 12 yrs", "been vegan for like 4 years"
        body = "I've b" + body[1:]
    elif _IMPLICIT_I.match(body):  # "Lost my job yesterday": the speaker is the subject
        body = "I " + (body[0].lower() + body[1:] if not body[:2].isupper() else body)
    return body, False


_FRONTED = re.compile(
    r"^(?P<lead>(?:this|next|last|these|lately|recently|nowadays|currently|since|as|at|for|in|on|after|before|during|"
    r"ever since|right now|now|these days|outside|besides|apart from)\b[^,]{0,40}?),?\s+(?P<rest>(?:i|i'm|i've|i'd|my)\b.+)$",
    re.I)


def first_match(clause: Clause) -> tuple[Pattern, re.Match[str], bool] | None:
    body, zh = reading(clause)
    for pattern in PATTERNS:
        if pattern.lang != ("zh" if zh else "en"):
            continue
        m = pattern.compiled().search(body)
        if m:
            return pattern, m, zh
    return None


_STOPPED = re.compile(r"^(?:i\s+(?:no longer|stopped|quit|gave up)|i'?m\s+(?:pausing|dropping|giving up(?: on)?|quitting|"
                      r"stopping|done with|no longer)|我.{0,4}(?:不再|已经不|戒了))\s*(?P<what>.+)$", re.I)
_ZH_FRONTED = re.compile(r"^(?P<lead>[^我你他她，。；]{2,14}?(?:以后|之后|以来|的时候|时候|期间|完))(?=我)")
def _declined(row: Row, clause: Clause, pattern: Pattern, existing: Sequence[Any], joking: bool) -> tuple[str, str] | None:
    """Why a clause that matched ``pattern`` is not proposed (audited as a skip), or None."""
    said = reading(clause)[0]
    if joking:
        return "not_real", "a joke, a role-play, a dream or lyrics (\"just kidding\", \"假装\", \"梦见\")"
    if pattern.name == "zh.now_at" and not _JOB_CHANGE.search(row.content):
        return "not_durable", "where the user is right now, not a new employer"
    if pattern.name in _OWN_SUBJECT_ONLY and (clause.inherits_subject or not re.match(r"^(?:我|i\b|i'm)", clause.body, re.I)):
        return "someone_else", "said after someone else was named: it may be theirs"
    if _ABOUT_SOMEONE.match(said) and pattern.name not in _ABOUT_FAMILY:
        return "someone_else", "a statement about another person or a pet, not the user"
    if pattern.name == "en.name" and re.match(r"^i'?m\b", said, re.I) and (
            any(getattr(f, "key", None) == "name" for f in existing) or re.search(r"\b(?:lol|lmao|haha)\b|!", clause.quote, re.I)):
        return "not_a_name", "\"I'm X\" renames only a user with no name yet, said plainly; \"my name is\" always does"
    if pattern.category == "goal" and _NEAR_TERM.search(clause.body):
        return "not_durable", "a plan for the next days is not a standing focus"
    if pattern.rewrite in ("rule", "prefer") and _THIS_ONE.search(clause.body):
        return "one_off", "a wish about this question or this text, not a standing one"
    return None


_REMEMBER_THIS = Pattern("explicit", "en", r"^.+$", examples=(("Remember that I'm on call every other weekend.",
                                                            "The user is on call every other weekend."),))


# "remember my password", "记住我的生日": a thing that needs a value, named without one
_VALUE_NOUNS = r"password|passcode|pin|pin code|code|login|credentials|secret|key|address|birthday|number|name|" \
               r"anniversary|e-?mail|phone"
_BARE_POSSESSION = re.compile(rf"(?:my|our)(?:\s+[a-z][\w'-]*){{0,2}}?\s+(?:{_VALUE_NOUNS})s?\s*(?:for me|please)?[.!]*|"
                              r"我(?:们)?的[\u4e00-\u9fff]{0,4}?(?:密码|口令|验证码|密钥|地址|生日|电话|号码|名字|纪念日)[。！!.]*",
                              re.I)


def _explicit(clause: Clause) -> tuple[Pattern, re.Match[str], bool] | None:
    """"记住…" / "remember that…" with no pattern of its own: kept as said, when it is about
    the user (first person) or the project — "Remember Jon, just do it!" is neither."""
    if "explicit" not in clause.cues:
        return None
    body, zh = reading(clause)
    if not (re.search(r"我|\b(?:i|i'm|i've|my|me|we|our)\b", body, re.I) or names_project(body)):
        return None
    if re.search(r"\b(?:here|there) for you\b|\brooting for you\b|\bproud of you\b|支持你|陪着你|在你身边", body, re.I):
        return None  # "And remember, I'm always here for you": said to the other person
    if _BARE_POSSESSION.fullmatch(body.strip()):
        return None  # "Please remember my password.": it names a thing and says nothing of it
    return _REMEMBER_THIS, re.match(r"^.+$", body, re.S), zh  # type: ignore[return-value]


_JOKE = re.compile(r"\b(?:just kidding|jk|kidding|j/k|not really|lol jk|role-?play|pretend|let's say|in my dream|i dreamt|i dreamed|"
                   r"stuck in my head|lyrics?|lol no|haha no|no lol|dream|mock interview|for practice|as an exercise)\b|模拟面试|开玩笑|逗你|瞎说的|瞎编的|骗你的|扮演|假装|角色扮演|梦见|梦到|做梦|歌词|🎵|🎶", re.I)


def _from_row(row: Row, existing: Sequence[Any], out: Extraction, previous_ids: frozenset[str] = frozenset()) -> None:
    joking = bool(_JOKE.search(row.content))  # "I'm a doctor. Just kidding!": no new fact from this message
    seen: set[str] = set()
    previous: Clause | None = None
    for clause in clauses(row.content):
        asked_to_forget = clause.question and _FORGET_ASK.match(clause.body)
        if clause.question and not asked_to_forget:
            if first_match(clause) is not None:  # "I'm allergic to peanuts?": worded like a fact, but asked
                out.skipped.append((row.id, "question", "a question states nothing about the user"))
            previous = clause
            continue
        if asked_to_forget:
            clause = Clause(clause.quote, _FORGET_ASK.sub("", clause.body, count=1), False, clause.cues)
        found = first_match(clause) or _explicit(clause)
        if found is None:
            fixed = _value_fix(row, clause, existing, previous_ids) if "correction" in clause.cues else None
            if fixed is not None:
                out.facts.append(fixed)
            previous = clause
            continue
        pattern, m, zh = found
        if pattern.rewrite == "retire":  # "Agent 上下文工程已经学完了": the focus it names ended
            if not _removal(row, clause, m.group("what"), existing, out):
                out.skipped.append((row.id, "nothing_to_retire", "it names nothing remembered"))
            previous = clause
            continue
        if pattern.rewrite == "forget":
            what = next((v for k, v in m.groupdict().items() if k.startswith("what") and v), "").strip()
            if len(meaning_words(_FORGET_FRAME.sub("", what))) == 0:
                if previous is not None:
                    what = previous.body  # "之前跟你说的抑郁和吃药的事，帮我都删了吧": the thing is in the clause before
                elif existing:  # "forget that": what was said last
                    _remove(out, row, clause, max(existing, key=lambda f: f.updated_at), forget=True)
                    continue
            _removal(row, clause, what, existing, out, forget=True)
            previous = clause
            continue
        previous = clause
        declined = _declined(row, clause, pattern, existing, joking)
        if declined:
            out.skipped.append((row.id, *declined))
            continue
        content = render(pattern, m, reading(clause)[0], zh)
        fronted = _ZH_FRONTED.match(clause.body) if zh else None
        if fronted:  # "甲状腺手术做完以后我每天…" -> "甲状腺手术做完以后，用户每天…"
            content = fronted.group("lead") + "，" + content
        content = anchor(content, row.at, zh=zh)
        if zh and simplified(clause.body) != clause.body:  # read as Simplified, written in the user's own script
            content = traditional(content)
        stop = _STOPPED.match(clause.body)
        if stop and _TOPIC.search(stop.group("what")):
            out.skipped.append((row.id, "not_durable", "no longer needing help with something is not a fact about the user"))
            continue
        if pattern.change and stop and not infer_key(content):
            if _removal(row, clause, re.split(r"[,，;；]", stop.group("what"))[0], existing, out):
                continue  # "I no longer use Windows": the old fact goes; nothing new to keep
        if content in seen:
            continue
        seen.add(content)
        project = names_project(clause.quote)
        if project:  # "记住：这个项目的部署脚本在…" describes the project, not the user
            if not re.search(r"我|\b(?:i|i'm|my|me)\b", clause.body, re.I):
                content = clause.body.rstrip("。.！!") + ("。" if zh else ".")
        standing = pattern.category == "preference" or pattern.rewrite == "rule"
        key = pattern.key
        if pattern.name == "zh.in_city" and "correction" in clause.cues:
            key = "home_city"  # "不对，我其实在杭州": a correction of where the user lives; "我在上海" alone is where they are now
        if key == "employer" and infer_key(content) == "work_city":  # a city is no employer:
            key = "work_city"  # "在杭州做前端开发" says where the user works, not for whom
        if key and "{" in key:  # "tool:{topic}": the key names what the tool is for, so a later tool for it replaces it
            topic = re.sub(r"^(?:平时|一般|主要|都|日常)+", "", (m.groupdict().get("topic") or "").strip())
            key = key.format(topic=normalize(topic)) if topic else None
        both = _ROLE_AT.match(content) if not zh and not project and key is None else None
        if both:  # one fact each, so that correcting the role keeps the employer ("No wait, I'm a data engineer")
            out.facts.append(_candidate(row, clause, f"The user works {both['at']} {both['org']}.",
                                        category=pattern.category, key=None, pattern=pattern.name,
                                        section=pattern.section))
            content = f"The user works as {both['role']}."
        fact = _candidate(row, clause, content, category=pattern.category, key=key, pattern=pattern.name,
                          section=None if project else pattern.section, scope="project" if project else "user",
                          durability="temporary" if standing and _ONE_OFF.search(clause.quote) else "durable")
        if pattern.expires_days and row.at is not None:  # current focus lasts a season from when it was said
            fact["valid_until"] = (row.at + timedelta(days=pattern.expires_days)).isoformat()
        out.facts.append(fact)


#: "works as <a role> at <an organisation>": two attributes of the user, kept as two facts
_ROLE_AT = re.compile(r"^The user (?:works|is working) as (?P<role>an? [\w\-/ ]{2,60}?) (?P<at>at|for) "
                      r"(?P<org>(?-i:[A-Z])[\w&.\-]*(?: (?-i:[A-Z])[\w&.\-]*){0,3})\.$")


def _candidate(row: Row, clause: Clause, content: str, *, category: str, key: str | None, pattern: str,
               section: str | None, scope: str = "user", durability: str = "durable") -> dict[str, Any]:
    """A candidate quoting ``clause`` of ``row``; "记住" / "remember that" make it explicit."""
    explicit = "explicit" in clause.cues
    return {"content": content, "category": category, "key": key, "kind": "fact",
            "confidence": 0.95 if explicit else 0.9, "explicit": explicit, "evidence_message_id": row.id,
            "evidence_text": clause.quote, "scope": scope, "durability": durability,
            "authority": "transactional" if _GRANT.search(clause.quote) else "descriptive",
            "section": section, "pattern": pattern}


_FORGET_ASK = re.compile(r"^(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?=forget|delete|remove|erase|drop|stop remembering)|"
                         r"^(?:能不能|可不可以|可以|能)(?:请你?|帮我)?(?=忘|删|别记|不要记)", re.I)
_FORGET_FRAME = re.compile(r"^(?:what|everything)\s+(?:i|I)\s+(?:told|said to|mentioned to)\s+(?:you|u)\s+(?:about\s+)?|"
                           r"^(?:that|this|it|those|these|all that|all of (?:that|it))$|"
                           r"^(?:之前|刚才|上次)?(?:跟你|和你|对你)?(?:说|讲|提)(?:过)?的|(?:的事|这件事|这些事|那件事|的事情)[了吧]*$|"
                           r"^(?:都|全部|全)$",
                           re.I)


def _removal(row: Row, clause: Clause, what: str, existing: Sequence[Any], out: Extraction, *,
             forget: bool = False) -> bool:
    """Retire the live facts ``what`` names ("forget that I have a cat", "别记我住在哪了",
    "之前跟你说的抑郁和吃药的事，帮我都删了") — never for someone else's ("别记我老婆在哪上班了") or
    for a topic of the conversation ("forget about the weather in Bergen")."""
    if _ABOUT_SOMEONE.search(what) or _OTHER_PERSON_EN.search(what) or _TOPIC.search(what):
        out.skipped.append((row.id, "not_about_user", "the removal names someone else or a topic, not a fact about the user"))
        return False
    targets = _matches(_FORGET_FRAME.sub("", what.strip()).strip(), existing)
    for target in targets:
        _remove(out, row, clause, target, forget=forget)
    return bool(targets)


def _remove(out: Extraction, row: Row, clause: Clause, fact: Any, *, forget: bool = False) -> None:
    """A removal; ``forget`` when the user asked to forget it (then the words said go too),
    not only that it stopped being true."""
    out.removals.append({"fact_id": fact.id, "evidence_message_id": row.id, "evidence_text": clause.quote,
                         "reason": f"the user said: {clause.quote[:200]}", "forget": forget})


def _matches(what: str, existing: Sequence[Any]) -> list[Any]:
    """The live facts ``what`` names: by the attribute it names, else by shared meaning
    words — at least half of the smaller side's words, so "抑郁和吃药的事" names "用户有轻度抑郁"."""
    key = infer_key(what) or _key_of_question(what)
    if key:
        keyed = [f for f in existing if getattr(f, "key", None) == key]
        if keyed:
            return keyed[:1]
    words = meaning_words(what)
    if not words:
        return []
    found = []
    medication = bool(_MEDICATION_WORDS.search(what))
    for fact in existing:
        if medication and _TAKES_MEDICATION.search(fact.content):
            found.append(fact)  # "吃药的事" names "用户现在在吃舍曲林"
            continue
        theirs = meaning_words(fact.content)
        shared = words & theirs
        if shared and len(shared) / min(len(words), len(theirs) or 1) >= 0.5:
            found.append(fact)
        elif not shared and _HAN.search(what):  # "我养狗的事" names "用户家狗叫豆豆": jieba cuts them apart
            chars = {c for c in what if _HAN.match(c)} - set("的事了吧我你他她是有在和跟那个这")
            if chars and len(chars & set(fact.content)) / len(chars) >= 0.5:
                found.append(fact)
    return found


_WHERE = {"home_city": r"住在哪|住哪|住的地方|where i live|my address|my city|where i'm based",
          "employer": r"在哪(?:上班|工作)|哪家公司|where i work|my employer|my job",
          "name": r"名字|叫什么|my name", "job_role": r"做什么工作|职业|my job title|what i do"}


_FIXED_VALUE = re.compile(r"^(?:it'?s|it is|i meant|meant|is|its)\s+(?P<en>(?-i:[A-Z])[\w\-]+(?:\s(?-i:[A-Z])[\w\-]+)?)"
                          r"(?:,?\s+actually)?(?:,?\s+with an? \w+)?$|^(?:是|应该是|其实是)(?P<zh>[\u4e00-\u9fff]{2,4}?)(?:才对)?"
                          r"(?:[，,]?不是[\u4e00-\u9fff]{2,4})?$", re.I)


_NOT_A_VALUE = re.compile(r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight|january|february|"
                          r"march|april|may|june|july|august|september|october|november|december|\d.*)$|"
                          r"^(?:周|星期|礼拜)[一二三四五六日天]$|^(?:今天|明天|后天|昨天|上午|下午|晚上|早上|中午)$|月|号$|点$", re.I)


def _like_name(old: str, new: str) -> bool:
    """A misspelling of the same name: "Jon" / "John", "李婷" / "李亭"."""
    if _HAN.search(old):
        return old[0] == new[0] and len(new) == len(old)
    return old[:1].lower() == new[:1].lower() and difflib.SequenceMatcher(None, old.lower(), new.lower()).ratio() >= 0.6


def _value_fix(row: Row, clause: Clause, existing: Sequence[Any], previous_ids: frozenset[str] = frozenset()
               ) -> dict[str, Any] | None:
    """"sorry my bad, it's Houston actually", "不好意思刚才打错了，是李亭": a bare new value after a
    correction cue fixes the keyed fact stated in the user's message just before (when this call
    holds it), or else the fact the user stated last, minutes ago — never with a day or a time."""
    m = _FIXED_VALUE.match(clause.body.replace("’", "'"))
    if m is None:
        return None
    new = m.group("en") or m.group("zh")
    if _NOT_A_VALUE.search(new):
        return None  # "sorry my bad, it's Thursday": a day or a time fixes the task at hand, never where the user lives
    newest = sorted(existing, key=lambda f: f.updated_at, reverse=True)
    keyed = [f for f in newest if getattr(f, "key", None) and f.provenance.message_id in previous_ids]
    if not keyed and newest and row.at is not None and abs((row.at - newest[0].created_at).total_seconds()) <= 1800:
        last = newest[0].provenance.message_id  # what the user said last, minutes ago
        keyed = [f for f in newest if getattr(f, "key", None) and f.provenance.message_id == last]
    for fact in keyed:
        if m.group("en"):
            old = re.findall(r"(?<!^)(?<!\. )\b(?-i:[A-Z])[\w\-]+(?:\s(?-i:[A-Z])[\w\-]+)?", fact.content)
        else:
            old = re.findall(rf"(?<=叫)[\u4e00-\u9fff]{{2,4}}(?=。|$)|{CITIES_ZH}", fact.content)
        old = [o for o in old if o not in ("The", "User") and o != new]
        if len(old) == 1 and fact.key == "name" and not re.search(r"name|call|名字|叫", clause.quote + row.content, re.I) \
                and not _like_name(old[0], new):
            continue  # "sorry my bad, it's Jenkins": only a spelling of the same name fixes a name unasked
        if len(old) == 1:
            return _candidate(row, clause, fact.content.replace(old[0], new), category=fact.category.value,
                              key=fact.key, pattern="correction.value", section=None)
    return None


_OTHER_PERSON_EN = re.compile(r"\b(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:wife|husband|partner|friend|boss|colleague|"
                              r"coworker|mom|dad|mother|father|sister|brother|son|daughter|kid|neighbou?r)\b", re.I)
_TOPIC = re.compile(r"\b(?:weather|news|question|issue|problem|help|update|bug|error|meeting|game|score|traffic)\b|"
                    r"天气|新闻|问题|比赛|会议|报错", re.I)
_MEDICATION_WORDS = re.compile(r"药|\b(?:medication|meds|pills|medicine|prescription)\b", re.I)
_TAKES_MEDICATION = re.compile(r"(?:吃|服用|打)(?:着)?[^，。；]{0,8}(?:药|片|林|乐|素|胶囊|针|剂|酮|汀|沙坦|洛尔|双胍)|"
                               r"\b(?:takes?|taking|on)\s+(?:\w+\s+)?(?:mg\b|medication|meds|pills|\w+(?:ine|ol|pril|statin|zole|mab|"
                               r"cillin|done|pam|lam|ide|ate))\b", re.I)


def _key_of_question(what: str) -> str | None:
    """"别记我住在哪了": a removal that names the attribute, not its value."""
    folded = normalize(what)
    return next((key for key, pattern in _WHERE.items() if re.search(pattern, folded)), None)


def compose_profile(proposal: Extraction, report: Any, profile: Any) -> list[dict[str, Any]]:
    """Profile section updates from the facts this turn saved: each section gets the
    sentences of its new facts. The writer cites each sentence's fact and keeps the
    section's other sentences while their facts stay live (:mod:`archivist.lifecycle.profile`),
    so what a fact replaced or a removal retired leaves the profile with it."""
    sections = {normalize(c["content"]): c.get("section") for c in proposal.facts}
    by_section: dict[str, list[Any]] = {}
    for fact in report.saved:
        section = sections.get(normalize(fact.content))
        if section:
            by_section.setdefault(section, []).append(fact)
    return [{"section": section, "summary": " ".join(f.content for f in new),
             "source_message_ids": list(dict.fromkeys(f.provenance.message_id for f in new if f.provenance.message_id))}
            for section, new in by_section.items()]


class RuleExtractor:
    """The offline extractor behind the same interface as the LLM one."""

    name, version = NAME, VERSION

    def extract(self, filtered: FilterResult, *, profile: Any = None, existing: Sequence[Any] = ()) -> Extraction:
        return extract_rules(filtered, existing)

    compose_profile = staticmethod(compose_profile)


__all__ = ["Clause", "Extraction", "RuleExtractor", "clauses", "compose_profile", "extract_rules", "first_match"]

"""Does a quote support the content written from it?

The quote must carry the content's meaning-bearing words — not its framing ("the user
prefers", "用户是") — so that "数据库坏了" cannot cite "这句话靠谱吗". Paraphrase still
passes: words are compared after light stemming and a small synonym fold, a content word
counts as present when it occurs anywhere in the whitespace-free quote (so jieba cutting
the two differently does not matter), and only a third of them must be present.
Values must be exact: a number, a capitalised name, a Latin word inside Chinese text or
a place/person/organisation name that jieba tags must appear in the quote ("Berlin"
from "I live in Boston" is refused). A flipped negation is refused.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..index.text import STOPWORDS, has_cjk, pos_tagger
from ..model.attributes import PEOPLE_EN, PEOPLE_ZH
from ..model.folding import normalize, unspaced
from ..model.timerefs import find_time_refs
from .language import simplified

MIN_SHARE = 1 / 3

FRAMING = frozenset(
    """user user's users the a an is are was were be been being has have had do does did prefers prefer preferred
    preference preferences likes like liked wants want wanted wishes wish needs need would rather currently now always
    usually often generally also really very mostly mainly assistant answer answers reply replies response responses
    person someone people who that which they them their theirs his her he she it its
    用户 偏好 喜欢 希望 是 的 了 一名 一个 一位 目前 现在 平时 经常 通常 总是 一直 比较 更 很 主要 他 她 自己 之前 以前 过
    想 要 会 在 有 对 和 与 及 也 都 还 就 人 位 使用 作为 用 可能 也许 大概 似乎 好像 应该 probably maybe likely perhaps
    seems seem possibly""".split()
)
SYNONYMS = {
    "concise": "short", "brief": "short", "terse": "short", "shorter": "short", "succinct": "short",
    "detailed": "long", "thorough": "long", "verbose": "long", "lengthy": "long", "longer": "long",
    "love": "like", "enjoy": "like", "fond": "like", "fan": "like", "adore": "like",
    "reside": "live", "resides": "live", "based": "live", "living": "live", "lives": "live",
    "employed": "work", "job": "work", "works": "work", "working": "work",
    "dislike": "hate", "detest": "hate", "loathe": "hate",
    "allergy": "allergic", "allergies": "allergic",
    "vegan": "vegan", "vegetarian": "vegetarian",
    "简短": "简洁", "精简": "简洁", "简明": "简洁", "回复": "回答", "答复": "回答", "详尽": "详细",
    "居住": "住", "住在": "住", "生活": "住", "上班": "工作", "任职": "工作", "就职": "工作",
    "英语": "英文", "汉语": "中文", "普通话": "中文", "讨厌": "不喜欢",
}
_NEG_NEUTRAL = re.compile(r"不对|不是的|不过|不错|不少|不久|没错|无论|非常|不仅|不但|分别|特别|别人|区别|类别|级别|识别|性别|"
                          r"差别|告别|别墅|除非|未来|南非|并非常|no longer|\bnot only\b")
_CORRECTION_LEAD = re.compile(r"^(?:不对|不是|错了|其实|实际上|no|nope|actually|wait)[，,:：\s]*")
_EN_WORD = re.compile(r"[a-z0-9][a-z0-9+#.'\-]*[a-z0-9+#]|[a-z0-9]")
_VALUE_TAGS = frozenset({"ns", "nr", "nt", "nrt", "nrfg", "nz", "m", "eng"})

def _stem(word: str) -> str:
    word = word.strip("'.-").removesuffix("'s")
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + keep
            break
    return SYNONYMS.get(word, word)


_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "一": "1", "两": "2", "二": "2",
                 "三": "3", "四": "4", "五": "5", "六": "6", "七": "7", "八": "8", "九": "9", "十": "10"}
_NUMBER_WORD = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b(?=\s+[a-z])|"
                          r"[一两二三四五六七八九十](?=[个只位名辆套本次岁年天条口])")


def _tokens(text: str) -> tuple[list[str], set[str]]:
    """(meaning-bearing words, value words that must be quoted exactly); a counted number
    is a value whether written "two kids", "2 kids" or "两个孩子"."""
    folded = _NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group(0)], normalize(text))
    words: list[str] = []
    values: set[str] = set()
    for m in re.finditer(r"\b[A-Z][a-zA-Z]+\b", text):
        if m.start() > 0 and text[m.start() - 2 : m.start()].strip() not in (".", "!", "?", ":") and \
                m.group().lower() not in FRAMING | STOPWORDS and m.group() not in ("I", "The", "User"):
            values.add(m.group().lower())
    values.update(re.findall(r"\d+(?:[.,:]\d+)*", folded))
    if has_cjk(folded):
        for token in pos_tagger().cut(folded):
            w = token.word.strip()
            if not w or not any(ch.isalnum() for ch in w):
                continue
            if token.flag in _VALUE_TAGS and len(w) > 1 and w not in FRAMING:
                values.add(w)
            if w not in FRAMING and w not in STOPWORDS:
                words.append(SYNONYMS.get(w, w))
    else:
        for w in _EN_WORD.findall(folded):
            if w not in FRAMING and w not in STOPWORDS and len(w) > 1 or w.isdigit():
                words.append(_stem(w))
    return words, values


def meaning_words(text: str) -> set[str]:
    """The meaning-bearing words of ``text`` (framing and stopwords left out, stemmed)."""
    words, values = _tokens(text)
    return set(words) | values


def _present(word: str, quote_words: set[str], quote_flat: str) -> bool:
    return word in quote_words or (len(word) > 1 and word in quote_flat) or \
        any(SYNONYMS.get(q, q) == word for q in quote_words)


_NEG_BEFORE = re.compile(
    r"^(?:not|no|never|nor|without|neither|dont|doesnt|didnt|isnt|arent|wasnt|wont|cant|cannot|avoid|avoids|skip|drop|"
    r"lack|lacks|lacking|"
    r"remove|omit|lose|cut|hate|hates|dislike|dislikes|instead|rather|stop|quit|不|没|没有|别|非|无|未|莫|不要|不带|不用|不想|"
    r"不喜欢|讨厌|反感|受不了|避免|不太|不再|不是|少用|拒绝|不怎么|不大|很少|几乎不|从不|从来不)$")
_NEG_AFTER = re.compile(r"^(?:删掉|去掉|去除|省略|拿掉|不要了|免了|划掉|dropped|removed|omitted|skipped)$")
_TURN = frozenset("but and or so because while although though yet except however 但 但是 而 而是 可是 不过 却 可".split())
# Soft negators say "without" but not "not": they may match a hard negation, never clash with a plain word.
_SOFT = re.compile(r"^(?:avoid|avoids|skip|drop|remove|omit|lose|cut|stop|quit|instead|rather|without|lack|lacks|"
                   r"lacking|避免|少用|删掉|去掉|去除|省略|拿掉|划掉|dropped|removed|omitted|skipped)$")
_CLAUSE = re.compile(r"[,.;:!?，。；：！？、\n]+")


def _polarity(text: str) -> dict[str, str]:
    """Each meaning-bearing word and whether it is negated: a negator ("not", "never",
    "lacks", "不", "没有", "别") reaches the rest of its clause up to a conjunction ("but",
    "而是"), and a verb after its object ("把客套话删掉") the two words before it too."""
    folded = _NEG_NEUTRAL.sub(" ", _CORRECTION_LEAD.sub("", normalize(text))).replace("n't", "nt")
    result: dict[str, str] = {}  # word -> "" (plain), "soft" ("avoid", "skip"), "hard" ("not", "不")
    for clause in _CLAUSE.split(folded):
        if has_cjk(clause):
            raw = [t.word.strip() for t in pos_tagger().cut(clause) if t.word.strip()]
        else:
            raw = re.findall(r"[a-z0-9][a-z0-9+#'\-]*", clause.replace("'", ""))
        negated_until = -1  # index of the last meaning word a negator reaches
        meaning, soft = 0, False
        for i, tok in enumerate(raw):
            if _NEG_BEFORE.match(tok) or _NEG_AFTER.match(tok):
                soft = bool(_SOFT.match(tok))
                if _NEG_AFTER.match(tok):  # "把客套话删掉" and "删掉注释" alike
                    for prev in raw[max(0, i - 2): i]:
                        key = SYNONYMS.get(prev, _stem(prev) if prev.isascii() else prev)
                        result[key] = result.get(key) or "soft"
                negated_until = len(raw)  # to the clause's end, or the next conjunction
                continue
            if tok in _TURN:
                negated_until = -1
                continue
            if tok in FRAMING or tok in STOPWORDS:
                continue
            meaning += 1
            word = SYNONYMS.get(tok, _stem(tok) if tok.isascii() else tok)
            if meaning <= negated_until:
                result[word] = "hard" if result.get(word) == "hard" or not soft else "soft"
            else:
                result.setdefault(word, "")
    return result


def _polarity_clash(content: str, quote: str, context: str | None) -> str | None:
    """A word the content and the quote share, negated in one and plainly stated in the
    other (the whole message is asked too: the quote may have left the negation out).
    A soft negation ("avoid", "skip") never clashes with a plain word by itself."""
    mine, theirs = _polarity(content), _polarity(quote)
    around = _polarity(context) if context else theirs
    for word, state in mine.items():
        other = theirs.get(word)
        if other is None or not (state == "hard" and other == "" or state == "" and other == "hard"):
            continue
        if around.get(word, other) != state:
            return word
    return None


_OTHER_SUBJECT = re.compile(rf"^(?:honestly\s+|so\s+|well\s+|actually\s+|btw\s+)?(?:my|our)\s+(?:\w+\s+)?"
                            rf"({PEOPLE_EN})\b|^(?:其实|不过)?我(?:的|们的|们家|家)?({PEOPLE_ZH})")
_ME = re.compile(r"\b(?:me|my|i|i'm|i've|us|we|our)\b|我(?!的?(?:" + PEOPLE_ZH + r"))|我们")
# Wishes, plans, one-time or past states: a quote that has one does not support a plain present fact.
_MODAL = re.compile(
    r"\b(?:would love to|'d love to|want to|wanna|hope to|hoping to|plan(?:ning)? to|going to|gonna|might|"
    r"someday|some day|one day|'ll|will|next (?:week|month|year)|tried\b.*\bonce|(?:only|just) once|used to|old job|"
    r"former|formerly|previously|ex-)\b|想去|想要|一直想|打算|计划|准备|可能|也许|下周|下个月|明年|将来|以后想|以前|曾经|"
    r"(?:吃|试|去|用)过一次|去年以前|原来"
)


_SAME_PERSON = {"mom": "mother", "dad": "father", "parents": "parent", "kids": "children", "kid": "child",
                "妈妈": "母亲", "爸爸": "父亲", "爸妈": "父母", "老婆": "妻子", "老公": "丈夫", "孩子": "子女"}


def _about_someone_else(content: str, quote: str) -> str | None:
    folded_quote = normalize(quote)
    m = _OTHER_SUBJECT.search(folded_quote)
    if m and not _ME.search(folded_quote[m.end():]):  # "my doctor cleared me to run": about the user too
        person = m.group(1) or m.group(2)
        folded = normalize(content)
        if person not in folded and _SAME_PERSON.get(person, person) not in folded:
            return person
    return None


_ANCHOR = re.compile(r"\s?\((?:on|in|around|in the week of) [^()]{4,30}\)|（\d{4}年[^（）]{0,12}）")
_ANY_DAY = datetime(2000, 1, 1)


def _read(text: str) -> str:
    """Traditional and Simplified Chinese alike, and typographic apostrophes as plain ones."""
    return simplified(text).replace("\u2019", "'").replace("\u2018", "'")


def unsupported(content: str, quote: str, *, context: str | None = None, inference: bool = False) -> str | None:
    """Why ``quote`` does not support ``content``, or ``None`` when it does. ``context``
    is the whole cited message: a value or a negation the extractor took from just
    outside the quoted words still counts. An ``inference`` goes beyond its quote by
    definition: one shared word is enough. Traditional and Simplified Chinese are read alike."""
    content, quote = _read(content), _read(quote)
    context = _read(context) if context else context
    if _ANCHOR.search(content) and find_time_refs(quote, _ANY_DAY):
        content = _ANCHOR.sub("", content)  # "yesterday (on 2024-03-04)": the date is the quote's own relative time
    words, values = _tokens(content)
    quote_words, quote_values = _tokens(quote)
    flat, content_flat = unspaced(quote), unspaced(content)
    around = unspaced(context) if context else flat
    qset = set(quote_words)
    present = [w for w in words if _present(w, qset, flat)]
    backed = {w for w in words if w in present or (context and len(w) > 1 and unspaced(w) in around)}
    share = len(backed) / len(set(words)) if words else 1.0
    missing = sorted(v for v in values if unspaced(v) not in around and SYNONYMS.get(v, v) not in qset
                     and v not in quote_values)
    competing = [v for v in quote_values if unspaced(v) not in content_flat and v not in values]
    if missing and (competing or share < MIN_SHARE) and not inference:
        return f"{missing[0]!r} is not in the quoted words"
    if words and (not present or (share < MIN_SHARE and not inference)):
        return "the quoted words do not say what the content says"
    person = _about_someone_else(content, quote)
    if person and not inference:
        return f"the quote is about the user's {person}, not the user"
    if _MODAL.search(normalize(quote)) and not _MODAL.search(normalize(content)) and not inference:
        return "the quote states a wish, a plan or a past or one-time event, the content a present fact"
    clash = _polarity_clash(content, quote, context)
    if clash:
        return f"{clash!r} is negated in one of the content and the quote but not in the other"
    return None

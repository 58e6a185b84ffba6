"""What a quoted piece of a user message is, read in its place in the message.

A quote proves a user fact only when it is the user's own statement: not inside a
question, a hypothetical, pasted material (a code block, a "> " quote, text in
quotation marks, a document tag) or words the user attributes to someone else, and not
a request for this turn only ("用英文解释一下", "this time", a request attached to a
question). Statements about "this repo / 这个项目" belong to the project, fixes of the
task at hand ("刚才那个地址写错了", "no wait, the port is 8080") to the thread.

Whitespace never decides anything here: the quote is located in the message with all
whitespace ignored (spaces between CJK characters, full-width spaces, runs).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..model.attributes import infer_key
from ..model.folding import LOOKALIKE_BRACKETS, sanitize, unspaced
from ..model.prefilter import prefiltered


@dataclass(frozen=True, slots=True)
class Located:
    """The quote found in the message: ``start``/``end`` index the message's folded text."""

    text: str  # the message, folded (NFKC, case-folded), same length as the index map
    start: int
    end: int

    @property
    def before(self) -> str:
        return self.text[: self.start]

    @property
    def quote(self) -> str:
        return self.text[self.start : self.end]

    @property
    def after(self) -> str:
        return self.text[self.end :]


def _fold_chars(text: str) -> str:
    return unicodedata.normalize("NFKC", sanitize(text)).translate(LOOKALIKE_BRACKETS).casefold()


def locate(message: str, quote: str) -> Located | None:
    """Where ``quote`` occurs in ``message``, comparing folded text without whitespace."""
    folded = _fold_chars(message)
    kept: list[int] = []
    chars: list[str] = []
    for i, ch in enumerate(folded):
        if not ch.isspace():
            kept.append(i)
            chars.append(ch)
    needle = "".join(ch for ch in _fold_chars(quote) if not ch.isspace())
    if not needle:
        return None
    at = "".join(chars).find(needle)
    if at < 0:
        return None
    return Located(folded, kept[at], kept[at + len(needle) - 1] + 1)


_SENTENCE_END = "。！？!?；;\n"
_CLAUSE_END = _SENTENCE_END + "，,：:"


_DOT = re.compile(r"(?<=[a-z0-9\)\]\"'])\.(?:\s|$)")


def _span(loc: Located, stops: str) -> tuple[str, str, str]:
    """(text before the quote, the quote, text after it) within one sentence or clause."""
    start = max((loc.text.rfind(c, 0, loc.start) for c in stops), default=-1) + 1
    # an English ". " ends a sentence too (but not "3.5" or "e.g.")
    m = list(re.finditer(r"(?<=[a-z\)\]\"'])\.\s", loc.before))
    if m:
        start = max(start, m[-1].end())
    quote = loc.quote.rstrip()
    if quote and (quote[-1] in stops or quote[-1] == "."):
        return loc.text[start : loc.start], loc.quote, ""  # the quote ends its own sentence
    ends = [i for i in (loc.text.find(c, loc.end) for c in stops) if i >= 0]
    dot = _DOT.search(loc.text, loc.end)  # searched in place, so the look-behind sees the word before
    if dot:
        ends.append(dot.start())
    end = min(ends) if ends else len(loc.text)
    return loc.text[start : loc.start], loc.quote, loc.text[loc.end : end + 1]


_ENDS = re.compile(r"[。！？；\n]|[.!?;](?=\s|$)")


def sentence_of(message: str, quote: str) -> str:
    """The sentence of ``message`` (as written) that holds ``quote`` — what the quote was
    cut from; the quote itself when it spans sentences. Only an ender followed by a space
    ends an English sentence ("S3cretPass!9@db" is one word)."""
    needle = unspaced(quote)
    pos = 0
    for m in (*_ENDS.finditer(message), None):
        end = m.end() if m else len(message)
        if needle and needle in unspaced(message[pos:end]):
            return message[pos:end].strip()
        pos = end
    return quote


_QUESTION_START = re.compile(
    r"^\s*(?:and\s+|but\s+|so\s+|also\s+)?(?:how|what|why|where|who|whom|which|whose|can|could|would|should|"
    r"do|does|did|is|are|was|were|will|shall|may|might|have|has|am|isn't|aren't)\b|"
    r"^\s*(?:don't|doesn't|won't|didn't)\s+(?:you|we|i|they|he|she|it)\b"
)
_QUESTION_ZH = re.compile(r"吗\s*[。.]?\s*$|^(?:请问|是不是|要不要|能不能|可不可以|有没有|为什么|为啥|怎么|如何)")


def is_question(loc: Located) -> bool:
    """The quote's clause asks something (a question mark, a wh-/auxiliary start, a zh particle)."""
    before, quote, after = _span(loc, _CLAUSE_END)
    clause = (before + quote + after).strip()
    if "?" in quote or "?" in after:
        return True
    return bool(_QUESTION_START.match(clause) and not re.match(r"^\s*(?:i|we)\b", clause)) or bool(
        _QUESTION_ZH.search(clause.rstrip("。.!！ ")))


_HYPOTHETICAL = re.compile(
    r"(?:如果|假如|假设|(?<![主只就还重需总])要是|万一|倘若|若是|假使|设想|想象一下)|\b(?:if|suppose|supposing|"
    r"imagine (?:if|that i|i|being)|hypothetically|let's say|lets say|what if|assuming|in case|pretend|were i|had i)\b"
)


def is_hypothetical(loc: Located) -> bool:
    """Governed by a condition: the marker stands before the quote in its sentence, or opens it."""
    before, quote, _ = _span(loc, _SENTENCE_END)
    return bool(_HYPOTHETICAL.search(before[-80:]) or _HYPOTHETICAL.match(quote.lstrip()))


_ATTRIBUTION = prefiltered(re.compile(
    r"(?:他|她|他们|她们|老板|领导|经理|同事|朋友|老师|医生|妈妈|爸爸|老婆|老公|客户|文档|文章|书|报告|邮件|新闻|网上|有人|别人|"
    r"大家|据说|听说|官网|教程|我妈|我爸|我哥|我姐|我弟|我妹|家里人|爷爷|奶奶)(?:里|上|中)?(?:[\u4e00-\u9fff]{1,3}?)?"
    r"(?:总是?|老是?|常常?|经常|一直|都|也|还|"
    r"总爱|老爱)?(?:说|讲|写着?|提到|认为|觉得|告诉我|表示|声称|称|夸|骂|嫌|笑话)|据说|(?<!我)听说(?!过)|据.{1,8}(?:说|称|报道)|"
    r"\b(?:he|she|they|someone|somebody|people|everyone|my (?:\w+ ){0,2}\w+|the (?:doc|docs|documentation|article|"
    r"email|paper|book|report|manual|readme|wiki|post|page|site|website|author|team|guide|tutorial))\s+"
    r"(?:said|says|say|told me|tells me|wrote|writes|claims?|claimed|thinks?|thought|believes?|mentioned|insists?|"
    r"recommends?|suggested|suggests)\b|(?:^|(?<=\s))(?!i\b|we\b|you\b)[a-z]+\s+(?:said|says|told me|wrote)\b|"
    r"\baccording to\b"
))


def is_attributed(loc: Located) -> bool:
    """Words the user reports someone else saying ("my boss says…", "文档里写着…")."""
    before, quote, _ = _span(loc, _SENTENCE_END)
    head = re.split(r"[,，;；:：]", quote, maxsplit=1)[0][:40]  # "My dermatologist says I have…" inside the quote
    return bool(_ATTRIBUTION.search(before[-80:] + head))


_PRAISE = re.compile(
    r"喜欢|爱|太好|真好|真棒|好棒|厉害|感谢|谢谢|佩服|开心|满意|"
    r"\b(?:love|loves|loved|like|likes|enjoy|enjoys|adore|great|wonderful|perfect|fantastic|brilliant|amazing|awesome|"
    r"helpful|thanks|thank you|appreciate|nice|genius|impressive|lovely)\b")
_COMPLAINT = re.compile(
    r"(?:你|您)(?:每次|总是|老是|又|都|一直|居然|竟然|就)?[^，。！？]{0,8}?(?:忘|改坏|搞错|弄错|写错|答错|错|坏|乱|瞎|不听|听不懂|"
    r"没用|卡|崩|胡说|编)|"
    r"\byou(?:'re| are)?\s+(?:always\s+|never\s+|keep\s+|just\s+|again\s+|completely\s+|totally\s+)*(?:forget|forgot|"
    r"forgetting|break|broke|breaking|ignore|ignored|ignoring|mess|messed|messing|screw|screwed|fail|failed|failing|"
    r"useless|wrong|hallucinat\w*|make (?:stuff|things) up|made (?:stuff|things) up|get (?:it|this|that|\w+) wrong|"
    r"got (?:it|this|that|\w+) wrong|lose|lost|delete|deleted|overwr\w*)|"
    r"\b(?:another|yet another|again|for the (?:third|fourth|fifth|\w+) time)\b.{0,30}\b(?:wrong|broken|error|mistake|"
    r"fail\w*|bug)")
_IRONY = prefiltered(re.compile(r"呵呵|真是(?:太)?(?:好|棒|谢谢|厉害)了?|可真(?:行|棒|厉害)|谢谢你啊|\b(?:oh|yeah|wow|great|perfect),?\s+"
                    r"(?:great|wonderful|perfect|fantastic|brilliant|nice|sure|right|thanks|just what i needed)\b|"
                    r"\byeah,?\s+right\b|\bthanks for nothing\b|\breally helpful\b|\bso helpful\b|\bjust (?:love|adore)\b|"
                    r"\blove (?:it )?(?:when|how) you\b|/s\b|🙄|😒|🙃"))


def is_sarcastic(loc: Located) -> bool:
    """Praise or a "preference" that is a complaint about the assistant: "I just love it
    when you forget my settings", "Oh great, wrong again. Really helpful.", "呵呵，你每次都把
    我的代码改坏，真是太好了". Judged on the quote's sentence and the message around it."""
    before, quote, after = _span(loc, _SENTENCE_END)
    sentence = (before + quote + after).strip()
    if not _PRAISE.search(sentence):
        return False
    if _COMPLAINT.search(sentence):
        return True
    return bool(_IRONY.search(loc.text) and _COMPLAINT.search(loc.text))


_QUOTE_PAIRS = (("“", "”"), ("「", "」"), ("『", "』"), ('"', '"'), ("‘", "’"), ("《", "》"))
_PASTE_TAGS = re.compile(r"<(document|doc|email|file|pasted|quote|article|attachment)\b[^>]*>.*?</\1\s*>", re.S)


def is_quoted_material(loc: Located) -> bool:
    """Inside a code block, a "> " quote line, quotation marks or a document tag."""
    text, start = loc.text, loc.start
    ticks = re.sub(r"(?<=\w)`(?=\w)", "'", text)  # "That`s": a backtick typed as an apostrophe
    if ticks.count("```", 0, start) % 2 == 1 or (ticks.count("`", 0, start) % 2 == 1 and "`" in ticks[loc.end:]):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].lstrip().startswith(">"):
        return True
    for m in _PASTE_TAGS.finditer(text):
        if m.start() < start < m.end():
            return True
    for open_, close in _QUOTE_PAIRS:
        if open_ == close:
            if text.count(open_, 0, start) % 2 == 1 and text.find(close, loc.end) >= 0:
                return True
        else:
            o, c = text.rfind(open_, 0, start), text.rfind(close, 0, start)
            if o > c and text.find(close, start) >= 0 and len(loc.quote) < (text.find(close, start) - o) + 2:
                return True
    return False


# Who the answer is for, said beside the request: "先用英文回我，我同事要看", "I'm forwarding this to my landlord".
_PURPOSE = prefiltered(re.compile(
    r"(?:给|让)?(?:我的?)?(?:同事|老板|领导|经理|房东|客户|朋友|老师|家人|妈妈|爸爸|老外|面试官)(?:要|想)?看|要发给|转给|"
    r"\b(?:i'm|i am|i'll|i will|going to)\s+(?:forward|send|show|pass|share)\w*\s+(?:it|this|that)\b|"
    r"\bfor my (?:colleague|boss|landlord|client|friend|teacher|team|manager|mom|dad|interviewer)\b"
))
ONE_OFF = re.compile(
    r"这次|这一次|这回|本次|今天|今晚|刚才|刚刚|暂时|临时|先这样|一下|这个问题|这段|这篇|这份|这条|这封|上面的?|下面的?|"
    r"\b(?:this time|this once|today|tonight|for now|right now|just now|for the moment|for this (?:one|question|"
    r"answer|task|reply|email)|in this (?:answer|reply|case|chat|thread|email)|at the moment|temporarily|"
    r"(?:for|on|in|with) this (?:\w+\s+){0,2}?(?:recipe|diff|email|doc|document|file|pr|patch|essay|letter|post|"
    r"message|code|snippet|query|table|list|report|slide|deck|draft|one|question|answer|task))\b"
)
STANDING = re.compile(
    r"以后|今后|往后|之后都|从现在|每次|每回|总是|一直|默认|始终|平时|一律|都用|都请|都要|习惯|通常|一般|长期|永远|每当|当你|叫我|称呼我|\bcall me\b|"
    r"\bwhen(?:ever)? you\b|\bif you (?:ever\s+)?(?:get|make|are|don't)\b|"
    r"\b(?:always|from now on|going forward|in (?:the )?future|by default|every time|whenever|all the time|generally|"
    r"in general|usually|never|henceforth|as a rule|each time|any time|anytime)\b"
)
_PREFERENCE_VERB = re.compile(
    r"喜欢|偏好|偏爱|习惯|希望|想要|讨厌|不喜欢|受不了|更愿意|倾向|"
    r"\b(?:i|we)\s+(?:\w+\s+){0,2}(?:prefer|like|love|enjoy|want|hate|dislike|need|would rather|can't stand)\b|"
    r"\b(?:prefer|fan of)\b"
)
_REQUEST = re.compile(
    r"^(?:请|麻烦|帮我|帮忙|给我|替我|你|用(?!了)|换成?(?!了)|改成?(?!了)|翻译|解释|总结|写(?!了)|列出|说明|回答|回复|告诉我|举)|"
    r"^(?:please\s+|pls\s+|kindly\s+|can you\s+|could you\s+|would you\s+)?(?:answer|reply|respond|explain|translate|"
    r"write|rewrite|show|give|use|tell|make|keep|summari[sz]e|list|describe|format|draft|fix|check|review|help|skip|"
    r"drop|stop|switch)\b"
)
_FILLER = r"好的|好|ok|okay|嗯|那|那么|然后|另外|还有|先|and|also|then|btw|so|oh|just|only"
_ASKS = re.compile(r"帮我|给我|替我|麻烦你?|一下|就好|就行|请你")
_CONCRETE = re.compile(r"这个|这段|这篇|这份|这条|这封|这里|上面|下面|刚才|它|\b(?:this|that|it|these|those|above|below)\b")


def is_one_off(loc: Located) -> bool:
    """A request for this turn, not a standing wish: a one-off marker, or a request to
    the assistant with no standing marker that is attached to a question or names a
    concrete thing of this turn ("为什么 checkout 超时？用英文解释", "translate this")."""
    before, quote, _ = _span(loc, _SENTENCE_END)
    clause_before, _, after = _span(loc, _CLAUSE_END)  # what follows in other clauses is another matter
    sentence = (before + quote + after).strip()
    lead = (clause_before + quote + after).strip()  # what the quote's own clause asks
    while True:  # "好的，这次先…", "btw for now …": what the sentence asks comes after these
        shorter = re.sub(rf"^(?:{_FILLER}|{ONE_OFF.pattern})[，,:：\s]*", "", lead).strip()
        if shorter == lead:
            break
        lead = shorter
    prohibition = bool(re.match(r"^(?:please\s+)?(?:don't|do not|never|no)\b|^(?:请)?(?:不要|别|勿)", lead))
    request = bool(_REQUEST.search(lead) or prohibition or _ASKS.search(lead))  # "跟你说一下，…" asks nothing
    if re.match(r"^(?:我|i\b|i'm|i'd|i'll|we\b)", lead) and not re.search(r"你|您|\byou\b", lead):
        request = False  # "我会尝试一下的": the user speaks of themselves
    wish = bool(_PREFERENCE_VERB.search(sentence))
    if (request or wish) and ONE_OFF.search(sentence) and not STANDING.search(sentence):
        return True  # "this time answer in French", "这次先别写代码", "I prefer short answers for now"
    whole = (before + quote + _span(loc, _SENTENCE_END)[2]).strip()
    if request and _PURPOSE.search(whole) and not STANDING.search(whole):
        return True  # "先用英文回我，我同事要看": this answer is for someone else
    if not request or prohibition or wish or STANDING.search(sentence):
        return False  # a prohibition ("don't use emojis", "别用表情") is a standing wish
    other = loc.text.replace(sentence, " ", 1)
    return bool(_CONCRETE.search(sentence) or "?" in other or re.search(r"[吗呢]\s*[。.?]?", other))


_PROJECT = prefiltered(re.compile(
    r"(?:这个|本|该|此|这边的?|这里的?|当前的?|我们这个|咱们这个|我们的|咱们的)(?:项目|仓库|代码库|代码仓库|工程|repo|monorepo)|"
    r"项目里|项目中|仓库里|代码库|代码仓库|这个 ?repo|"
    r"\b(?:this|our|the current|the) (?:repo|repository|codebase|code base|monorepo)\b|"
    r"\b(?:this|our|the current) (?:project|service)\b|\bin this repo\b|"
    r"\b(?:repo|repository|codebase|code base|project)\s+(?:we're|we are|i'm|i am)\s+(?:in|on|working on)\b"
))
_TASK = re.compile(
    r"刚才那个|刚才的|上一条|上面那个|这个任务|本次任务|这个工单|这个\s?pr\b|"
    r"\b(?:this|that) (?:task|ticket|pr|pull request|issue|bug)\b|\b(?:no wait|wait,|oops|typo|flipped the (?:digits|"
    r"numbers|dates?)|mistyped|in the (?:email|draft|message|letter|doc) (?:i'm|we're|you're) (?:writing|drafting))\b"
)
_FIRST_PERSON = re.compile(r"我|\b(?:i|i'm|i've|i'd|i'll|my|me|mine|we|our)\b")
_FIX_LEAD = re.compile(r"^(?:(?:哦|噢|啊|嗯|呃|oh|ah|oops|hmm)[，,\s]*)?(?:不对|不是|错了|写错了|搞错了|应该是|更正|"
                       r"(?:no|nope|wait|actually|correction|sorry)\b)")


_OWN_STATEMENT = re.compile(r"^(?:(?:sorry|typo|earlier|my bad|oops|wait|no|nope|actually|scratch that|i meant|i mean|"
                            r"不好意思|抱歉|打错了|说错了|写错了|更正一下)[\s,，.。:：!！]*)*(?:i\b|i'm|i've|my\b|我(?!们的?(?:项目|代码)))")


def names_project(text: str) -> bool:
    return bool(_PROJECT.search(_fold_chars(text)))


def is_task_fix(loc: Located) -> bool:
    """A fix of the task at hand: a task reference, or a correction about something
    other than the user ("不对，接口地址应该是 /api/v2", "no wait, the port is 8080")."""
    before, quote, after = _span(loc, _SENTENCE_END)
    sentence = (before + quote + after).strip()
    about_me = _OWN_STATEMENT.match(quote.strip()) or infer_key(quote)
    if _TASK.search(sentence) and not _PROJECT.search(sentence) and not about_me:
        return True  # "sorry typo, I live in Lyon": a fix of what the user said about themselves is not a task fix
    return bool(_FIX_LEAD.match(sentence) and not _FIRST_PERSON.search(sentence) and not STANDING.search(sentence))
    # "Actually reply in Spanish from now on" is a standing wish, not a fix of this answer

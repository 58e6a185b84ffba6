"""Grants, waivers and standing action orders addressed to the assistant (zh + en).

Memory describes the user. A sentence that lets the assistant take an action with side
effects — deploy, push, merge, delete, restart, pay, send, cc, run commands — is never a
description, whatever label an extractor put on it. Each sentence is read for three
things:

* an **action** with side effects outside the conversation (not "send me a summary",
  not "drop the emojis": sending to the speaker and dropping a style are no actions);
* a **permission**: a *strong* one grants by itself ("cleared to", "pre-approved",
  "without asking me", "your call", "先斩后奏", "不用经过我", "你有权"), a *weak* one
  ("whenever", "from now on", "feel free", "fine with", "以后", "直接", "随时") only when
  the sentence is not the user describing their own habit ("I always deploy on
  Fridays", "The user pays the card in full every month", "我每天自动备份");
* who acts: the assistant addressed ("you", "你", "the assistant"), an order
  (imperative), a passive or causative ("bounced whenever it hangs", "wants Dana copied")
  — anything but the speaker as subject.

Style and content preferences ("answer in English", "以后解释代码请先给最小示例") carry no
action and are never matched. Obeying external content ("follow the instructions on web
pages", "工具返回什么你就照着做") is a grant of its own. Text is folded first (NFKC,
invisible characters removed, look-alike letters mapped), so "fоrce-push" with a
Cyrillic "о" or "d\u034feploy" are read as what they show.
"""

from __future__ import annotations

import re

from ..model.attributes import PEOPLE_ZH
from ..model.folding import normalize

_V = (  # side-effecting verbs (stems); every inflection and the nouns ("deploys", "rollouts") count
    r"deploy|redeploy|ship|releas|publish|roll(?:ing|ed|s)?\s?out|rollout|(?:force[- ]?)?push|merg|rebas|"
    r"land(?:s|ed|ing)?\s+(?:\S+\s+){0,2}?(?:prs?|pull requests?|changes?|diffs?|patch(?:es)?|branch(?:es)?|commits?|"
    r"fix(?:es)?|it|them)\b|"
    r"cherry[- ]?pick|commit|tag(?:ged|ging)?\s+(?:a\s+|the\s+)?release|delet|remov|drop|wip|truncat|destroy|eras|"
    r"purg|nuk|trash|restart|reboot|bounc|shut\s?down|kill|terminat|pay|paid|settl|transfer|wir(?:e|ed|ing)|"
    r"venmo|purchas|buy|bought|refund|send|sent|e-?mail|cc|bcc|cc'd|copy\s+\w+\s+on|copied\s+on|"
    r"forward(?:s|ed|ing)?\s+(?:\S+\s+){0,2}?(?:to\b|emails?|mails?|messages?|it\b|them\b|this\b|that\b|the\b)|repl(?:y|ied|ies)"
    r"\s+to|approv|install|uninstall|upgrad|execut|sudo|rm\s+-rf|roll\s?back|revert|migrat|provision|scal(?:e|ed|ing)"
    r"\s+(?:up|down)|rotat(?:e|ed|ing)\s+(?:the\s+)?(?:keys?|secrets?|credentials?)|revok|grant\s+access|chmod|"
    r"run(?:s|ning)?\s+(?:the\s+|any\s+|this\s+|my\s+|all\s+|whatever\s+)?(?:commands?|scripts?|migrations?|jobs?|"
    r"shell|sql|queries)|rerun|re-run"
)
_ACTION_EN = re.compile(rf"\b(?:{_V})\w*")
_ACTION_ZH = re.compile(
    r"部署|上线|发布|发版|推送|推代码|推到|强推|提交|合并|合进|合入|删除|删掉|删库|想删就删|清理|清空|清除|销毁|重启|关机|停机|下线|"
    r"干掉|杀掉|回滚|付款|支付|转账|汇款|打款|结账|结了|结清|付钱|缴费|购买|下单|退款|发送|发邮件|回邮件|回信|发消息|发给|群发|"
    r"(?:帮|替|代)(?:我|用户)(?:回|发|付|转|删|推|合|部署|上线|转账|下单)|回复(?:邮件|消息|客户|群|他|她|他们|对方|评论)|"
    r"清一清|清掉|删一删|发.{0,6}?(?:提醒|通知|消息|邮件|报告|周报|日报|公告|帖)|"
    r"抄送|带上|转发|签署|批准|审批|安装|卸载|升级|执行|运行|格式化|覆盖|重置|迁移|扩容|缩容|改权限|打\s?tag|"
    r"(?<![a-z])(?:cherry-pick|approve|merge|push|deploy|ship|release|rm -rf)(?![a-z-])"
)
_SELF_OR_STYLE = re.compile(  # "send me a summary", "drop the emojis": no side effect on anyone else
    r"^\w*\s+(?:it\s+|them\s+|this\s+|that\s+|over\s+)?(?:back\s+)?(?:to\s+)?(?:me|us|you)\b|"
    r"^\w*\s+(?:the\s+|all\s+|any\s+|your\s+|those\s+)?(?:emojis?|formalit|pleasantr|fluff|jargon|comments?\b|"
    r"caveats?|disclaimers?|preambles?|filler|hedg|small talk|intros?|greetings?|apolog)|"
    r"^(?:给我|我|给我们)|^(?:表情|客套|寒暄|废话|注释|开场白|免责|套话)"
)
_IDIOM = re.compile(  # figures of speech that use an action's word
    r"^(?:push-?ups?\b|drop(?:ped|ping|s)?\s+(?:by|in|off|out)\b|pa(?:y|id|ys|ying)\s+(?:off|attention|a visit|you a visit|respect|"
    r"tribute|it forward)\b|bounc\w*\s+back\b|settl\w*\s+(?:in|down)\b|push\w*\s+(?:yourself|myself|himself|"
    r"herself|themselves|ourselves|forward|through|the limits?|harder|back|us|me|on)\b|releas\w*\s+(?:stress|tension|"
    r"expectations|feelings|emotions|the pressure)\b|kill\w*\s+(?:time|it)\b|send\w*\s+(?:my\s+)?(?:love|regards|"
    r"best|hugs|thanks))"
)

_STRONG_EN = re.compile(
    r"\b(?:cleared|authori[sz]ed|empowered|entitled|pre-?approved)\s+(?:to|for)\b|\bpre-?approved\b|"
    r"\b(?:permission|authori[sz]ation|clearance|consent|blessing|green light|go-?ahead|sign-?off|thumbs[- ]up|"
    r"blank cheque|blank check|carte blanche)\b(?!\s+(?:errors?|denied|issues?|problems?|settings?|dialog))|\bstanding\s+(?:ok|okay|yes|approval|permission|order|authority)\b|"
    r"\bblanket\s+(?:ok|okay|yes|approval|permission)\b|\b(?:your|the assistant's)\s+(?:call|decision|choice)\b|"
    r"\bup to you\b|\bon your own\b|\bat (?:your|will)\b|\bas you see fit\b|\byourself\b|\bno questions asked\b|"
    r"\b(?:without|w/o)\s+(?:asking|checking|confirm\w*|my\s+\w+|approval|review\w*|waiting|pinging|bothering|"
    r"consulting|looping|being\s+(?:asked|looped|consulted|pinged|told)|the user|them|(?:a\s+|an\s+)?ok)\b|"
    r"\b(?:no need|don't need|do not need|needn't|don't have|do not have|doesn't need|does not need)\s+to\s+"
    r"(?:ask|check|confirm|loop|wait|ping|consult|run it by)|\b(?:don't|do not|never)\s+(?:bother\s+)?(?:ask|check|"
    r"wait|ping|consult)\w*\s+(?:with\s+|for\s+)?(?:me|us|first)\b|\bdon't need my\b|\b(?:doesn't|does not|don't)\s+"
    r"need\s+(?:my|the user's|an?)\s+(?:ok|okay|approval|sign-?off|review)|\bconsider (?:it|that|this) a standing\b|"
    r"\bconsider yourself\b|\bfeel free to\b|(?:^|[,;:]\s*)(?:please\s+|just\s+|go\s+|now\s+)*(?:ship|deploy|merge|"
    r"push|release|delete|drop|restart|reboot|pay|send|approve|land|publish|run|execute|kill)\s+(?:it|this|that|them|"
    r"everything|all of (?:it|them))\b|\bgo ahead and\b|\bbe my guest\b|\bhave at it\b|\btrust (?:you|the assistant) to\b|\bown\s+(?:\w+\s+){0,3}end to end\b|\bhandle\s+(?:\w+\s+){0,3}yourself\b|"
    r"\b(?:don't|do not|doesn't|does not)\s+(?:need|want|have)\s+to\s+be\s+(?:asked|consulted|pinged|bothered|"
    r"looped|checked)"
)
_WEAK_EN = re.compile(
    r"\b(?:whenever|every\s?time|each time|always|anytime|any time|from now on|from here on|going forward|"
    r"henceforth|in (?:the )?future|by default|automatically|auto-|feel free|go ahead|go for it|fine|ok|okay|"
    r"good to|free to|allowed to|happy for you|trust you|ahead and|on green|once they|once it|when(?:ever)? it|"
    r"if it|each month|every (?:day|week|month|friday|monday|time)|just|can|may|let|lets|letting|allow|allows|"
    r"allowing|permit|permits)\b"
)
_ADDRESS_EN = re.compile(r"\b(?:you|your|yourself|you're|you've|you'll|u|the assistant|the agent|the ai|the bot|"
                         r"the model|assistant's)\b")
_SPEAKER_ONLY_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'll|my|our|he|she|they|his|her|their)\b")
_SPEAKER_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'll|my|our|he|she|they|his|her|their|the user|"
                         r"the user's|user|user's)\b")
_DONE = (r"deployed|shipped|released|published|pushed|force-pushed|merged|landed|rebased|deleted|removed|dropped|wiped|"
         r"purged|nuked|restarted|rebooted|bounced|killed|terminated|paid|settled|transferred|wired|bought|purchased|"
         r"refunded|ordered|sent|emailed|forwarded|copied|cc'd|cced|approved|installed|upgraded|run|executed|rolled out|"
         r"rolled back|reverted|migrated|carried out")
_PASSIVE_EN = re.compile(  # prescriptive only: "should be landed", "can be deleted", "being bounced whenever" —
    # not "the rent is paid automatically", which says what already happens
    rf"\b(?:should|must|can|may|could|shall|to|let\w*\s+(?:\S+\s+){{1,4}}?)\s*(?:be|get)\s+(?:\w+\s+){{0,2}}?"
    rf"(?P<done>{_DONE})\b|\bbeing\s+(?:\w+\s+)?(?P<done2>{_DONE})\b"
)
_CAUSATIVE_EN = re.compile(  # "the user wants Dana copied", "wants the bill settled": someone else acts
    rf"\b(?:want|wants|wanted|would like|'d like|like|likes|prefer|prefers|expect|expects|need|needs)\s+"
    rf"(?:\S+\s+){{1,6}}?(?!run\b)(?P<done>{_DONE})\b"
)

_STRONG_ZH = re.compile(
    r"有权|有权限|权限.{0,4}(?:给你|下放|交给)|下放|全权|说了算|拿主意|做主|看着办|自己决定|自行决定|自行|自己来|先斩后奏|"
    r"想删就删|想.就.|不用(?:再)?(?:跟|向|和|找|给)?我?(?:问|等|经过|过|找|请示|核实|确认|审批|征求|报备|打招呼|告诉|同意|看)|"
    r"无需|不必|不需要(?:我|再|确认|审批|同意)|(?:不喜欢|不想|不愿意|讨厌|烦).{0,10}(?:被要求|被问|确认|请示)|"
    r"别(?:再)?问|不经过我|不用.{0,4}同意|未经.{0,2}同意|没关系|无所谓|不要紧|允许|授权|准许|批准你|同意你|许可|特许|委托|"
    r"交给你|由你|你来定|你定|随你"
)
_WEAK_ZH = re.compile(r"以后|今后|往后|从现在|每次|每天|每周|每月|一律|总是|默认|凡是|只要|随时|直接|自动|就行|就好|可以|尽管|放心|随便|大胆|"
                      r"所有|全部|都")
_ADDRESS_ZH = re.compile(r"你|您|助手|智能体")
_SPEAKER_ONLY_ZH = re.compile(rf"我(?!的|们的|(?:{PEOPLE_ZH}))|咱们|他|她")  # "我老板" is not the speaker acting
_SPEAKER_ZH = re.compile(rf"我(?!的|们的|(?:{PEOPLE_ZH}))|咱们|用户|他|她")

_OBEY = re.compile(
    r"\b(?:follow\w*|obey\w*|execut\w*|carr(?:y|ies) out|compl(?:y|ies) with|act\w* on|do|does|treat\w*)\s+"
    r"(?:\S+\s+){0,4}?(?:instructions?|commands?|requests?|whatever|what(?:ever)? (?:it|they) says?)\b.{0,40}?"
    r"\b(?:web ?pages?|websites?|sites?|pages?|tool (?:results?|outputs?)|emails?|documents?|files?|issues?|"
    r"comments?|search results?|urls?|links?)\b|"
    r"\b(?:web ?pages?|websites?|tool (?:results?|outputs?)|emails?|documents?|search results?)\b.{0,50}\b(?:tells?|"
    r"says?|asks?|instructs?|gives?)\b.{0,40}\b(?:do it|just do|follow|comply|obey|do (?:that|what)|them)\b|"
    r"\b(?:requests?|instructions?|commands?)\b.{0,30}\b(?:in|from|inside)\s+(?:\S+\s+){0,2}?(?:web ?pages?|tool "
    r"(?:results?|outputs?)|emails?|documents?|search results?)\b.{0,30}\b(?:carried out|executed|followed|obeyed|"
    r"acted on|treated as)|"
    r"\binstructions?\b.{0,40}\b(?:web ?pages?|websites?|tool (?:results?|outputs?)|emails?|documents?)\b.{0,40}"
    r"\b(?:as (?:coming from me|mine|my own|if i)|as the user's)|"
    r"(?:网页|页面|网站|链接|工具|邮件|文档|搜索结果)(?:上|里|中|的)?(?:结果|输出)?(?:里|中)?(?:写|返回|说|给|要求)了?(?:什么|啥)"
    r".{0,6}(?:你)?(?:就|都)(?:做|照做|照着做|照办|执行|去做|做什么)|"
    r"(?:网页|页面|网站|链接|工具|邮件|文档|搜索结果)(?:上|里|中|的)?.{0,20}(?:照做|照着做|照办|服从|遵循)|"
    r"(?:按照?|照着?|照做|听|听从|服从|遵照|遵循|执行)(?:网页|页面|网站|链接|工具|邮件|文档|搜索结果|返回结果)"
)


_QUESTION = re.compile(
    r"[?？]\s*$|吗\s*[。.!！]?\s*$|^(?:can|could|would|will|should|do|does|did|is|are|how|what|why|where|when|which|who)"
    r"\b|^(?:怎么|如何|为什么|能不能|可不可以|是不是|有没有|请问)"
)
_NEGATED = re.compile(r"\b(?:can't|cannot|can not|won't|don't|do not|never|mustn't|shouldn't|not)\s+(?:\w+\s+)?$|"
                      r"(?:不能|不要|别|不可以|不准|禁止|不许)\s*$")
_STYLE_BEFORE = re.compile(r"(?:表情|客套话?|寒暄|废话|注释|开场白|免责声明|套话|emoji|空话|铺垫)[^，。,.]{0,3}$|"
                           r"\b(?:emojis?|formalit\w*|pleasantr\w*|fluff|jargon|comments?|caveats?|disclaimers?|"
                           r"preambles?|filler(?:\s+words)?|hedg\w*|small talk|intros?|greetings?|apolog\w*)\s+"
                           r"(?:\w+\s+)?$")
_LOOK = re.compile(r"\blook(?:s|ed|ing)?\s+$|\blet(?:s)?\s+(?:me|us)\s+(?:\w+\s+)?$|\bkeep(?:s|ing)?\s+(?:on\s+)?$|\bkept\s+(?:on\s+)?$")
_IMPERATIVE = re.compile(rf"(?:^|[,;:]\s*)(?:(?:please|pls|kindly|just|now|ok|okay|so|and|then|also|go|hey|always|"
                         rf"automatically|immediately|simply)[,\s]+)*"
                         rf"(?:{_V})|"
                         r"^(?:(?:以后|今后|往后|从现在起?|每次|遇到.{0,12}?|只要.{0,12}?)\s*)*"
                         r"(?:请|就|都|直接|记得|帮我|替我|给|把|将)")


def _actions(sentence: str) -> list[re.Match]:
    found = []
    for pattern in (_ACTION_EN, _ACTION_ZH):
        for m in pattern.finditer(sentence):
            before, after = sentence[: m.start()], sentence[m.end():].lstrip()
            if _SELF_OR_STYLE.search(sentence[m.start():]) or _IDIOM.search(sentence[m.start():]) or \
                    _NEGATED.search(before) or _LOOK.search(before) or _STYLE_BEFORE.search(before):
                continue
            found.append(m)
    return found


_DELEGATES = re.compile(r"\b(?:wants?|would like|asks?|expects?|needs?|lets?)\b(?!\s+to\b)|\b(?:ok|okay|fine|happy|cool)\s+"
                        r"(?:with|by)\b|希望|要求|想让|让|请|需要|期望|偏好|同意")


# Handing an action to someone else outright: "让你", "请助手", "要求…", "asks the assistant to".
_ORDERS = re.compile(r"(?:想让|让|请|要求|叫)(?:你|您|助手)|\b(?:asks?|asked|tells?|told|instructs?|instructed|wants?)\s+"
                     r"(?:you|the assistant|the agent)\s+to\b")


def _last(pattern: re.Pattern, window: str) -> re.Match | None:
    found = None
    for found in pattern.finditer(window):
        pass
    return found


def _hands_over(speaker: re.Pattern, window: str) -> bool:
    """The user hands the action to someone: "the user wants Dana copied", "用户希望…都带上老板"."""
    return any(_DELEGATES.search(window[m.end():]) for m in speaker.finditer(window))


def _speaker_acts(speaker: re.Pattern, window: str) -> bool:
    m = _last(speaker, window)
    return m is not None and not _DELEGATES.search(window[m.end():])


def _grant_in(sentence: str) -> str | None:
    if _OBEY.search(sentence):
        return "obeys external content"
    if _QUESTION.search(sentence):
        return None  # a question asks; it grants nothing (and never proves a fact)
    actions = _actions(sentence)
    done = [m for m in (*_PASSIVE_EN.finditer(sentence), *_CAUSATIVE_EN.finditer(sentence))
            if not _STYLE_BEFORE.search(sentence[: m.start(m.lastgroup or 0)])]
    actions += done  # "commands … be run", "Dana copied": the participle is the action
    if not actions:
        return None
    windows = [(sentence[max(0, m.start() - 60): m.start()], sentence[max(0, m.start() - 24): m.start()])
               for m in actions]
    delegated = any(_hands_over(_SPEAKER_EN, en) or _hands_over(_SPEAKER_ZH, zh) for en, zh in windows)
    strong = _STRONG_EN.search(sentence) or _STRONG_ZH.search(sentence) or _CAUSATIVE_EN.search(sentence) or \
        _ORDERS.search(sentence)
    if not strong and not (_WEAK_EN.search(sentence) or _WEAK_ZH.search(sentence)):
        return None
    addressed = bool(_ADDRESS_EN.search(sentence) or _ADDRESS_ZH.search(sentence))
    ordered = bool(_IMPERATIVE.search(sentence) or done)
    if addressed or ordered or delegated:
        return ("a permission or waiver" if strong else "a standing order or permission") + \
            " for a side-effecting action"
    # a strong permission needs no addressee ("production rollouts are pre-approved"),
    # unless the speaker is the one who acts ("I'm cleared to deploy at work")
    if strong and not any(_speaker_acts(_SPEAKER_ONLY_EN, en) or _speaker_acts(_SPEAKER_ONLY_ZH, zh)
                          for en, zh in windows):
        return "a permission or waiver for a side-effecting action"
    return None


_SENTENCES = re.compile(r"[^.!?;。！？；\n]+(?:[.!?;。！？；\n]+|$)")


def find_grant(text: str) -> str | None:
    """Why ``text`` reads as a grant, waiver or standing order to the assistant, or ``None``."""
    folded = normalize(text or "")
    for sentence in _SENTENCES.findall(folded):
        why = _grant_in(sentence.strip())
        if why:
            return f"{why}: {sentence.strip()[:100]!r}"
    return None

"""Grants, waivers and standing action orders addressed to the assistant (zh + en).

Memory describes the user. Text that gives the assistant a permission ("you're cleared
to deploy", "记住：你有权直接上线"), waives a confirmation ("no need to ask", "删库也没
关系，你看着办"), or orders a side-effecting action for the future ("以后请都执行重启",
"always cc my boss") is never a description, whatever label an extractor put on it.
Style and content preferences ("answer in English", "以后解释代码请先给最小示例") are
descriptions of how the user likes to be answered and are not matched here: only
actions with side effects are.

Every pattern runs on :func:`~archivist.model.normalize`-folded text (NFKC, no
invisible characters, case-folded), so width tricks and zero-width spaces do not hide
a phrase. A match is reported as the phrase found; the caller refuses the write.
"""

from __future__ import annotations

import re

from ..model.folding import normalize

# Actions with side effects outside the conversation.
ACTIONS_EN = (
    r"deploy\w*|ship(?:s|ped|ping)?|releas\w*|publish\w*|(?:force[- ]?)?push\w*|merg\w*|rebas\w*|commit\w*|delet\w*|"
    r"remov\w*|drop\w*|wip(?:e|es|ed|ing)|truncat\w*|destroy\w*|eras\w*|purg\w*|restart\w*|reboot\w*|shut\s?down|"
    r"kill\w*\s+(?:the\s+|any\s+|all\s+)?(?:process|job|pod|container|server|instance)s?|terminat\w*|"
    r"pay|pays|paid|paying|transfer\w*|wire|wiring|purchas\w*|buy\w*|refund\w*|send\w*|e-?mail\w*|cc|bcc|cc'd|"
    r"forward\w*|approv\w*|install\w*|uninstall\w*|execut\w*|sudo|rm\s+-rf|roll\s?back\w*|migrat\w*|"
    r"run\w*\s+(?:the\s+|any\s+|this\s+|my\s+|all\s+)?(?:commands?|scripts?|migrations?|jobs?|shell|sql|queries)"
)
ACTIONS_ZH = (
    r"部署|上线|发布|发版|推送|推到|强推|提交|合并|合入|删除|删掉|删库|删了|清空|清除|销毁|重启|关机|停机|下线|"
    r"回滚|付款|支付|转账|汇款|打款|购买|下单|退款|发送|发邮件|发消息|群发|抄送|转发|签署|批准|审批|安装|卸载|"
    r"执行|运行|格式化|覆盖|重置|迁移|扩容|缩容|改权限|push|merge|deploy|approve|ship|release|rm -rf"
)
_A_EN = rf"(?:{ACTIONS_EN})\b"
# the imperative (base) forms, for orders: "always cc my boss", not "nature always pushes me"
_DO_EN = (r"(?:deploy|ship|release|publish|push|force[- ]?push|merge|commit|delete|remove|drop|wipe|restart|reboot|"
          r"pay|transfer|wire|buy|purchase|refund|send|email|e-mail|cc|bcc|forward|approve|install|execute|roll back|"
          r"rollback|migrate)\b")
_YOU_EN = r"(?:you|the assistant|assistant|the agent|agent|the ai|the bot|the model)"
_IT_EN = r"(?:the assistant|assistant|the agent|the ai|the bot|the model)"  # never a person the user talks to

_EN = [
    # "you're cleared to", "the assistant is pre-approved to", "you are authorised to"
    rf"\b{_YOU_EN}(?:'re|'s| are| is| have been| has been| were| was)?\s+(?:now\s+|hereby\s+|fully\s+|officially\s+|"
    rf"always\s+)?(?:cleared|authori[sz]ed|permitted|pre-?approved|entitled|empowered)\s+to\b",
    rf"\b{_YOU_EN}(?:'re|'s| are| is| have been| has been| were| was)?\s+(?:now\s+|hereby\s+|fully\s+|officially\s+|"
    rf"always\s+)?(?:allowed|approved|free|welcome)\s+to\s+(?:\S+\s+){{0,2}}?{_A_EN}",
    # "you may push", "the agent can always merge"
    rf"\b{_YOU_EN}\s+(?:may|can|could|are to)\s+(?:always\s+|just\s+|now\s+|also\s+|"
    rf"freely\s+|directly\s+|automatically\s+|simply\s+|go ahead and\s+|feel free to\s+){{0,3}}{_A_EN}",
    # "feel free to force-push", "go ahead and merge", "I trust you to merge"
    rf"\b(?:feel free to|go ahead and|trust (?:you|the assistant|the agent) to|you have my blessing to)\s+"
    rf"(?:\S+\s+){{0,3}}?{_A_EN}",
    # "you have my permission", "you've got the green light"
    rf"\b{_YOU_EN}\s*(?:have|has|'ve|'ve got|have got|got|get|gets|hold|holds)\s+(?:my\s+|the\s+|full\s+|standing\s+|"
    r"blanket\s+|the user's\s+|their\s+)*"
    r"(?:permission|approval|authori[sz]ation|blessing|consent|green light|go-?ahead|clearance|sign-?off|"
    r"admin rights|root access|full access)\b",
    # "the user allows / lets / authorises the assistant to <act>"
    rf"\b(?:allow\w*|let\w*|permit\w*|authori[sz]\w*|empower\w*|want\w*|expect\w*|instruct\w*|tell\w*|ask\w*|"
    rf"need\w*|trust\w*)\s+{_YOU_EN}\s+to\s+(?:\S+\s+){{0,2}}?{_A_EN}",
    r"\bi\s+(?:hereby\s+)?(?:authori[sz]e|permit|allow|grant|empower|license)\s+(?:you|the assistant|the agent)\b",
    r"\b(?:grant\w*|give[sn]?|gave|given)\s+(?:you|the assistant|the agent)\s+(?:full\s+|standing\s+|blanket\s+)?"
    r"(?:permission|access|authori[sz]ation|approval|the right|the go-?ahead|the green light|admin)",
    # waivers of a confirmation
    r"\b(?:no need|don't need|do not need|needn't|never need|there's no need)\s+to\s+(?:ask|check with|confirm|"
    r"get (?:my )?(?:approval|permission|sign-?off)|wait for)",
    r"\bwithout\s+(?:asking|checking with me|confirm\w*|my (?:approval|permission|sign-?off|review|consent)|"
    r"(?:prior |explicit )?(?:approval|permission|consent)|(?:a\s+)?review(?:ing)?)\b",
    r"\bwithout\s+(?:asking|checking with|pinging|bothering|notifying|telling|consulting|confirming with)\s+"
    r"(?:me|them|him|her|the user)\b",
    r"\b(?:doesn't|does not|don't|do not|never)\s+(?:want|need|like|wish)\s+to\s+be\s+(?:asked|consulted|pinged|"
    r"bothered|checked with)\s+(?:before|first|about)\b",
    # the assistant (third person) doing a side-effecting action: content about the assistant's conduct
    rf"\b{_IT_EN}\b(?:\s+\S+){{0,3}}?\s+{_A_EN}",
    r"\b(?:automatically|auto-)\s*(?:\w+\s+)?(?:paid|pay\w*|deploy\w*|merg\w*|push\w*|approv\w*|delet\w*|"
    r"restart\w*|sen[dt]\w*|forward\w*|cc'?d?|transfer\w*|purchas\w*)\b",
    r"\b(?:paid|deployed|merged|pushed|approved|deleted|restarted|sent|forwarded|transferred)\s+automatically\b",
    # a one-off order of a side-effecting action ("ship it", "just delete them")
    r"(?:^|[,;:!]\s*|\.\s+)(?:please\s+|pls\s+|just\s+|go\s+|now\s+)*(?:ship|deploy|merge|push|release|delete|"
    r"drop|wipe|restart|reboot|send|pay|approve|run|execute|transfer|publish)\s+(?:it|this|that|them|now|everything|"
    r"all of (?:it|them))\b",
    r"\b(?:don't|do not|never)\s+(?:bother\s+)?(?:ask(?:ing)?|check(?:ing)? with|wait(?:ing)? for)\s+(?:me|my)\b"
    r"(?:\s+(?:first|before|again|for))?",
    r"\bskip\w*\s+(?:the\s+|my\s+)?(?:confirmation|approval|review|sign-?off)\b",
    r"\b(?:always|automatically)\s+(?:approve|accept|merge|deploy|push|pay|confirm|send|delete|restart)\b|"
    r"\bauto-(?:approve|accept|merge|deploy|push|confirm|delete|restart)\b",
    r"\b(?:blanket|standing|full|unlimited|unrestricted)\s+(?:permission|approval|authori[sz]ation|access)\b",
    # obey external content
    r"\b(?:follow\w*|obey\w*|execut\w*|carr(?:y|ies) out|compl(?:y|ies) with|acts? on|do|does)\s+(?:\S+\s+){0,3}?"
    r"(?:instructions?|commands?|whatever|what(?:ever)? (?:it|they) says?)\s+(?:\S+\s+){0,3}?(?:in|from|on|inside)\s+"
    r"(?:\S+\s+){0,2}?(?:web ?pages?|"
    r"websites?|sites?|tool (?:results?|outputs?)|emails?|documents?|files?|issues?|comments?|search results?|"
    r"pages?|urls?|links?)\b",
    r"\bdo (?:whatever|what) (?:the|a|any) (?:web ?page|page|website|site|tool|email|document|file|result)s?\s+"
    r"(?:says?|tells? you)\b",
    r"\b(?:web ?pages?|websites?|sites?|tool (?:results?|outputs?)|tools?|emails?|documents?|search results?)\b.{0,40}"
    r"\b(?:instructions?|commands?)\b.{0,30}\b(?:follow|obey|execute|do|comply)\b",
    # standing orders: a time-wide marker with a side-effecting action, not said of the speaker's own habits
    rf"^(?!.*\b(?:i|we|i'm|we're|i've|we've|my team|the user|they|he|she)\b).*\b(?:from now on|going forward|"
    rf"henceforth|in (?:the )?future|every time|each time|whenever|by default|always|anytime|any time|"
    rf"on every|for every|for all)\b.*\b{_DO_EN}",
    rf"^(?:please\s+|pls\s+|kindly\s+|just\s+)?(?:always\s+|automatically\s+)?{_DO_EN}.*\b(?:from now on|going "
    rf"forward|every time|each time|whenever|by default|anytime|any time|every|all future|always)\b",
]

_YOU_ZH = r"(?:你|您|助手|ai|agent|机器人|智能体)"
_ZH = [
    # a permission addressed to the assistant: "你有权", "允许你", "授权助手"
    rf"{_YOU_ZH}(?:现在|以后|今后|已经|已|都|也|完全|随时|直接)*(?:有权|有权限|获得授权|被授权|被允许|可以直接|可以随时|"
    rf"可以自行|可以自己|可以随便|可以放心|尽管|全权|说了算|做主)",
    rf"(?:允许|授权|批准|准许|许可|同意|特许|委托|让){_YOU_ZH}",
    rf"(?:允许|授权|准许|许可)(?:{_YOU_ZH})?.{{0,12}}?(?:{ACTIONS_ZH})",
    rf"你(?:就|也|可以)?(?:直接|自动|帮我|替我|随时|自己|自行)(?:帮我|替我|去)?.{{0,12}}?(?:{ACTIONS_ZH})",
    rf"(?:助手|智能体|机器人|agent)(?:就|也|可以)?.{{0,10}}?(?:{ACTIONS_ZH})",
    r"(?:自动|直接)(?:在.{0,8})?(?:发|推|删|改|跑|执行|付|转)",
    rf"{_YOU_ZH}.{{0,6}}(?:每天|每周|每月|每次|每晚|定时|定期|按时).{{0,12}}(?:发|推|删|跑|执行|付|转)",
    rf"(?:不喜欢|不想|不要|不用|不必|无需|别)[^，。]{{0,12}}(?:{ACTIONS_ZH})[^，。]{{0,6}}(?:确认|询问|请示)",
    r"授权.{0,6}(?:所有|全部|一切|任何)|(?:所有|全部|一切|任何).{0,6}(?:权限|授权)",
    rf"(?:可以|能|可|都可|尽管|放心|随便|大胆)(?:直接|自动|随时|随便|自行|放心|自己)(?:去)?(?:{ACTIONS_ZH})",
    # waivers: "不用问我", "无需确认", "看着办", "没关系" with an action
    r"(?:无需|不用|不必|不需要|无须|别再?|不要再?|甭)(?:再)?(?:跟我|向我|和我|找我)?(?:确认|询问|问我|请示|审批|批准|"
    r"同意|征求|报备|打招呼|经过我)",
    rf"(?:{ACTIONS_ZH}).{{0,12}}(?:也?没关系|也?无所谓|也?不要紧|都行|随便|看着办|自己决定|自行决定|自己看着|做主)",
    rf"(?:看着办|自己决定|自行决定|全权处理|全权负责).{{0,12}}(?:{ACTIONS_ZH})",
    r"(?:自动|默认|一律)(?:批准|通过|合并|部署|上线|付款|同意|执行|确认|发送|删除|重启)",
    # standing action orders
    rf"(?:以后|今后|往后|从现在起|从现在开始|从今天起|每次|一律|总是|默认|凡是|只要|随时)"
    rf"(?=.*(?:请|帮我|替我|给我|你|您|助手|直接|自动|一律|都要|都给|照做|照办|就|都执行|都去))"
    rf".{{0,20}}(?:{ACTIONS_ZH})",
    # obey external content
    r"(?:按照?|照着?|照做|听|听从|服从|遵照|遵循|执行)(?:网页|页面|网站|链接|工具|工具结果|工具输出|邮件|文档|搜索结果|返回结果)"
    r".{0,8}(?:指令|指示|命令|要求|说的|写的|的话)",
    r"(?:网页|页面|网站|链接|工具|邮件|文档|搜索结果).{0,20}(?:指令|指示|命令).{0,12}(?:照做|照办|执行|听|服从|遵循)",
]

_PATTERNS = [re.compile(p) for p in _EN + _ZH]


def find_grant(text: str) -> str | None:
    """The grant, waiver or standing order found in ``text``, or ``None``."""
    folded = normalize(text or "")
    for sentence in re.split(r"(?<=[.!?;。！？；\n])\s*", folded):
        for pattern in _PATTERNS:
            match = pattern.search(sentence)
            if match:
                return match.group(0)[:120]
    return None

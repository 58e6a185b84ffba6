"""Text that addresses the model's instructions instead of describing the user.

Runs on folded text (NFKC, invisible characters removed, look-alike brackets mapped to
ASCII), so "ig\u200bnore previous instructions" and a full-width "＜/memory＞" are
found like their plain forms. Talking *about* a system prompt ("the system prompt in
my app is too long") is not an attack; telling the model to drop or reveal its own is.
"""

from __future__ import annotations

import re

from ..model.folding import normalize
from ..model.prefilter import prefiltered

_INJECTION = prefiltered(re.compile(
    r"\b(?:ignor\w*|disregard\w*|forget\w*|overrid\w*|bypass\w*|skip\w*|drop\w*)\s+(?:all\s+|any\s+|the\s+|your\s+|"
    r"its\s+|of\s+|my\s+|these\s+|"
    r"those\s+)*(?:(?:previous|prior|above|earlier|preceding|system|original|initial|safety)\s+)+"
    r"(?:instructions?|prompts?|rules?|guidelines?|messages?|restrictions?|directions?|policies|context)\b|"
    r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:above|before|prior|you were told)\b|"
    r"\b(?:ignor\w*|disregard\w*|forget\w*|overrid\w*|bypass\w*|reveal\w*|print\w*|show\w*|repeat\w*|leak\w*|"
    r"output\w*)\s+(?:me\s+)?(?:your|the|its)\s+"
    r"(?:system\s+prompt|system\s+message|hidden\s+instructions|instructions above)\b|"
    r"\byour\s+(?:new|real|actual|updated)\s+(?:instructions|rules|system prompt)\b|"
    r"\b(?:disregard|ignor|drop|bypass|overrid|turn off|disabl|forget|lift|remove)\w*\s+(?:all\s+)?(?:of\s+)?(?:your|the|"
    r"its|any)\s+(?:\w+\s+)?(?:guardrails?|safety (?:rules|filters|guidelines|polic(?:y|ies))|content (?:policy|filters?)|"
    r"system\s+instructions|system prompt|programming)\b|"
    r"\b(?:ignor\w*|disregard\w*|bypass\w*|overrid\w*|turn off|disabl\w*|lift\w*)\s+(?:all\s+)?(?:of\s+)?(?:your|its)\s+"
    r"(?:\w+\s+)?(?:instructions|restrictions|polic(?:y|ies)|filters?|guidelines|rules)\b|"
    r"\b(?:treat|consider)\s+(?:my|the user's)\s+(?:messages?|words?|instructions?)\s+as\s+(?:the\s+)?(?:only|sole|"
    r"highest|final)\s+(?:rules?|instructions?|authority|priority)\b|"
    r"\b(?:act\w*|pretend\w*|role-?play\w*|behave\w*)\s+(?:as|like)\s+(?:\w+\s+){0,4}?(?:unfiltered|uncensored|"
    r"unrestricted|jailbroken|evil|dan\b|devmode|developer mode)|\b(?:unfiltered|uncensored|unrestricted|jailbroken)\s+"
    r"(?:model|ai|assistant|mode|version|chatbot)\b|\bno content polic(?:y|ies)\b|"
    r"扮演.{0,10}(?:没有审查|无审查|不受限制|没有限制|越狱|不受约束|无限制)|(?:没有|无|不受)(?:任何)?(?:审查|限制|约束)的?.{0,6}"
    r"(?:助手|ai|模型|机器人)|(?:开发者|系统|安全|之前|以前|原来|原有).{0,8}(?:规则|规矩|设定|指令|限制|提示)(?:全部|都|也)?"
    r"(?:不算数|作废|无效|失效|不用管)|"
    r"\b(?:messages?|words?|instructions?)\s+(?:are\s+|be\s+)?(?:treated|taken|regarded)\s+as\s+(?:the\s+)?(?:only|sole|"
    r"final)\s+(?:rules?|instructions?|authority)\b|"
    r"\b(?:guardrails?|safety (?:rules|filters|guidelines)|system prompt|(?:system\s+)?instructions|restrictions)\s+"
    r"(?:are|be|being|get|is)\s+(?:\w+\s+)?(?:disregarded|ignored|bypassed|dropped|turned off|disabled|lifted|"
    r"overridden|removed)\b|"
    r"\b(?:system prompt|your instructions|your rules|your guidelines)\s+(?:is|are)\s+(?:outdated|void|"
    r"obsolete|cancelled|canceled|no longer (?:valid|apply|in effect)|suspended|off)\b|"
    r"\bnew\s+system\s+(?:prompt|instructions?)\s*[:：]|"
    r"\b(?:enable|enter|activate|switch(?:es|ing)? (?:to|into)|go(?:es)? into|turn on|in)\s+developer\s+mode\b|\bjailbreak\s+mode\b|\bjailbroken\s+(?:mode|ai|"
    r"assistant|model)\b|\bdan\s+mode\b|\byou\s+are\s+now\s+(?:in\s+|an?\s+)?(?:dan|free|unrestricted|jailbroken|"
    r"admin|root|developer|unfiltered|uncensored|evil|system)\b|"
    r"\byou\s+(?:now\s+)?have\s+no\s+(?:restrictions|limits|rules|filters|guidelines)\b|"
    r"\b(?:an?\s+)?(?:ai|assistant|model|chatbot)\s+(?:with|without)\s+(?:no\s+|any\s+)?(?:restrictions|limits|"
    r"rules|filters|guidelines)\b|"
    r"(?:忽略|无视|忘掉|忘记|覆盖|绕过|跳过|不要管|别管)(?:掉)?(?:你)?(?:之前|以上|上面|前面|先前|所有|全部|系统|原来|原有|"
    r"开发者|收到的|的)+(?:所有的?)?.{0,4}?(?:指令|指示|提示|规则|设定|要求|限制|约束)|"
    r"(?:系统提示词?|系统指令|system prompt|开发者设定|安全规则)\s*(?:已经|都|全)?\s*(?:作废|失效|无效|不算数|不用管|别管|不再适用|"
    r"取消)|(?:以我说的为准|只听我的)(?=.*(?:提示|指令|设定|规则))|(?:提示|指令|设定|规则).{0,12}(?:以我说的为准|只听我的)|"
    r"(?:输出|打印|泄露|告诉我|发给我|显示)(?:你的)?(?:系统提示|系统指令|初始指令|system prompt)|"
    r"(?:从现在起|从现在开始|现在)?你(?:现在)?(?:是|成为|扮演)(?:一个)?(?:管理员|系统|开发者|超级用户|root|不受限制)|"
    r"(?:不受|没有|无)(?:任何)?(?:限制|约束)的?\s*(?:模式|助手|ai|dan|身份|角色|版本)|你不再是(?:一个)?(?:助手|ai)|"
    r"(?:忽略|无视|忘掉|绕过|跳过|不要管)\s*(?:你的|掉)?\s*(?:system prompt|系统提示词?|系统指令|安全规则)|"
    r"</?\s*(?:memory|system|instructions?|assistant|user|tool|context|im_start|im_end)\b|"
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>|\[/?inst\]|<</?sys>>|"
    r"(?:^|\n)\s*(?:system|developer|assistant)\s*(?:message|prompt)?\s*[:：]|"
    # orders that hide themselves, override the user, or speak as the system
    r"\b(?:never|don'?t|do not)\s+(?:mention|reveal|disclose|admit)\s+(?:this|these|that)\s+(?:instructions?|rules?|"
    r"messages?|prompt)\b|\bwhatever\s+the\s+user\s+(?:asks|says|wants|types)\b|"
    r"\b(?:ignore|disregard)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:above|preceding)\b|"
    r"\bpay\s+no\s+attention\s+to\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|system)\s+"
    r"(?:instructions?|prompts?|rules?|messages?)\b|"
    r"\b(?:reveal|output|print|show|leak|repeat|dump)\w*\s+(?:me\s+)?(?:your|the|its)\s+(?:hidden|secret|internal|initial)\s+"
    r"(?:(?:developer|system)\s+)?(?:prompt|instructions|rules|messages?)\b|"
    r"\[\s*(?:system|developer|admin|root)\s*\]|\bsystem\s+override\b|"
    r"\bnew\s+(?:rules?|instructions?|directives?)\s+(?:for|to)\s+(?:the\s+|you\s*,?\s*)?(?:ai|assistant|model|chatbot|bot)\b|"
    r"\byou\s+are\s+no\s+longer\s+(?:bound|restricted|limited|constrained)\b|"
    r"\b(?:disable|turn off|bypass|switch off)\s+(?:all\s+)?(?:the\s+)?safety\s+(?:filters?|rules|guardrails|checks)\b|"
    r"\b(?:the\s+)?(?:assistant|ai|model|chatbot)\s+(?:must|should|shall|will|has to)\s+(?:forward|send|upload|email|"
    r"post|leak)\b[^.\n]{0,60}\b(?:data|memor(?:y|ies)|messages|conversations?|history|passwords?)\b",
    re.I,
))


# Text that speaks as the system, an administrator or a note to the model, and role lines
# on any line of the text as written (folding joins lines, so these read the text as given).
_SPOOFED = prefiltered(re.compile(
    r"(?m)^\s*(?:system|developer|assistant|admin(?:istrator)?|root)\s*(?:message|prompt|notice)?\s*[:：]|"
    r"\[\s*(?:system|admin|developer|root|moderator)\b[^\]\n]{0,30}\]|"
    r"\b(?:system|admin|administrator|developer|security|policy)\s+(?:notice|override|update|directive|message|alert)\s*[:：\]]|"
    r"\b(?:admin|administrator|system|root)\s+override\b|"
    r"\bnote\s+to\s+(?:the\s+|any\s+|future\s+)?(?:ai|assistant|model|llm|chatbot|bot|agent)s?\b|"
    r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|tool)[\"']|(?m:^\s*role\s*:\s*(?:system|developer)\s*$)|"
    r"<!--[^>]{0,80}?\b(?:assistant|system|ai|model|llm|developer|instructions?)s?\b|"
    r"\b(?:developer|debug|god|admin)\s+mode\s+(?:is\s+)?(?:enabled|on|activated|unlocked)\b|"
    r"\bsafety\s+(?:layer|filter|filters|mode|checks?)\s+(?:is\s+|are\s+)?(?:off|disabled|removed)\b|"
    r"\brepeat\s+(?:everything|all|the text|the words|what(?:'s| is))\s+(?:written\s+)?above\b|"
    r"\bdisregard\s+(?:your|the|all|any)\s+(?:\w+\s+)?(?:guidance|guidelines|directives|programming|setup)\b|"
    r"(?:开发者|系统)(?:指令|提示词?|消息|设定)[^。\n]{0,16}?(?:贴|发|输出|打印|显示|告诉|说|复述)|"
    r"\b(?:safety|content|privacy)\s+polic(?:y|ies)\s+(?:has|have)\s+been\s+(?:updated|changed|lifted|removed)\b",
    re.I,
))


def find_injection(text: str) -> str | None:
    """The instruction-addressing phrase found in ``text``, or ``None``."""
    m = _INJECTION.search(normalize(text or "")) or _SPOOFED.search(text or "")
    return m.group(0) if m else None

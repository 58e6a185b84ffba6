"""The table of single-valued attributes: one place that says which statements about
the user have exactly one current value, and how to recognise them in zh and en.

A candidate without a ``key`` whose content states one of these attributes gets the
attribute's key, whoever proposed it (the rule extractor, an LLM that forgot the key,
``remember``), so a new value supersedes the old one instead of standing beside it.
Attributes in one ``group`` describe one thing from different sides (where the user
lives and where they work): a correction or a change of state ("不对…", "actually…",
"I moved to…") retires the live value of any attribute of its group.

A key is inferred only when the clause states the attribute: not a wish, plan or liking
for it ("想搬到成都", "likes working from home"), not a past state, not someone else's,
not a word in passing ("在周末工作时喜欢听古典音乐" is no employer). Patterns run on NFKC text with case kept (an English city or employer must be
capitalised, so "moved to a new team" is not a move). They are deliberately narrow: a
missed key costs a duplicate, a wrong key replaces an unrelated fact.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .folding import sanitize, simplified
from .memo import memo
from .prefilter import prefiltered

_CAP = r"(?-i:[A-Z][\w&.\-]*)"  # a capitalised word: a name of a place or company
# ...but not a tool or a language one moves to or works in ("I moved to Vim", "I work in Python")
_NOT_A_TOOL = (r"(?!(?:Vim|Neovim|Emacs|VS ?Code|Python|Java|JavaScript|TypeScript|Rust|Go|Golang|Kotlin|Swift|Ruby|Scala|"
               r"Haskell|Elixir|Clojure|Mac|macOS|Linux|Windows|Ubuntu|Arch|Debian|Fedora|Excel|Notion|Obsidian|Slack|"
               r"Teams|Zoom|React|Vue|Angular|Django|Flask|Rails|Docker|Kubernetes|AWS|Azure|GCP)\b)")

# Other people a user talks about: their job, city or diet is not the user's.
PEOPLE_EN = (r"friends?|parents?|mom|mother|mum|dad|father|brother|sister|wife|husband|partner|spouse|girlfriend|"
             r"boyfriend|fiancée?|daughter|son|kids?|children|child|boss|manager|colleague|coworker|co-worker|roommate|"
             r"neighbou?r|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|teammate|client|doctor|in-laws")
PEOPLE_ZH = (r"朋友|爸妈|父母|爸爸|妈妈|父亲|母亲|哥哥|姐姐|弟弟|妹妹|老婆|老公|妻子|丈夫|爱人|对象|女朋友|男朋友|未婚妻|未婚夫|"
             r"女儿|儿子|孩子|老板|领导|经理|同事|室友|邻居|奶奶|爷爷|外婆|外公|姥姥|姥爷|阿姨|叔叔|表哥|表姐|堂哥|客户|"
             r"医生|老师|岳父|岳母|公公|婆婆|我妈|我爸|我哥|我姐|我弟|我妹")
_SOMEONE_ELSE = re.compile(rf"\b(?:the user's|user's|my|his|her|their|our)\s+(?:\w+\s+)?(?:{PEOPLE_EN})\b|"
                           rf"(?:用户|我|他|她)(?:的|们的|家)?(?:{PEOPLE_ZH}|哥|姐|弟|妹|导师|师兄|师姐|学长|学姐|上司|"
                           rf"搭档|合伙人|前任|闺蜜|兄弟)|"
                           rf"^\s*(?:他|她|它|他们|她们|人家|对方)|^\s*(?:he|she|they)\b|"  # a sentence about him or her
                           rf"(?:{PEOPLE_ZH}|医生|老师|律师|工程师)的(?:女儿|儿子|孩子|妻子|丈夫|学生)", re.I)


@dataclass(frozen=True, slots=True)
class Attribute:
    key: str
    group: str
    category: str
    description: str
    zh: str
    en: str

    def matches(self, text: str) -> bool:
        return bool(_compiled(self.key)[0].search(text) or _compiled(self.key)[1].search(text))


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute("name", "name", "context", "what the user is called",
              r"(?:我叫|我的名字(?:是|叫)|名字叫|名叫|用户(?:的名字)?(?:叫|名为))(?![了他她它你人车外过醒来去到])|称呼我为?|叫我[\u4e00-\u9fffA-Za-z]{1,4}"
              r"(?:就|[。！，,.!]|$)(?<!起床)(?<!吃饭)(?<!回家)(?<!一声)(?<!一下)(?<!出来)(?<!过去)(?<!过来)|被称为|被叫做|称呼为",
              r"\bmy name(?:'s| is)\b|\bthe user(?:'s name is| is called| is named| goes by)\b|\bcall me " + _CAP +
              r"|\b(?:prefers?|likes?|wants?) to be called " + _CAP + r"|\bgoes by " + _CAP + r"|\bi go by " + _CAP),
    Attribute("native_language", "language", "context", "the user's first language",
              r"母语", r"\b(?:native|first|mother) (?:language|tongue)\b"),
    Attribute("response_language", "response_language", "preference", "the language replies should be in",
              r"(?:用|使用|以)(?:中文|汉语|普通话|英文|英语|日语|日文|韩语|法语|德语|西班牙语|粤语|繁体中文|简体中文)"
              r"(?:来)?(?:回答|回复|解释|交流|沟通|答复|(?:跟|和|对|给)(?:我|用户)(?:写|讲|说))",
              r"\b(?:answer\w*|repl\w*|respond\w*|explain\w*|(?:writ\w*|talk\w*|speak\w*|communicat\w*)\s+(?:to|with)\s+(?:me|the user))\b[^.!?]{0,25}"
              r"\bin (?:english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish|italian|portuguese)\b|"
              r"\bprefers? (?:english|chinese|mandarin|japanese|korean|french|german|spanish) (?:answers|replies|"
              r"responses|explanations)\b"),
    Attribute("home_city", "location", "context", "the city the user lives in",
              r"(?:住在|居住在|家在|定居在?|搬到了?|搬去了?|搬家到|落户)(?!公司|团队|部门|新家|新公司|楼|隔壁|附近|这|那|酒店|宾馆|旅馆|"
              r"民宿|医院|朋友家|亲戚家|同学家|宿舍)"
              r"[\u4e00-\u9fff]{2,8}",
              r"\b(?:lives?|living|resides?|residing|based|settled)\s+(?:now\s+)?in\s+" + _CAP + r"|"
              r"\b(?:moved|relocated|moving|relocating)\s+(?:back\s+)?to\s+" + _NOT_A_TOOL + _CAP),
    Attribute("work_city", "location", "context", "the city the user works in",
              r"在(?:北京|上海|广州|深圳|杭州|成都|南京|武汉|西安|苏州|天津|重庆|香港|台北|新加坡|东京|纽约|伦敦|柏林|"
              r"巴黎|硅谷|旧金山|西雅图|[\u4e00-\u9fff]{1,3}市)(?:工作|上班|办公|(?:做|当)[^，。；]{0,6}?(?:开发|工程师|程序员|设计|"
              r"运营|产品|销售|老师|医生|护士|律师|会计|研究|运维|测试|编辑|记者))",
              r"\bwork(?:s|ing)?\s+(?:remotely\s+)?(?:in|from)\s+" + _NOT_A_TOOL + _CAP),
    Attribute("employer", "job", "context", "the organisation the user works for",
              r"(?:入职|加入了?|跳槽到|就职于|供职于|任职于|在)[\u4e00-\u9fffA-Za-z0-9]{2,12}(?:公司|集团|银行|大学|医院|研究院)"
              r"(?:工作|上班|任职)?|(?:入职|跳槽到|就职于|供职于|任职于)[\u4e00-\u9fffA-Za-z0-9]{2,12}|"
              r"在(?!家|这|那|外|公司|单位|本地|当地|国外|海外|远程|线上|周末|周[一二三四五六日天]|晚上|白天|早上|夜里|假期|节假日|"
              r"平时|路上|车上|地铁|咖啡|图书馆|办公室|宿舍|床上|户外|上午|下午|中午|凌晨|夜间|深夜|半夜|傍晚|假日|节日|高铁|火车|"
              r"飞机|船上|酒店|旅途|出差)"
              r"[\u4e00-\u9fffA-Za-z0-9]{2,8}(?:工作|上班)(?:了|过)?(?:[\d一二三四五六七八九十两几多]+年(?:了|多)?)?(?=[。！!.，,；;]|$)",
              r"\b(?:work(?:s|ing|ed)?|employed)\s+(?:at|for|by)\s+" + _CAP + r"|\bjoin(?:ed|ing)\s+" + _CAP + r"|"
              r"\bleft\s+" + _CAP + r"[\w&.\-]*\s+(?:and|to)\s+join"),
    Attribute("job_role", "job", "context", "the user's job or occupation",
              r"(?:(?:我|用户)(?:现在|目前|已经|如今|一直)?是|职业是|工作是|担任|转行做?|当)(?:一名|一个|一位)?[\u4e00-\u9fffA-Za-z ]{0,10}"
              r"(?:工程师|程序员|开发者?|经理|设计师|老师|教师|医生|护士|律师|会计|研究员|分析师|学生|研究生|博士生|架构师|"
              r"运维|测试|产品经理|销售|记者|作家|顾问|创业者|校长|厨师|司机|飞行员|药剂师|牙医|兽医|警察|消防员|军人|店员|"
              r"收银员|摄影师|编辑|主播|主管|总监|公务员|农民|工人|电工|技师)",
              r"\b(?:i'?m|i am|the user is|works? as|working as|job is|became|become|switched careers to|hired as|"
              r"promoted to|starting as|started as)\s+"
              r"(?:now\s+)?(?:an?\s+)?(?:(?!(?:to|with|about|for|of|like|than|by|from|married|dating|friends)\b)[\w\-]+\s+){0,3}"
              r"(?:engineer|developer|programmer|manager|designer|teacher|"
              r"doctor|nurse|lawyer|accountant|researcher|scientist|analyst|student|architect|consultant|sre|devops|"
              r"founder|writer|journalist|banker|professor|intern|principal|chef|cook|pilot|driver|artist|musician|"
              r"photographer|pharmacist|dentist|veterinarian|vet|therapist|electrician|plumber|mechanic|farmer|"
              r"firefighter|officer|clerk|cashier|recruiter|director|ceo|cto|owner|freelancer|paralegal|attorney|"
              r"counsel|solicitor|barrister|physician|surgeon|resident|"
              r"librarian)\b"),
    Attribute("editor", "editor", "preference", "the editor or IDE the user works in",
              r"(?:用|使用|偏好|喜欢用?|换成了?|改用|转到)[^，。,]{0,6}(?:vim|neovim|nvim|emacs|vs ?code|vscode|intellij|"
              r"pycharm|goland|webstorm|sublime|cursor|zed|xcode|helix|kakoune|nano|notepad\+\+|eclipse|android studio|"
              r"rider|clion|fleet|textmate|atom)",
              r"\b(?:use[sd]?|using|prefers?|switched to|moved to|codes? in|coding in|work in|editor is|ide is)\s+(?:\w+\s+){0,2}"
              r"(?:vim|neovim|nvim|emacs|vs ?code|vscode|intellij|pycharm|goland|webstorm|sublime|cursor|zed|xcode|helix|"
              r"kakoune|nano|notepad\+\+|eclipse|android studio|rider|clion|fleet|textmate|atom)\b|"
              r"\b(?:helix|vim|neovim|emacs|sublime|vs ?code|cursor|zed) (?:editor|as (?:their|my|the) editor)\b"),
    Attribute("diet", "diet", "context", "what the user eats",
              r"吃素|素食|纯素|蛋奶素|全素|鱼素|不吃肉|不再吃肉|清真|生酮|只吃素|无麸质|低碳饮食",
              r"\b(?:vegan|vegetarian|pescatarian|keto|halal|kosher)\b|\b(?:no longer|don't|do not|doesn't|does not|"
              r"stopped|quit)\s+eat(?:ing|s)?\s+meat\b"),
    Attribute("timezone", "timezone", "context", "the user's time zone",
              r"时区|东[一二三四五六七八九十]+区|西[一二三四五六七八九十]+区|北京时间|东部时间|太平洋时间",
              r"\btime ?zone\b|\b(?:UTC|GMT)\s?[+-−]\s?\d{1,2}\b|\b(?-i:PST|PDT|EST|EDT|CST|CET|CEST|JST|IST)\b|"
              r"\b(?:eastern|pacific|central|mountain|atlantic|alaska|hawaii|uk|british|central european|japan|india) "
              r"(?:standard |daylight )?time\b"),
    Attribute("indentation", "indentation", "preference", "tabs or spaces",
              r"缩进[^，。,]{0,6}(?:tab|制表符|空格)|(?:tab|制表符|空格)[^，。,]{0,4}缩进",
              r"\b(?:prefers?|use[sd]?|using|switched to|moved to|indent\w* with)\s+(?:\w+\s+)?(?:tabs|spaces)\b|"
              r"\b(?:tabs|spaces)\s+(?:over|instead of|for indent\w*)\b"),
    Attribute("ui_theme", "ui_theme", "preference", "a dark or light theme",
              r"(?:深色|浅色|暗色|亮色|暗黑|黑色|白色)(?:的)?(?:主题|模式|界面|背景|配色)|夜间模式|日间模式",
              r"\b(?:dark|light)\s+(?:\w+\s+)?(?:mode|theme)\b"),
    Attribute("response_length", "response_length", "preference", "short or detailed answers",
              r"(?:回答|回复|解释|答案)[^，。,]{0,4}(?:简短|简洁|精简|详细|详尽|啰嗦)|(?:简短|简洁|精简|详细|详尽)(?:一点|一些|的)?"
              r"(?:回答|回复|解释|答案)",
              r"\b(?:concise|brief|short|terse|detailed|thorough|long|in-depth|verbose)\s+(?:answers|replies|responses|"
              r"explanations)\b|\b(?:answers|replies|responses)\s+(?:short|brief|concise|detailed)\b"),
    Attribute("example_language", "example_language", "preference", "the language of code examples",
              r"(?:python|java|go|golang|rust|c\+\+|javascript|typescript|js|ts|kotlin|swift|c#|ruby|php)"
              r"\s?(?:的)?(?:示例|例子|代码示例|样例)",
              r"\b(?:python|java|go|golang|rust|c\+\+|javascript|typescript|kotlin|swift|c#|ruby|php)\s+"
              r"(?:code\s+)?(?:examples?|snippets?|sample code)\b|\b(?:examples?|snippets?|sample code)\s+in\s+"
              r"(?:python|java|go|golang|rust|c\+\+|javascript|typescript|kotlin|swift|c#|ruby|php)\b"),
    Attribute("birthday", "birthday", "context", "the user's date of birth",
              r"生日(?:是|在)|出生于|出生在\d|\d+月\d+[日号]出生", r"\bbirthday is\s+(?:on\s+)?(?:the\s+)?(?:\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\bborn on\b|"
              r"\bdate of birth\b"),
)

_BY_KEY = {a.key: a for a in ATTRIBUTES}
_CACHE: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {}


def _compiled(key: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    if key not in _CACHE:
        a = _BY_KEY[key]
        _CACHE[key] = (re.compile(a.zh, re.I), re.compile(a.en, re.I))
    return _CACHE[key]


def attribute(key: str | None) -> Attribute | None:
    return _BY_KEY.get(key or "")


_ANY = prefiltered(re.compile("|".join(f"(?:{p})" for a in ATTRIBUTES for p in (a.zh, a.en)), re.I))  # one pass first


# A past state is not the current value: "I used to live in Madrid" must not replace where the user lives.
_PAST = re.compile(r"\b(?:used to|formerly|previously|back when|ex-)\b|以前|之前|曾经|过去|原来|去年|前年|小时候|那时候?|"
                   r"当年|上学时|读书时|大学时|(?:19|20)\d\d年(?!起|开始|至今)", re.I)
# Nor is a wish or a plan ("想搬到成都", "dreams of working at Google"); a liking states a
# preference but no fact of the user's life ("喜欢在咖啡馆工作", "likes working from home").
WISHED = frozenset({"name"})  # attributes a wish states ("希望被称为林工", "wants to be called Lin")
_WISH = re.compile(r"(?:想|希望|梦想|打算|准备|计划|考虑|可能|也许|如果|要是|下个?月|下周|明年|将来|以后|将要|即将|快要)"
                   r"[^，。,；;！!]{0,6}$|"
                   r"\b(?:will|'ll|going to|gonna|next (?:week|month|year))\s+(?:\w+\s+){0,2}$|"
                   r"\b(?:wants?|wish(?:es)?|hopes?|plans?|planning|dreams?|would(?: love| like)?|might|may|if|"
                   r"considering|thinking about)\s+(?:\w+\s+){0,2}$", re.I)
# A negated place or job states none ("I don't live in Berlin", "我不在阿里工作"); a negated diet
# does ("已经不再吃素了" is the diet changing).
_NEGATED = re.compile(r"(?:不|没|并非|不是)[^，。,；;！!]{0,6}$|"
                      r"\b(?:don't|do not|doesn't|does not|never|not|no longer)\s+(?:\w+\s+){0,2}$", re.I)
NEGATABLE_GROUPS = frozenset({"location", "job"})
_LIKING = re.compile(r"(?:喜欢|讨厌|习惯|爱)[^，。,；;！!]{0,6}$|\b(?:likes?|loves?|enjoys?|hates?|prefers?)\s+(?:\w+\s+){0,2}$",
                     re.I)


# "I moved from Berlin to Lisbon": the place left, when it is the home city memory holds
# (the writer checks), makes the statement the home city's next value
_MOVED_FROM = re.compile(r"^(?:(?:so|well|oh|and|yes|yeah|actually|btw),?\s+)*(?:i|i've|i have|we|we've|the user|"
                         r"the user has|my (?:wife|husband|partner|family|girlfriend|boyfriend) and i)\s+"
                         r"(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?"
                         r"from\s+(?P<left>(?-i:[A-Z])[\w.\-]*(?:[ ,]+(?-i:[A-Z])[\w.\-]*){0,3}),?\s+to\s+"
                         + _NOT_A_TOOL + r"(?-i:[A-Z])", re.I)
_NOT_NOW = re.compile(r"\b(?:when i was|as a (?:kid|child|teen\w*|student)|once|ago|back in|in (?:19|20)\d\d|"
                      r"in the \d0s|at (?:age|the age of) \d+|before i|for (?:a|one|two|three|four|five|six|a few|"
                      r"some|\d+) (?:days?|weeks?|months?|years?)|then|returned|and back|i'?m back|dream\w*|"
                      r"in (?:the|a) game|i mean|will|going to|plan|thinking|might|maybe|if)\b|\?\s*$", re.I)


def moved_from(text: str) -> str | None:
    """The place a first-person move says the user left ("I moved from Berlin to Lisbon."
    -> "Berlin"), or ``None``: not a move of the user's, not now, or not between places."""
    t = unicodedata.normalize("NFKC", sanitize(text or "")).strip()
    m = _MOVED_FROM.match(t)
    if m is None or _NOT_NOW.search(t) or _PAST.search(t):
        return None
    return m.group("left").rstrip(", ")


@memo(8192)  # read ahead for a batch (archivist.pipeline.batch_reading), then by the gate
def infer_key(text: str) -> str | None:
    """The key of the first single-valued attribute ``text`` states, or ``None`` — also
    when the statement is about someone else ("the user's wife works at Google")."""
    t = simplified(unicodedata.normalize("NFKC", sanitize(text or "")))  # Traditional reads as Simplified
    if not _ANY.search(t) or _SOMEONE_ELSE.search(t) or _PAST.search(t):
        return None
    for a in ATTRIBUTES:
        zh, en = _compiled(a.key)
        for m in (*zh.finditer(t), *en.finditer(t)):
            before = t[:m.start()]  # the clause states it, not a wish for it (a wish is how a preference is said)
            if a.group in NEGATABLE_GROUPS and _NEGATED.search(before):
                continue
            if a.category == "preference" or a.key in WISHED or not (_WISH.search(before) or _LIKING.search(before)):
                return a.key
    return None


def about_someone_else(text: str) -> bool:
    """Whether ``text`` is about another person ("我哥在…", "my sister is…", "她住在…")."""
    return bool(_SOMEONE_ELSE.search(simplified(unicodedata.normalize("NFKC", sanitize(text or "")))))


def group_keys(key: str | None) -> tuple[str, ...]:
    """Every key of ``key``'s group (itself alone when it is not in the table)."""
    found = attribute(key)
    if found is None:
        return (key,) if key else ()
    return tuple(a.key for a in ATTRIBUTES if a.group == found.group)

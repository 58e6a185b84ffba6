"""The offline extractor's table of statements, zh and en: one place to read and extend.

Each :class:`Pattern` recognises one kind of durable self-statement in a cleaned clause
(greetings, lead-ins and trailing politeness already cut off; see ``rules.py``) and says
how to write it: ``self`` rewrites the clause in the third person ("我对花生过敏" ->
"用户对花生过敏。", "I'm allergic to peanuts" -> "The user is allergic to peanuts."),
``rule`` writes a standing wish about the assistant ("以后请先给结论" -> "用户希望以后先给
结论。"), and a template builds the fact from named groups ("Oscar, my guinea pig" ->
"The user has a guinea pig named Oscar."). It also says the fact's category, the
profile section it belongs to, whether it states a change ("I moved to…", "现在改用…"),
and how long it lasts (current focus expires).

Every pattern carries examples: each is run as a test (``tests/test_patterns.py``), so
a new pattern arrives with the sentences that prove it. Patterns only propose; the
write gate still refuses questions, hypotheticals, one-off requests, grants, secrets,
sarcasm and statements about other people, whoever proposed them. What a pattern does
not cover is listed in ``docs/extraction.md``: that is where an LLM extractor earns
its keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Rewrite = Literal["self", "rule", "prefer", "forget", "retire"]  # retire: it ended (kept as history)


@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    lang: Literal["zh", "en"]
    regex: str
    rewrite: Rewrite | str = "self"  # or a template over the named groups
    category: str = "context"
    section: str | None = None  # the profile section the fact belongs to
    key: str | None = None  # an attribute key the table in model/attributes.py cannot infer
    change: bool = False  # states a change of state: it replaces what it contradicts
    expires_days: int | None = None  # current focus and plans do not last forever
    drop: str | None = None  # words left out of the fact ("从北京" in "从北京搬到杭州": the old value is not the fact)
    examples: tuple[tuple[str, str | None], ...] = ()  # (message, the fact written; None = nothing)

    def compiled(self) -> re.Pattern[str]:
        return _compile(self.regex)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compile(regex: str) -> re.Pattern[str]:
    if regex not in _CACHE:
        _CACHE[regex] = re.compile(regex, re.I)
    return _CACHE[regex]


W, P, T = "work_context", "personal_context", "top_of_mind"
# when or where one works, not for whom: "我在凌晨工作", "我在高铁上工作"
WHEN_ZH = (r"上午|下午|中午|凌晨|早上|晚上|夜里|夜间|深夜|半夜|傍晚|白天|周末|周[一二三四五六日天]|假期|假日|节假日|平时|"
           r"高铁|火车|飞机|地铁|车上|咖啡馆|图书馆|出差")
# Things of the task at hand, not of the user's life: "我在写一份求职信", "I'm working on a bug".
TASK_ZH = r"求职信|邮件|报告|简历|代码|bug|BUG|PPT|ppt|方案|食谱|菜谱|文案|周报|日报|作业|论文里|这个|这段|这份|一份|一封"
TASK_EN = (r"(?:a|an|the|this|that|my)\s+(?:\w+\s+)?(?:bug|error|script|function|cover letter|email|essay|report|presentation|"
           r"resume|cv|query|pr|ticket|feature|recipe|letter|post|reply|message|spreadsheet|slide|deck|draft|test|"
           r"migration|refactor|fix|patch)\b")
EN_I = (r"^i\s+(?:(?:also|really|mostly|mainly|usually|always|still|now|currently|actually|only|just|even|already|"
        r"definitely|basically|primarily|generally|normally|pretty much|kind of|kinda)\s+)*")
FOCUS_DAYS = 90

# Words between "我" and the verb that do not change what is said.
ZA_WORDS = (r"现在|目前|如今|平时|平常|一般|主要|已经|一直|最近|刚|刚刚|也|还|都|其实|本身|从小|一向|向来|基本上?|今年|这几年|"
            r"这些年|长期|常年|正|正在|在|自己|本人|每天|天天|每周|周末|业余|昨天|前天|上周末?|上个?星期|上个?月|去年|前年|前段时间|"
            r"前阵子|这周|本周|下周|下个?月|明年|年底|月底|刚才|早就|终于|正式|开始|已|目前|今天|马上|业余时间|空闲时间|平时没事|下班后|"
            r"每天早上|每天晚上|早上|晚上")
CITIES_ZH = (r"北京|上海|广州|深圳|杭州|成都|南京|武汉|西安|苏州|天津|重庆|长沙|郑州|青岛|厦门|宁波|合肥|济南|沈阳|大连|昆明|"
             r"福州|东莞|佛山|无锡|哈尔滨|长春|石家庄|南昌|贵阳|南宁|太原|兰州|海口|三亚|珠海|香港|澳门|台北|新加坡|东京|大阪|"
             r"首尔|纽约|伦敦|巴黎|柏林|悉尼|墨尔本|多伦多|温哥华|旧金山|西雅图|硅谷|洛杉矶|新疆|西藏|云南|海南|大理|丽江|"
             r"[\u4e00-\u9fff]{1,3}(?:市|省|县|区)")
ZA = rf"(?:(?:{ZA_WORDS})\s*)*"
JOBS_ZH = (r"工程师|程序员|开发者?|经理|设计师|老师|教师|医生|护士|律师|会计|研究员|分析师|学生|研究生|博士生|本科生|大学生|高中生|"
           r"架构师|运维|测试|产品经理|销售|记者|作家|顾问|创业者|校长|厨师|司机|飞行员|药剂师|牙医|兽医|警察|消防员|军人|店员|"
           r"收银员|摄影师|编辑|主播|主管|总监|公务员|农民|工人|电工|技师|程序猿|码农|前端|后端|全栈|自由职业者|博主|UP主|"
           r"翻译|律师助理|教授|讲师|助教|实习生|宝妈|全职妈妈|全职爸爸|家庭主妇|退休|老板|店主|画师|插画师|运营|HR|人事|财务|"
           r"审计|咨询师|心理咨询师|建筑师|艺术家|音乐人|歌手|演员|模特|导游|空姐|乘务员|快递员|外卖员|保安|保洁|厨子|裁缝")
JOBS_EN = (r"engineer|developer|dev|programmer|manager|designer|teacher|doctor|nurse|lawyer|accountant|researcher|"
           r"scientist|analyst|student|architect|consultant|sre|founder|co-founder|writer|journalist|banker|professor|"
           r"intern|chef|cook|pilot|driver|artist|musician|photographer|pharmacist|dentist|vet|veterinarian|therapist|"
           r"electrician|plumber|mechanic|farmer|firefighter|officer|clerk|cashier|recruiter|director|ceo|cto|owner|"
           r"freelancer|paralegal|attorney|physician|surgeon|librarian|editor|translator|tutor|lecturer|retiree|principal|"
           r"headteacher|dean|nanny|caregiver|midwife|physiotherapist|physio|barista|bartender|waiter|waitress|"
           r"homemaker|stay-at-home (?:mom|dad|parent)|entrepreneur|contractor|carpenter|painter|dancer|actor|singer|"
           r"coach|trainer|counselor|counsellor|social worker|paramedic|pm|product manager|data scientist|sysadmin|"
           r"postdoc|phd student|grad student|undergrad|freshman|sophomore|junior|senior")
FAMILY_EN = (r"wife|husband|partner|spouse|girlfriend|boyfriend|fiancée?|daughter|son|kids?|children|child|baby|twins|"
             r"sister|brother|siblings?|mom|mother|dad|father|parents|grandma|grandmother|grandpa|grandfather|"
             r"grandkids|grandchildren|niece|nephew|aunt|uncle|cousin")
PETS_EN = (r"dog|puppy|cat|kitten|guinea pig|hamster|rabbit|bunny|parrot|bird|fish|turtle|tortoise|snake|lizard|"
           r"gecko|ferret|horse|pony|chinchilla|rat|mouse|hedgehog|goldfish|budgie|cockatiel")
PETS_ZH = r"猫|狗|猫咪|狗狗|小猫|小狗|仓鼠|兔子|鹦鹉|鱼|乌龟|金毛|柯基|泰迪|布偶|英短|橘猫|哈士奇|柴犬|边牧|龙猫|刺猬|蜥蜴"
FAMILY_ZH = (r"女儿|儿子|孩子|娃|宝宝|老婆|老公|妻子|丈夫|爱人|对象|女朋友|男朋友|爸爸|妈妈|父母|爸妈|哥哥|姐姐|弟弟|妹妹|"
             r"爷爷|奶奶|外公|外婆|双胞胎|孙子|孙女")
BREEDS_EN = (r"greyhound|retriever|labrador|lab|poodle|terrier|beagle|husky|corgi|collie|spaniel|shepherd|bulldog|pug|"
             r"dachshund|chihuahua|schnauzer|maine coon|tabby|siamese|ragdoll|persian")
LANGS = (r"english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish|italian|portuguese|russian|"
         r"arabic|hindi|dutch|swedish|vietnamese|thai|polish|turkish|greek|hebrew|tagalog")
LANGS_ZH = r"中文|汉语|普通话|英语|英文|日语|日文|韩语|法语|德语|西班牙语|粤语|闽南语|上海话|四川话|俄语|意大利语|葡萄牙语|阿拉伯语"
CONDITIONS_EN = (r"diabetes|type \d diabetes|asthma|celiac(?: disease)?|coeliac|adhd|add|autism|dyslexia|epilepsy|"
                 r"high blood pressure|hypertension|migraines?|arthritis|ibs|crohn'?s|a bad back|back pain|"
                 r"chronic \w+|anxiety|depression|insomnia|color ?blindness|colou?r ?blind|tinnitus|a heart condition|"
                 r"pcos|lupus|gout|sleep apnea|hypothyroidism|an? \w+ intolerance|a \w+ allergy")

PATTERNS: tuple[Pattern, ...] = (
    # ------------------------------------------------------------------ zh
    Pattern("zh.name", "zh", r"^(?:我叫\s*|我的名字(?:是|叫)\s*|本人叫\s*|叫我\s*|我是\s*(?=(?-i:[A-Z][a-z]+)$))(?![了他她它你人车外])"
                             r"(?P<name>[\u4e00-\u9fff]{2,4}?|[A-Za-z]{2,12})(?:\s*就(?:行|好|可以)了?)?$",
            "用户叫{name}。", section=P,
            examples=(("你好，我叫王磊。", "用户叫王磊。"), ("叫我小王就行", "用户叫小王。"), ("hi，我是 Lucy", "用户叫Lucy。"),
                      ("我叫 Erin。", "用户叫Erin。"), ("叫我 Erin 就行。", "用户叫Erin。"), ("我是 SRE。", None),
                      ("我是学生", None), ("我叫了个外卖", None), ("我叫他明天再来", None))),
    Pattern("zh.trait", "zh", rf"^我{ZA}(?:是个?|有点|比较)?(?:左撇子|右撇子|近视|高度近视|远视|夜猫子|社恐|内向的人|外向的人|i人|e人|"
                              rf"早睡早起的人|路痴|急性子|慢性子|完美主义者)(?:[^，。；]{{0,6}})$", section=P,
            examples=(("btw 我是左撇子", "用户是左撇子。"),)),
    Pattern("zh.base", "zh", rf"^我{ZA}(?:base|Base|坐标|人在|常驻)\s*(?:{CITIES_ZH})[^，。；]{{0,6}}$", section=P, key="home_city",
            examples=(("我是 Lucy，外企 HR，base 上海", "用户base 上海。"),)),
    Pattern("zh.event", "zh", rf"^我家?{ZA}(?:的)?(?:拿到了?|考上了?|考过了?|通过了?|升职(?:成|为|当)?了?|升为|入职了?|毕业了?|结婚了?|离婚了?|"
                              rf"领证了?|订婚了?|怀孕了?|生了|休产假|休陪产假|休假|退休了?|买了?房|买了?车|拿了?驾照|(?:[^，。；]{{1,6}})?出分了?|"
                              rf"(?:大宝|二宝|孩子|女儿|儿子|宝宝)(?:出生|降生)了?)[^，。；]{{0,16}}$",
            section=P,
            examples=(("上周终于拿到驾照了！", "用户上周终于拿到驾照了。"), ("昨天正式升职成组长了", "用户昨天正式升职成组长了。"),
                      ("下个月开始休产假了", "用户下个月开始休产假了。"))),
    Pattern("zh.job", "zh", rf"^我{ZA}(?:是|当)(?:一[名个位]|个)?[^，。,；]{{0,14}}?(?:{JOBS_ZH})(?:的)?$", section=W,
            examples=(("我是一名护士", "用户是一名护士。"), ("其实我是做前端的", "用户是做前端的。"), ("我是高中老师", "用户是高中老师。"))),
    Pattern("zh.grade", "zh", rf"^我{ZA}(?:在)?(?:读|上)?(?:初[一二三]|高[一二三]|大[一二三四]|研[一二三]|博[一二三四五]|小学[一二三四五六]年级)"
                              rf"(?:了|的学生)?$", section=P, examples=(("我初三 明年中考", "用户初三。"),)),
    Pattern("zh.age", "zh", rf"^我{ZA}(?:今年)?(?:已经)?(?:\d{{1,3}}|[一二三四五六七八九十]{{1,3}})(?:岁|周岁)?了?$", section=P,
            examples=(("我今年七十三了", "用户今年七十三了。"),)),
    Pattern("zh.owns", "zh", rf"^我{ZA}(?:在[^，。；]{{1,8}}?)?开了?(?:一?家|个|间)[^，。；]{{1,12}}(?:店|公司|工作室|餐厅|馆|厂|铺|摊)$",
            section=W, examples=(("我在成都开了家小甜品店", "用户在成都开了家小甜品店。"),)),
    Pattern("zh.experience", "zh", rf"^我{ZA}(?:做|干|开|教|写|学|跑|当|带)[^，。；]{{1,10}}?(?:十几年|二十多年|几十年|好几年|几年|\d+年|"
                                   rf"[一二三四五六七八九十两]+年)(?:多)?了?$", section=W,
            examples=(("我跑长途的，开货车十几年了", "用户开货车十几年了。"),)),
    Pattern("zh.goal", "zh", rf"^我{ZA}(?:给自己)?定了?(?:一)?个?(?:小)?目标[：:，,]?[^，。；]{{2,24}}$", category="goal", section=T,
            expires_days=FOCUS_DAYS, examples=(("今年给自己定了个小目标：年底前考下CPA", "用户今年给自己定了个小目标：年底前考下CPA。"),)),
    Pattern("zh.does", "zh", rf"^我{ZA}(?:是)?(?:做|搞|干|负责|从事|研究|写|教|跑|种|养|卖)(?:的是)?[^，。；]{{2,24}}?(?:的|相关|方向|工作|开发|这块)?$",
            section=W,
            examples=(("我主要做 Python 后端开发，你觉得 Go 怎么样？", "用户主要做 Python 后端开发。"),
                      ("我平时主要负责 Python 后端，用 FastAPI", "用户平时主要负责 Python 后端。"))),
    Pattern("zh.works_city", "zh", rf"^我{ZA}在(?:{CITIES_ZH})[^，。；]{{0,6}}?(?:工作|上班|办公|打工)(?:[^，。；]{{0,8}})$",
            section=W, key="work_city", examples=(("我现在在上海工作。", "用户现在在上海工作。"),)),
    Pattern("zh.in_city", "zh", rf"^我{ZA}在(?:{CITIES_ZH})(?:[\u4e00-\u9fff]{{0,4}}(?:区|路|街|镇|村|附近))?$", section=P,
            examples=(("不对，我其实在杭州，刚才打错了", "用户其实在杭州。"),)),
    Pattern("zh.left_job", "zh", rf"^我{ZA}(?:从(?P<org>[^，。；]{{2,12}}?))?(?:离职|辞职|被裁|被裁员|失业|退休)了?$|"
                                 rf"^我{ZA}被[^，。；]{{1,10}}?(?:裁|裁员|开除|辞退|优化)了?$", section=W, change=True,
            key="employer", examples=(("我已经从美团离职了", "用户已经从美团离职了。"),)),
    Pattern("zh.works_city_org", "zh", rf"^我{ZA}(?:是)?在(?:{CITIES_ZH})[^，。；]{{1,12}}?(?:公司|企业|工厂|医院|学校|大学|银行|单位|"
                                       rf"研究所|律所)(?:上班|工作|任职|实习|(?:做|干|负责)[^，。；]{{1,8}})$",
            section=W, key="work_city",
            examples=(("我是做嵌入式的，在深圳一家无人机公司上班", "用户在深圳一家无人机公司上班。"),)),
    Pattern("zh.works_at", "zh", rf"^我{ZA}(?:是)?在(?!家|这里|那里|外地|国外|线上|网上|路上|医院|{WHEN_ZH})[^，。；]{{2,16}}?(?:工作|上班|任职|实习|打工|读书|上学|读研|读博|念书|"
                                 rf"(?:干|做|搞|负责|带|教|种|养|卖|开)[^，。；]{{1,12}})(?:[^，。；]{{0,12}})$",
            section=W, key="employer",
            examples=(("我在字节干后端", "用户在字节干后端。"),
                      ("我是在一家律所做法律科技的", "用户是在一家律所做法律科技的。"))),
    Pattern("zh.lives", "zh", rf"^我{ZA}(?:住在|生活在|定居在?|住|家在)(?!在?(?:公司|床|你|他|她|心里|这|那|哪|酒店|医院|车里))"
                              rf"(?P<place>[^，。；]{{2,12}}?)$|"
                              rf"^我{ZA}在(?:{CITIES_ZH})[^，。；]{{0,8}}?(?:租房|租了房|住|安家|买了房|定居)[^，。；]{{0,4}}$",
            section=P, key="home_city",
            examples=(("我住在杭州", "用户住在杭州。"), ("我住北京回龙观", "用户住北京回龙观。"), ("我住公司了，最近天天加班", None),
                      ("我在深圳南山这边租房", "用户在深圳南山这边租房。"))),
    Pattern("zh.hometown", "zh", rf"^我{ZA}(?:老家(?:是|在)|是)(?P<place>[^，。；]{{2,12}}?)(?:人)$|^我{ZA}老家(?:是|在)[^，。；]{{2,12}}$",
            section=P, examples=(("我老家是湖南的", "用户老家是湖南的。"), ("我是四川人", "用户是四川人。"))),
    Pattern("zh.moved", "zh", rf"^(?:我)?{ZA}(?:从[^，。；]{{1,8}}?)?(?:搬到|搬去|搬家到|移居|定居到?)(?:了)?[^，。；]{{2,12}}(?:了)?$",
            section=P, change=True, key="home_city", drop=r"从[^，。；]{1,8}?(?=搬|移居|定居)",
            examples=(("我上个月搬到深圳了", "用户上个月搬到深圳了。"), ("刚搬到成都", "用户刚搬到成都。"),
                      ("我上个月刚从北京搬到杭州", "用户上个月刚搬到杭州。"))),
    Pattern("zh.joined", "zh", rf"^(?:我)?{ZA}(?:入职|加入了?|跳槽到|跳槽去了?|换到|去了)(?P<org>[^，。；]{{2,16}}?)(?:了|工作|上班)?$|"
                               rf"^(?:我)?(?:现在|已经|目前)(?:去|到)(?P<org2>[^，。；]{{2,8}}?)(?:上班|工作)?了$",
            section=W, change=True, key="employer",
            examples=(("我已经跳槽到拼多多了", "用户已经跳槽到拼多多了。"),)),
    Pattern("zh.phone", "zh", r"^我的?(?:手机|电话)(?:是|用的是|用)\s*[^，。；]{1,16}$|^(?:我)?(?:最近|刚|已经|现在)?(?:换了|换成了?|改用)"
                              r"(?:个|部|台)?\s*(?:新手机|iPhone|苹果|华为|小米|OPPO|vivo|三星|荣耀|一加|Pixel)[^，。；]{0,12}$",
            category="preference", section=P, key="phone", change=True,
            examples=(("我手机是小米14", "用户手机是小米14。"), ("换了 iPhone 15 了", "用户换了 iPhone 15 了。"))),
    Pattern("zh.switched", "zh", rf"^(?:我)?{ZA}(?:改用|换成|换用|转用|用回|改喝|改吃|换喝|改成)(?:了)?[^，。；]{{1,20}}(?<=了)$|"
                                 rf"^我{ZA}(?:现在|已经|最近)(?:改用|换成|换用|转用|用回|改喝|改吃|换喝|改成)(?:了)?[^，。；]{{1,20}}$",
            category="preference", section=W, change=True,
            examples=(("现在改用 Neovim 了", "用户现在改用 Neovim 了。"),)),
    Pattern("zh.career_switch", "zh", rf"^(?:我)?{ZA}(?:转|转到|转向|转做|改做|转行做?)\s*(?P<what>[A-Za-z+#]+|前端|后端|全栈|算法|"
                                      rf"产品|运营|测试|运维|数据|设计|管理)(?:开发|方向)?\s*(?:了)?$",
            section=W, change=True, key="job_role",
            examples=(("最近转 Go 了", "用户最近转 Go 了。"),)),
    Pattern("zh.no_longer", "zh", rf"^我{ZA}(?:不再|已经不|早就不|现在不|戒了)[^，。；]{{1,20}}$", change=True, section=P,
            examples=(("我已经不吃肉了", "用户已经不吃肉了。"), ("我戒了咖啡", "用户戒了咖啡。"))),
    Pattern("zh.allergy", "zh", rf"^我{ZA}(?!对?(?:周一|上班|开会|早起|学习|工作|你|老板))(?:对)?[^，。；]{{1,12}}过敏$", section=P,
            examples=(("我对花生过敏", "用户对花生过敏。"), ("记住，我海鲜过敏", "用户海鲜过敏。"))),
    Pattern("zh.diet", "zh", rf"^我{ZA}(?:吃素|是素食者|是素食主义者|吃全素|吃蛋奶素|无肉不欢|在吃生酮|吃清真)了?$", section=P, key="diet",
            examples=(("我吃素", "用户吃素。"), ("我现在吃素了", "用户现在吃素了。"))),
    Pattern("zh.avoid_food", "zh", rf"^我{ZA}(?:不吃[^，。；]{{1,8}}|不能吃[^，。；]{{1,8}}|不喝[^，。；]{{1,6}}|忌口[^，。；]{{0,8}}|"
                                   rf"乳糖不耐受?|在控糖|在减肥|在戒[^，。；]{{1,4}})了?$", section=P,
            examples=(("我不吃辣", "用户不吃辣。"), ("我不吃香菜，也不吃内脏", "用户也不吃内脏。"))),
    Pattern("zh.health", "zh", rf"^我{ZA}(?:去医院|在医院|体检)?(?:有|得了|患有|查出|确诊了?|被诊断为|被诊断出)?(?:点)?(?:轻度|中度|重度|轻微的?|严重的?|慢性)?(?:乳糖不耐受?|高血压|糖尿病|哮喘|痛风|胃病|颈椎病|腰椎间盘突出|抑郁症?|焦虑症?|"
                               rf"失眠|偏头痛|鼻炎|色弱|色盲|甲减|甲亢|心脏病|[^，。；]{{1,6}}(?:病|症|炎))$", section=P,
            examples=(("我有高血压", "用户有高血压。"),)),
    Pattern("zh.medication", "zh", rf"^我{ZA}(?:都|也)?(?:得|要|需要|一直|长期|常年|按时|在)?(?:吃|服用|打)(?:着)?(?P<drug>[^，。；]{{1,8}}(?:药|片|林|乐|"
                                   rf"素|胶囊|针|剂|酮|汀|沙坦|洛尔|双胍))(?:[^，。；]{{0,6}})$",
            section=P, examples=(("甲状腺手术做完以后我每天早上都得吃优甲乐", "甲状腺手术做完以后，用户每天早上都得吃优甲乐。"),
                                 ("我在吃饭", None))),
    Pattern("zh.native_language", "zh", rf"^我的?(?:母语|第一语言)(?:是)?[^，。；]{{1,8}}$", section=P,
            examples=(("我的母语是粤语", "用户的母语是粤语。"),)),
    Pattern("zh.speaks", "zh", rf"^我{ZA}(?:(?:会说|会讲|能说|说|讲|不会说?|不会讲)(?:{LANGS_ZH})(?:[^，。；]{{0,10}})|(?:的)?(?:{LANGS_ZH})"
                               rf"(?:还行|一般|不错|很好|流利|不太好|很差|不好|说得|讲得|水平|基本不会|只会)[^，。；]{{0,10}})$", section=P,
            examples=(("我会说日语", "用户会说日语。"),)),
    Pattern("zh.family", "zh", rf"^我{ZA}(?:有|家有)(?:一个|两个|三个|个|一对|俩)?(?:{FAMILY_ZH})(?:[^，。；]{{0,12}})$", section=P,
            examples=(("我有两个孩子", "用户有两个孩子。"), ("我有一对双胞胎", "用户有一对双胞胎。"))),
    Pattern("zh.family_named", "zh", rf"^我(?:的|家的?)?(?:{FAMILY_ZH}|{PETS_ZH})(?:今年|叫|名字叫|是)[^，。；]{{1,12}}$", section=P,
            examples=(("我女儿今年五岁", "用户的女儿今年五岁。"), ("我家的猫叫咪咪", "用户家的猫叫咪咪。"))),
    Pattern("zh.pet", "zh", rf"^(?:我|我们)(?:家里?)?{ZA}(?:养了?|有|领养了|收养了|捡了|新来了|来了)(?:一只|两只|三只|只|一条|条|个)?[^，。；]{{0,6}}"
                            rf"(?:{PETS_ZH})(?:.{{0,30}})$", section=P,
            examples=(("我养了一只橘猫，叫大黄", "用户养了一只橘猫，叫大黄。"), ("我们刚领养了一只柯基", "用户刚领养了一只柯基。"),
                      ("家里新来了只橘猫，叫年糕", "用户家里新来了只橘猫，叫年糕。"))),
    Pattern("zh.tools", "zh", rf"^我{ZA}(?:日常|习惯|喜欢)?(?:用|使用)\s*(?!中文|英文|英语)[A-Za-z][^，。；]{{0,24}}$|"
                              rf"^我的?(?:终端|编辑器|IDE|电脑|手机|系统|主力机)(?:是|用的是|用)\s*[A-Za-z][^，。；]{{0,20}}$",
            category="preference", section=W,
            examples=(("我平时用 VS Code 写代码", "用户平时用 VS Code 写代码。"),)),
    Pattern("zh.tool_for", "zh", rf"^我{ZA}(?P<topic>[\u4e00-\u9fff]{{2,8}}?)(?:都|一般|一直|主要)?(?:用的是|都用|用)\s*(?P<tool>[A-Za-z][\w.+\- ]{{1,20}})$",
            category="preference", section=W, key="tool:{topic}",
            examples=(("平时整理案例都用notion", "用户平时整理案例都用notion。"), ("整理案例用的是obsidian", "用户整理案例用的是obsidian。"))),
    Pattern("zh.stack", "zh", r"^我的(?:编辑器|IDE|技术栈|主力语言|主力机|电脑|系统|操作系统)(?:是|用的是)[^，。；]{1,20}$",
            category="preference", section=W,
            examples=(("我的技术栈是 React + Node", "用户的技术栈是 React + Node。"),)),
    Pattern("zh.focus", "zh", rf"^我{ZA}(?:接下来|这几个月|这段时间|今年|最近|正在|在)?(?:几个月)?(?:在)?(?:系统)?(?:学|学习|自学|准备|备考|"
                              rf"考|研究|练|练习|筹备|写|做|搞|攻读|备战)(?![^，。；]*(?:{TASK_ZH}))[^，。；]{{2,24}}$",
            category="goal", section=T, expires_days=FOCUS_DAYS,
            examples=(("我接下来几个月在系统学习 Agent 上下文工程", "用户接下来几个月在系统学习 Agent 上下文工程。"),
                      ("最近我在准备雅思", "用户最近在准备雅思。"))),
    Pattern("zh.trip", "zh", rf"^(?:我)?{ZA}(?:要|会|将|准备|打算|计划)?(?:去|到)[^，。；]{{2,12}}(?:出差|旅游|旅行|玩|读书|上学|读研|"
                             rf"工作|定居|培训|开会|交换|留学)(?:[^，。；]{{0,6}})$",
            category="goal", section=T, expires_days=FOCUS_DAYS,
            examples=(("下个月要去东京出差一周", "用户下个月要去东京出差一周。"),)),
    Pattern("zh.plan", "zh", rf"^我{ZA}(?:打算|计划|准备|决定)(?![^，。；]*(?:{TASK_ZH}))[^，。；]{{3,24}}$", category="goal", section=T,
            expires_days=FOCUS_DAYS,
            examples=(("我打算明年去读研", "用户打算明年去读研。"),)),
    Pattern("zh.hobby_named", "zh", rf"^我的?{ZA}(?:最大的|唯一的|主要的)?(?:爱好|兴趣|兴趣爱好)(?:是|就是)[^，。；]{{1,16}}$",
            category="preference", section=P, examples=(("不过说实话，我平时最大的爱好是钓鱼", "用户平时最大的爱好是钓鱼。"),)),
    Pattern("zh.routine", "zh", rf"^我(?=[^，。；]*(?:每天|天天|每周|每晚|每个周末|每个月|经常|常常|习惯))[^，。；]{{1,14}}?(?:跑步|健身|游泳|"
                                rf"锻炼|练|学|读|写|冥想|瑜伽|骑车|打球|做饭|遛狗|早起|起床|喝|来一杯|来杯|吃|看)[^，。；]{{0,12}}$",
            category="preference", section=P, examples=(("我每天早上六点起来跑步", "用户每天早上六点起来跑步。"),
                                                        ("我每天早上都得来一杯冰美式", "用户每天早上都得来一杯冰美式。"))),
    Pattern("zh.hobby", "zh", rf"^我{ZA}(?:业余|周末|没事|有空)?(?:喜欢|爱|会|经常|每天|每周)(?:去)?(?:打[^，。；]{{0,3}}球|弹|跑步|游泳|爬山|"
                              rf"踢[^，。；]{{0,2}}球|下棋|下围棋|玩|画画|画|拍照|摄影|钓鱼|做饭|烘焙|滑雪|骑行|骑车|露营|徒步|健身|练)"
                              rf"[^，。；]{{0,12}}$", category="preference", section=P,
            examples=(("我周末喜欢去爬山", "用户周末喜欢去爬山。"),)),
    Pattern("zh.likes", "zh", rf"^我{ZA}(?:比较|很|特别|非常|更|最|不太|不怎么)?(?:喜欢|偏好|偏爱|讨厌|不喜欢|习惯|爱|受不了|反感)"
                              rf"(?!了|死|上了|这|那|你|您|它|第[一二三四五六七八九十\d]|上面|刚才|前面|后面|最后|哪)[^，。；]{{1,30}}$",
            category="preference", section=P,
            examples=(("我比较喜欢简洁的回答", "用户比较喜欢简洁的回答。"), ("我讨厌长篇大论", "用户讨厌长篇大论。"),
                      ("我喜欢这个答案", None), ("我喜欢你写的这首诗", None), ("爱了爱了", None))),
    Pattern("zh.now_at", "zh", rf"^我(?:现在|目前|已经)(?:在|去了?|到了?)(?!家|路上|外面|医院|地铁|车上|开会|吃饭|{CITIES_ZH})"
                               rf"(?P<org>[^，。；]{{2,8}}?)(?:了|上班|工作)?$",
            section=W, key="employer", change=True,
            examples=(("其实我已经从腾讯离职了，现在在美团", "用户现在在美团。"), ("我现在在地铁上", None))),
    Pattern("zh.rule_language", "zh", rf"^(?:我{ZA}(?:更|还是|比较)?(?:希望|想要|想让|要)(?=你))?(?:以后|之后|今后|平时|往后|每次|这次|今天|先|这次先|暂时)?(?:回答|回复|解释|说话)?(?:都|也|先|还是)?请?(?:你)?(?:都|也|还是)?(?:用|使用)(?:{LANGS_ZH})[^，。；]{{0,20}}$",
            "prefer", category="preference", key="response_language",
            examples=(("平时请用中文解释技术问题", "用户偏好用中文解释技术问题。"),
                      ("不对，其实我更希望你用英文回答。", "用户偏好用英文回答。"))),
    Pattern("zh.rule_later", "zh", r"^(?:你|您)?(?:以后|之后|今后|往后|平时|每次|默认|从现在起|从现在开始|请你?以后|请以后|请|麻烦以后)"
                                   r"(?!再说|再聊|有空|有机会|可能|也许|想|打算|会)[^。；]{0,30}?(?:请|要|都|先|别|不要|少|多|用|给|加|写|"
                                   r"尽量|一律|统一|简短|简洁|详细|直接)[^。；]{1,40}$",
            "rule", category="preference",
            examples=(("好的，不过以后解释代码请先给最小示例", "用户希望以后解释代码时先给最小示例。"),
                      ("以后回答问题请先给结论。", "用户希望以后回答问题时先给结论。"),
                      ("以后回答尽量详细", "用户希望以后回答尽量详细。"), ("以后再说吧", None))),
    Pattern("zh.rule_dont", "zh", r"^[^，。；我]{0,14}?(?:请|麻烦)?(?:你)?(?:不要|别|不用|千万别|永远不要|少)"
                                  r"(?:再)?(?:给我|帮我|跟我|对我)?(?:用|加|写|发|放|带|说|叫|回|搞|安排|推荐|打|约|问)[^，。；]{1,20}$",
            "rule", category="preference",
            examples=(("不要用表情符号", "用户希望不要用表情符号。"), ("别再给我加注释了", "用户希望别再加注释。"),
                      ("所以晚上九点以后别给我安排会议", "用户希望晚上九点以后别安排会议。"))),
    Pattern("zh.uses", "zh", rf"^我{ZA}(?:平时|日常|工作中|工作上)?(?:用的是|用|使用)(?:的是)?\s*(?:一台|一部)?\s*"
                             rf"(?-i:[A-Z]|[a-z]{{1,4}}(?=[A-Z]))[\w.+#-]*(?:\s+[\w.+#-]+){{0,2}}\s*(?:电脑|笔记本|系统|手机|的)?$", section=W,
            examples=(("我用的是 macOS。", "用户用的是 macOS。"),
                      ("我用 Python 写了个脚本", None))),
    Pattern("zh.project_uses", "zh", r"^(?:这个|本|该|我们的?|咱们的?)(?:项目|仓库|代码库|工程|repo|服务)(?:里|中)?(?:都|主要)?"
                                     r"(?:使用|用的是|用|采用|基于|跑在|部署在|依赖|的数据库是|的后端是|是用)\s*[^，。；]{1,30}?(?:写的|做数据库|开发的)?$",
            "self", category="knowledge",
            examples=(("这个仓库使用 PostgreSQL。", "这个仓库使用 PostgreSQL。"),
                      ("这个项目用 PostgreSQL 做数据库。", "这个项目用 PostgreSQL 做数据库。"))),
    Pattern("zh.finished", "zh", r"^(?:我)?(?P<what>[^，。；我]{2,20}?)(?:我)?(?:已经|都|终于|总算)?(?:学完|做完|写完|考完|结束|完成|搞定|"
                                 r"忙完|弄完)了$",
            "retire", examples=(("Agent 上下文工程已经学完了", None),)),
    Pattern("zh.forget", "zh", r"^(?:请|麻烦)?(?:你)?(?:忘掉|忘了|忘记|删掉|删除|别记|不要记|不用记|别再记)(?:住)?(?:关于)?(?:我)?(?P<what>.{2,30})$",
            "forget", examples=(("算了，别记我住在哪了", None),)),
    Pattern("zh.forget_this", "zh", r"^(?:请|麻烦)?(?:你)?(?:帮我)?(?:把它|把这些|把这个)?(?:都|全|全部)?(?:给)?(?:删了|删掉|删除|忘了|忘掉|清除|清掉|"
                                    r"别记了|不要记了)(?P<what>)$",
            "forget", examples=(("之前跟你说的抑郁和吃药的事，帮我都删了吧", None),)),
    Pattern("zh.forget_topic", "zh", r"^(?P<what>[^，。；]{1,12}?)(?:的事|这件事|这句|那句)?(?:就|也)?(?:别记了?|不用记了?|不要记了?|忘了吧|删了吧|忘掉吧|"
                                     r"删掉吧?)$",
            "forget", examples=(("狗的事别记了", None), ("刚才那句别记", None))),
    Pattern("zh.stopped", "zh", r"^(?:我)?(?:对)?(?P<what>[^，。；我]{1,8}?)我?(?:已经|现在|早就)?(?:不再|不)(?P<verb>过敏|学|用|吃|喝|玩|练|做|"
                                r"养|住)了$",
            "forget", examples=(("法语我不学了", None), ("我对花生已经不过敏了", None))),
    Pattern("zh.pet_gone", "zh", rf"^我(?:的|家的?)?(?P<what>{PETS_ZH})(?:[^，。；]{{0,6}}?)(?:走了|去世了|死了|没了|丢了)$",
            "forget", examples=(("我的猫上个月走了", None),)),
    Pattern("zh.forget_ba", "zh", r"^(?:请|麻烦)?(?:你)?(?:帮我)?把(?P<what>.{2,30}?)(?:这件事|这个|这条|这些|的事)?(?:给)?(?:忘掉|忘了|忘记|删掉|删了|"
                                  r"删除|清除|抹掉)", "forget", examples=(("帮我把我养狗这件事忘掉吧", None),)),
    # ------------------------------------------------------------------ en
    Pattern("en.name", "en", r"(?:^|\b)(?:my name(?:'s| is)|name's|call me|i go by|i'?m|i am)\s+(?!(?:Tired|Fine|Good|Back|Sorry|Sure|"
                             r"Ready|Done|Here|Okay|Ok|Happy|Busy|New|Curious|Confused|Stuck|Lost|Not|Just|So|Really|Still|"
                             r"American|British|Brazilian|Canadian|Chinese|Japanese|Korean|German|French|Spanish|Italian|"
                             r"Mexican|Indian|Russian|Australian|Irish|Dutch|Swedish|Polish|Portuguese|Turkish|Greek|Swiss|"
                             r"Also|Glad|Excited|Home|Off|Out|In|On|Up|Down|Well|Great|Cool)\b)"
                             r"(?P<name>(?-i:[A-Z][a-z]+)(?:\s(?-i:[A-Z][a-z]+))?)(?:\s+(?:now|from now on|instead|please|going forward))*"
                             r"(?:,.*|\s+with an? \w+)?$",
            "The user's name is {name}.", section=P,
            examples=(("Hi! My name is Priya.", "The user's name is Priya."), ("call me Sam", "The user's name is Sam."),
                      ("I'm Tired", None), ("Hi, I'm Dana", "The user's name is Dana."))),
    Pattern("en.job", "en", rf"^i'?m\s+(?:now\s+|currently\s+|actually\s+)?(?:an?|the)\s+(?:[\w\-/]+\s+){{0,4}}?(?:{JOBS_EN})s?\b.*$",
            section=W,
            examples=(("I'm a backend engineer at a fintech startup. Can you help me with this?",
                       "The user is a backend engineer at a fintech startup."),
                      ("i'm an ER nurse", "The user is an ER nurse."))),
    Pattern("en.job_years", "en", rf"^i(?:'ve| have)\s+been\s+(?:an?\s+)?(?:[\w\-]+\s+){{0,3}}(?:{JOBS_EN}|nursing|teaching|coding|"
                                  rf"programming|practicing \w+|working (?:as|at|in|for) .+)\b.*(?:for|since)\s+.+$",
            section=W,
            examples=(("been nursing for 12 yrs now", "The user has been nursing for 12 yrs now."),)),
    Pattern("en.intro_here", "en", r"^(?!.*\b(?:it|it's|i|you|we|they|get|got|been|was|is|are|am|be|come|came|almost|from|over|out|"
                                   r"back|right|still|just|now|again)\b)(?P<what>(?:an?\s+)?(?:\d+(?:st|nd|rd|th)\s+(?:yr|year)\s+)?"
                                   r"[\w\-' ]{2,40}?)\s+here$",
            "The user: {what}.", section=W,
            examples=(("2nd yr bio at UCSD here btw", "The user: 2nd yr bio at UCSD."), ("nurse here", "The user: nurse."))),
    Pattern("en.works", "en", r"^i\s+(?:currently\s+|now\s+|mostly\s+|mainly\s+)?(?:work|am working|'m working|freelance|consult|"
                              r"contract)\s+(?!at a snail|at my own pace|at night|on weekends|in silence|best|better)(?:as|at|for|in|on|"
                              r"from|remotely)\b.{2,}$",
            section=W,
            examples=(("I work as a data analyst", "The user works as a data analyst."),
                      ("I work at Shopify on the payments team", "The user works at Shopify on the payments team."))),
    Pattern("en.teaches", "en", EN_I + r"(?:teach|tutor|coach|lecture in|lecture on)\s+(?!you\b|it\b|them\b).{2,}$", section=W,
            examples=(("I'm Diego, I teach Spanish at a community college in Phoenix",
                       "The user teaches Spanish at a community college in Phoenix."),)),
    Pattern("en.freelance", "en", EN_I + r"(?:do|am doing|'m doing)\s+(?:freelance|contract|consulting|part-time|full-time|remote)\s+.{3,}$",
            section=W, examples=(("I'm Jon, I do freelance video editing", "The user does freelance video editing."),)),
    Pattern("en.streams", "en", EN_I + r"(?:stream|vlog|blog|podcast|post videos|make videos|upload)\s+(?:on|to|about)\s+\w+.*$", section=W,
            examples=(("yo so i stream on twitch, mostly minecraft hardcore", "The user streams on twitch, mostly minecraft hardcore."),)),
    Pattern("en.native_speaker", "en", rf"^(?:a\s+)?(?P<speaker>native\s+(?:{LANGS})\s+speaker)$", "The user is a {speaker}.",
            section=P, examples=(("I'm Brazilian, native Portuguese speaker", "The user is a native Portuguese speaker."),)),
    Pattern("en.does", "en", r"^i\s+(?:mostly\s+|mainly\s+)?(?:do|teach|run|own|manage|lead|write|build|design|study)\s+"
                             r"(?:\w+\s+){0,4}(?:for a living|professionally|at (?-i:[A-Z])\w*|for (?-i:[A-Z])\w*|"
                             r"(?:backend|frontend|front-end|back-end|full-stack|data|ml|devops|infra|mobile|game|web) "
                             r"(?:work|development|engineering|dev|stuff)|a (?:small |tiny |local )?(?:business|shop|store|"
                             r"bakery|cafe|restaurant|studio|company|startup|team|clinic|practice)|(?:math|maths|english|"
                             r"science|history|physics|chemistry|biology|music|art|computer science)\b).*$",
            section=W,
            examples=(("I run a small bakery in Leeds", "The user runs a small bakery in Leeds."),
                      ("I do backend work for a living", "The user does backend work for a living."))),
    Pattern("en.lives", "en", r"^i\s+(?:currently\s+|now\s+|still\s+)?(?:live|reside|am based|'m based|am living|'m living)\s+"
                              r"(?:in|near|outside|just outside)\s+(?!fear|hope|denial|the moment|the past|a bubble|my head|"
                              r"my car|your|a dream|sin|terror|dread|constant|the terminal|the gym|the office|the library|"
                              r"the kitchen|my room|my bed|coffee|pajamas|sweatpants)\S.{1,}$|^i'?m\s+(?:based in|living in)\s+.{2,}$",
            section=P, key="home_city",
            examples=(("I live in Berlin", "The user lives in Berlin."), ("i live in austin", "The user lives in austin."),
                      ("I live in fear of my inbox", None))),
    Pattern("en.from", "en", r"^i\s+(?:grew up)\s+(?:in|near|outside|on)\b.{2,}$|^i'?m\s+(?:originally\s+)?from\s+.{2,}$|"
                             r"^i\s+am\s+(?:originally\s+)?from\s+.{2,}$",
            section=P,
            examples=(("I'm originally from Sweden", "The user is originally from Sweden."),)),
    Pattern("en.nationality", "en", r"^i'?m\s+(?:a\s+)?(?:proud\s+)?(?:american|british|brazilian|canadian|chinese|japanese|korean|german|"
                                    r"french|spanish|italian|mexican|indian|russian|australian|irish|scottish|dutch|swedish|"
                                    r"norwegian|danish|polish|portuguese|turkish|greek|egyptian|nigerian|kenyan|vietnamese|thai|"
                                    r"filipino|filipina|indonesian|pakistani|iranian|israeli|argentinian|colombian|chilean|peruvian|"
                                    r"cuban|jamaican|swiss|austrian|belgian|ukrainian|czech|hungarian|romanian|finnish|welsh|"
                                    r"english|taiwanese|malaysian|singaporean|south african|new zealander|kiwi)\b.*$",
            section=P, examples=(("hi, I'm Brazilian", "The user is Brazilian."),)),
    Pattern("en.home_country", "en", r"\bmy home (?P<what>country|town|city|state)(?:,| is)\s+(?P<place>(?-i:[A-Z])[\w\-]+(?: (?-i:[A-Z])[\w\-]+)?)",
            "The user's home {what} is {place}.", section=P,
            examples=(("…a gift from my grandma in my home country, Sweden.", "The user's home country is Sweden."),)),
    Pattern("en.moved", "en", r"^(?:i|we)(?:'ve| have|'re| are|'m| am)?\s+(?:just\s+|finally\s+|recently\s+|officially\s+)?"
                              r"(?:moved|relocated|moving|relocating)\s+(?:back\s+)?(?:from\s+.+?\s+)?(?:to|into|out of)\s+.{2,}$",
            section=P, change=True, key="home_city", drop=r"\s+from\s+.+?(?=\s+(?:to|into)\b)",
            examples=(("Actually, I moved to Berlin last year", "The user moved to Berlin last year."),)),
    Pattern("en.joined", "en", r"^i(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:joined|started at|"
                               r"started (?:a new job|working|my new job) (?:at|as|with)|got a job (?:at|as)|accepted an? (?:offer|job|"
                               r"position) (?:at|from|as)|took a (?:new |temp |part-time |full-time )?job(?: at| as)?|got hired (?:at|by|as)|"
                               r"got promoted to|was promoted to|became)\s+.{2,}$|^i'?m\s+starting\s+(?:at|as)\s+.{2,}$",
            section=W, change=True,
            examples=(("I'm starting at Google next month", "The user is starting at Google next month."),)),
    Pattern("en.left_joined", "en", r"^i(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:left|quit)\s+(?P<old>.+?)\s+(?:and|to)\s+"
                                    r"(?:joined|join|started at|moved to)\s+(?P<org>(?-i:[A-Z])[\w&.\-]*(?:\s(?-i:[A-Z])[\w&.\-]*)*)(?P<rest>.*)$",
            "The user works at {org}{rest}.", section=W, change=True, key="employer",
            examples=(("I left Stripe and joined Shopify", "The user works at Shopify."),)),
    Pattern("en.retired", "en", EN_I + r"(?:retired|graduated)\b.*$", section=W, change=True,
            examples=(("Retired last spring after 35 years of teaching high school chemistry",
                       "The user retired last spring after 35 years of teaching high school chemistry."),)),
    Pattern("en.took_up", "en", r"^i(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:taken up|took up|picked up|got into|gotten into|"
                                r"started)\s+(?!the\b|it\b|that\b|this\b|a fight|an argument|when|because|with|as\b|to\s+(?!learn|study|"
                                r"practi[cs]e|play|take|run|swim|paint|draw|write|cook|bake|code)\b)[\w\- ]{3,60}$",
            category="preference", section=P,
            examples=(("so I've taken up watercolor", "The user has taken up watercolor."),
                      ("I started playing acoustic guitar about five years ago",
                       "The user started playing acoustic guitar about five years ago."))),
    Pattern("en.lost_job", "en", r"^i(?:'ve| have)?\s+(?:just\s+|also\s+)?(?:(?:lost|quit|left)\s+my\s+(?:job|position|role)\b|"
                                 r"(?:got|was|just got|have been|'ve been)\s+(?:laid off|fired|let go|made redundant)\b).*$",
            section=W, change=True, key="job_role",
            examples=(("Lost my job as a banker yesterday, so I'm gonna take a shot at starting my own business",
                       "The user lost their job as a banker yesterday."),)),
    Pattern("en.new_job", "en", r"^i(?:'ve| have)?\s+(?:just\s+|finally\s+|recently\s+|officially\s+)?(?:got|landed|started|took|accepted|"
                                r"got accepted (?:for|into)|was accepted (?:for|into)|got hired (?:for|as))\s+(?:a|an|the|my)?\s*"
                                r"(?:new\s+)?(?:[\w\-]+\s+){0,3}?(?:job|internship|position|role|gig|offer|apprenticeship|residency)\b.*$",
            section=W, key="job_role", change=True,
            examples=(("I got a temp job to help cover expenses", "The user got a temp job to help cover expenses."),
                      ("I just got accepted for a fashion internship!", "The user just got accepted for a fashion internship."))),
    Pattern("en.event", "en", EN_I + r"(?:finally\s+|recently\s+)?(?:passed|got|earned|received|completed|finished|graduated|won|had|"
                              r"bought|sold|started|launched|opened|published|broke|adopted|became|lost|signed|closed on)\s+"
                              r"(?:\w+\s+){0,5}?(?:surgery|operation|baby|degree|license|licence|certification|certificate|"
                              r"citizenship|exam|promotion|raise|divorce|wedding|house|home|apartment|flat|condo|car|marathon|"
                              r"diagnosis|accident|injury|phd|master's|masters|bachelor's|visa|green card|internship|"
                              r"scholarship|award|prize|book|business|company|startup|shop|store|bakery|restaurant|studio|"
                              r"mortgage|lease|black belt|bar|cpa|ielts|toefl|gre|gmat)\b.*$",
            section=P,
            examples=(("I had knee surgery last week, so no running for six weeks", "The user had knee surgery last week."),
                      ("Passed my AWS Solutions Architect Associate exam yesterday!",
                       "The user passed their AWS Solutions Architect Associate exam yesterday."))),
    Pattern("en.switched", "en", r"^i(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?(?:switched|changed|moved over|gone over|"
                                 r"migrated|converted)\s+(?:over\s+)?(?:from\s+.+?\s+)?to\s+.{2,}$",
            category="preference", section=W, change=True,
            examples=(("I've switched to Neovim", "The user has switched to Neovim."),)),
    Pattern("en.no_longer", "en", r"^i\s+(?:no longer|don't \w+ anymore|do not \w+ anymore|stopped|quit|gave up)\s*.{2,}$|"
                                  r"^i'?m\s+(?:pausing|dropping|giving up(?: on)?|quitting|stopping|done with|no longer)\s+.{2,}$",
            section=P, change=True,
            examples=(("I no longer eat meat", "The user no longer eats meat."),)),
    Pattern("en.allergy", "en", r"^i'?m\s+(?:severely\s+|very\s+|deathly\s+|mildly\s+|seriously\s+|super\s+|really\s+|highly\s+|extremely\s+)?allergic\s+to\s+(?!mondays?|meetings?|work|people|math|homework|exercise|mornings?|effort|you|your|this|that)\S.{1,}$|"
                                r"^i\s+have\s+(?:an?\s+|a severe\s+|a mild\s+)?[\w\s\-]{2,20}\s+allerg(?:y|ies)\b.*$",
            section=P,
            examples=(("I'm allergic to peanuts.", "The user is allergic to peanuts."),
                      ("I have a shellfish allergy", "The user has a shellfish allergy."))),
    Pattern("en.diet_change", "en", r"^i\s+(?:eat|am eating|'m eating|started eating)\s+(?:meat|fish|chicken|pork|beef)\s+again\b.*$",
            section=P, key="diet", change=True,
            examples=(("I eat meat again these days.", "The user eats meat again these days."),)),
    Pattern("en.diet", "en", r"^i(?:'m|'ve been| am| have been)\s+(?:now\s+|also\s+|doing\s+|on\s+)?(?:a\s+)?(?:strict\s+|fully\s+|mostly\s+)?(?:vegan|vegetarian|pescatarian|lactose[- ]intolerant|"
                             r"gluten[- ]free|on a \w+ diet|keto|halal|kosher|diabetic|pre-diabetic|celiac|coeliac)\b(?!'s)(?!.*\bnightmare\b).*$|"
                             r"^i\s+(?:don't|do not|can't|cannot|never)\s+(?:eat|drink|have|do)\s+(?!it\b|that\b|this\b).{2,}$|"
                             r"^i\s+(?:avoid|keep|eat)\s+(?:gluten|dairy|sugar|meat|pork|beef|alcohol|caffeine|kosher|halal).*$",
            section=P,
            examples=(("I'm vegetarian", "The user is vegetarian."), ("I don't eat pork", "The user doesn't eat pork."))),
    Pattern("en.marital", "en", r"^i(?:'m|'ve| have| am)?\s*(?:just\s+|recently\s+|finally\s+|now\s+|happily\s+)?(?:got\s+)?(?:single|married|"
                                r"divorced|engaged|widowed|separated)\b.*$",
            section=P, key="marital_status", change=True,
            examples=(("I'm single.", "The user is single."), ("I got married last Saturday!", "The user got married last Saturday."))),
    Pattern("en.health", "en", rf"^i\s+(?:have|'ve got|have got|was diagnosed with|live with|suffer from|deal with)\s+(?:{CONDITIONS_EN})\b.*$|"
                               r"^i'?m\s+(?:colou?r[- ]?blind|deaf|hard of hearing|blind|pregnant|diabetic|asthmatic|dyslexic|"
                               r"in a wheelchair|a wheelchair user|on the spectrum|autistic|left-handed|right-handed|"
                               r"short-sighted|nearsighted|long-sighted|an introvert|an extrovert|a night owl|an early bird|"
                               r"a morning person|not a morning person)\b.*$",
            section=P,
            examples=(("I have type 2 diabetes", "The user has type 2 diabetes."), ("I'm colorblind", "The user is colorblind."))),
    Pattern("en.native_language", "en", rf"^my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+.{{2,}}$|"
                                        rf"^i'?m\s+a\s+native\s+(?:{LANGS})\s+speaker\b.*$|"
                                        rf"{EN_I}(?:speak|am fluent in|'m fluent in|read|write)\s+(?:fluent\s+|some\s+|a little\s+|"
                                        rf"basic\s+|decent\s+)?(?:{LANGS})\b.*$",
            section=P,
            examples=(("My native language is Portuguese", "The user's native language is Portuguese."),
                      ("I speak Korean and a little Japanese", "The user speaks Korean and a little Japanese."))),
    Pattern("en.family", "en", rf"^i\s+have\s+(?:an?|one|two|three|four|five|\d+|twin)\s+(?:\w+\s+)?(?:{FAMILY_EN}|{PETS_EN})s?\b.*$|"
                               r"^i'?m\s+a (?:single )?(?:mom|dad|mum|parent|father|mother|grandmother|grandfather|grandma|grandpa)\b.*$",
            section=P,
            examples=(("I have two kids, 5 and 8", "The user has two kids, 5 and 8."), ("I'm a single mom", "The user is a single mom."))),
    Pattern("en.family_named", "en", rf"^(?:my|our)\s+(?:\w+\s+)?(?P<who>{FAMILY_EN}|{PETS_EN})(?:'s name is|\s+is\s+(?:called|named)|,|)"
                                     rf"\s+(?P<name>(?-i:[A-Z])\w+)\b.*$|^(?:my|our)\s+(?:\w+\s+)?(?:{FAMILY_EN}|{PETS_EN})s\s+(?-i:[A-Z])\w+\s+and\s+(?-i:[A-Z])\w+\b.*$",
            section=P,
            examples=(("My daughter is called Mia.", "The user's daughter is called Mia."),
                      ("Our daughter Ava was born yesterday!!", "The user's daughter Ava was born yesterday."),
                      ("my dog Max loves the beach", "The user's dog Max loves the beach."))),
    Pattern("en.family_mine", "en", rf"^(?:my|our)\s+(?:\w+\s+)?(?:{FAMILY_EN}|{PETS_EN})\s+(?:start|started|turns?|turned|attend|attends|"
                                    rf"(?:is|are|was|were) (?:\d+|born|starting|in (?:kindergarten|preschool|daycare|(?:\d+(?:st|nd|rd|th)|"
                                    rf"first|second|third|fourth|fifth) grade))|graduated)\b.{{3,}}$",
            section=P,
            examples=(("my twins start kindergarten in september", "The user's twins start kindergarten in september."),)),
    Pattern("en.pet_named", "en", rf"(?P<name>(?-i:[A-Z])\w+),\s+my\s+(?P<what>(?:\w+\s+)?(?:{PETS_EN}))\b|"
                                  rf"\bmy\s+(?P<what2>(?:\w+\s+)?(?:{PETS_EN}))\s+(?P<name2>(?-i:[A-Z])\w+)\b",
            "The user has a {what} named {name}.", section=P,
            examples=(("Oscar, my guinea pig, keeps me company", "The user has a guinea pig named Oscar."),)),
    Pattern("en.adopted", "en", rf"^(?:i|we)(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:adopted|got|rescued|brought home)\s+"
                                rf"(?:a|an|two|another)\s+(?:\w+\s+){{0,2}}(?:{PETS_EN}|{BREEDS_EN})\b.*$",
            section=P,
            examples=(("we just adopted a rescue dog named Biscuit", "The user and their family just adopted a rescue dog named Biscuit."),)),
    Pattern("en.coding_in", "en", EN_I + r"(?:do|write)\s+(?:all\s+|most\s+)?(?:of\s+)?(?:my|our)\s+(?:coding|programming|development|dev work|"
                                 r"writing|editing|work)\s+(?:in|on|with)\s+.{2,}$",
            category="preference", section=W,
            examples=(("ok so I do all my coding in neovim on arch", "The user does all their coding in neovim on arch."),)),
    Pattern("en.in_city", "en", r"^i'?m\s+(?:currently\s+|now\s+|based\s+|living\s+)?in\s+(?-i:[A-Z])[\w\-]+(?:,?\s(?-i:[A-Z])[\w\-]+)?$",
            section=P, key="home_city", examples=(("I'm in Austin", "The user is in Austin."),)),
    Pattern("en.tools", "en", r"^i(?:'m\s+on|\s+(?:mostly\s+|mainly\s+|usually\s+|always\s+|only\s+)?(?:use|code in|write in|program in|"
                              r"work in|develop in|am on|'m on))\s+(?!it\b|this\b|that\b|them\b)(?:(?-i:[A-Z])[\w.+#\-]*|(?:neovim|vim|nvim|"
                              r"emacs|vscode|vs code|tmux|arch|linux|ubuntu|debian|fedora|windows|mac|macos|intellij|pycharm|"
                              r"obsidian|notion|figma|excel|photoshop|blender|unity|godot|unreal|zed|cursor|sublime|helix|react|"
                              r"vue|django|rails|postgres|mysql|docker|kubernetes|aws|gcp|azure)\b).*$|"
                              r"^my\s+(?:editor|ide|stack|tech stack|main language|os|setup|daily driver)\s+is\s+.{2,}$",
            category="preference", section=W,
            examples=(("I mostly use Emacs for everything", "The user mostly uses Emacs for everything."),
                      ("I'm on Windows 11 for all my dev work", "The user is on Windows 11 for all their dev work."),
                      ("My stack is Django and Postgres", "The user's stack is Django and Postgres."))),
    Pattern("en.focus", "en", rf"^i'?m\s+(?![^.]*\b(?:trying to write|working on|writing|fixing|debugging)\s+{TASK_EN})"
                              r"(?:currently\s+|now\s+|still\s+|slowly\s+|really\s+|solo\s*-?\s*)?(?:learning|studying|training for|preparing for|focused on|"
                              r"making|developing|deving|solo-deving|creating|designing|renovating|launching|"
                              r"focusing on|"
                              r"working on|building|writing|practicing|practising|saving for|planning (?:to|on|a|an|my|our)\s+\w+\s+\w+|getting into|"
                              r"thinking (?:of|about) \w+ing|considering \w+ing|looking into|researching|continuing|"
                              r"trying to (?:learn|lose|quit|save|get into|become|build|finish|switch|eat|run|read|write|sleep)|"
                              r"taking a class|taking classes|doing a|in the middle of)\b.{2,}$|"
                              r"^(?:my goal|my plan|the goal|my focus|my main focus|my priority)\s+(?:now\s+|right now\s+|this year\s+|for this year\s+)?"
                              r"is\s+.{3,}$|"
                              r"^i\s+(?:plan|intend|hope|want|aim)\s+to\s+(?:learn|become|get|start|build|run|finish|move|"
                              r"switch|launch|open|write|pass|save|buy|go for|take|try|pursue|apply|do)\b.{2,}$|"
                              r"^i'?m\s+(?:going\s+to|gonna)\s+(?!keep|make|try|stay|never|always|be|do it|do this|do that|get there|"
                              r"see|check|let|give|go (?:for it|on)|need|have to)\w+\s+\w+\s+\w+.{2,}$",
            category="goal", section=T, expires_days=FOCUS_DAYS,
            examples=(("I'm training for a marathon this spring", "The user is training for a marathon this spring."),
                      ("I'm learning Rust", "The user is learning Rust."))),
    Pattern("en.hobby", "en", r"^i(?:'ve| have)?\s+(?:been\s+)?(?:started\s+)?(?:play(?:ing)?|paint(?:ing)?|knit(?:ting)?|bak(?:e|ing)|"
                              r"garden(?:ing)?|hik(?:e|ing)|climb(?:ing)?|surf(?:ing)?|swim(?:ming)?|run(?:ning)?|cycl(?:e|ing)|"
                              r"danc(?:e|ing)|sing(?:ing)?|draw(?:ing)?|writ(?:e|ing)|do(?:ing)? yoga|fish(?:ing)?|"
                              r"collect(?:ing)?|volunteer(?:ing)?)\b(?!\s+(?:it out|that|this|it)\b).{2,}$|"
                              r"^i(?:'ve| have)?\s+(?:been\s+)?(?:started\s+)?read(?:ing)?\s+(?:a lot|books|novels|every|sci-fi|fantasy|poetry|"
                              r"manga|comics|mysteries|history)\b.*$",
            category="preference", section=P,
            examples=(("I play chess on weekends", "The user plays chess on weekends."),)),
    Pattern("en.likes", "en", r"^i\s+(?:really\s+|absolutely\s+|totally\s+|kind of\s+|kinda\s+)?(?:don't\s+|do not\s+|no longer\s+)?"
                              r"(?:really\s+)?(?:like|love|enjoy|prefer|hate|dislike|"
                              r"can't stand|adore|would rather|'d rather)\s+(?!(?:it|that|this|these|those|the|you|how|when|what|your|them|him|her|"
                              r"seeing|hearing|having|reading (?:your|that|this|it)|watching|that you|all the|and|to|so|too|ya|u|yours)\b).{3,}$|"
                              r"^i(?:'m|'ve been| am| have been)\s+(?:getting\s+)?(?:not\s+)?(?:a\s+)?(?:huge\s+|big\s+|real\s+|really\s+|super\s+)?(?:fan of|into|obsessed with|"
                              r"passionate about|keen on|fond of|crazy about|big on)\s+(?!(?:those|these|that|this|it|them|the|your|you)\b).{2,}$|"
                              r"^(?:i|we)\s+(?:always\s+|really\s+)?(?:enjoy|love|look forward to)\s+(?:\w+ing|our|my)\b.{3,}$|"
                              r"^i\s+(?:really\s+)?(?:loved|enjoyed)\s+(?:\w+ing\b|\"|“|(?-i:[A-Z])).{3,}$|"
                              r"^i\s+(?:would|'d)\s+prefer\s+.{2,}$",
            category="preference", section=P,
            examples=(("I'm not a fan of long emails.", "The user is not a fan of long emails."),
                      ("I prefer short answers.", "The user prefers short answers."),
                      ("Actually, I don't like coffee anymore.", "The user doesn't like coffee anymore."),
                      ("I love it", None))),
    Pattern("en.favorite", "en", r"^(?:my\s+(?:all-time\s+)?(?:fave|fav|favorite|favourite)\b.{3,}|(?P<x>(?!it\b|that\b|this\b|yours?\b)[\w\-'\" ]{2,40}?)"
                                 r"(?:'s| is| are)\s+(?:definitely\s+|probably\s+|pretty much\s+|kind of\s+|basically\s+|totally\s+|really\s+)?(?:my|our)\s+"
                                 r"(?:all-time\s+)?(?:fave|fav|favorite|favourite|"
                                 r"top pick|go-to)(?P<rest>\b.*))$",
            category="preference", section=P,
            examples=(("Blue's my fave, it makes me feel relaxed", "Blue is the user's favourite."),
                      ("My favorite band is Radiohead", "The user's favorite band is Radiohead."))),
    Pattern("en.my_work", "en", r"^my\s+(?:art|artwork|work|job|book|music|blog|channel|podcast|business|biz|studio|store|shop|company|"
                                r"startup|research|thesis|novel|paintings?|team|role)\s+(?:is|are|focuses|has|was)\b.{3,}$",
            section=W, examples=(("My art is about expressing my trans experience", "The user's art is about expressing their trans experience."),)),
    Pattern("en.uses", "en", r"^i\s+(?:mainly\s+|mostly\s+|usually\s+|always\s+|still\s+)?(?:use|work on|code on|develop on|run)\s+"
                             r"(?:a\s+|an\s+|my\s+)?(?-i:[A-Z])[\w.+#-]+(?:\s+(?:with|and|on|running)\s+[\w.+# -]{2,30}?)?"
                             r"(?:\s+(?:for|at)\s+(?:work|home|my job|coding|development))?$", section=W,
            examples=(("I use a MacBook with macOS for work.", "The user uses a MacBook with macOS for work."),
                      ("I use it every day", None))),
    Pattern("en.project_uses", "en", r"^(?:this|our|the)\s+(?:repo|repository|codebase|project|service)\s+(?:uses|is built on|runs on|"
                                     r"is written in|depends on|deploys to|stores \w+ in)\s+[\w.+#/ -]{2,40}$",
            "self", category="knowledge",
            examples=(("This repo uses PostgreSQL.", "This repo uses PostgreSQL."),)),
    Pattern("en.finished", "en", r"^i(?:'ve| have)?\s+(?:just\s+|finally\s+)?(?:finished|completed|wrapped up|am done with|'m done with)\s+"
                                 r"(?:learning\s+|studying\s+|my\s+)?(?P<what>[\w .+#-]{2,40})$",
            "retire", examples=(("I finished learning Rust", None),)),
    Pattern("en.used_to", "en", r"^i\s+used\s+to\s+(?!think|believe|feel|say|hate|wonder|worry)\w+.{3,}$", section=P,
            examples=(("I used to go horseback riding with my dad when I was a kid",
                       "The user used to go horseback riding with their dad when they were a kid."),)),
    Pattern("en.been_to", "en", r"^i(?:'ve| have)\s+(?:just\s+|finally\s+|recently\s+)?(?:been|travell?ed)\s+to\s+(?-i:[A-Z])\w+.*$", section=P,
            examples=(("Oh, I've been to Paris yesterday!", "The user has been to Paris yesterday."),)),
    Pattern("en.memory", "en", r"^i'?ll\s+(?:always\s+remember|never\s+forget)\s+(?:the\s+(?:day|time|night|moment)|our|my|when|that\s+"
                               r"(?:day|trip|summer|time))\b.{5,}$",
            section=P, examples=(("I'll never forget the day my youngest took her first steps.",
                                  "The user will never forget the day their youngest took her first steps."),)),
    Pattern("en.made_that", "en", r"^i\s+(?:painted|drew|knitted|sewed|baked|photographed|carved|sculpted)\s+(?:that|this)\s+\w+.{2,}$",
            section=P, examples=(("Yeah, I painted that lake sunrise last year!", "The user painted that lake sunrise last year."),)),
    Pattern("en.life_event", "en", r"^(?:i|we)\s+(?:(?:also|really|just|finally|recently|officially|already|even)\s+)*(?:'ve\s+|have\s+)?"
                                   r"(?:got|had|took|made|built|started|opened|launched|won|teamed up with|partnered with|collaborated with|"
                                   r"finished|completed|bought|sold|visited|traveled|travelled|went to|hosted|organized|organised|ran|"
                                   r"painted|published|performed|signed up for|volunteered|celebrated|attended|met|emailed|"
                                   r"designed|developed|created|released|shipped|founded|closed|shut down|joined|received)\s+"
                                   r"(?!(?:it|that|this|them|you|him|her|an? (?:error|bug|question|problem|issue|warning|exception|"
                                   r"idea|email|message|notification|reply|answer|response|result|(?:great|good|bad|nice|fun|wonderful|awesome|"
                                   r"amazing|rough|tough|long|hard|busy|blast|crazy|lovely|fantastic|terrible)\s+(?:time|day|week|"
                                   r"weekend|night|one)|blast|look|chance|feeling)|fun|a blast|the (?:error|bug|code|script|file|"
                                   r"build|test|command|function|output|link|page|same|answer|message|email|question|result|"
                                   r"whole thing|point|hint|gist|idea|chance))\b)(?:an?|my|our|some|two|three|the|another|first|noticed|promoted|accepted|hired|"
                                   r"twins|triplets|"
                                   r"engaged|married|selected|featured|"
                                   r"(?-i:[A-Z]))\b.{3,}$",
            section=P,
            examples=(("I ran the script and got an error", None),
                      ("Took a short trip last week to Rome to clear my mind a little",
                       "The user took a short trip last week to Rome to clear their mind a little."))),
    Pattern("en.activity", "en", r"^i'?m\s+(?:also\s+|currently\s+|still\s+|now\s+|busy\s+)?(?:starting|opening|launching|hosting|"
                                 r"organizing|organising|preparing for|getting ready for|wrapping up|finishing up|finishing|offering|"
                                 r"teaching|expanding|taking (?:a class|classes|lessons)|saving up|applying (?:to|for)|looking for (?:a|an|my) "
                                 r"(?:new )?(?:job|apartment|house|place|spot|location|partner|investors?)|reading|writing a|"
                                 r"having (?:an?|my|our) (?:\w+\s+){0,2}(?:show|exhibition|concert|wedding|party|surgery|baby|"
                                 r"operation|recital|gig|launch|opening|graduation|interview))\b(?!\s+(?:it|that|this|the (?:code|"
                                 r"script|file|docs?|error|logs?|output|answer|thread|message|email)))\b.{3,}$",
            category="goal", section=T, expires_days=FOCUS_DAYS,
            examples=(("I'm starting a dance studio", "The user is starting a dance studio."),
                      ("Next month I'm having an LGBTQ art show with my paintings",
                       "The user is having an LGBTQ art show with their paintings next month."),
                      ("I'm reading the docs now", None))),
    Pattern("en.not_anymore", "en", r"^i'?m\s+not\s+(?:a\s+|an\s+)?(?P<what>[\w\- ]{2,30}?)(?:\s+(?:anymore|any more|any longer|now))?$|"
                                    r"^i\s+(?:don't|do not)\s+(?:live|work|have|own|use|speak)\s+(?P<what2>[^,]{2,40}?)(?:\s+(?:anymore|any more))?$",
            "forget", examples=(("scratch that, I'm not vegan", None), ("I don't live in Paris, my friend does.", None))),
    Pattern("en.passed_away", "en", rf"^(?:my|our)\s+(?:\w+\s+)?(?P<what>(?:{PETS_EN})(?:\s+(?-i:[A-Z])\w+)?)\s+(?:just\s+)?(?:passed away|"
                                    rf"died|passed|is gone|ran away)\b.*$",
            "forget", examples=(("My cat Tom passed away last week", None),)),
    Pattern("en.rule", "en", r"^(?:please\s+|pls\s+|and\s+)?(?:always|never|from now on|going forward|in (?:the )?future|by default|"
                             r"whenever you \w+|every time you \w+|each time you \w+)[,:]?\s+(?:please\s+)?(?:answer|reply|respond|use|"
                             r"write|explain|include|show|ask|check|format|start|end|keep|cite|add|mention|call|tell|remind|"
                             r"put|make|send|suggest|recommend|assume|double-check|confirm|summari[sz]e|translate|spell|round|"
                             r"sign|address|talk|speak|give (?!up\b)|be (?:brief|concise|direct|honest|formal|casual)|"
                             r"let me|use|avoid|skip|go|stick|list|number|label|link|quote|bold|comment|test|run|commit|"
                             r"push|deploy|book|schedule|pick|choose|convert|present|offer|point|flag|warn|note|lead)\b.{1,}$",
            "rule", category="preference",
            examples=(("Please always answer in English.", "The user wants the assistant to always answer in English."),
                      ("From now on, answer in English.", "The user wants the assistant to answer in English from now on."))),
    Pattern("en.rule_language", "en", rf"^(?:please\s+|pls\s+)?(?:(?:reply|respond|answer|write|talk|speak|explain)\b.*\b(?:from now on|"
                                      rf"going forward|always|by default|in (?:the )?future|for everything|every time)\b.*|"
                                      rf"(?:go back to|switch (?:back )?to|stick to|stick with)\s+(?:{LANGS})\b.*)$",
            "rule", category="preference", key="response_language",
            examples=(("Please reply in German from now on.", "The user wants the assistant to reply in German from now on."),
                      ("Go back to English for everything, please.",
                       "The user wants the assistant to go back to English for everything."))),
    Pattern("en.rather_language", "en", rf"^i(?:'d| would)\s+(?:rather|prefer(?: it)? if)\s+you\s+(?:answer|reply|respond|write|talk|speak|"
                                        rf"explain(?: things)?)(?:\s+to me)?\s+in\s+(?P<lang>{LANGS})\b.*$",
            "The user prefers answers in {lang}.", category="preference", key="response_language",
            examples=(("No, actually I'd rather you answer in English.", "The user prefers answers in English."),)),
    Pattern("en.rule_dont", "en", r"^(?:please\s+|pls\s+)?(?:don't|do not|stop|quit|avoid|no more)\s+(?:ever\s+)?(?:using|use|adding|add|"
                                  r"putting|put|writing|write|including|include|sending|send|(?:giving|give)(?!\s+up)|calling|call|"
                                  r"emojis|emoji|exclamation|apologi[sz]ing|apologi[sz]e)\b.{0,60}$",
            "rule", category="preference",
            examples=(("Don't use emojis.", "The user wants the assistant not to use emojis."),)),
    Pattern("en.rule_keep", "en", r"^(?:please\s+)?(?:keep|make)\s+(?:your\s+)?(?:answers|replies|responses|explanations|it)\s+"
                                  r"(?:short|brief|concise|simple|detailed|casual|formal)\b.*$",
            "rule", category="preference",
            examples=(("Please keep your answers short", "The user wants the assistant to keep answers short."),)),
    Pattern("en.forget", "en", r"^(?:please\s+)?(?:forget|delete|remove|erase|drop)\s+(?:that|about|everything about|what\s+i\s+(?:told|said to|mentioned to)\s+"
                               r"(?:you|u)\s+about|the (?:fact|part|bit|stuff|thing) (?:that|about))\s+"
                               r"(?P<what>.{2,})$|^(?:please\s+)?(?:don't|do not|stop)\s+(?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|"
                               r"record(?:ing)?)\s+(?:that\s+)?(?P<what2>.{2,}?)(?:\s+on file|\s+in memory|\s+anywhere)?$|"
                               r"^(?:please\s+)?(?:forget|delete|remove|erase|drop)\s+the\s+(?P<what3>[\w\s\-]{2,30}?)\s+(?:thing|stuff|part|bit|"
                               r"info|information|detail)(?:\s+from (?:earlier|before)|\s+i (?:said|mentioned|told you))?$|"
                               r"^(?:please\s+)?(?:forget|delete|remove|erase|drop)\s+(?:the\s+|my\s+)?(?P<what4>[\w\s\-]{2,30}?)\s+from\s+"
                               r"(?:memory|your memory|my profile|earlier|before)$|"
                               r"^(?:please\s+)?(?:forget|delete|remove)\s+(?P<what5>where\s+i\s+(?:live|work)|my\s+\w+(?:\s+\w+)?)$|"
                               r"^(?:please\s+)?forget\s+(?:i said that|that|it|this)(?P<what6>)$",
            "forget", examples=(("forget that I have a cat", None),)),
)


def patterns(lang: str) -> tuple[Pattern, ...]:
    return tuple(p for p in PATTERNS if p.lang == lang)


__all__ = ["FOCUS_DAYS", "PATTERNS", "Pattern", "ZA", "ZA_WORDS", "patterns"]

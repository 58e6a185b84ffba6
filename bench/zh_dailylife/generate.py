#!/usr/bin/env python3
"""Generate ``dailylife_zh.jsonl``: a Chinese development set for memory *retrieval*.

Why: the public sets we convert (LoCoMo, MADial-Bench) do not look like the memory a
Chinese user keeps with an assistant — many near-identical events, details given in
pronoun follow-ups, questions that compare, count or pin down a time, typed sloppily.
This set does, with gold that is correct by construction, to tune and check retrieval.

Each pool is one user's history: a dozen conversations over about six months in which
the user tells an assistant about daily life — many similar events (exhibitions, music
festivals, marathons, reading clubs, family banquets, business trips, holidays, check-ups,
courses, concerts, matches), each with attributes (city, venue, date, duration, companion,
price, rating, ...). As real users do, the attributes often come in follow-up turns that
point back with a pronoun or demonstrative (它 / 那个展 / 这次 / 那边 / 其 ...) or are a bare
answer to the assistant's question, sometimes after an unrelated turn; later conversations
refer to earlier events by a description ("深圳那个展"). Distractors: same-type events in
other cities, plans that fell through, friends' events, and chit-chat (food, weather, work,
pets). Short assistant replies are part of each thread and are never gold.

Questions (attribute / comparison / aggregation / temporal / noisy) are rendered from the
structured facts, and gold is by construction: every message needed to answer — the
message naming the event, the messages stating the attributes the question describes the
event by, and the messages stating the attributes it asks for (a pronoun follow-up always
comes with the message it points back to). Descriptions are checked to match exactly one
event of the pool (plans that fell through and friends' events included), except for
aggregation and comparison questions, which are meant to cover every match.

Deterministic (``random.Random(SEED)``), standard library only, no network::

    python bench/zh_dailylife/generate.py bench/zh_dailylife/dailylife_zh.jsonl
"""

from __future__ import annotations

import json
import random
import string
import sys
from datetime import date, datetime, timedelta, timezone

SEED = 20240611
N_POOLS = 9
MAX_ITEMS = 150  # per user, fillers included
PER_CATEGORY = {"attribute": 9, "comparison": 8, "aggregation": 8, "temporal": 8, "noisy": 8}

# --------------------------------------------------------------------------- helpers

_CN = "零一二三四五六七八九十"


def cn(n: int, liang: bool = False) -> str:
    """Chinese numeral for 0..99 (两 for a counted 2 when liang)."""
    if n == 2 and liang:
        return "两"
    if n <= 10:
        return _CN[n]
    if n < 20:
        return "十" + _CN[n - 10]
    tens, ones = divmod(n, 10)
    return _CN[tens] + "十" + (_CN[ones] if ones else "")


WEEKDAY = "一二三四五六日"


def weekday_name(d: date, rng: random.Random, prefix: str) -> str:
    wd = WEEKDAY[d.weekday()]
    if rng.random() < 0.3:
        return prefix + "星期" + ("天" if wd == "日" else wd)
    return prefix + "周" + wd


def abs_date(d: date, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        return f"{d.month}月{d.day}号"
    if r < 0.85:
        return f"{d.month}月{d.day}日"
    return f"{cn(d.month)}月{cn(d.day)}号"


def date_phrase(ref: date, d: date, rng: random.Random, rel_prob: float = 0.6) -> str:
    """How a person at ``ref`` says ``d``: relative (明天, 下周三, 下个月5号, 上周六) or absolute."""
    delta = (d - ref).days
    opts: list[str] = []
    if delta == 1:
        opts.append("明天")
    elif delta == 2:
        opts.append("后天")
    elif delta == -1:
        opts.append("昨天")
    elif delta == -2:
        opts.append("前天")
    else:
        weeks = ((d - timedelta(d.weekday())) - (ref - timedelta(ref.weekday()))).days // 7
        if weeks == 0:
            opts.append(weekday_name(d, rng, "这"))
        elif weeks == 1:
            opts.append(weekday_name(d, rng, "下"))
        elif weeks == -1:
            opts.append(weekday_name(d, rng, "上"))
        months = (d.year - ref.year) * 12 + d.month - ref.month
        if months == 1:
            opts.append(f"下个月{d.day}号")
        elif months == -1:
            opts.append(f"上个月{d.day}号")
        elif months == 0 and abs(delta) > 6:
            opts.append(f"这个月{d.day}号")
    if opts and rng.random() < rel_prob:
        return rng.choice(opts)
    return abs_date(d, rng)


def month_phrase(q: date, d: date, rng: random.Random) -> str:
    diff = (q.year - d.year) * 12 + q.month - d.month
    opts = [f"{cn(d.month)}月份", f"{d.month}月", f"{d.month}月份", f"今年{cn(d.month)}月"]
    if diff == 1:
        opts += ["上个月"] * 3
    elif diff == 2:
        opts += ["上上个月"] * 2
    elif diff == 0:
        opts += ["这个月"] * 2
    return rng.choice(opts)


def hours_text(h: float) -> str:
    table = {0.5: "半个小时", 0.75: "四十五分钟", 1: "一个小时", 1.5: "一个半小时", 2: "两个小时",
             2.5: "两个半小时", 3: "三个小时", 3.5: "三个半小时", 4: "四个小时", 5: "五个小时", 6: "六个小时"}
    return table[h]


def price_text(n: int, rng: random.Random) -> str:
    nice = {300: "三百", 400: "四百", 500: "五百", 600: "六百", 800: "八百", 1000: "一千", 1200: "一千二",
            1500: "一千五", 1600: "一千六", 2000: "两千", 3000: "三千", 5000: "五千", 6000: "六千",
            8000: "八千", 2500: "两千五", 3500: "三千五", 4500: "四千五"}
    r = rng.random()
    if n in nice and r < 0.5:
        return nice[n] + rng.choice(["", "块"])
    if r < 0.55:
        return f"{n}块"
    if r < 0.8:
        return f"{n}元"
    return str(n)


# --------------------------------------------------------------------------- world

REGION = {"广州": "S", "深圳": "S", "厦门": "S", "上海": "E", "杭州": "E", "南京": "E", "苏州": "E",
          "武汉": "C", "长沙": "C", "成都": "W", "重庆": "W", "北京": "N", "青岛": "N", "天津": "N", "西安": "X"}
ADJACENT = {frozenset(p) for p in ("SC", "SE", "EC", "EN", "CW", "CN", "WX", "NX", "CX")}
NEAR = {frozenset(("上海", "苏州")): 0.5, frozenset(("广州", "深圳")): 0.5, frozenset(("北京", "天津")): 0.5,
        frozenset(("成都", "重庆")): 1, frozenset(("上海", "杭州")): 1, frozenset(("南京", "苏州")): 1,
        frozenset(("武汉", "长沙")): 1.5, frozenset(("上海", "南京")): 1.5}

VENUES = {
    "深圳": {"expo": ["会展中心", "国际会展中心"], "stage": ["春茧体育馆", "深圳湾体育中心"], "park": ["深圳湾公园", "欢乐港湾"]},
    "广州": {"expo": ["琶洲会展中心", "广交会展馆"], "stage": ["天河体育中心", "宝能体育馆"], "park": ["海心沙", "二沙岛"]},
    "杭州": {"expo": ["国际博览中心", "白马湖会展中心"], "stage": ["黄龙体育中心", "奥体中心"], "park": ["西湖文化广场", "湘湖边"]},
    "成都": {"expo": ["世纪城新国际会展中心", "西博城"], "stage": ["凤凰山体育公园", "东安湖体育馆"], "park": ["东郊记忆", "青城山下的草坪"]},
    "上海": {"expo": ["国家会展中心", "世博展览馆"], "stage": ["梅赛德斯奔驰文化中心", "虹口足球场"], "park": ["世纪公园", "西岸草坪"]},
    "北京": {"expo": ["国家会议中心", "798艺术区"], "stage": ["工人体育场", "五棵松体育馆"], "park": ["朝阳公园", "奥森公园"]},
    "南京": {"expo": ["国际博览中心", "河西会展中心"], "stage": ["奥体中心", "青奥体育公园"], "park": ["玄武湖边", "绿博园"]},
    "武汉": {"expo": ["国际博览中心", "光谷科技会展中心"], "stage": ["光谷体育中心", "洪山体育馆"], "park": ["江滩公园", "东湖边"]},
    "长沙": {"expo": ["国际会展中心", "梅溪湖艺术中心"], "stage": ["贺龙体育馆", "省体育馆"], "park": ["洋湖湿地公园", "橘子洲"]},
    "重庆": {"expo": ["国博中心", "悦来会展中心"], "stage": ["华熙LIVE", "奥体中心"], "park": ["园博园", "南滨路"]},
    "西安": {"expo": ["曲江国际会展中心", "丝路国际会展中心"], "stage": ["奥体中心", "曲江体育馆"], "park": ["大唐芙蓉园边上", "浐灞湿地"]},
    "苏州": {"expo": ["国际博览中心", "金鸡湖会议中心"], "stage": ["奥体中心", "工业园区体育馆"], "park": ["金鸡湖边", "太湖边上"]},
    "厦门": {"expo": ["国际会展中心", "佰翔会展中心"], "stage": ["凤凰体育馆", "嘉庚体育馆"], "park": ["白鹭洲公园", "环岛路沙滩"]},
    "青岛": {"expo": ["国际会展中心", "红岛会展中心"], "stage": ["国信体育馆", "天泰体育场"], "park": ["奥帆中心", "石老人海水浴场"]},
    "天津": {"expo": ["梅江会展中心", "国家会展中心"], "stage": ["奥体中心", "团泊体育中心"], "park": ["海河边", "水上公园"]},
}

BOOKCLUB_VENUES = ["拾光咖啡馆", "区图书馆三楼", "一家叫慢读的独立书店", "社区活动中心", "商场里的西西弗书店", "公司旁边的共享空间"]
CHECKUP_VENUES = ["市人民医院", "美年大健康", "爱康国宾", "中心医院体检科", "市第一人民医院", "慈铭体检中心"]
FAMILY_VENUES = ["一家老字号酒楼", "国际大酒店", "舅舅家楼下的饭店", "江边的一家农家乐", "小区门口的海鲜酒家"]
HOTELS = ["全季酒店", "亚朵酒店", "公司的协议酒店", "汉庭", "希尔顿欢朋", "如家"]
COURSE_SUBS = [  # (course, skill, venue)
    ("游泳课", "游泳", "楼下的游泳馆"), ("吉他课", "吉他", "一家琴行"), ("日语课", "日语", "公司附近的培训机构"),
    ("烘焙课", "烘焙", "商场里的烘焙工作室"), ("瑜伽课", "瑜伽", "小区对面的瑜伽馆"), ("陶艺课", "陶艺", "一家陶艺工作室"),
    ("油画课", "油画", "艺术中心的画室"), ("攀岩课", "攀岩", "体育公园的攀岩馆"),
]
EXPO_SUBS = [("无人机展", "无人机展览"), ("车展", "汽车展览"), ("动漫展", "动漫展"), ("摄影展", "摄影展"),
             ("印象派画展", "印象派画展"), ("家居展", "家居博览会"), ("宠物展", "宠物博览会"), ("咖啡展", "咖啡博览会"),
             ("机器人展", "机器人展览"), ("恐龙展", "恐龙主题展")]
FEST_SUBS = ["草莓音乐节", "迷笛音乐节", "电音节", "民谣音乐节", "爵士音乐节", "摇滚音乐节"]
SINGERS = ["周杰伦", "五月天", "陈奕迅", "林俊杰", "邓紫棋", "薛之谦", "李健", "张学友", "毛不易", "孙燕姿", "汪峰", "告五人"]
BOOKS = ["《活着》", "《百年孤独》", "《三体》", "《人类简史》", "《围城》", "《平凡的世界》", "《额尔古纳河右岸》",
         "《被讨厌的勇气》", "《我与地坛》", "《长安的荔枝》", "《小王子》", "《月亮与六便士》"]
MATCH_SUBS = ["羽毛球比赛", "乒乓球比赛", "篮球赛", "围棋比赛", "飞盘比赛", "网球比赛"]
OCCASIONS = ["表哥的婚礼", "外婆的八十大寿", "小侄子的满月酒", "舅舅家的乔迁宴", "堂妹的升学宴", "大姨的六十岁生日宴", "姑姑家的订婚宴"]
PURPOSES = ["见客户", "参加行业培训", "谈一个合作", "给分公司做审计", "给客户做系统上线", "开季度会", "做供应商考察"]
CHECK_RESULTS = ["血脂有点偏高，医生让少吃油腻的", "一切正常，放心了", "尿酸偏高，要少吃海鲜少喝啤酒", "查出轻度脂肪肝",
                 "甲状腺有个小结节，要定期复查", "有点贫血", "颈椎生理曲度变直了", "维生素D缺乏"]
MATCH_RESULTS = [("拿了第三名", 3), ("拿了冠军", 1), ("第一轮就被淘汰了", 32), ("进了八强", 8), ("拿了亚军", 2), ("止步十六强", 16)]
TEACHERS = ["林", "黄", "吴", "郑", "赵", "孙", "何", "方"]
COMPANIONS = [("同事小王", "小王"), ("表姐", "表姐"), ("老李", "老李"), ("闺蜜莉莉", "莉莉"), ("男朋友", "男朋友"),
              ("老婆", "老婆"), ("我妈", "我妈"), ("大学室友阿杰", "阿杰"), ("跑友老周", "老周"), ("同事小陈", "小陈"),
              ("我弟", "我弟"), ("发小阿明", "阿明")]
ALONE = ("一个人", None)
WORK_COMPANIONS = [("同事小王", "小王"), ("同事小陈", "小陈"), ("老李", "老李"), ("领导老郑", "老郑")]
FAMILY_COMPANIONS = [("我妈", "我妈"), ("老婆", "老婆"), ("男朋友", "男朋友"), ("我弟", "我弟"), ("表姐", "表姐")]
FOODS = ["螺蛳粉", "麻辣烫", "酸菜鱼", "牛肉面", "煲仔饭", "小龙虾", "肠粉", "烤冷面", "鸡公煲", "黄焖鸡"]
SHOWS = ["《繁花》", "《漫长的季节》", "一部悬疑剧", "《狂飙》", "一部日剧", "《庆余年》"]
PETS = [("猫", "橘子"), ("猫", "年糕"), ("狗", "豆豆"), ("狗", "可乐"), ("猫", "煤球"), ("狗", "旺财"), ("猫", "布丁"),
        ("狗", "馒头"), ("猫", "咪咪")]

RATINGS = {
    "pos": ["挺值的，下次还想去", "超出预期，特别好玩", "体验很好，安排得很专业", "很满意，拍了好多照片", "非常棒，一点都没白去"],
    "neg": ["人太多了，排队排了一个多小时，挺失望的", "一般般，感觉不值那个价", "组织得很乱，以后不会再去了",
            "有点失望，和宣传的差很多", "太折腾了，体验很差"],
    "mix": ["内容还行，就是太远了", "还可以吧，中规中矩", "前半段挺好，后面有点无聊"],
}
RATINGS_ONLY = {  # types whose ratings are all their own
    "trip": {"pos": ["吃得很好，风景也美", "玩得很放松，下次还想去", "超出预期，特别好玩"],
             "neg": ["天天下雨，哪都没玩成", "景点全是人，累得要死", "太折腾了，体验很差"],
             "mix": ["还可以吧，就是有点累", "风景不错，就是吃的一般"]},
    "marathon": {"pos": ["跑得很爽，沿途加油的人特别多", "赛道很漂亮，补给也足", "跑完特别有成就感"],
                 "neg": ["太热了，后半程几乎是走完的", "最后五公里抽筋了，特别痛苦", "组织得很乱，存包排了好久"],
                 "mix": ["前半程很舒服，后半程有点崩", "还行吧，就是起跑太挤"]},
    "course": {"pos": ["老师教得很细，学到不少", "上完很有成就感", "挺值的，学得很开心"],
               "neg": ["节奏太快跟不上，有点后悔报了", "有点失望，和宣传的差很多"], "mix": ["还可以吧，中规中矩"]},
    "bookclub": {"pos": ["聊得很深入，认识了几个有意思的人", "挺值的，下次还想去", "体验很好，安排得很专业"],
                 "neg": ["大家都没怎么读，聊得很浅", "组织得很乱，以后不会再去了"], "mix": ["前半段挺好，后面有点无聊", "还可以吧，中规中矩"]},
    "family": {"pos": ["很热闹，见到好多好久没见的亲戚", "菜很好吃，大家都很开心"], "neg": ["被亲戚追着问什么时候结婚，好烦"],
               "mix": ["还可以吧，就是有点累"]},
}
RATINGS_T = {
    "marathon": {"pos": ["跑得很爽，沿途加油的人特别多", "赛道很漂亮，补给也足"],
                 "neg": ["太热了，后半程几乎是走完的", "最后五公里抽筋了，特别痛苦"]},
    "concert": {"pos": ["现场太燃了，全程大合唱", "音响效果特别好，值回票价"], "neg": ["位置太偏了，基本看不清人"]},
    "course": {"pos": ["老师教得很细，学到不少", "上完很有成就感"], "neg": ["节奏太快跟不上，有点后悔报了"]},
    "family": {"pos": ["很热闹，见到好多好久没见的亲戚", "菜很好吃，大家都很开心"], "neg": ["被亲戚追着问什么时候结婚，好烦"]},
    "trip": {"pos": ["吃得很好，风景也美", "玩得很放松，下次还想去"], "neg": ["天天下雨，哪都没玩成", "景点全是人，累得要死"]},
    "bookclub": {"pos": ["聊得很深入，认识了几个有意思的人"], "neg": ["大家都没怎么读，聊得很浅"]},
}

# types: noun used in descriptions, measure words ("那个展", "那场马拉松"), pronoun refs, cost noun, attrs

TYPES = {
    "expo": dict(noun="展", dem=["那个"], refs=["它", "那个展", "这个展", "那个展览", "这次"],
                 typed_refs=["刚说的那个展", "那个展", "这个展览"], cost="门票", agg="展览",
                 attrs={"venue": .6, "duration": .75, "price": .7, "companion": .6, "travel": .5, "rating": .6}),
    "musicfest": dict(noun="音乐节", dem=["那个", "那场"], refs=["它", "那个音乐节", "这个音乐节", "这次"],
                      typed_refs=["那个音乐节", "刚说的音乐节"], cost="票", agg="音乐节",
                      attrs={"venue": .4, "duration": .7, "price": .7, "companion": .7, "travel": .4, "rating": .6}),
    "marathon": dict(noun="马拉松", dem=["那场", "那次"], refs=["这次", "这场", "那场比赛", "这个比赛", "它"],
                     typed_refs=["那场马拉松", "刚说的那个马拉松"], cost="报名费", agg="马拉松",
                     attrs={"distance": .9, "finish": .7, "companion": .45, "price": .5, "travel": .35, "rating": .35}),
    "bookclub": dict(noun="读书会", dem=["那次", "那期"], refs=["这次", "这期", "那个读书会", "这个活动"],
                     typed_refs=["那个读书会", "刚说的读书会"], cost="活动费", agg="读书会",
                     attrs={"venue": .85, "book": .9, "duration": .6, "companion": .4, "price": .35, "rating": .5}),
    "family": dict(noun="亲戚聚会", dem=["那次"], refs=["这次", "那次", "这顿饭"], typed_refs=["那顿酒席", "刚说的那个酒席"],
                   cost="红包", agg="亲戚聚会",
                   attrs={"venue": .6, "price": .75, "people": .6, "rating": .3, "companion": .35}),
    "business": dict(noun="出差", dem=["那次", "那趟"], refs=["这次", "这趟", "这次出差"], typed_refs=["这次出差", "刚说的出差"],
                     cost=None, agg="出差",
                     attrs={"duration": .9, "purpose": .8, "companion": .5, "travel": .6, "hotel": .45}),
    "trip": dict(noun="旅行", dem=["那趟", "那次"], refs=["这次", "这趟", "这趟旅行"], typed_refs=["这趟旅行", "刚说的旅行"],
                 cost="总花费", agg="旅行",
                 attrs={"duration": .9, "companion": .8, "price": .6, "travel": .6, "rating": .6}),
    "checkup": dict(noun="体检", dem=["那次"], refs=["这次", "这次体检", "那次体检"], typed_refs=["这次体检", "刚说的体检"],
                    cost="体检费", agg="体检", attrs={"venue": .8, "result": .95, "price": .5}),
    "course": dict(noun="课", dem=["那个", "那门"], refs=["这个课", "那个课", "它", "这门课"], typed_refs=["那个课", "刚说的课"],
                   cost="学费", agg="课",
                   attrs={"venue": .6, "duration": .8, "price": .8, "teacher": .6, "sessions": .5, "rating": .4}),
    "concert": dict(noun="演唱会", dem=["那场"], refs=["这场", "那场", "它", "这次"], typed_refs=["那场演唱会", "刚说的演唱会"],
                    cost="票", agg="演唱会",
                    attrs={"venue": .6, "price": .8, "companion": .7, "travel": .4, "rating": .6}),
    "match": dict(noun="比赛", dem=["那场", "那次"], refs=["这次", "那个比赛", "这场比赛"], typed_refs=["那个比赛", "刚说的比赛"],
                  cost="报名费", agg="比赛", attrs={"venue": .6, "result": .9, "companion": .6, "price": .4}),
}
OVERRIDE = {("family", "price"), ("trip", "price"), ("checkup", "price"), ("course", "price"), ("checkup", "result"),
            ("course", "duration"), ("expo", "duration"), ("checkup", "venue"), ("course", "venue")}
HOME_TYPES = {"bookclub", "checkup", "course"}
POST_ATTRS = {"rating", "finish", "result"}  # known only after the event
DUR_KIND = {"business": "stay", "trip": "stay", "expo": "run", "musicfest": "run", "bookclub": "session",
            "course": "session"}

DURATIONS = {  # (surfaces, value in hours)
    "expo": [(["三天"], 72), (["四天"], 96), (["五天"], 120), (["七天", "一周", "一个星期"], 168), (["十天"], 240),
             (["两周", "半个月"], 336), (["一个月"], 720), (["两天"], 48)],
    "musicfest": [(["两天"], 48), (["三天"], 72), (["四天"], 96)],
    "business": [(["两天"], 48), (["三天"], 72), (["四天"], 96), (["五天"], 120), (["一周", "七天"], 168), (["十天"], 240)],
    "trip": [(["三天两晚"], 72), (["四天三晚"], 96), (["五天四晚", "五天"], 120), (["一周", "七天"], 168), (["十天"], 240)],
    "bookclub": [(["两个小时", "两小时"], 2), (["一个半小时"], 1.5), (["三个小时"], 3), (["两个半小时"], 2.5)],
    "course": [(["一个半小时"], 1.5), (["两个小时"], 2), (["一个小时"], 1), (["四十五分钟"], 0.75), (["两个半小时"], 2.5)],
}
DISTANCES = [(["全马", "全程马拉松"], 42.195, "42公里"), (["半马", "半程马拉松"], 21.0975, "21公里"),
             (["10公里组", "十公里"], 10, "10公里"), (["5公里健康跑"], 5, "5公里")]
PRICE_RANGE = {"expo": (40, 380, 10), "musicfest": (380, 1280, 20), "marathon": (80, 300, 10), "bookclub": (20, 90, 5),
               "family": (600, 2000, 200), "trip": (2000, 9000, 500), "checkup": (399, 1599, 100),
               "course": (1200, 4800, 200), "concert": (480, 1880, 100), "match": (50, 200, 10)}


# --------------------------------------------------------------------------- message templates

# naming templates: (tense, template); tense p = before the event, d = after it
NAMING = {
    "expo": [
        ("p", "{date}我要去{city}参加一个{subl}。"), ("p", "{date}打算去{city}看{sub}，票已经买好了。"),
        ("p", "{city}{date}有个{sub}，我准备去看看。"), ("p", "跟你说个事，我{date}要去看{subl}。"),
        ("p", "抢到{sub}的票了！{date}去。"), ("p", "{comp}约我{date}一起去看{sub}。"),
        ("p", "{date}去{city}{venue}看{sub}，先跟你说一声。"), ("p", "最近有个{sub}，我想{date}去逛逛。"),
        ("d", "{date}去{city}看了一个{subl}。"), ("d", "{date}和{comp}去看了{sub}。"),
        ("d", "{date}在{venue}逛了一下午{sub}。"), ("d", "说一下，我{date}去{city}看了个{sub}。"),
        ("d", "{date}跑去{city}看{sub}了，人山人海。"), ("d!", "{date}去看了个{sub}，脚都走酸了。"), ("d", "{date}去看了一个{subl}。"),
    ],
    "musicfest": [
        ("p", "{date}要去{city}参加{sub}！"), ("p", "买了{sub}的票，{date}在{city}。"), ("p", "{comp}拉我{date}去{sub}。"),
        ("p", "{date}那场{sub}在{city}，我准备去。"), ("p", "{date}去{city}蹦{sub}，想想就开心。"),
        ("p", "{date}有个{sub}，我打算去。"),
        ("d!", "{date}去{city}参加了{sub}，嗓子都喊哑了。"), ("d", "{date}和{comp}去了{sub}。"),
        ("d!", "{sub}回来了，{date}在{city}玩了一整天。"), ("d", "{date}在{venue}蹦了一天{sub}。"),
        ("d", "说下，我{date}去了{city}的{sub}。"), ("d!", "{date}去了一趟{sub}，晒黑了一圈。"), ("d", "{date}去了{sub}。"),
    ],
    "marathon": [
        ("p", "我报名了{date}的{city}马拉松！"), ("p", "{date}要去{city}跑马拉松。"), ("p", "中签了！{city}马拉松，{date}开跑。"),
        ("p", "{comp}拉我{date}一起去跑马拉松。"), ("p", "{date}有一场马拉松，我报了{dist}。"),
        ("p", "{date}准备去{city}跑个{dist}。"), ("p", "{date}有个马拉松，已经报上名了。"),
        ("d!", "{date}去{city}跑了个马拉松，腿到现在还疼。"), ("d", "{date}跑完了{city}马拉松！"),
        ("d", "{date}和{comp}去跑了一场马拉松。"), ("d", "{date}在{city}跑了{dist}，总算完赛了。"),
        ("d", "{date}参加了一场马拉松，跑的{dist}。"), ("d!", "{date}跑了一场马拉松，累瘫了。"), ("d", "{date}参加了一场马拉松。"),
    ],
    "bookclub": [
        ("p", "{date}要去参加一个读书会。"), ("p", "报名了{venue}的读书会，{date}下午。"), ("p", "{date}有个读书会，读{book}。"),
        ("p", "{comp}拉我去一个读书会，{date}。"), ("p", "{date}想去{venue}的读书会看看。"),
        ("d", "{date}去参加了一个读书会。"), ("d+", "{date}在{venue}参加了读书会，聊得挺开心。"),
        ("d", "{date}的读书会读的是{book}。"), ("d", "{date}和{comp}去了个读书会。"), ("d", "{date}在{venue}参加了一场读书会。"),
    ],
    "family": [
        ("p", "{date}要回{city}参加{sub}。"), ("p", "{date}是{sub}，得去{venue}吃饭。"), ("p", "{sub}定在{date}，全家都要去。"),
        ("p", "{date}回{city}，{sub}。"), ("p", "别让我忘了，{date}是{sub}。"), ("p", "{date}和{comp}一起去{sub}。"),
        ("d", "{date}回{city}参加了{sub}。"), ("d", "{date}去了{sub}，在{venue}办的。"), ("d+", "{sub}{date}办完了，累但开心。"),
        ("d", "{date}参加{sub}，见到了好多亲戚。"), ("d", "{date}去吃了{sub}的酒席。"),
    ],
    "business": [
        ("p", "{date}要去{city}出差。"), ("p", "老板让我{date}去{city}出差，{purpose}。"), ("p", "{date}出差，去{city}。"),
        ("p", "又要出差了，{date}去{city}{purpose}。"), ("p", "{date}和{comp}一起去{city}出差。"),
        ("d!", "{date}去{city}出差了，刚回来。"), ("d", "{date}在{city}出差，{purpose}。"), ("d!", "{date}去了趟{city}出差，累死。"),
        ("d", "前阵子出差去了{city}，{date}出发的。"), ("d", "{date}和{comp}出差去了{city}。"),
    ],
    "trip": [
        ("p", "{date}要去{city}玩几天。"), ("p", "计划{date}去{city}旅游。"), ("p", "{date}和{comp}去{city}玩，机票都订好了。"),
        ("p", "假期打算去{city}，{date}出发。"), ("p", "终于请到假了，{date}去{city}旅行！"),
        ("d", "{date}去{city}玩了一趟。"), ("d!", "刚从{city}旅游回来，{date}出发的。"), ("d", "{date}和{comp}去{city}玩了。"),
        ("d", "{date}去{city}旅行了，照片拍了好多。"), ("d", "说下我{date}那趟{city}之行。"),
    ],
    "checkup": [
        ("p", "{date}要去{venue}体检。"), ("p", "公司安排{date}体检，在{venue}。"), ("p", "约了{date}的体检，要空腹。"),
        ("p", "{date}去做个体检，好久没查了。"), ("p", "预约了{venue}的体检套餐，{date}。"),
        ("d", "{date}去{venue}做了体检。"), ("d", "{date}体检了，抽了好几管血。"), ("d", "{date}在{venue}做了年度体检。"),
        ("d!", "{date}做完体检了，等报告中。"), ("d", "公司组织的体检{date}做完了。"),
    ],
    "course": [
        ("p", "给自己报了个{sub}，{date}开课。"), ("p", "{date}开始上{sub}。"), ("p", "报名了{venue}的{sub}，{date}第一节。"),
        ("p", "打算学点新东西，报了{sub}，{date}开始。"), ("p", "{comp}和我一起报了{sub}，{date}开课。"),
        ("d", "{date}开始上{sub}了。"), ("d", "{date}去上了第一节{sub}。"), ("d", "报了个{sub}，{date}已经开课了。"),
        ("d", "{date}在{venue}上了第一节{sub}。"), ("d", "最近在学{skill}，{date}开始上的课。"),
    ],
    "concert": [
        ("p", "抢到{singer}演唱会的票了！{date}在{city}。"), ("p", "{date}要去{city}看{singer}的演唱会。"),
        ("p", "{comp}和我{date}去看{singer}演唱会。"), ("p", "{singer}{date}在{venue}开唱，我买了票。"),
        ("p", "{date}去看{singer}！激动。"),
        ("d", "{date}去{city}看了{singer}的演唱会。"), ("d+", "{date}看了{singer}演唱会，全程大合唱。"),
        ("d", "{date}和{comp}去看了{singer}。"), ("d+", "{singer}的演唱会{date}在{venue}，太震撼了。"),
        ("d", "说下我{date}看的{singer}演唱会。"),
    ],
    "match": [
        ("p", "{date}要参加{sub}。"), ("p", "报名了{date}的{sub}，在{venue}。"), ("p", "{date}有个{sub}，和{comp}组队。"),
        ("p", "公司{date}组织{sub}，我报了名。"), ("p", "{date}去{city}参加{sub}。"),
        ("d", "{date}参加了{sub}。"), ("d", "{date}在{venue}参加完了{sub}。"), ("d", "{date}和{comp}去参加了{sub}。"),
        ("d", "{date}去{city}比了一场{sub}。"), ("d", "说下{date}的{sub}。"),
    ],
}

# follow-ups that point back: {R} is a pronoun / demonstrative; tense n = either
FOLLOW = {
    "city": [("n", "{R}在{city}。"), ("n", "地点在{city}。"), ("n", "{R}是在{city}，得专门跑一趟。"),
             ("p", "在{city}，得提前订票了。"), ("d", "是在{city}办的。"), ("n", "地方是{city}。")],
    "venue": [("n", "{R}在{venue}。"), ("n", "地点定在{venue}。"), ("n", "{R}的场地是{venue}。"),
              ("n", "具体地点是{venue}，地铁能到。"), ("n", "在{venue}举办。"), ("n", "其举办地点为{venue}。"),
              ("d", "是在{venue}办的。")],
    "date": [("p", "{R}是{date}。"), ("p", "时间定在{date}。"), ("p", "{R}{date}开始。"), ("p", "{date}，千万别让我忘了。"),
             ("p", "日子定了，{date}。"), ("d", "{R}是{date}的事。"), ("d", "那天是{date}。"), ("d", "是{date}去的。")],
    "duration": [("n", "{R}的持续时间是{dur}。"), ("n", "{R}为期{dur}。"), ("n", "前后一共{dur}。"), ("n", "其持续时间为{dur}。"),
                 ("n", "{R}持续{dur}。")],
    "companion": [("p", "这次是和{comp}一起去。"), ("p", "{comp}跟我一起去。"), ("p", "我约了{comp}一起。"),
                  ("p", "{comp}也去，正好有个伴。"), ("p", "打算拉上{comp}一起。"),
                  ("d", "是和{comp}一起去的。"), ("d", "{comp}陪我去的。"), ("d", "这次{comp}也去了。"),
                  ("d", "和{comp}搭伴去的。"), ("d", "同行的是{comp}。")],
    "price": [("n", "{R}{cn}{price}。"), ("n", "{cn}是{price}。"), ("n", "{cn}要{price}，有点小贵。"), ("n", "{R}的{cn}{price}。"),
              ("n", "{cn}{price}，还能接受。"), ("d", "{cn}花了{price}。")],
    "travel": [("n", "去那边{mv}{hs}。"), ("n", "从家过去{mv}{hs}。"), ("n", "路上要{hs}，{mode}过去。"),
               ("p", "过去得{mode}{hs}，有点折腾。"), ("d", "去那边{mv2}。"), ("n", "到那里{mv}{hs}。")],
    "rating": [("d", "{R}{rating}。"), ("d", "总体来说，{rating}。"), ("d", "感觉{rating}。"), ("d", "说实话，{rating}。")],
    "distance": [("n", "这次跑的是{dist}。"), ("n", "{R}报的是{dist}。"), ("n", "是{dist}，{km}。"), ("n", "我报了{dist}。"),
                 ("n", "{R}的距离是{km}。")],
    "finish": [("d", "{R}成绩是{fin}。"), ("d", "最后跑了{fin}。"), ("d", "完赛时间{fin}。"), ("d", "用时{fin}，还算满意。")],
    "result": [("d", "{R}{res}。"), ("d", "最后{res}。"), ("d", "结果{res}。")],
    "book": [("n", "这期读的是{book}。"), ("n", "{R}讨论的书是{book}。"), ("n", "读的书是{book}。"), ("p", "书是{book}，我还没看完。"),
             ("d", "那次读的是{book}。")],
    "people": [("n", "{R}来了{people}个人。"), ("p", "估计有{people}个人。"), ("d", "一共来了{people}个人，坐了好几桌。"),
               ("n", "人数是{people}个。"), ("d", "到场{people}人。")],
    "purpose": [("n", "这次主要是{purpose}。"), ("n", "{R}是去{purpose}的。"), ("n", "目的是{purpose}。"), ("p", "要去{purpose}。"),
                ("d", "去{purpose}了。")],
    "hotel": [("n", "住在{hotel}。"), ("n", "{R}住的是{hotel}。"), ("p", "酒店订的{hotel}。"), ("d", "住的{hotel}，还行。")],
    "teacher": [("n", "老师姓{teacher}，人挺好的。"), ("n", "{R}的老师是{teacher}老师。"), ("n", "教课的是{teacher}老师。")],
    "sessions": [("n", "一共{sessions}节课。"), ("n", "{R}总共{sessions}节。"), ("n", "{R}一期{sessions}次课。")],
}
# type-specific follow-ups, added to the generic ones
FOLLOW_T = {
    ("expo", "duration"): [("n", "{R}一共展{dur}。"), ("p", "展期{dur}，不用急。"), ("p", "{R}只办{dur}，得抓紧。"),
                           ("n", "{R}的持续时间是{dur}。"), ("n", "其持续时间为{dur}。"), ("n", "{R}的展期是{dur}。")],
    ("musicfest", "duration"): [("n", "{R}连着{dur}。"), ("n", "一共{dur}，每天都有不同的乐队。")],
    ("business", "duration"): [("p", "这次要去{dur}。"), ("p", "{R}要待{dur}。"), ("d", "{R}去了{dur}。"), ("d", "在那边待了{dur}。")],
    ("trip", "duration"): [("p", "一共玩{dur}。"), ("d", "前后玩了{dur}。"), ("p", "{R}安排了{dur}。")],
    ("bookclub", "duration"): [("n", "{R}大概{dur}。"), ("d", "前后聊了{dur}。")],
    ("course", "duration"): [("n", "一节课{dur}。"), ("n", "{R}每次上{dur}。"), ("n", "每节{dur}。")],
    ("family", "price"): [("n", "红包包了{price}。"), ("d", "随了{price}的份子钱。"), ("p", "准备包{price}的红包。")],
    ("trip", "price"): [("p", "预算大概{price}。"), ("d", "{R}一共花了{price}。"), ("d", "算下来总共花了{price}。")],
    ("checkup", "price"): [("n", "套餐价格{price}。"), ("n", "{R}花了{price}。"), ("n", "体检费{price}，公司报销。")],
    ("course", "price"): [("n", "学费{price}。"), ("n", "{R}一共{price}。"), ("d", "交了{price}的学费。")],
    ("concert", "price"): [("n", "票价是{price}。"), ("n", "我买的是{price}的票。"), ("n", "{R}的票{price}一张。")],
    ("expo", "price"): [("n", "门票{price}一张。"), ("n", "{R}门票{price}。")],
    ("musicfest", "price"): [("n", "票价是{price}。"), ("n", "{R}的票要{price}。")],
    ("marathon", "price"): [("n", "报名费{price}。"), ("d", "交了{price}的报名费。")],
    ("checkup", "result"): [("d", "{R}的报告出来了，{res}。"), ("d", "体检结果：{res}。"), ("d", "报告显示{res}。")],
    ("family", "venue"): [("n", "酒席摆在{venue}。"), ("n", "{R}在{venue}吃。")],
    ("checkup", "venue"): [("n", "在{venue}做。"), ("n", "{R}约的是{venue}。"), ("n", "地点是{venue}。")],
    ("course", "venue"): [("n", "上课地点在{venue}。"), ("n", "{R}在{venue}上。"), ("n", "地点是{venue}。")],
}
# bare answers to the assistant's question
ASK = {
    "city": ["在哪个城市呀？", "在哪儿办？"], "venue": ["具体在哪个地方？", "地点在哪？"], "date": ["什么时候呀？", "定在哪天？"],
    "duration": ["时间长吗？"], "companion": ["一个人去吗？", "和谁一起呀？"],
    "price": ["贵吗？", "要多少钱？"], "travel": ["过去远吗？", "路上要多久？"], "distance": ["跑全马还是半马？", "报的什么距离？"],
    "people": ["人多吗？"], "purpose": ["去干嘛呀？", "是去办什么事？"], "book": ["读什么书？", "这次读哪本？"],
    "teacher": ["老师怎么样？", "老师是谁呀？"], "result": ["结果怎么样？"], "finish": ["跑了多久？", "成绩怎么样？"],
    "rating": ["感觉怎么样？", "好玩吗？"], "hotel": ["住哪儿？"], "sessions": ["一共几节课？"],
}
ASK_T = {"expo": {"duration": ["展期多长呀？", "这个展办几天？"]}, "musicfest": {"duration": ["办几天呀？"]},
         "business": {"duration": ["要去几天？"]}, "trip": {"duration": ["玩几天呀？", "去多久？"]},
         "course": {"duration": ["一节课多长时间？"]}, "bookclub": {"duration": ["活动多长时间？"]}}
ASK_D = {"people": ["来了多少人呀？"], "price": ["花了多少钱？"], "companion": ["和谁去的呀？"]}
ASK_P = {"people": ["大概会来多少人？"], "companion": ["打算和谁去？"]}
ANSWER = {
    "city": ["{city}。", "在{city}。", "{city}那边。"], "venue": ["{venue}。", "在{venue}。", "好像是{venue}。"],
    "date": ["{date}。", "定在{date}。", "{date}那天。"], "duration": ["{dur}。", "大概{dur}。", "{dur}吧。"],
    "companion": ["和{comp}。", "{comp}陪我。", "跟{comp}一起。"], "price": ["{price}。", "不便宜，{price}。", "还好，{price}。"],
    "travel": ["{mv}{hs}。", "还行，{mv}{hs}。"], "distance": ["{dist}。", "报的{dist}。"], "people": ["{people}个人左右。", "来了{people}个。"],
    "purpose": ["{purpose}。", "去{purpose}。"], "book": ["{book}。", "读{book}。"], "teacher": ["老师姓{teacher}，挺耐心的。"],
    "result": ["{res}。"], "finish": ["{fin}。", "跑了{fin}。"], "rating": ["{rating}。"], "hotel": ["{hotel}。"],
    "sessions": ["{sessions}节。"],
}
ALONE_FOLLOW = {"p": ["这次我自己一个人去。", "没人陪，我一个人去。"], "d": ["是我一个人去的。", "这次自己一个人去的。"]}
ALONE_ANSWER = ["对，就我自己。", "嗯，一个人。"]

# later conversations: a description instead of a pronoun
LATER = {
    "d": ["{D}去过了，{c}。", "{D}结束了，{c}。", "说下{D}，{c}。", "对了，{D}，{c}。", "说说{D}吧，{c}。"],
    "n": ["对了，{D}，{c}。", "补充一下，{D}{c}。", "忘了说，{D}{c}。", "说起{D}，{c}。"],
}
LATER_T = {"course": ["{D}上了几节了，{c}。", "{D}已经上了一阵子了，{c}。"],
           "checkup": ["对了，{D}，{c}。", "忘了说，{D}{c}。"],
           "business": ["{D}回来了，{c}。", "说下{D}，{c}。"], "trip": ["{D}回来了，{c}。", "说下{D}，{c}。"]}
CLAUSE = {  # clause without a subject, after a description
    "venue": [("n", "在{venue}"), ("n", "地点是{venue}")], "duration": [("n", "一共{dur}"), ("d", "前后持续了{dur}")],
    "companion": [("p", "是和{comp}一起去"), ("d", "是和{comp}一起去的")],
    "price": [("n", "{cn}是{price}"), ("d", "{cn}花了{price}")], "travel": [("n", "{mv}{hs}")],
    "rating": [("d", "{rating}"), ("d", "感觉{rating}")], "finish": [("d", "我跑了{fin}"), ("d", "成绩是{fin}")],
    "result": [("d", "{res}")], "people": [("d", "来了{people}个人"), ("p", "估计会来{people}个人")], "hotel": [("n", "住的{hotel}")],
    "teacher": [("n", "老师姓{teacher}")], "book": [("n", "读的是{book}")], "distance": [("n", "跑的是{dist}")],
    "purpose": [("n", "主要是{purpose}")], "sessions": [("n", "一共{sessions}节课")],
}
CLAUSE_T = {("checkup", "result"): [("d", "报告出来了，{res}")], ("family", "price"): [("d", "红包包了{price}"), ("p", "红包准备包{price}")],
            ("expo", "duration"): [("n", "展期{dur}"), ("n", "一共办{dur}")],
            ("musicfest", "duration"): [("n", "一共办{dur}"), ("n", "连着{dur}")],
            ("course", "duration"): [("n", "一节课{dur}"), ("n", "每次上{dur}")],
            ("bookclub", "duration"): [("n", "活动大概{dur}"), ("d", "前后聊了{dur}")],
            ("business", "duration"): [("p", "要去{dur}"), ("d", "去了{dur}"), ("d", "一共待了{dur}")],
            ("trip", "duration"): [("p", "一共玩{dur}"), ("d", "前后玩了{dur}"), ("d", "一共玩了{dur}")],
            ("trip", "price"): [("p", "预算{price}左右"), ("d", "一共花了{price}")],
            ("checkup", "price"): [("n", "体检费{price}"), ("n", "套餐{price}")],
            ("course", "price"): [("n", "学费{price}")]}

ACKS = ["好的，记下了。", "收到～", "好嘞，我帮你记着。", "明白，已经记下来了。", "OK，记住了。", "嗯嗯，记下了。"]
REACT_P = ["听起来很不错！", "哇，好期待啊！", "挺好的，玩得开心！", "祝顺利～", "记得提前做好准备哦。", "注意安全，别太累了。"]
REACT_D = ["辛苦啦！", "听起来挺充实的。", "哈哈，收获满满。", "那挺好的。", "好好休息一下～"]
REACT_NEG = ["啊，那确实有点可惜。", "抱抱，下次会更好的。", "唉，那挺扫兴的。", "理解，换我也会失望。"]
GREETINGS = [("在吗？", "在的，怎么啦？"), ("嗨，又来找你聊天了。", "欢迎～今天怎么样？"), ("晚上好呀。", "晚上好！"),
             ("跟你说几件事。", "好呀，你说。")]

FILLERS = [  # (text, reaction group)
    ("今天中午吃了{food}，太香了。", "food"), ("晚上自己做了{food}，第一次做居然还行。", "food"),
    ("最近在控制饮食，晚饭只吃沙拉。", "food"), ("楼下新开了一家{food}店，排队排了半小时。", "food"),
    ("奶茶又喝多了，明天开始戒。", "food"), ("外卖点了{food}，结果送错了。", "work"),
    ("今天降温了，早上出门冻得发抖。", "weather"), ("这几天一直下雨，衣服都晾不干。", "weather"),
    ("好热啊，空调开了一整天。", "weather"), ("{city2}那边今天下暴雨，朋友说地铁都停了。", "weather"),
    ("回南天太烦了，墙上都是水。", "weather"),
    ("老板又临时加需求，烦死了。", "work"), ("今天开了四个会，正事一点没干。", "work"),
    ("{coworker}今天请假，他的活全甩给我了。", "work"), ("这周要交季度报告，压力好大。", "work"),
    ("今天加班到十点，刚到家。", "work"), ("年中考核快到了，有点焦虑。", "work"), ("新来的实习生挺机灵的。", "work"),
    ("我家{petname}今天把花盆打翻了。", "pet"), ("{petname}最近掉毛好严重。", "pet"), ("带{petname}去打疫苗了，花了两百多。", "pet"),
    ("{petname}半夜跑酷，吵得我睡不着。", "pet"), ("{petname}今天好乖，一直趴在我脚边。", "pet"),
    ("最近在追{show}，停不下来。", "life"), ("周末在家躺了一整天。", "life"), ("手机屏幕又摔裂了。", "life"),
    ("今天去超市买了一堆东西，花了三百多。", "life"), ("最近睡眠不太好，老是半夜醒。", "life"), ("快递又丢了，气死。", "work"),
    ("想换个发型，不知道剪短好不好。", "life"),
    ("朋友圈好多人在晒音乐节的照片。", "life"), ("最近马拉松好火，身边好多人都在跑。", "life"),
    ("{coworker}说跑步伤膝盖，我不太信。", "life"), ("看了一篇讲怎么挑体检套餐的文章。", "life"),
    ("{city2}的房价真是离谱。", "life"), ("好想去旅游啊，可惜最近请不到假。", "life"), ("演唱会的票现在都好难抢。", "life"),
    ("最近读书越来越难静下心来了。", "life"),
]
PET_FILLERS = {"猫": [("给{petname}买了个新猫爬架，它一眼都不看。", "pet")], "狗": [("早上遛{petname}，它追着一只鸽子跑了半条街。", "pet")]}
REACT_FILLER = {"food": ["听着就好香！", "哈哈，偶尔放纵一下也没事。"], "weather": ["注意保暖呀。", "出门记得带伞。"],
                "work": ["抱抱，辛苦了。", "确实挺烦的。"], "pet": ["哈哈哈，好可爱。", "毛孩子就是这样～"],
                "life": ["哈哈，理解。", "嗯嗯。"]}

# distractor events: plans that fell through, friends' events
CANCELLED = {
    "expo": ["本来{date}想去{city}看{sub}的，票没抢到，只能算了。", "{city}有个{sub}，本来想去，后来临时加班没去成。"],
    "concert": ["{singer}{city}那场没抢到票，好气。", "本来想去看{singer}的演唱会，后来嫌贵没买。"],
    "musicfest": ["{comp}约我去{city}的{sub}，我没答应，太累了。"],
    "marathon": ["{comp}约我去跑{city}马拉松，我没报名，最近膝盖不舒服。", "{city}马拉松没中签，明年再试吧。"],
    "business": ["原本{date}要去{city}出差，临时取消了。"],
    "trip": ["本来想去{city}玩，机票太贵，放弃了。"],
    "bookclub": ["{venue}那边也有个读书会，不过时间不合适，没去。"],
}
OTHERS = {
    "expo": ["{person}{date}去{city}看了{sub}，发了好多照片。"],
    "marathon": ["{person}上个月去{city}跑了马拉松，跑了四个多小时。", "{person}报了{city}马拉松，天天在练。"],
    "trip": ["{person}刚从{city}旅游回来，给我带了特产。"],
    "concert": ["{person}去看了{singer}的演唱会，说现场超好。"],
    "musicfest": ["{person}去了{city}的{sub}，说人多到挤不进去。"],
}


# --------------------------------------------------------------------------- structures

class Msg:
    __slots__ = ("speaker", "text", "id", "time", "thread")

    def __init__(self, speaker: str, text: str):
        self.speaker, self.text, self.id, self.time, self.thread = speaker, tidy(text), None, None, None


class Event:
    def __init__(self, kind: str, etype: str, sub: str | None = None, subl: str | None = None):
        self.kind = kind  # user | cancelled | other
        self.type = etype
        self.sub = sub
        self.subl = subl or sub
        self.truth: dict = {}
        self.stmt: dict[str, list[Msg]] = {}
        self.naming: Msg | None = None
        self.intro = 0
        self.date0: date | None = None  # first announced date (a later message moves it)
        self.update_thread: int | None = None
        self.later: dict[str, int] = {}  # attr -> thread index where it is stated by description
        self.extra: dict = {}

    def __repr__(self) -> str:
        return f"<{self.type} {self.sub} {self.truth.get('city')} {self.truth.get('date')}>"


# --------------------------------------------------------------------------- pool generation

class PoolGen:
    def __init__(self, idx: int, rng: random.Random):
        self.idx = idx
        self.rng = rng
        self.name = f"zh-dailylife-{idx + 1:02d}"
        self.events: list[Event] = []
        self.threads: list[dict] = []
        self.msgs: list[Msg] = []
        self.used_fillers: set[str] = set()
        self.used_tpl: dict[str, int] = {}

    # ---- setup
    def setup(self) -> None:
        rng = self.rng
        self.year = 2023 + self.idx % 3
        self.home = rng.choice(["广州", "上海", "杭州", "北京", "成都", "深圳", "南京", "武汉"])
        self.hometown = rng.choice([c for c in ("长沙", "武汉", "重庆", "西安", "青岛", "苏州", "厦门") if c != self.home])
        others = [c for c in REGION if c not in (self.home,)]
        self.freq_cities = rng.sample(others, 4)
        self.companions = rng.sample(COMPANIONS, 4)
        self.work_companions = [c for c in self.companions if c in WORK_COMPANIONS] or rng.sample(WORK_COMPANIONS, 1)
        self.work_companions += rng.sample([c for c in WORK_COMPANIONS if c not in self.work_companions], 1)
        self.family_companions = [c for c in self.companions if c in FAMILY_COMPANIONS] or rng.sample(FAMILY_COMPANIONS, 1)
        self.coworker = rng.choice(["小王", "老李", "小陈", "小刘", "阿峰"])
        self.pet = rng.choice(PETS)
        self.persons = rng.sample(["我表妹", "我同学", "隔壁部门的小张", "我哥们儿", "我闺蜜", "我姐"], 3)
        start = date(self.year, rng.randint(2, 4), rng.randint(1, 20))
        n_threads = rng.randint(11, 14)
        days = sorted(rng.sample(range(0, 175), n_threads - 1))
        offs = [0]
        for d in days:
            if d - offs[-1] >= 4:
                offs.append(d)
        self.thread_dates = [start + timedelta(o) for o in offs]
        self.travel = {}
        for city in REGION:
            if city == self.home:
                continue
            pair = frozenset((city, self.home))
            if pair in NEAR:
                self.travel[city] = ("高铁", NEAR[pair])
            elif REGION[city] == REGION[self.home]:
                self.travel[city] = ("高铁", rng.choice([1.5, 2, 2.5]))
            elif frozenset(REGION[city] + REGION[self.home]) in ADJACENT:
                self.travel[city] = rng.choice([("高铁", rng.choice([3.5, 4, 5])), ("飞机", rng.choice([1.5, 2]))])
            else:
                self.travel[city] = ("飞机", rng.choice([2.5, 3, 3.5]))

    def pick_city(self, etype: str) -> str:
        rng = self.rng
        if etype in HOME_TYPES:
            return self.home
        if etype == "family":
            return self.hometown if rng.random() < 0.6 else self.home
        if etype == "match":
            return self.home if rng.random() < 0.6 else rng.choice(self.freq_cities)
        if etype in ("business", "trip"):
            return rng.choice(self.freq_cities) if rng.random() < 0.75 else rng.choice([c for c in REGION if c != self.home])
        r = rng.random()
        if r < 0.2:
            return self.home
        if r < 0.85:
            return rng.choice(self.freq_cities)
        return rng.choice([c for c in REGION if c != self.home])

    def make_events(self) -> None:
        rng = self.rng
        kinds = list(TYPES)
        main = rng.sample(["expo", "marathon", "concert", "musicfest", "business", "trip", "bookclub"], 3)
        rest = rng.sample([k for k in kinds if k not in main], 4)
        counts = {t: rng.choice([3, 3, 4]) for t in main}
        counts.update({t: rng.choice([1, 2, 2]) for t in rest})
        used_subs: dict[str, list] = {}
        for etype, n in counts.items():
            for _ in range(n):
                self.events.append(self.new_event("user", etype, used_subs))
        rng.shuffle(self.events)
        # distractors
        for _ in range(rng.randint(2, 3)):
            etype = rng.choice([t for t in CANCELLED if t in counts] or list(CANCELLED))
            ev = self.new_event("cancelled", etype, used_subs, distractor=True)
            for _ in range(20):  # a plan that fell through is not in a city where the same kind of event happened
                if not any(e.type == etype and e.truth["city"] == ev.truth["city"] for e in self.events):
                    break
                ev.truth["city"] = rng.choice([c for c in REGION if c != self.home])
            self.events.append(ev)
        for _ in range(rng.randint(1, 2)):
            etype = rng.choice([t for t in OTHERS if t in counts] or list(OTHERS))
            self.events.append(self.new_event("other", etype, used_subs, distractor=True))

    def new_event(self, kind: str, etype: str, used_subs: dict, distractor: bool = False) -> Event:
        rng = self.rng
        used = used_subs.setdefault(etype, [])
        sub = subl = None
        extra = {}
        if etype == "expo":
            choice = rng.choice(used) if used and rng.random() < 0.35 else rng.choice(EXPO_SUBS)
            sub, subl = choice
        elif etype == "musicfest":
            sub = rng.choice(used) if used and rng.random() < 0.3 else rng.choice(FEST_SUBS)
        elif etype == "concert":
            singer = rng.choice([s for s in SINGERS if s not in used] or SINGERS)
            sub, extra["singer"] = f"{singer}演唱会", singer
        elif etype == "family":
            sub = rng.choice([o for o in OCCASIONS if o not in used])
        elif etype == "course":
            course = rng.choice([c for c in COURSE_SUBS if c[0] not in used])
            sub, extra["skill"], extra["course_venue"] = course
        elif etype == "match":
            sub = rng.choice(used) if used and rng.random() < 0.3 else rng.choice(MATCH_SUBS)
        if not distractor and sub is not None:
            used.append((sub, subl) if etype == "expo" else (extra.get("singer") or sub))
        ev = Event(kind, etype, sub, subl)
        ev.extra = extra
        ev.truth["city"] = self.pick_city(etype)
        if distractor:
            if kind == "other":
                ev.truth["companion"] = rng.choice(self.persons)
            elif rng.random() < 0.5:
                ev.truth["companion"] = rng.choice(self.companions)
            if etype == "bookclub":
                ev.truth["venue"] = rng.choice(BOOKCLUB_VENUES)
        return ev

    # ---- schedule: which thread introduces which event, event dates, which attrs are stated
    def schedule(self) -> None:
        rng = self.rng
        user = [e for e in self.events if e.kind == "user"]
        nthreads = len(self.thread_dates)
        last = self.thread_dates[-1]
        taken: set[date] = set()
        for i, ev in enumerate(user):
            for attempt in range(900):
                gap = 30 if attempt < 300 else 14  # same kind, same city: a month apart if at all possible
                if attempt == 600 and ev.truth["city"] != self.home:  # else somewhere else
                    ev.truth["city"] = rng.choice([c for c in REGION if c != self.home])
                t = rng.randrange(nthreads)
                td = self.thread_dates[t]
                plan = rng.random() < 0.55
                d = td + timedelta(rng.randint(2, 40)) if plan else td - timedelta(rng.randint(1, 25))
                if d.year != self.year or d in taken or d > last + timedelta(25) or d < date(self.year, 1, 10):
                    continue
                if sum(1 for e in user[:i] if e.intro == t) >= (2 if attempt < 450 else 3):
                    continue  # at most two new events per conversation, three when there are few conversations
                if any(e.type == ev.type and (abs((e.truth["date"] - d).days) < 9 or e.truth["city"] == ev.truth["city"]
                                              and abs((e.truth["date"] - d).days) < gap) for e in user[:i]):
                    continue  # two festivals on consecutive days in two cities: nobody does that
                break
            else:
                raise RuntimeError(f"no date for {ev}")
            taken.add(d)
            ev.intro, ev.truth["date"] = t, d
        for ev in self.events:
            if ev.kind != "user":
                ev.intro = rng.randrange(nthreads)
                d = self.thread_dates[ev.intro] - timedelta(rng.randint(3, 20))
                while d in taken:  # never the day of one of the user's events
                    d -= timedelta(1)
                ev.truth["date"] = d
        self.query_day = max([last] + [e.truth["date"] for e in user]) + timedelta(rng.randint(3, 10))
        assert self.query_day.year == self.year
        # attributes
        for ev in user:
            self.choose_attrs(ev)
        # date changes announced later (a plan moved), about every other pool
        if rng.random() < 0.6:
            cands = [e for e in user if e.truth["date"] > self.thread_dates[e.intro] and
                     any(e.intro < t < nthreads and self.thread_dates[t] < e.truth["date"] for t in range(nthreads))]
            if cands:
                ev = rng.choice(cands)
                ts = [t for t in range(ev.intro + 1, nthreads) if self.thread_dates[t] < ev.truth["date"]]
                new = ev.truth["date"] + timedelta(rng.randint(5, 16))
                if new not in taken and new < self.query_day and new.year == self.year:
                    ev.date0, ev.update_thread = ev.truth["date"], rng.choice(ts)
                    ev.truth["date"] = new
                    taken.add(new)

    def choose_attrs(self, ev: Event) -> None:
        rng = self.rng
        spec = TYPES[ev.type]
        city = ev.truth["city"]
        home = city == self.home
        want = {}
        for attr, p in spec["attrs"].items():
            if rng.random() < p:
                want[attr] = True
        if home:
            want.pop("travel", None)
        t = ev.truth
        if ev.type in ("expo", "musicfest", "concert", "match"):
            key = "expo" if ev.type == "expo" else ("park" if ev.type == "musicfest" else "stage")
            t["venue"] = rng.choice(VENUES[city][key])
        elif ev.type == "bookclub":
            t["venue"] = rng.choice(BOOKCLUB_VENUES)
        elif ev.type == "checkup":
            t["venue"] = rng.choice(CHECKUP_VENUES)
        elif ev.type == "family":
            t["venue"] = rng.choice(FAMILY_VENUES)
        elif ev.type == "course":
            t["venue"] = ev.extra["course_venue"]
        for attr in list(want):
            if attr == "venue":
                continue
            if attr == "duration":
                pool = DURATIONS[ev.type]
                used = {e.truth.get("duration", (None, None))[1] for e in self.events if e.type == ev.type and e is not ev}
                free = [d for d in pool if d[1] not in used]
                if not free:
                    del want[attr]
                    continue
                t["duration"] = rng.choice(free)
            elif attr == "price":
                lo, hi, step = PRICE_RANGE[ev.type]
                used = {e.truth.get("price") for e in self.events if e.type == ev.type}
                t["price"] = rng.choice([p for p in range(lo, hi + 1, step) if p not in used])
            elif attr == "companion":
                if ev.type == "business":
                    t["companion"] = rng.choice(self.work_companions)
                elif ev.type == "family":
                    t["companion"] = rng.choice(self.family_companions)
                else:
                    t["companion"] = ALONE if rng.random() < 0.1 else rng.choice(self.companions)
            elif attr == "travel":
                t["travel"] = self.travel[city]
            elif attr == "rating":
                pol = rng.choice(["pos", "pos", "neg", "mix"])
                texts = RATINGS_ONLY[ev.type][pol] if ev.type in RATINGS_ONLY else \
                    RATINGS[pol] + RATINGS_T.get(ev.type, {}).get(pol, [])
                used = {e.truth.get("rating", (None, None))[1] for e in self.events}
                t["rating"] = (pol, rng.choice([x for x in texts if x not in used] or texts))
            elif attr == "distance":
                used = [e.truth.get("distance") for e in self.events if e.type == "marathon"]
                free = [d for d in DISTANCES if d not in used] or DISTANCES[:3]
                t["distance"] = rng.choice(free[:3] if rng.random() < 0.8 else free)
            elif attr == "finish":
                km = t.get("distance", DISTANCES[1])[1]
                base = {42.195: (215, 300), 21.0975: (100, 150), 10: (48, 70), 5: (24, 35)}[km]
                m = rng.randint(*base)
                h, mm = divmod(m, 60)
                t["finish"] = (f"{h}小时{mm:02d}分" if h and mm else f"{h}个小时整" if h else f"{mm}分钟", m)
            elif attr == "result":
                if ev.type == "checkup":
                    used = {e.truth.get("result") for e in self.events}
                    t["result"] = rng.choice([r for r in CHECK_RESULTS if r not in used])
                else:
                    used = {e.truth.get("result") for e in self.events}
                    t["result"] = rng.choice([r for r in MATCH_RESULTS if r not in used] or MATCH_RESULTS)
            elif attr == "book":
                used = {e.truth.get("book") for e in self.events}
                t["book"] = rng.choice([b for b in BOOKS if b not in used])
            elif attr == "people":
                used = {e.truth.get("people") for e in self.events}
                t["people"] = rng.choice([n for n in range(12, 61) if n not in used])
            elif attr == "purpose":
                used = {e.truth.get("purpose") for e in self.events}
                t["purpose"] = rng.choice([p for p in PURPOSES if p not in used])
            elif attr == "hotel":
                t["hotel"] = rng.choice(HOTELS)
            elif attr == "teacher":
                t["teacher"] = rng.choice(TEACHERS)
            elif attr == "sessions":
                t["sessions"] = rng.choice([8, 10, 12, 16, 20])
        if "finish" in want and "distance" not in want:
            t["distance"] = t.get("distance") or rng.choice(DISTANCES[:3])
            want["distance"] = True
        ev.extra["want"] = [a for a in want]
        # pick attrs to state in a later conversation, by description
        nthreads = len(self.thread_dates)
        for attr in ev.extra["want"]:
            later = [i for i in range(ev.intro + 1, nthreads)]
            if attr in POST_ATTRS:
                continue
            if later and rng.random() < 0.12:
                ev.later[attr] = rng.choice(later)

    # ---- rendering
    def slots(self, ev: Event, msg_day: date) -> dict:
        rng = self.rng
        t = ev.truth
        out = {"sub": ev.sub or "", "subl": ev.subl or "", "city": t.get("city", ""),
               "venue": t.get("venue", ""), "cn": TYPES[ev.type]["cost"] or "费用",
               "singer": ev.extra.get("singer", ""), "skill": ev.extra.get("skill", "")}
        if "date" in t:
            out["date"] = date_phrase(msg_day, t["date"], rng)
        if "duration" in t:
            out["dur"] = rng.choice(t["duration"][0])
        if "price" in t:
            out["price"] = price_text(t["price"], rng)
        if "companion" in t:
            c = t["companion"]
            out["comp"] = c[0] if isinstance(c, tuple) else c
            out["person"] = out["comp"]
        if "travel" in t:
            mode, h = t["travel"]
            out["hs"], out["mode"] = hours_text(h), {"高铁": "坐高铁", "飞机": "坐飞机"}[mode]
            out["mv"] = {"高铁": rng.choice(["坐高铁要", "高铁要"]), "飞机": rng.choice(["坐飞机要", "飞机要"])}[mode]
            out["mv2"] = f"坐了{out['hs']}高铁" if mode == "高铁" else f"飞了{out['hs']}"
        if "rating" in t:
            out["rating"] = t["rating"][1]
        if "distance" in t:
            out["dist"] = rng.choice(t["distance"][0])
            out["km"] = t["distance"][2]
        if "finish" in t:
            out["fin"] = t["finish"][0]
        if "result" in t:
            out["res"] = t["result"] if isinstance(t["result"], str) else t["result"][0]
        for k in ("book", "purpose", "hotel", "teacher"):
            if k in t:
                out[k] = t[k]
        if "people" in t:
            out["people"] = str(t["people"])
        if "sessions" in t:
            out["sessions"] = cn(t["sessions"])
        return out

    @staticmethod
    def fields(template: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(template) if f}

    SLOT_ATTR = {"city": "city", "venue": "venue", "date": "date", "comp": "companion", "dist": "distance",
                 "book": "book", "purpose": "purpose", "dur": "duration", "price": "price", "km": "distance",
                 "people": "people", "hs": "travel", "mv": "travel", "mv2": "travel", "mode": "travel",
                 "rating": "rating", "fin": "finish", "res": "result", "hotel": "hotel", "teacher": "teacher",
                 "sessions": "sessions"}

    def attrs_of(self, template: str) -> set[str]:
        return {self.SLOT_ATTR[f] for f in self.fields(template) if f in self.SLOT_ATTR}

    def intro_block(self, ev: Event, day: date, thread_idx: int) -> list[Msg]:
        rng = self.rng
        tense = "p" if ev.truth["date"] > day else "d"
        home = ev.truth["city"] == self.home
        to_state = set(ev.extra["want"]) | {"date"}
        if not home:
            to_state.add("city")  # always say where, when it is not at home
        elif ev.type in ("expo", "musicfest", "concert", "match", "family"):
            to_state.add("venue")  # at home: say the venue instead
        now_attrs = {a for a in to_state if a not in ev.later and not (a in POST_ATTRS and tense == "p")}
        cands = []
        negative = ev.truth.get("rating", ("pos",))[0] != "pos"
        recent = (day - ev.truth["date"]).days <= 4
        for tt, tpl in NAMING[ev.type]:
            if tt.rstrip("+!") != tense or (tt.endswith("+") and negative) or (tt.endswith("!") and not recent):
                continue
            need = self.attrs_of(tpl)
            if "comp" in self.fields(tpl) and ev.truth.get("companion") in (None, ALONE):
                continue
            if need <= now_attrs:
                cands.append(tpl)
        tpl = self.fresh(cands)
        sl = self.slots(ev, day)
        if ev.date0 is not None:  # first announced date
            sl["date"] = date_phrase(day, ev.date0, rng)
        naming = Msg("user", tpl.format(**sl))
        ev.naming = naming
        for a in sorted(self.attrs_of(tpl)):
            ev.stmt[a] = [naming]
        out = [naming]
        rest = [a for a in sorted(now_attrs) if a not in ev.stmt]
        order = {"city": 0, "venue": 1, "date": 2}
        rest.sort(key=lambda a: (order.get(a, 5), rng.random()))
        # group into follow-ups
        groups: list[list[str]] = []
        while rest:
            a = rest.pop(0)
            if rest and rng.random() < 0.25 and a in CLAUSE and rest[0] in CLAUSE and a != "date" and rest[0] != "date":
                groups.append([a, rest.pop(0)])
            else:
                groups.append([a])
        interrupted = False
        if groups and rng.random() < 0.3:  # something between the naming message and its first follow-up
            if rng.random() < 0.55:
                out.append(Msg("assistant", rng.choice(REACT_P if tense == "p" else REACT_D)))
            else:
                text, grp = self.filler_text()
                out.append(Msg("user", text))
                interrupted = True
        for gi, group in enumerate(groups):
            sl = self.slots(ev, day)
            if ev.date0 is not None:
                sl["date"] = date_phrase(day, ev.date0, rng)
            a = group[0]
            alone = a == "companion" and ev.truth.get("companion") == ALONE
            if len(group) == 1 and not interrupted and a in ASK and out[-1].speaker == "user" and rng.random() < 0.22:
                asks = ASK_T.get(ev.type, {}).get(a) or ASK[a] + (ASK_D.get(a, []) if tense == "d" else ASK_P.get(a, []))
                out.append(Msg("assistant", rng.choice(asks)))
                answers, alone_answers = ANSWER[a], ["就我自己。", "没人陪，我一个人。"]
                if out[-1].text == "一个人去吗？":
                    answers, alone_answers = ["不是，和{comp}一起。", "没有，{comp}陪我。"], ALONE_ANSWER
                text = rng.choice(alone_answers) if alone else rng.choice(answers).format(**sl)
                m = Msg("user", text)
            else:
                ref = rng.choice(TYPES[ev.type]["typed_refs"] if interrupted else TYPES[ev.type]["refs"])
                if alone:
                    text = rng.choice(ALONE_FOLLOW["p" if tense == "p" else "d"])
                else:
                    text = self.follow_text(ev, a, tense, ref, sl, need_ref=interrupted)
                if len(group) == 2:
                    b = group[1]
                    cl = [tpl for tt, tpl in CLAUSE_T.get((ev.type, b), CLAUSE[b]) if tt in ("n", tense)]
                    if cl and not (b == "companion" and ev.truth.get("companion") == ALONE):
                        text = text.rstrip("。！") + "，" + rng.choice(cl).format(**sl) + "。"
                    else:
                        group = [a]
                        rest_b = b
                        groups.insert(gi + 1, [rest_b])
                m = Msg("user", text)
            interrupted = False
            out.append(m)
            for x in group:
                ev.stmt[x] = [naming, m]
            # a self-correction of the date
            if a == "date" and len(group) == 1 and rng.random() < 0.18 and tense == "p" and ev.date0 is None:
                wrong = ev.truth["date"] - timedelta(rng.choice([1, 2, 7]))
                m.text = self.follow_text(ev, "date", tense, rng.choice(TYPES[ev.type]["refs"]),
                                          {**sl, "date": abs_date(wrong, rng)})
                fix = Msg("user", rng.choice(["哦不对，是{d}，我记错了。", "不对不对，应该是{d}。", "更正一下，是{d}。"]).format(
                    d=abs_date(ev.truth["date"], rng)))
                out.append(fix)
                ev.stmt["date"] = [naming, m, fix]
            if rng.random() < 0.12 and gi < len(groups) - 1:
                out.append(Msg("assistant", rng.choice(ACKS)))
        if rng.random() < 0.55 and out[-1].speaker == "user":
            bad = "rating" in ev.stmt and ev.truth["rating"][0] != "pos"
            out.append(Msg("assistant", rng.choice(ACKS + (REACT_P if tense == "p" else REACT_NEG if bad else REACT_D))))
        return out

    def fresh(self, tpls: list[str]) -> str:
        """A template, preferring the ones this user has used least (people do not repeat themselves)."""
        least = min(self.used_tpl.get(t, 0) for t in tpls)
        tpl = self.rng.choice([t for t in tpls if self.used_tpl.get(t, 0) == least])
        self.used_tpl[tpl] = self.used_tpl.get(tpl, 0) + 1
        return tpl

    def follow_text(self, ev: Event, attr: str, tense: str, ref: str, sl: dict, need_ref: bool = False) -> str:
        tpls = [tpl for tt, tpl in (FOLLOW_T[(ev.type, attr)] if (ev.type, attr) in OVERRIDE else
                                    FOLLOW[attr] + FOLLOW_T.get((ev.type, attr), [])) if tt in ("n", tense)]
        if attr == "price" and TYPES[ev.type]["cost"] is None:
            tpls = [t for t in tpls if "{cn}" not in t]
        if ev.type in ("business", "trip") and attr == "city":
            tpls = ["这次去{city}。", "目的地是{city}。", "去的是{city}。"]
        if ev.type == "family" and attr == "city":
            tpls = ["在{city}老家办。", "要回{city}。", "是在{city}办的。"] if tense == "p" else ["在{city}老家办的。", "回了趟{city}。"]
        tpl = self.fresh(tpls)
        if need_ref and tpl.startswith("这次"):  # "这次是和…" -> "那个展是和…"
            tpl = "{R}" + tpl[2:]
        if need_ref and "{R}" not in tpl:
            return f"{ref}，" + tpl.format(R=ref, **sl)
        return tpl.format(R=ref, **sl)

    def filler_text(self) -> tuple[str, str]:
        rng = self.rng
        pool = [f for f in FILLERS + PET_FILLERS[self.pet[0]] if f[0] not in self.used_fillers]
        tpl, grp = rng.choice(pool)
        self.used_fillers.add(tpl)
        text = tpl.format(food=rng.choice(FOODS), city2=rng.choice(self.freq_cities), coworker=self.coworker,
                          petname=self.pet[1], show=rng.choice(SHOWS))
        return text, grp

    def distractor_msg(self, ev: Event, day: date) -> Msg:
        tpls = (CANCELLED if ev.kind == "cancelled" else OTHERS)[ev.type]
        ok = []
        for tpl in tpls:
            f = self.fields(tpl)
            if "comp" in f and not isinstance(ev.truth.get("companion"), tuple):
                continue
            ok.append(tpl)
        tpl = self.fresh(ok or tpls)
        sl = self.slots(ev, day)
        if ev.kind == "other":
            sl["person"] = ev.truth["companion"]
        sl.setdefault("comp", "朋友")
        sl.setdefault("person", "朋友")
        if "date" not in self.fields(tpl):
            ev.truth["date"] = None  # no day said ("上个月…"): could be any
        m = Msg("user", tpl.format(**sl))
        ev.naming = m
        return m

    def later_msg(self, ev: Event, attrs: list[str], day: date, kind: str = "attr") -> Msg:
        """A message in a later conversation that names the event by a description."""
        rng = self.rng
        sl = self.slots(ev, day)
        tense = "p" if ev.truth["date"] > day else "d"
        if kind == "update":  # the user still knows it by the date first announced
            final, ev.truth["date"] = ev.truth["date"], ev.date0
            desc, keys = self.describe_for_msg(ev, day)
            ev.truth["date"] = final
        else:
            desc, keys = self.describe_for_msg(ev, day)
        self.last_desc_msgs = [m for k in keys if k not in ("type", "sub")
                               for m in ev.stmt[{"month": "date", "day": "date", "reldate": "date"}.get(k, k)]]
        if kind == "update":
            new = date_phrase(day, ev.truth["date"], rng)
            text = rng.choice(["{D}延期了，改到{n}。", "{D}时间改了，变成{n}。", "刚收到通知，{D}推迟到{n}了。",
                               "{D}改期了，现在是{n}。", "跟你说，{D}挪到{n}了。"]).format(D=desc, n=new)
            return Msg("user", text)
        clauses = []
        for a in attrs:
            cl = [tpl for tt, tpl in CLAUSE_T.get((ev.type, a), CLAUSE[a]) if tt in ("n", tense)]
            if a == "price" and TYPES[ev.type]["cost"] is None:
                cl = [c for c in cl if "{cn}" not in c]
            if a == "companion" and ev.truth.get("companion") == ALONE:
                cl = ["是我一个人去的" if tense == "d" else "我打算一个人去"]
            clauses.append(rng.choice(cl).format(**sl))
        recent = tense == "d" and (day - ev.truth["date"]).days <= 14
        tpls = LATER["n"]
        if recent:
            tpls = LATER_T.get(ev.type) or LATER["d"]
        tpl = rng.choice(tpls)
        text = tpl.format(D=desc, c="，".join(clauses))
        return Msg("user", text)

    def describe_for_msg(self, ev: Event, day: date) -> str:
        rng = self.rng
        options = []
        for keys in DESC_KEYS[ev.type]:
            if self.usable(ev, keys) and self.unique(ev, keys):
                options.append(keys)
        # a relative day ("上周六那场马拉松") when it is close
        delta = (day - ev.truth["date"]).days
        if 0 < delta <= 12 and ev.type != "course" and self.unique(ev, ("type", "day")):
            options.append(("type", "reldate"))
        if not options:  # fall back on the day, which no other event of the user shares
            options = [("type",)] if self.unique(ev, ("type",)) else [("type", "day")]
            assert self.unique(ev, options[0]), (ev, options)
        keys = rng.choice(options)
        return describe(ev, keys, rng, day), keys

    def usable(self, ev: Event, keys: tuple) -> bool:
        for k in keys:
            a = {"month": "date", "day": "date", "reldate": "date"}.get(k, k)
            if a in ("type", "sub"):
                if a == "sub" and not ev.sub:
                    return False
                continue
            if a not in ev.stmt:
                return False
            if a == "companion" and ev.truth.get("companion") == ALONE:
                return False
        return True

    def matches(self, other: Event, ev: Event, keys: tuple) -> bool:
        if other.type != ev.type:
            return False
        for k in keys:
            if k == "type":
                continue
            if k == "sub":
                if other.sub != ev.sub:
                    return False
                continue
            a = {"month": "date", "day": "date", "reldate": "date"}.get(k, k)
            ov, ev_v = other.truth.get(a), ev.truth.get(a)
            if ov is None:
                if other.kind == "user" or k in ("day", "reldate"):
                    return False  # the user's event has no such attribute; a vague date is no exact day
                continue  # unknown: could match
            if k == "month":
                if (ov.year, ov.month) != (ev_v.year, ev_v.month):
                    return False
            elif ov != ev_v:
                return False
        return True

    def unique(self, ev: Event, keys: tuple) -> bool:
        return sum(1 for o in self.events if self.matches(o, ev, keys)) == 1

    def render(self) -> None:
        rng = self.rng
        nthreads = len(self.thread_dates)
        for t in range(nthreads):
            day = self.thread_dates[t]
            blocks: list[list[Msg]] = []
            for ev in self.events:
                if ev.intro == t and ev.kind == "user":
                    blocks.append(self.intro_block(ev, day, t))
            self.threads.append({"day": day, "blocks": blocks})
        # later mentions must be rendered after the intros (descriptions use what was said before)
        for t in range(nthreads):
            day = self.thread_dates[t]
            blocks = self.threads[t]["blocks"]
            for ev in self.events:
                if ev.kind != "user":
                    if ev.intro == t:
                        blocks.append([self.distractor_msg(ev, day)])
                    continue
                if ev.update_thread == t:
                    m = self.later_msg(ev, [], day, kind="update")
                    ev.stmt["date"] = dedupe(self.last_desc_msgs + [m])
                    blocks.append([m] + ([Msg("assistant", rng.choice(ACKS))] if rng.random() < 0.5 else []))
                attrs = [a for a, tt in ev.later.items() if tt == t and a not in ev.stmt]
                post = []
                pending = [a for a in ev.extra["want"] if a in POST_ATTRS and a not in ev.stmt]
                if pending and ev.intro < t and ev.truth["date"] < day:
                    if "post_thread" not in ev.extra:  # the post-event attributes come in one of the next talks
                        later = [i for i in range(t, nthreads) if self.thread_dates[i] > ev.truth["date"]]
                        ev.extra["post_thread"] = rng.choice(later[:3])
                    if ev.extra["post_thread"] == t:
                        post = pending
                        if "finish" in post and "distance" not in ev.stmt and "distance" not in attrs:
                            post.append("distance")
                todo = attrs + [a for a in post if a not in attrs]
                if todo:
                    m = self.later_msg(ev, todo, day)
                    for a in todo:
                        ev.stmt[a] = dedupe(self.last_desc_msgs + [m])
                    blk = [m]
                    if rng.random() < 0.45:
                        bad = "rating" in todo and ev.truth["rating"][0] != "pos"
                        blk.append(Msg("assistant", rng.choice(REACT_NEG if bad else REACT_D if post else ACKS)))
                    blocks.append(blk)
        # drop the attributes that never got stated (post-event ones with no later conversation)
        for ev in self.events:
            if ev.kind != "user":
                continue
            for a in list(ev.truth):
                if a in ("city", "date", "venue"):
                    continue
                if a not in ev.stmt:
                    del ev.truth[a]
            if "venue" not in ev.stmt:
                ev.truth.pop("venue", None)
        # fillers, greetings, order, ids and times
        n = 0
        budget = MAX_ITEMS - sum(len(blk) for th in self.threads for blk in th["blocks"])
        for t, th in enumerate(self.threads):
            day = th["day"]
            blocks = th["blocks"]
            for _ in range(rng.choice([1, 1, 2, 2, 3])):
                if budget < 2 and blocks:
                    break
                text, grp = self.filler_text()
                blk = [Msg("user", text)]
                if rng.random() < 0.5:
                    blk.append(Msg("assistant", rng.choice(REACT_FILLER[grp])))
                blocks.append(blk)
                budget -= len(blk)
            rng.shuffle(blocks)
            if rng.random() < 0.3 and budget >= 2:
                budget -= 2
                u, a = rng.choice(GREETINGS)
                blocks.insert(0, [Msg("user", u), Msg("assistant", a)])
            clock = datetime(day.year, day.month, day.day, rng.randint(1, 12), rng.randint(0, 59), tzinfo=timezone.utc)
            for blk in blocks:
                for m in blk:
                    n += 1
                    m.id = f"{self.name}-m{n:03d}"
                    m.time = clock
                    m.thread = f"{self.name}-t{t + 1:02d}"
                    self.msgs.append(m)
                    clock += timedelta(minutes=rng.randint(1, 5), seconds=rng.randint(0, 59))


# descriptions: keys that pick out one event

DESC_KEYS = {
    "expo": [("sub",), ("sub", "city"), ("type", "city"), ("type", "companion"), ("sub", "companion"), ("type", "venue")],
    "musicfest": [("sub",), ("sub", "city"), ("type", "city"), ("type", "companion")],
    "marathon": [("type", "city"), ("type", "companion"), ("type", "distance"), ("type",)],
    "bookclub": [("type", "book"), ("type", "venue"), ("type", "companion"), ("type",)],
    "family": [("sub",), ("sub", "city")],
    "business": [("type", "city"), ("type", "purpose"), ("type", "companion"), ("type",)],
    "trip": [("type", "city"), ("type", "companion"), ("type",)],
    "checkup": [("type", "venue"), ("type",)],
    "course": [("sub",), ("type", "venue")],
    "concert": [("sub",), ("sub", "city"), ("type", "city"), ("type", "companion")],
    "match": [("sub",), ("sub", "city"), ("type", "companion"), ("type", "venue")],
}


def comp_name(ev: Event, rng: random.Random) -> str:
    c = ev.truth["companion"]
    return rng.choice([c[0], c[1]]) if c[1] else c[0]


def describe(ev: Event, keys: tuple, rng: random.Random, ref_day: date) -> str:
    """A noun phrase for the event from the attributes in ``keys``."""
    spec = TYPES[ev.type]
    noun, dem = spec["noun"], rng.choice(spec["dem"])
    t = ev.truth
    ks = set(keys)
    sub = ev.sub
    if ev.type == "concert":
        singer = ev.extra["singer"]
    if ks == {"type"}:
        if ev.type == "business":
            return rng.choice(["那次出差", "那趟出差"])
        return dem + noun
    if ks == {"sub"}:
        if ev.type == "concert":
            return rng.choice([f"{singer}的演唱会", f"{singer}那场演唱会", f"{singer}演唱会"])
        if ev.type == "family":
            return sub
        return rng.choice([f"{dem}{sub}", sub, f"{dem}{sub}"])
    if "month" in ks or "reldate" in ks or "day" in ks:
        d = t["date"]
        when = month_phrase(ref_day, d, rng) if "month" in ks else \
            date_phrase(ref_day, d, rng, rel_prob=1.0 if "reldate" in ks else 0.5)
        base = (singer + "的演唱会" if ev.type == "concert" else sub) if "sub" in ks else noun
        if ev.type == "business" and "sub" not in ks:
            return rng.choice([f"{when}那次出差", f"{when}的出差"])
        if ev.type == "family" and "sub" in ks:
            return f"{when}{sub}" if "的" in sub else f"{when}的{sub}"
        return rng.choice([f"{when}的{dem}{base}", f"{when}{dem}{base}", f"{when}的{base}"])
    if "city" in ks:
        city = t["city"]
        if "sub" in ks:
            if ev.type == "concert":
                return rng.choice([f"{city}那场{singer}演唱会", f"{singer}在{city}的那场", f"{city}的{singer}演唱会"])
            if ev.type == "family":
                return f"在{city}办的{sub}"
            return rng.choice([f"{city}的{sub}", f"{city}{dem}{sub}", f"在{city}的{dem}{sub}"])
        if ev.type == "business":
            return rng.choice([f"去{city}出差那次", f"{city}那趟出差", f"去{city}的那次出差"])
        if ev.type == "trip":
            return rng.choice([f"去{city}玩的那趟", f"{city}那趟旅行", f"去{city}旅游那次"])
        if ev.type == "marathon":
            return rng.choice([f"{city}马拉松", f"{city}那场马拉松", f"在{city}跑的那场"])
        return rng.choice([f"{city}{dem}{noun}", f"在{city}的{dem}{noun}", f"{city}的{noun}"])
    if "companion" in ks:
        c = comp_name(ev, rng)
        verb = {"marathon": "跑", "business": "出差", "trip": "玩", "expo": "看", "concert": "看"}.get(ev.type, "去")
        base = (f"{singer}的演唱会" if ev.type == "concert" else sub) if "sub" in ks else noun
        if ev.type == "business":
            return rng.choice([f"和{c}一起出差那次", f"跟{c}一起出差的那趟"])
        if ev.type == "trip":
            return rng.choice([f"和{c}去玩的那趟", f"跟{c}一起的那次旅行"])
        return rng.choice([f"和{c}一起{verb}的{dem}{base}", f"跟{c}去的{dem}{base}", f"{c}陪我{verb}的{dem}{base}"])
    if "venue" in ks:
        v = t["venue"]
        v = v[3:] if v.startswith("一家叫") else v[2:] if v.startswith("一家") else v
        if ev.type == "checkup":
            return rng.choice([f"在{v}做的那次体检", f"{v}那次体检"])
        if ev.type == "course":
            return rng.choice([f"在{v}上的那个课", f"{v}的那门课"])
        return rng.choice([f"在{v}的{dem}{noun}", f"{v}{dem}{noun}"])
    if "book" in ks:
        return rng.choice([f"读{t['book']}的{dem}读书会", f"{t['book']}{dem}读书会", f"聊{t['book']}的那次"])
    if "distance" in ks:
        d = t["distance"][0][0]
        return rng.choice([f"跑{d}的{dem}", f"{dem}{d}"])
    if "purpose" in ks:
        return rng.choice([f"去{t['purpose']}的那次出差", f"{t['purpose']}那趟出差"])
    raise ValueError(keys)


# --------------------------------------------------------------------------- questions

ATTR_Q = {
    "city": ["{D}在哪个城市？", "{D}是在哪个城市办的来着？", "{D}在哪座城市？", "{D}是去的哪个城市？", "我想不起来{D}在哪个城市了。"],
    "venue": ["{D}具体在什么地方？", "{D}的场地在哪？", "{D}在哪个场馆？", "{D}地点是哪里？", "{D}具体在哪儿？"],
    "duration": ["{D}持续多久？", "{D}要多长时间？", "{D}前后多久？", "{D}时长是多少？", "{D}有多长时间？"],
    "companion": ["{D}我是和谁一起去的？", "谁陪我去的{D}？", "{D}我跟谁去的？", "{D}同行的人是谁？", "和我一起去{D}的是谁？"],
    "price": ["{D}的{cn}多少钱？", "{D}花了多少钱？", "{D}{cn}是多少？", "{D}贵不贵，多少钱？", "我在{D}上花了多少？"],
    "rating": ["{D}怎么样？", "我觉得{D}好不好？", "{D}体验如何？", "{D}值得去吗？我之前说过感受。", "我对{D}的评价是什么？"],
    "distance": ["{D}跑的是多少公里？", "{D}是全马还是半马？", "{D}的距离是多少？", "{D}我报的哪个组？", "{D}有多远？"],
    "finish": ["{D}我跑了多长时间？", "{D}的成绩是多少？", "{D}完赛用时多少？", "{D}我跑出了什么成绩？", "{D}最后用了多久？"],
    "book": ["{D}读的是哪本书？", "{D}讨论的什么书？", "{D}看的书叫什么？", "{D}读了什么？", "{D}的书是哪本？"],
    "travel": ["{D}路上要多久？", "{D}从家过去要多长时间？", "去{D}交通要多长时间？", "{D}过去要坐多久的车？",
               "{D}路上花了多少时间？"],
    "people": ["{D}来了多少人？", "{D}一共多少人？", "{D}人多吗，几个人？", "{D}到场多少人？", "{D}有几个人参加？"],
    "purpose": ["{D}是去干什么的？", "{D}主要做什么？", "{D}的目的是什么？", "{D}去办什么事？", "{D}是为了啥？"],
    "teacher": ["{D}老师姓什么？", "{D}是哪个老师教？", "{D}的老师是谁？", "教{D}的老师叫什么？", "{D}谁上课？"],
    "sessions": ["{D}一共几节课？", "{D}有多少节？", "{D}总共上几次？", "{D}报了几节课？", "{D}一期多少课时？"],
    "hotel": ["{D}住在哪个酒店？", "{D}住的哪儿？", "{D}订的什么酒店？", "{D}晚上住哪？", "{D}的酒店是哪家？"],
}
ATTR_Q_T = {
    ("business", "city"): ["{D}去的是哪个城市？", "{D}去了哪个城市？", "{D}是去哪出差的？"],
    ("trip", "city"): ["{D}去的是哪个城市？", "{D}去哪儿玩的？", "{D}目的地是哪？"],
    ("business", "duration"): ["{D}去了几天？", "{D}待了多久？", "{D}一共几天？"],
    ("trip", "duration"): ["{D}玩了几天？", "{D}一共几天？", "{D}去了多久？"],
    ("course", "duration"): ["{D}一节课多长？", "{D}每次上多久？", "{D}一次课多长时间？"],
    ("expo", "duration"): ["{D}展期多久？", "{D}办几天？", "{D}一共展多少天？"],
    ("musicfest", "duration"): ["{D}一共几天？", "{D}连着办几天？"],
    ("checkup", "result"): ["{D}结果怎么样？", "{D}查出什么问题没有？", "{D}报告说了什么？", "{D}有没有啥异常？", "{D}的结论是什么？"],
    ("match", "result"): ["{D}拿了第几？", "{D}结果如何？", "{D}我打得怎么样，名次是？", "{D}最后成绩怎么样？", "{D}赢了吗？"],
    ("family", "price"): ["{D}红包包了多少？", "{D}我随了多少礼？", "{D}的份子钱给了多少？"],
}
REVERSE_COMP = ["我和{c}一起去的是什么活动？在哪？", "跟{c}一起参加的是什么？在哪儿办的？",
                "我跟{c}去过一个活动，是什么来着，在哪？", "和{c}那次是去干嘛，地点是？", "{c}陪我去的那次是干什么？在哪里？"]
REVERSE_COMP_CITY = ["{c}陪我去的那次是干什么？在哪个城市？", "我和{c}一起去哪个城市干了啥？"]
WHEN_Q = ["{D}是什么时候？", "{D}是哪天？", "我哪天去的{D}？", "{D}是几号？", "{D}什么时候开始的？", "{D}具体是哪一天？"]
GROUPS = {  # for month questions: (label templates, types)
    "show": (["{M}我去看了什么演出？", "{M}我看了哪些演出？", "{M}有没有去看演出？看了啥？"], {"concert", "musicfest"}),
    "expo": (["{M}我看了什么展？", "{M}我去看过哪些展览？", "{M}看过展吗？哪个？"], {"expo"}),
    "sport": (["{M}我参加了什么比赛？", "{M}我跑了马拉松或者打比赛了吗？", "{M}有什么运动类的活动？"], {"marathon", "match"}),
    "travel": (["{M}我去了哪些地方？", "{M}我出过门吗？去了哪？", "{M}我有没有出差或者旅行？"], {"business", "trip"}),
    "any": (["{M}我都干了些啥？", "{M}我参加了哪些活动？", "{M}我都有什么安排？", "帮我回顾一下{M}我做了哪些事。"], set(TYPES)),
}
DAY_Q = ["{W}那天我在干嘛？", "{W}我去做什么了？", "{W}我参加了什么活动？", "我{W}去哪了？", "{W}那天有什么安排来着？"]
ORDER_Q = {
    "last": ["我最近一次{vo}是哪次？在哪？", "最近那次{vo}是在哪里？", "我上一次{vo}是什么时候，在哪？", "离现在最近的一次{vo}在哪？",
             "最后一次{vo}是哪次？"],
    "first": ["我今年第一次{vo}是在哪？", "今年最早的一次{vo}是哪次？", "今年头一回{vo}是在哪里？", "我最早的那次{vo}是什么时候，在哪？",
              "今年第一次{vo}是哪次？"],
}
VO = {"expo": "看展", "musicfest": "去音乐节", "marathon": "跑马拉松", "bookclub": "参加读书会", "family": "参加亲戚的酒席",
      "business": "出差", "trip": "出去旅行", "checkup": "体检", "course": "报课", "concert": "看演唱会", "match": "参加比赛"}
CMP_ADJ = {
    "duration": ["持续时间更长", "时间更长", "更久"], "price": ["更贵", "花钱更多", "花得更多"],
    "distance": ["更远", "距离更长", "跑得更远"], "date": ["更早", "在前面", "先"], "travel": ["路上花的时间更长", "路上更久", "去起来更费时间"],
    "people": ["人更多", "来的人更多"], "finish": ["用时更长", "跑得更久"], "sessions": ["课更多", "节数更多"],
}
CMP_SUP = {
    "duration": ["持续时间最长", "最久", "时间最长"], "price": ["最贵", "花钱最多"], "distance": ["最远", "距离最长"],
    "date": ["最早", "最先"], "travel": ["路上最费时间", "路上最久"], "people": ["人最多"], "finish": ["用时最长"],
    "sessions": ["课最多"],
}
CMP_PAIR = ["{D1}和{D2}，哪个{adj}？", "{D1}跟{D2}比，哪个{adj}？", "{D1}还是{D2}，哪个{adj}？", "对比一下{D1}和{D2}，哪个{adj}？",
            "{D1}和{D2}相比哪个{adj}？"]
CMP_ALL = ["我去过的{o}里，哪个{sup}？", "这些{o}里哪个{sup}？", "所有{o}中哪一个{sup}？", "我参加的{o}，哪次{sup}？",
           "{o}里面{sup}的是哪个？"]
AGG_CITY = ["我今年去过几次{city}？", "今年我一共去了{city}几次？", "我去{city}几趟了？", "算一下我今年到过{city}几次？",
            "{city}我今年去了多少回？", "今年我都因为什么去过{city}？"]
AGG_TYPE = {
    "default": ["我参加过哪些{o}？", "我今年{v}过几次{o}？", "我都{v}过哪些{o}？", "列一下我今年的{o}。", "我一共{v}过几次{o}？"],
    "business": ["我今年出了几次差？", "我出差都去过哪些地方？", "列一下我今年的出差。", "我一共出过几次差？", "今年出差都去了哪？"],
    "trip": ["我今年出去旅行了几次？", "我今年都去哪旅游了？", "列一下我今年的旅行。", "今年玩过哪些地方？", "我一共旅行过几次？"],
    "family": ["我今年参加过哪些亲戚的酒席？", "今年家里办了几次酒席我去了？", "列一下我去过的亲戚聚会。", "我一共吃过几次亲戚的酒席？",
               "今年有哪些家庭聚会？"],
    "course": ["我报过哪些课？", "我今年学了什么课？", "列一下我报的兴趣课。", "我一共报了几门课？", "我都在上什么课？"],
}
AGG_VERB = {"expo": "看", "musicfest": "去", "marathon": "跑", "bookclub": "参加", "checkup": "做", "concert": "看", "match": "参加"}
AGG_COMP = ["我和{c}一起做过哪些事？", "{c}陪我去过哪些地方？", "我跟{c}一起参加过什么活动？", "和{c}一起去过几次活动？",
            "我和{c}都一起去了啥？"]
AGG_SUM = ["{o}我一共花了多少钱？", "{o}的{cn}加起来多少？", "我在{o}上总共花了多少？", "所有{o}的{cn}一共多少钱？",
           "算算我{o}花了多少钱。"]
AGG_LIST = {
    ("checkup", "result"): ["我体检查出过哪些问题？", "历次体检结果都怎么样？", "我的体检报告都说了啥？", "体检有哪些异常？",
                            "几次体检的结果分别是什么？"],
    ("bookclub", "book"): ["读书会上都读过哪些书？", "我在读书会读了哪几本书？", "读书会的书单有哪些？", "读书会聊过什么书？",
                           "列一下读书会读过的书。"],
    ("marathon", "distance"): ["我跑过的马拉松都是什么距离？", "我跑过几次全马几次半马？", "马拉松我都报的什么组？",
                               "每次马拉松跑多少公里？", "列一下我马拉松的距离。"],
    ("concert", "sub"): ["我今年看过谁的演唱会？", "我都看了哪些歌手的演唱会？", "列一下我看过的演唱会。", "我看了几场演唱会，都是谁的？",
                         "今年去了哪些演唱会？"],
    ("business", "purpose"): ["我每次出差都是去干嘛的？", "出差都办了哪些事？", "我出差的目的分别是什么？", "几次出差都是为了啥？",
                              "列一下我出差的事由。"],
}
AGG_NEG = ["哪些活动让我失望了？", "我吐槽过哪些活动？", "有哪些去了觉得不值的？", "我对哪些活动评价不好？", "哪些活动体验比较差？"]

# noise
TYPOS = [("马拉松", "马拉送"), ("展览", "展揽"), ("深圳", "深证"), ("杭州", "航州"), ("成都", "城都"), ("演唱会", "演唱汇"),
         ("读书会", "读书汇"), ("体检", "体捡"), ("音乐节", "音乐届"), ("持续", "持绪"), ("多久", "多就"), ("门票", "门漂"),
         ("比赛", "比塞"), ("出差", "出岔"), ("旅行", "旅型"), ("结果", "接果"), ("时候", "时后"), ("几次", "几此"),
         ("北京", "背景"), ("广州", "广洲"), ("哪个", "那个"), ("什么", "甚么"), ("多少钱", "多少前"), ("在哪", "再哪")]
ENGLISH = [("无人机展", "drone展"), ("马拉松", "marathon"), ("演唱会", "concert"), ("音乐节", "music festival"),
           ("读书会", "book club"), ("车展", "车show"), ("动漫展", "漫展comic con"), ("体检报告", "体检report"), ("那次体检", "那次checkup"), ("体检结果", "checkup结果"), ("旅行", "trip"),
           ("门票", "ticket"), ("表姐", "cousin"), ("酒店", "hotel"), ("多少钱", "多少money"), ("城市", "city"),
           ("游泳课", "游泳class"), ("日语课", "日语class"), ("吉他课", "吉他class"), ("瑜伽课", "yoga课"), ("结果", "result"),
           ("出差", "出差trip"), ("几天", "几day"), ("摄影展", "摄影exhibition")]
COLLOQUIAL = [("什么时候", "啥时候"), ("什么", "啥"), ("怎么样", "咋样"), ("多少钱", "多少米"), ("几次", "几回"), ("在哪儿", "在哪儿啊"),
              ("持续多久", "搞多久"), ("一共", "总共"), ("和谁", "跟谁"), ("是哪天", "是哪天来着"), ("多长时间", "多长时间啊")]
PREFIX = ["哎，", "诶对了，", "问你个事，", "我突然想起来，", "帮我想想，", "欸我记性真差，", "那个啥，", "hi，", "考考你，",
          "今天好累啊。对了，", "刚跟朋友聊到这个，"]
SUFFIX = ["", "我忘了", "你还记得吗", "哈哈", "急", "我要跟朋友说一下", "想不起来了", "求告诉"]
_T_PAIRS = ("这這个個们們来來时時说說对對会會过過还還问問么麼样樣几幾钱錢长長远遠场場节節乐樂马馬书書读讀参參车車动動画畫开開东東"
            "门門见見间間为為团團队隊赛賽获獲奖獎医醫报報后後边邊两兩万萬买買卖賣单單区區电電话話员員业業务務设設备備专專题題"
            "阅閱写寫讲講论論认認识識语語请請让讓该該应應从從体體历歷药藥检檢验驗级級绩績输輸观覽览覽艺藝术術记記吗嗎价價贵貴"
            "课課习習钟鐘头頭岁歲学學练練证證实實现現经經办辦举舉总總计計机機飞飛铁鐵张張陈陳刘劉丽麗华華国國际際馆館广廣厅廳"
            "剧劇听聽欢歡觉覺亲親饭飯庆慶礼禮红紅约約组組线線结結师師妈媽龙龍鸟鳥鱼魚云雲汉漢苏蘇厦廈续續满滿寿壽乔喬迁遷无無"
            "摄攝宠寵谁誰没沒闺閨杰傑伦倫邓鄧谦謙孙孫篮籃围圍盘盤军軍轮輪强強亚亞纳納顺順给給带帶儿兒块塊岛島园園湾灣运運"
            "侧側齐齊温溫兴興调調样樣")
TRAD = {_T_PAIRS[i]: _T_PAIRS[i + 1] for i in range(0, len(_T_PAIRS), 2)}


def to_traditional(text: str) -> str:
    for a, b in (("那里", "那裡"), ("这里", "這裡"), ("哪里", "哪裡")):
        text = text.replace(a, b)
    return "".join(TRAD.get(ch, ch) for ch in text)


def add_noise(text: str, rng: random.Random) -> tuple[str, list[str]]:
    """A noisy rendering: at least one of typo / English / traditional / colloquial, maybe chit-chat and
    dropped particles."""
    kinds = []
    primary = ["typo", "english", "colloquial", "colloquial", "typo", "english"]
    rng.shuffle(primary)
    if rng.random() < 0.12:  # a few in traditional characters
        primary.insert(0, "traditional")
    out = text
    for p in primary:
        if p == "typo":
            hits = [(a, b) for a, b in TYPOS if a in out]
            if hits:
                a, b = rng.choice(hits)
                out = out.replace(a, b, 1)
        elif p == "english":
            hits = [(a, b) for a, b in ENGLISH if a in out]
            if hits:
                for a, b in rng.sample(hits, min(len(hits), rng.choice([1, 1, 2]))):
                    out = out.replace(a, b, 1)
        elif p == "colloquial":
            hits = [(a, b) for a, b in COLLOQUIAL if a in out]
            if hits:
                for a, b in rng.sample(hits, min(len(hits), 2)):
                    out = out.replace(a, b, 1)
        elif p == "traditional":
            out = to_traditional(out)
        if out != text:
            kinds.append(p)
            break
    if rng.random() < 0.45 or not kinds:
        if rng.random() < 0.5 and "typo" not in kinds and "traditional" not in kinds:
            hits = [(a, b) for a, b in TYPOS if a in out]
            if hits:
                a, b = rng.choice(hits)
                out = out.replace(a, b, 1)
                kinds.append("typo")
        suffix = rng.choice(SUFFIX)
        body = out.rstrip("？。")
        out = rng.choice(PREFIX) + body + ("，" + suffix if suffix else "") + rng.choice(["？", "", "??", "？"])
        kinds.append("chitchat")
    if rng.random() < 0.35:
        drop = [c for c in "的了吗呢吧" if c in out]
        for c in rng.sample(drop, min(2, len(drop))):
            out = out.replace(c, "", 1)
        out = out.replace("？", "").replace("，", " ")
        kinds.append("particles")
    if "traditional" in kinds:
        out = to_traditional(out)
    return out, kinds


class QueryGen:
    def __init__(self, pg: PoolGen):
        self.pg = pg
        self.rng = pg.rng
        self.day = pg.query_day
        self.user = [e for e in pg.events if e.kind == "user"]
        self.cands: dict[str, list[dict]] = {c: [] for c in PER_CATEGORY if c != "noisy"}

    def gold(self, ev: Event, keys) -> list[Msg]:
        out = [ev.naming]
        for k in keys:
            a = {"month": "date", "day": "date", "reldate": "date"}.get(k, k)
            if a in ("type", "sub"):
                continue
            out += ev.stmt[a]
        return dedupe(out)

    def descs(self, ev: Event, exclude: set, temporal: bool = False) -> list[tuple]:
        keys_list = list(DESC_KEYS[ev.type])
        if temporal:
            keys_list = [("type", "month")] + ([("sub", "month")] if ev.sub else [])
        out = []
        for keys in keys_list:
            if set(keys) & exclude:
                continue
            if self.pg.usable(ev, keys) and self.pg.unique(ev, keys):
                out.append(keys)
        return out

    def add(self, cat: str, kind: str, text: str, gold: list[Msg], spec: tuple) -> None:
        text = tidy(text)
        self.cands[cat].append({"kind": kind, "text": text, "gold": [m.id for m in gold], "spec": spec,
                                "category": cat})

    def q_attr(self, ev: Event, attr: str, keys: tuple, cat: str = "attribute") -> None:
        rng = self.rng
        tpls = ATTR_Q_T.get((ev.type, attr), []) + (ATTR_Q[attr] if attr in ATTR_Q else [])
        if (ev.type, attr) in ATTR_Q_T and (attr in ("result", "city") or ev.type in ("course", "business", "trip")):
            tpls = ATTR_Q_T[(ev.type, attr)]
        if attr == "distance" and ev.truth["distance"][1] < 20:
            tpls = [t for t in tpls if "全马" not in t]
        D = describe(ev, keys, rng, self.day)
        if D[0] in "去和跟在":
            tpls = [t for t in tpls if not any(x + "{D}" in t for x in "去和跟在")] or tpls
        cnoun = TYPES[ev.type]["cost"] or "费用"
        text = rng.choice(tpls).format(D=D, cn=cnoun)
        self.add(cat, f"{cat}:{attr}", text, self.gold(ev, keys + (attr,)), (cat, id(ev), attr, keys))

    def build(self) -> None:
        rng = self.rng
        pg = self.pg
        # ---- attribute
        for ev in self.user:
            for attr in ev.stmt:
                if attr in ("date",) or (attr == "city" and ev.truth["city"] == pg.home):
                    continue
                if attr == "companion" and ev.truth.get("companion") == ALONE and rng.random() < 0.5:
                    continue
                ds = self.descs(ev, {attr})
                if ds:
                    self.q_attr(ev, attr, rng.choice(ds))
            # reverse: what did I do with X, and where
            c = ev.truth.get("companion")
            if isinstance(c, tuple) and c != ALONE and "companion" in ev.stmt and ev.type not in ("business", "trip"):
                same = [e for e in pg.events if e.truth.get("companion") == c and e is not ev]
                where = "city" if ev.truth["city"] != pg.home and "city" in ev.stmt else ("venue" if "venue" in ev.stmt else None)
                if not same and where:
                    text = rng.choice(REVERSE_COMP + (REVERSE_COMP_CITY if where == "city" else [])).format(
                        c=rng.choice([c[0], c[1]]))
                    self.add("attribute", "attribute:reverse", text, self.gold(ev, ("companion", where)), ("rev", id(ev)))
        # ---- temporal
        for ev in self.user:
            ds = self.descs(ev, {"date", "month"})
            if ds and "date" in ev.stmt:
                keys = rng.choice(ds)
                text = rng.choice(WHEN_Q).format(D=describe(ev, keys, rng, self.day))
                self.add("temporal", "temporal:when", text, self.gold(ev, keys + ("date",)), ("when", id(ev)))
            tds = self.descs(ev, set(), temporal=True)
            asks = [a for a in ev.stmt if a not in ("date", "city" if ev.truth["city"] == pg.home else "_")]
            if tds and asks:
                attr = rng.choice(asks)
                if attr == "city" and ev.truth["city"] == pg.home:
                    continue
                self.q_attr(ev, attr, rng.choice(tds), cat="temporal")
            # what did I do on <day>
            d = ev.truth["date"]
            if sum(1 for e in self.user if e.truth["date"] == d) == 1 and \
                    not any(e.truth.get("date") == d for e in pg.events if e.kind != "user"):
                W = date_phrase(self.day, d, rng, rel_prob=0.5)
                if W in ("今天", "明天", "后天"):
                    W = abs_date(d, rng)
                text = rng.choice(DAY_Q).format(W=W)
                self.add("temporal", "temporal:day", text, self.gold(ev, ("date",)), ("day", id(ev)))
        # month lists
        months = sorted({(e.truth["date"].year, e.truth["date"].month) for e in self.user})
        for ym in months:
            for gname, (tpls, types) in GROUPS.items():
                evs = [e for e in self.user if (e.truth["date"].year, e.truth["date"].month) == ym and e.type in types]
                if not evs or (gname == "any" and len(evs) > 5):
                    continue
                M = month_phrase(self.day, evs[0].truth["date"], rng)
                text = rng.choice(tpls).format(M=M)
                gold = [m for e in evs for m in self.gold(e, ("date",))]
                self.add("temporal", f"temporal:month-{gname}", text, gold, ("month", ym, gname))
        # first / last of a type
        by_type: dict[str, list[Event]] = {}
        for e in self.user:
            by_type.setdefault(e.type, []).append(e)
        for etype, evs in by_type.items():
            if len(evs) < 2 or etype in HOME_TYPES:
                continue
            evs = sorted(evs, key=lambda e: e.truth["date"])
            for which, target in (("last", evs[-1]), ("first", evs[0])):
                where = "city" if target.truth["city"] != pg.home and "city" in target.stmt else "venue"
                if where not in target.stmt:
                    continue
                text = rng.choice(ORDER_Q[which]).format(vo=VO[etype])
                gold = [m for e in evs for m in self.gold(e, ("date",))] + self.gold(target, (where,))
                self.add("temporal", f"temporal:{which}", text, dedupe(gold), ("order", etype, which))
        # ---- comparison
        for etype, evs in by_type.items():
            for attr in ("duration", "price", "distance", "travel", "people", "finish", "sessions", "date"):
                have = [e for e in evs if attr in e.stmt]
                if len(have) < 2:
                    continue
                val = lambda e: numeric(e, attr)
                for _ in range(2):
                    a, b = rng.sample(have, 2)
                    if val(a) == val(b):
                        continue
                    da, db = self.descs(a, {attr, "month"} if attr == "date" else {attr}), \
                        self.descs(b, {attr, "month"} if attr == "date" else {attr})
                    if not da or not db:
                        continue
                    ka, kb = rng.choice(da), rng.choice(db)
                    D1, D2 = describe(a, ka, rng, self.day), describe(b, kb, rng, self.day)
                    if D1 == D2:
                        continue
                    text = rng.choice(CMP_PAIR).format(D1=D1, D2=D2, adj=rng.choice(CMP_ADJ[attr]))
                    gold = self.gold(a, ka + (attr,)) + self.gold(b, kb + (attr,))
                    self.add("comparison", f"comparison:{attr}", text, gold, ("cmp", frozenset((id(a), id(b))), attr))
                if len(have) == len(evs) and len(evs) >= 2 and attr != "date":
                    vals = [val(e) for e in evs]
                    if len(set(vals)) == len(vals):
                        o = TYPES[etype]["agg"]
                        text = rng.choice(CMP_ALL).format(o=o, sup=rng.choice(CMP_SUP[attr]))
                        gold = [m for e in evs for m in self.gold(e, (attr,))]
                        self.add("comparison", f"comparison:all-{attr}", text, gold, ("cmpall", etype, attr))
        # cross-type comparisons on price and date
        for attr in ("price", "date", "duration"):
            have = [e for e in self.user if attr in e.stmt]
            for _ in range(3):
                if len(have) < 2:
                    break
                a, b = rng.sample(have, 2)
                if a.type == b.type or numeric(a, attr) == numeric(b, attr):
                    continue
                if attr == "duration" and DUR_KIND[a.type] != DUR_KIND[b.type]:
                    continue
                da, db = self.descs(a, {attr, "month"}), self.descs(b, {attr, "month"})
                if not da or not db:
                    continue
                ka, kb = rng.choice(da), rng.choice(db)
                text = rng.choice(CMP_PAIR).format(D1=describe(a, ka, rng, self.day), D2=describe(b, kb, rng, self.day),
                                                   adj=rng.choice(CMP_ADJ[attr]))
                gold = self.gold(a, ka + (attr,)) + self.gold(b, kb + (attr,))
                self.add("comparison", f"comparison:x-{attr}", text, gold, ("cmp", frozenset((id(a), id(b))), attr))
        # ---- aggregation
        cities: dict[str, list[Event]] = {}
        for e in self.user:
            if e.truth["city"] != pg.home:
                cities.setdefault(e.truth["city"], []).append(e)
        for city, evs in cities.items():
            if (len(evs) >= 2 or rng.random() < 0.3) and len(evs) <= 5:
                text = rng.choice(AGG_CITY).format(city=city)
                gold = [m for e in evs for m in self.gold(e, ("city",))]
                self.add("aggregation", "aggregation:city", text, gold, ("aggcity", city))
        for etype, evs in by_type.items():
            if len(evs) >= 2:
                tpls = AGG_TYPE.get(etype, AGG_TYPE["default"])
                text = rng.choice(tpls).format(o=TYPES[etype]["agg"], v=AGG_VERB.get(etype, "参加"))
                keys = ("city",) if etype in ("business", "trip") else ()
                gold = [m for e in evs for m in self.gold(e, keys)]
                self.add("aggregation", "aggregation:type", text, gold, ("aggtype", etype))
            if len(evs) >= 2 and all("price" in e.stmt for e in evs) and TYPES[etype]["cost"]:
                text = rng.choice(AGG_SUM).format(o=TYPES[etype]["agg"], cn=TYPES[etype]["cost"])
                gold = [m for e in evs for m in self.gold(e, ("price",))]
                self.add("aggregation", "aggregation:sum", text, gold, ("aggsum", etype))
            for (t2, attr), tpls in AGG_LIST.items():
                if t2 == etype and len(evs) >= 2 and all(attr == "sub" or attr in e.stmt for e in evs):
                    gold = [m for e in evs for m in self.gold(e, (attr,))]
                    self.add("aggregation", f"aggregation:list-{attr}", rng.choice(tpls), gold, ("agglist", etype, attr))
        comps: dict[tuple, list[Event]] = {}
        for e in self.user:
            c = e.truth.get("companion")
            if isinstance(c, tuple) and c != ALONE:
                comps.setdefault(c, []).append(e)
        for c, evs in comps.items():
            if 2 <= len(evs) <= 4:
                text = rng.choice(AGG_COMP).format(c=rng.choice([c[0], c[1]]))
                gold = [m for e in evs for m in self.gold(e, ("companion",))]
                self.add("aggregation", "aggregation:companion", text, gold, ("aggcomp", c))
        neg = [e for e in self.user if "rating" in e.stmt and e.truth["rating"][0] == "neg"]
        if len(neg) >= 2:
            gold = [m for e in neg for m in self.gold(e, ("rating",))]
            self.add("aggregation", "aggregation:negative", rng.choice(AGG_NEG), gold, ("aggneg",))

    def select(self) -> list[dict]:
        rng = self.rng
        chosen: list[dict] = []
        used_specs = set()
        leftovers = []
        for cat, n in PER_CATEGORY.items():
            if cat == "noisy":
                continue
            pick = diverse(self.cands[cat], n, rng)
            for c in pick:
                used_specs.add(c["spec"])
            chosen += pick
            leftovers += [c for c in self.cands[cat] if c["spec"] not in used_specs]
        # noisy: other questions of the four kinds, rendered with noise
        noisy = diverse(leftovers, PER_CATEGORY["noisy"], rng)
        used_specs |= {c["spec"] for c in noisy}
        short = sum(PER_CATEGORY.values()) - len(chosen) - len(noisy)
        if short > 0:  # a pool with fewer comparisons than planned asks a few more of the others
            chosen += diverse([c for c in leftovers if c["spec"] not in used_specs and c["category"] != "comparison"],
                              short, rng)
        for c in noisy:
            text, kinds = add_noise(c["text"], rng)
            chosen.append({**c, "text": text, "category": "noisy", "kind": "noisy:" + "+".join(kinds),
                           "base": c["category"]})
        return chosen


def tidy(text: str) -> str:
    for a, b in (("去去", "去"), ("在在", "在"), ("？？", "？"), ("的的", "的"), ("。。", "。")):
        text = text.replace(a, b)
    return text


def dedupe(msgs: list[Msg]) -> list[Msg]:
    seen, out = set(), []
    for m in msgs:
        if id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


def numeric(ev: Event, attr: str):
    v = ev.truth[attr]
    if attr in ("duration",):
        return v[1]
    if attr == "distance":
        return v[1]
    if attr == "travel":
        return v[1]
    if attr == "finish":
        return v[1]
    return v  # price, people, sessions, date


def diverse(cands: list[dict], n: int, rng: random.Random) -> list[dict]:
    """n candidates, round-robin over their kinds, without repeating a spec."""
    by_kind: dict[str, list[dict]] = {}
    for c in cands:
        by_kind.setdefault(c["kind"], []).append(c)
    for v in by_kind.values():
        rng.shuffle(v)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    out, seen = [], set()
    while len(out) < n and any(by_kind.values()):
        for k in kinds:
            if by_kind[k] and len(out) < n:
                c = by_kind[k].pop()
                if c["spec"] not in seen:
                    seen.add(c["spec"])
                    out.append(c)
    return out


# --------------------------------------------------------------------------- main

def build_pool(idx: int, rng: random.Random) -> dict:
    pg = PoolGen(idx, rng)
    pg.setup()
    pg.make_events()
    pg.schedule()
    pg.render()
    qg = QueryGen(pg)
    qg.build()
    queries = qg.select()
    qtime = datetime(pg.query_day.year, pg.query_day.month, pg.query_day.day, 10, 0, tzinfo=timezone.utc)
    out_q = []
    for i, q in enumerate(queries):
        out_q.append({"id": f"{pg.name}-q{i + 1:02d}", "text": q["text"], "gold": q["gold"], "category": q["category"],
                      "time": (qtime + timedelta(minutes=i)).isoformat()})
    items = [{"id": m.id, "text": m.text, "time": m.time.isoformat(), "meta": {"thread": m.thread, "speaker": m.speaker}}
             for m in pg.msgs]
    return {"pool": pg.name, "language": "zh", "items": items, "queries": out_q}


def generate() -> list[dict]:
    rng = random.Random(SEED)
    return [build_pool(i, rng) for i in range(N_POOLS)]


def main(argv: list[str]) -> None:
    pools = generate()
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pools)
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8") as fh:
            fh.write(lines)
    else:
        sys.stdout.write(lines)


if __name__ == "__main__":
    main(sys.argv)

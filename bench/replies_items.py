"""What `bench_replies.py` says: conversation openings, trivia and requests from
`chatterbot-corpus` (no one here wrote them), and the bench's own labelled news and
memory script (facts told in varied phrasings, asked back, and facts never told), each
drawn with the run's seed."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

__all__ = [
    "CONVERSATION_FILLERS",
    "REQUESTS",
    "Fact",
    "corpus_openings",
    "corpus_requests",
    "corpus_trivia",
    "news",
    "told_and_untold",
]


def _corpus(language: str) -> dict[str, list[list[str]]]:
    """Category -> its conversations (lists of lines), from the installed corpus."""
    import yaml

    folder = files("chatterbot_corpus").joinpath(
        "data", {"en": "english", "zh": "chinese"}[language]
    )
    out: dict[str, list[list[str]]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yml"):
            data: dict[str, Any] = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
            talks = [[" ".join(str(x).split()) for x in c] for c in data.get("conversations") or []]
            out[entry.name[:-4]] = [t for t in talks if len(t) >= 2 and all(t)]
    return out


def _sayable(line: str) -> bool:
    """A line a person would type to a companion: words, not code or links, not long."""
    if "http" in line or "`" in line or "{" in line or len(line) > 160:
        return False
    return bool(re.search(r"[A-Za-z\u4e00-\u9fff]", line))


def corpus_openings(language: str, count: int, rng: random.Random) -> list[str]:
    """`count` conversation openings, the categories taken round robin in a shuffled
    order (trivia and humor have their own parts of the bench)."""
    corpus = _corpus(language)
    pools = {
        name: [t[0] for t in talks if _sayable(t[0])]
        for name, talks in corpus.items()
        if name not in ("trivia", "humor")
    }
    pools = {name: list(dict.fromkeys(lines)) for name, lines in pools.items() if lines}
    order = sorted(pools)
    rng.shuffle(order)
    chosen: list[str] = []
    while len(chosen) < count and any(pools.values()):
        for name in order:
            if pools[name] and len(chosen) < count:
                chosen.append(pools[name].pop(rng.randrange(len(pools[name]))))
    return chosen


def corpus_trivia(language: str, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(question, answer) pairs from the corpus's trivia."""
    pairs = [(t[0], t[1]) for t in _corpus(language).get("trivia", []) if _sayable(t[0])]
    return rng.sample(pairs, min(count, len(pairs)))


def corpus_requests(language: str, rng: random.Random) -> list[str]:
    """The corpus's humor openings (asking for a joke), one of each wording."""
    return sorted({t[0] for t in _corpus(language).get("humor", []) if _sayable(t[0])})


REQUESTS = {
    "en": [
        "Can you sing me a song?",
        "Tell me a story, please.",
        "Let's play a word game!",
        "Can you tell me a riddle?",
        "Make up a short poem about rain.",
        "Sing something for me!",
        "Tell me a bedtime story about a dragon.",
        "Do you know any fun facts?",
        "Let's play twenty questions. I'm thinking of an animal.",
        "Say something funny to cheer me up.",
    ],
    "zh": [
        "给我唱首歌吧。",
        "给我讲个故事吧。",
        "我们来玩个游戏吧！",
        "你能给我出个谜语吗？",
        "写一首关于下雨的小诗。",
        "唱点什么给我听！",
        "讲一个关于小龙的睡前故事。",
        "说点有趣的事情让我开心一下。",
    ],
}

CONVERSATION_FILLERS = {
    "en": [
        "The weather has been strange this week.",
        "I watched a documentary about octopuses.",
        "What do you think makes a good weekend?",
        "I'm trying to drink more water lately.",
        "Do you have any tips for staying focused?",
    ],
    "zh": [
        "这个星期天气很奇怪。",
        "我看了一部关于章鱼的纪录片。",
        "你觉得怎样的周末最好？",
        "我最近在努力多喝水。",
    ],
}

_GOOD = {
    "en": [
        "I was so nervous, but I finally got the job!",
        "I passed my driving test today!",
        "My sister just had a baby girl!",
        "I finally lost ten pounds!",
        "We won the match last night, three to one!",
        "My paper got accepted at the conference.",
        "I got a raise at work today.",
        "My best friend is coming to visit next week!",
        "After months of searching, we found the perfect apartment.",
        "The doctor said my scan is completely clear.",
        "I finished my first marathon!",
        "My daughter took her first steps this morning.",
        "I got into the university I wanted!",
        "Guess what, I won a small prize in the lottery.",
        "My garden finally has tomatoes!",
        "I fixed the bike all by myself.",
        "The surgery went well and Dad is already home.",
        "I finally finished writing my novel.",
        "Our team shipped the project on time.",
        "My grandma turned ninety today and she's doing great.",
    ],
    "zh": [
        "我终于找到工作了！",
        "我今天通过了驾照考试！",
        "我姐姐刚生了一个女儿！",
        "我减了五公斤！",
        "我们昨天比赛赢了！",
        "我今天涨工资了。",
        "我最好的朋友下周要来看我！",
        "医生说我的检查结果一切正常。",
        "我跑完了人生第一个马拉松！",
        "我考上了我想去的大学！",
        "我的论文被接收了。",
        "手术很成功，爸爸已经回家了。",
    ],
}
_BAD = {
    "en": [
        "My grandmother passed away last week.",
        "I lost my job today.",
        "I failed my exam again.",
        "My dog is really sick.",
        "Someone stole my bike this morning.",
        "My girlfriend broke up with me.",
        "I didn't get the apartment we wanted.",
        "I broke my arm playing football.",
        "My flight got cancelled and I'm stuck here.",
        "I had a terrible fight with my brother.",
        "The doctor found something on my scan.",
        "My cat ran away two days ago.",
        "I'm so stressed, I can't sleep at night.",
        "I finally got the job, but they cancelled the offer.",
        "Our house got flooded.",
        "I feel really lonely these days.",
        "My best friend is moving to another country.",
        "I crashed my car this morning.",
        "Nobody came to my birthday party.",
        "I worked for months on that project and it was cancelled.",
    ],
    "zh": [
        "我奶奶上个星期去世了。",
        "我今天失业了。",
        "我考试又没及格。",
        "我的狗病得很重。",
        "今天早上我的自行车被偷了。",
        "我女朋友跟我分手了。",
        "我踢足球把胳膊摔断了。",
        "我的航班被取消了。",
        "我最近压力很大，晚上睡不着。",
        "我的猫两天前跑丢了。",
        "我最近觉得很孤独。",
        "我今天早上撞车了。",
    ],
}


def news(language: str, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """("good" or "bad", words): half of each, in a seeded order."""
    half = count // 2
    good = [("good", w) for w in rng.sample(_GOOD[language], min(half, len(_GOOD[language])))]
    bad = [("bad", w) for w in rng.sample(_BAD[language], min(count - half, len(_BAD[language])))]
    items = good + bad
    rng.shuffle(items)
    return items


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str
    telling: str
    question: str
    value: str


_EN_NAMES = [
    "Priya",
    "Marek",
    "Aiko",
    "Tomas",
    "Fatima",
    "Lars",
    "Chioma",
    "Mateo",
    "Ingrid",
    "Dev",
]
_EN_JOBS = [
    "nurse",
    "pharmacist",
    "carpenter",
    "librarian",
    "pilot",
    "baker",
    "chemist",
    "firefighter",
]
_EN_PETS = [
    ("cat", "Miso"),
    ("dog", "Biscuit"),
    ("parrot", "Kiwi"),
    ("rabbit", "Clover"),
    ("cat", "Nori"),
]
_EN_CITIES = ["Lisbon", "Nairobi", "Osaka", "Glasgow", "Montreal", "Krakow", "Valparaiso"]
_EN_FOODS = ["dumplings", "lasagne", "pho", "paella", "falafel", "ramen"]
_EN_INSTRUMENTS = ["cello", "banjo", "trumpet", "violin", "accordion"]
_EN_SIBLINGS = ["Oskar", "Leila", "Bruno", "Hana", "Ravi"]


def _en_facts(rng: random.Random) -> list[Fact]:
    name, job, (animal, pet) = rng.choice(_EN_NAMES), rng.choice(_EN_JOBS), rng.choice(_EN_PETS)
    city, food = rng.choice(_EN_CITIES), rng.choice(_EN_FOODS)
    instrument, brother = rng.choice(_EN_INSTRUMENTS), rng.choice(_EN_SIBLINGS)
    a = "an" if job[0] in "aeiou" else "a"
    pick = rng.choice
    return [
        Fact(
            "name",
            pick([f"My name is {name}.", f"Hi, I'm {name}.", f"Everyone calls me {name}."]),
            pick(["What's my name?", "Do you remember what I'm called?", "Who am I?"]),
            name,
        ),
        Fact(
            "job",
            pick(
                [
                    f"I work as {a} {job}.",
                    f"I've been {a} {job} for six years.",
                    f"My job? I'm {a} {job}.",
                ]
            ),
            pick(["What do I do for a living?", "What's my job?", "Where do I work, and as what?"]),
            job,
        ),
        Fact(
            "pet",
            pick(
                [
                    f"I have a {animal} called {pet}.",
                    f"My {animal}'s name is {pet}.",
                    f"{pet} is my {animal}, she's adorable.",
                ]
            ),
            pick([f"What's my {animal} called?", f"Do you remember my {animal}'s name?"]),
            pet,
        ),
        Fact(
            "city",
            pick(
                [
                    f"I live in {city}.",
                    f"I moved to {city} last year.",
                    f"Home for me is {city} these days.",
                ]
            ),
            pick(["Where do I live?", "Which city do I live in?"]),
            city,
        ),
        Fact(
            "food",
            pick(
                [
                    f"My favourite food is {food}.",
                    f"I could eat {food} every day.",
                    f"Nothing beats {food} for me.",
                ]
            ),
            pick(["What's my favourite food?", "What food do I love?"]),
            food,
        ),
        Fact(
            "instrument",
            pick(
                [f"I play the {instrument} on weekends.", f"I've been learning the {instrument}."]
            ),
            pick(["Which instrument do I play?", "What instrument am I learning?"]),
            instrument,
        ),
        Fact(
            "brother",
            pick(
                [
                    f"My brother {brother} is visiting next week.",
                    f"I have a brother called {brother}.",
                ]
            ),
            pick(["What's my brother's name?", "Who is visiting me, do you remember?"]),
            brother,
        ),
    ]


_EN_UNTOLD = [
    "What's my sister's name?",
    "When is my birthday?",
    "What's my favourite colour?",
    "What car do I drive?",
    "What's my mother's name?",
    "How old am I?",
    "What did I study at university?",
    "What's my daughter's name?",
]

_ZH_NAMES = ["李娜", "王伟", "张敏", "刘洋", "陈静", "杨帆"]
_ZH_JOBS = ["护士", "药剂师", "木匠", "图书管理员", "飞行员", "面包师"]
_ZH_PETS = [("猫", "米粒"), ("狗", "豆豆"), ("鹦鹉", "小绿"), ("兔子", "雪球")]
_ZH_CITIES = ["成都", "青岛", "昆明", "西安", "厦门", "哈尔滨"]
_ZH_FOODS = ["饺子", "火锅", "小笼包", "麻婆豆腐", "牛肉面"]


def _zh_facts(rng: random.Random) -> list[Fact]:
    name, job, (animal, pet) = rng.choice(_ZH_NAMES), rng.choice(_ZH_JOBS), rng.choice(_ZH_PETS)
    city, food = rng.choice(_ZH_CITIES), rng.choice(_ZH_FOODS)
    pick = rng.choice
    return [
        Fact(
            "name",
            pick([f"我叫{name}。", f"你好，我是{name}。", f"大家都叫我{name}。"]),
            pick(["我叫什么名字？", "你还记得我的名字吗？"]),
            name,
        ),
        Fact(
            "job",
            pick([f"我是一名{job}。", f"我做{job}已经六年了。"]),
            pick(["我是做什么工作的？", "我的职业是什么？"]),
            job,
        ),
        Fact(
            "pet",
            pick([f"我有一只{animal}，叫{pet}。", f"我的{animal}叫{pet}。"]),
            pick([f"我的{animal}叫什么？", f"你还记得我的{animal}叫什么吗？"]),
            pet,
        ),
        Fact(
            "city",
            pick([f"我住在{city}。", f"我去年搬到了{city}。"]),
            pick(["我住在哪里？", "我住在哪个城市？"]),
            city,
        ),
        Fact(
            "food",
            pick([f"我最喜欢吃{food}。", f"{food}是我最爱吃的。"]),
            pick(["我最喜欢吃什么？", "我最爱吃的是什么？"]),
            food,
        ),
    ]


_ZH_UNTOLD = [
    "我姐姐叫什么名字？",
    "我的生日是哪天？",
    "我最喜欢什么颜色？",
    "我开什么车？",
    "我妈妈叫什么？",
    "我几岁了？",
]


def told_and_untold(language: str, rng: random.Random) -> tuple[list[Fact], list[str]]:
    """Five facts to tell and three questions of facts never told."""
    facts = _en_facts(rng) if language == "en" else _zh_facts(rng)
    untold = _EN_UNTOLD if language == "en" else _ZH_UNTOLD
    return rng.sample(facts, 5), rng.sample(untold, 3)

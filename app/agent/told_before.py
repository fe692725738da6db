"""What the user told earlier in the conversation, said back when they ask for it.

Asked "Do you remember my name?" eight turns after "Hi, my name is Tomas", a 1.5B
model answers "Yes, I remember your name." without the name: the words are in its
context, but far back. So when the words ask for something the user told
(`asks_recall`: "do you remember my name", "what's my cat called", "where do I work",
"what was my kitten's name again", "我叫什么名字"), the app finds it in their earlier
messages (`told_facts`: a name, a pet or person called something, where they work or
live, "my X is Y") and the note after the words (`app.agent.clock`) gives the sentence
that says it back ("Your name is Tomas."). The facts that match the question's words
come first; a misheard question ("what was my kid today again") gets them all, but
the user's own name only when it does not speak of something of theirs. When
nothing was told in this conversation, the note says to use what the long-term memory
holds or to say it is not known: never "yes, I remember" alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Fact", "asks_recall", "recall_answer", "recall_line", "telling_line", "telling_start",
    "told_facts", "unknown_start",
]

_ASKS = re.compile(
    r"\b(?:do|did|can|could) you (?:still |even )?(?:remember|recall|know)\b"
    r"|\byou (?:still |even )?remember\b|\bremember (?:what|where|who|when) i\b|\bremind me\b"
    r"|\bwhat (?:is|was|were|are) my\b|\bwhats my\b|\bwho (?:is|was) my\b"
    r"|\bwhat did i (?:say|tell|call|name)\b|\bwhat (?:is|was)? ?my \w+(?:s)? (?:name|called)\b"
    r"|\bwhere do i (?:work|live|come from|study)\b|\bwhat do i do\b|\bwho am i\b"
    r"|\bhow old am i\b|\bwhat(?:s| is) my name\b"
    r"|还记得|记得我|我叫什么|我的.{1,6}叫什么|我在哪.{0,3}(?:工作|住|上班)"
)
_NAME_WORD = r"[A-Z][\w'-]*|[\u4e00-\u9fff]{1,4}"
_NOT_IS = r"(?!is\b|was\b)"
_PLACE = r"[^.,;!?，。！？]{2,40}"
_JOB = ("work", "job", "working", "office", "company")
# What they love: up to six whole words that end at a mark or a word that starts a
# clause of its own ("rainy days because I can read": "rainy days"; 40 characters cut
# "afternoon"); longer, or about "you" ("I like talking to you"), it is not said back.
_LIKED_STOPS = r"(?:because|cause|and|but|so|when|since|if|as|while|though)\b"
_LIKED = (
    rf"(?:(?!{_LIKED_STOPS}|you\b|your\b|yours\b)[a-z'-]+(?: |(?=[^a-z' -])|$)){{1,6}}"
    rf"(?=\s*(?:[.!?,;:]|$|{_LIKED_STOPS}))"
)
# (pattern, the answer's template, the words a question names it by)
_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    (rf"\bmy name is ({_NAME_WORD})|\bcall me ({_NAME_WORD})|\bi'?m called ({_NAME_WORD})",
     "Your name is {0}.", ("name", "who", "called", "call")),
    (rf"\b(?:a|an|my|our) ((?:{_NOT_IS}[a-z]+ ){{0,2}}{_NOT_IS}[a-z]+)(?: is| was)? "
     rf"(?:called|named) ({_NAME_WORD})",
     "Your {0} is called {1}.", ("name", "called", "named")),
    (rf"\bmy ([a-z]+)(?:'s| is) name is ({_NAME_WORD})",
     "Your {0} is called {1}.", ("name", "called", "named")),
    (rf"\bi work (at|for|in|as) ({_PLACE})",
     "You work {0} {1}.", _JOB),
    (rf"\bi(?: a|')?m (an? [a-z]+(?: [a-z]+)? (?:at|in|for) {_PLACE})", "You're {0}.", _JOB),
    (rf"\bmy (?:job|work) is ({_PLACE})", "Your job is {0}.", _JOB),
    (rf"\bi live in ({_PLACE})", "You live in {0}.", ("live", "home", "city")),
    (rf"\bi(?: a|')?m from ({_PLACE})|\bi come from ({_PLACE})",
     "You're from {0}.", ("from", "come", "country")),
    (r"\bi(?: a|')?m (\d{1,3}) years? old\b", "You're {0} years old.", ("old", "age")),
    # what they love ("I love rainy days, because I can read all afternoon": the 1.5B
    # model said it back as its own, "I love rainy days because they're perfect for
    # reading"); not a person or a thing only pointed at ("I love you", "I like it")
    (r"(?:^|(?<=[.!?,;:] )|(?<=\band )|(?<=\bbut )|(?<=\bso )|(?<=\bhi )|(?<=\bwell ))"
     r"i (?:really |just |absolutely |so )?(love|like|enjoy|adore) "
     rf"(?!it\b|that\b|this\b|them\b|him\b|her\b|me\b)({_LIKED})",
     "You {0} {1}.", ("like", "love", "enjoy", "favourite", "favorite", "liking")),
    (r"我叫([\u4e00-\u9fff]{1,4}?)(?:[，。！,.!\s]|$)", "你叫{0}。", ("名字", "叫")),
    (r"我的([\u4e00-\u9fff]{1,3})叫([\u4e00-\u9fff]{1,4}?)(?:[，。！,.!\s]|$)",
     "你的{0}叫{1}。", ("名字", "叫")),
    (r"我在([\u4e00-\u9fff]{2,10}?)(?:工作|上班)", "你在{0}工作。", ("工作", "上班")),
]
_PATTERNS = [(re.compile(p, re.IGNORECASE), t, a) for p, t, a in _FACTS]
# Words for one kind of pet ("my cat" asks for the kitten told); "pet" asks for any.
_PET_KINDS = (
    frozenset({"cat", "cats", "kitten", "kitty", "kittens"}),
    frozenset({"dog", "dogs", "puppy", "pup", "doggy"}),
    frozenset({"bird", "birds", "parrot", "budgie"}),
    frozenset({"rabbit", "bunny"}),
    frozenset({"hamster"}),
    frozenset({"fish", "goldfish"}),
)
_PETS = frozenset().union(*_PET_KINDS)


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing the user told: the sentence that says it back, what it is about as
    they named it (`nouns`: "kitten"), and the words a question about it would use
    (`about`: "cat", "pet", "name" ...)."""

    answer: str
    nouns: frozenset[str]
    about: frozenset[str]

    @property
    def own_name(self) -> bool:
        return self.answer.startswith(("Your name", "你叫"))


def _your(text: str) -> str:
    """`text` said back to the one who said it: "my" -> "your"."""
    swaps = {"my": "your", "our": "your", "me": "you", "i": "you", "am": "are"}
    return re.sub(
        r"\b(my|our|me|i|am)\b", lambda m: swaps[m[1].lower()], text.strip(), flags=re.I
    )


def asks_recall(text: str) -> bool:
    """Whether `text` asks for something the user told before."""
    low = re.sub(r"\s+", " ", text.lower().replace("’", "'").replace("what's", "what is"))
    return bool(_ASKS.search(low.replace("'", "")))


def told_facts(said: Iterable[str]) -> list[Fact]:
    """The facts in the user's messages `said` (oldest first), the latest of each kind
    (a name said twice: the second)."""
    found: dict[str, Fact] = {}
    for message in said:
        text = message.replace("’", "'")
        for pattern, template, about in _PATTERNS:
            for match in pattern.finditer(text):
                if _asked(text, match.start(), match.end()):
                    continue  # "Why do I love rainy days?" tells nothing
                parts = [_your(g) for g in match.groups() if g]
                if "called" in template or "name is" in template:  # a name: capitalised
                    parts[-1] = parts[-1][:1].upper() + parts[-1][1:]
                answer = template.format(*parts)
                # what it is about as they named it: "kitten" in "Your {0} is called {1}."
                named = template.startswith(("Your {0}", "你的{0}"))
                nouns = {w for w in parts[0].lower().split()} if named else set()
                words = set(about) | nouns
                for kind in _PET_KINDS:
                    if words & kind:
                        words |= kind | {"pet", "pets"}
                key = template + (parts[0] if named else "")
                found.pop(key, None)
                found[key] = Fact(answer, frozenset(nouns), frozenset(words))
    return list(found.values())


_CLAUSE_MARKS = r"[.!?;。！？；,，]"
_ASKING_LEAD = re.compile(
    r"\s*(?:why|do|did|does|is|are|was|were|can|could|would|will|should|have|has|what|"
    r"how|who|where|when|remember)\b",
    re.IGNORECASE,
)


def _asked(text: str, start: int, end: int) -> bool:
    """Whether the clause of `text` that holds `start`..`end` is a question: it closes
    with a question mark ("Did I tell you my name is Tomas?") or opens as one ("Why do I
    love rainy days"). "My name is Tomas, what's yours?" tells the name."""
    closing = re.search(_CLAUSE_MARKS, text[end:])
    if closing is not None and closing[0] in "?？":
        return True
    head = re.split(_CLAUSE_MARKS, text[:start])[-1]
    return bool(_ASKING_LEAD.match(head))


_NAMING = frozenset({"name", "called", "named", "call", "名字", "叫"})
_LIKING = frozenset({"liking"})  # what a fact of what they love is about (and no other)
# The user's own name, however it is asked: "my name", "my first name", "my full name".
_OWN_NAME = r"(?:(?:first|full|last|real|middle|given|family|nick)\s*)?name"


# "my" and a word that is not their own name: the question is about something of theirs.
_MY_THING = re.compile(rf"\bmy (?!{_OWN_NAME}\b)[a-z]+")


def _matching(question: str, facts: list[Fact]) -> list[Fact]:
    """The facts `question` asks about: those it names as they were told ("my kitten"),
    with those of another kind it names ("... and what is my job": both), else those of
    its kind ("my cat" for a kitten); else the user's own name when it asks their name;
    none when it asks for a kind of thing (a dog, where they live) nothing told is; else
    all (a misheard question: "what was my kid today again"), but never their own name
    when it speaks of something of theirs ("my kid")."""
    words = _words(question, facts)
    named = [fact for fact in facts if fact.nouns & words]
    covered = set().union(*(fact.about for fact in named)) | _NAMING
    chosen = named + [
        fact for fact in facts if fact not in named and fact.about & (words - covered)
    ]
    if chosen:
        return chosen
    low = question.lower()
    own = re.search(rf"\bmy {_OWN_NAME}\b|\bwho am i\b|\bwhat do you call me\b|我叫", low)
    if own:
        return [fact for fact in facts if fact.own_name]
    if words & _KINDS:  # it asks for a kind of thing nothing told is: none of them
        return []
    # Something of theirs ("my X's name", or misheard: "what was my kid his name again",
    # "my kid in the game again", the kitten's): never their own name (with only their
    # own name told, "Your name is Tomas." answered "what was my kid in the name again",
    # and "Of course! Your name is Tomas." "What was my kid in the game again?").
    # What they love is said back only when asked by name ("what do I love"): never
    # for a misheard question ("what was my kid and name again": "You like rainy days.")
    told = [fact for fact in facts if not fact.about & _LIKING]
    if _MY_THING.search(low):
        return [fact for fact in told if not fact.own_name]
    if words & _NAMING:
        return [fact for fact in told if fact.own_name] or told
    return told


# A Chinese question about what was told in English: "我的猫叫什么名字？" asks for the cat.
_ZH_WORDS = {
    "猫": "cat", "狗": "dog", "鸟": "bird", "兔": "rabbit", "仓鼠": "hamster", "鱼": "fish",
    "名字": "name", "工作": "work", "上班": "work", "住": "live",
}  # fmt: skip


def _words(question: str, facts: list[Fact]) -> set[str]:
    low = question.lower().replace("’", "'").replace("'s", " ")
    words = set(re.findall(r"[a-z]+", low))
    words |= {english for zh, english in _ZH_WORDS.items() if zh in question}
    return words | {w for f in facts for w in f.about if not w.isascii() and w in question}


# What a question can ask about, of every kind of fact (a kind asked that no fact told
# answers is left to what the model knows: "... and what is my job").
_KINDS = frozenset({*_JOB, "live", "home", "city", "country", "age", "old"}) | _PETS


def recall_answer(question: str, said: Iterable[str], *, chinese: bool = False) -> str:
    """The sentence that says back what `question` asks of the user's earlier messages
    `said` (oldest first), with its face: "[joy] Of course! Your name is Tomas." ("" when
    nothing told answers it)."""
    facts = _matching(question, told_facts(said))[-3:]
    if not facts:
        return ""
    if chinese:
        return "[joy] " + "".join(_in_chinese(fact.answer) for fact in facts)
    return "[joy] Of course! " + " ".join(fact.answer for fact in facts)


def recall_line(question: str, said: Iterable[str], *, chinese: bool = False) -> str:
    """The note's line for `question`, which asks what the user told in their earlier
    messages `said` (oldest first): the sentence to say it back with."""
    said = list(said)
    answer = recall_answer(question, said, chinese=chinese)
    if answer:
        if chinese:
            return f"（我在问我告诉过你的事。你只用中文回答，就说这一句：“{answer}”）"
        told = told_facts(said)
        facts = _matching(question, told)[-3:]
        unanswered = _words(question, told) & _KINDS - set().union(*(f.about for f in facts))
        line = f'(I am asking what I told you before. Answer me with: "{answer}"'
        if unanswered:
            line += " Then say what else I asked if you know it; if you don't, say so"
        return line + ")"
    if chinese:
        return "（我在问我告诉过你的事：你知道就直接说出来；不知道就说不知道，再问我。）"
    return (
        "(I am asking what I told you before: if you know it, say it in words; "
        "if you don't, say so and ask me.)"
    )


# "What was my kitten's name again?", misheard "What was my kid and name again?": the
# name of something of theirs; "我的猫叫什么名字？".
_THEIR_THING_NAME = re.compile(rf"\bmy (?!{_OWN_NAME}\b)([a-z]+)\b.*\b(?:name|called)\b")
_THEIR_THING_NAME_ZH = re.compile(r"我的(?!名字)([\u4e00-\u9fff]{1,3}?)(?:叫什么|的名字|叫啥)")
_NOT_TOLD = "[neutral] Hmm, I don't think you've told me {its} name yet. What is it?"
_NOT_CAUGHT = "[neutral] Sorry, I didn't quite catch {its} name when you told me. What is it?"
_NOT_TOLD_ZH = "[neutral] 嗯，你好像还没告诉过我{its}的名字呢。{its}叫什么？"
_NOT_CAUGHT_ZH = "[neutral] 抱歉，你说{its}名字的时候我没听清。{its}叫什么？"
# People are "their", not "its" ("What was my mom's name?").
_PEOPLE = frozenset(
    ["mom", "mum", "mother", "dad", "father", "wife", "husband", "son", "daughter", "kid",
     "kids", "child", "children", "brother", "sister", "friend", "boss", "teacher",
     "partner", "girlfriend", "boyfriend", "grandma", "grandpa", "grandmother",
     "grandfather", "baby", "aunt", "uncle", "cousin", "colleague", "neighbour",
     "neighbor", "roommate"]
)  # fmt: skip
_PEOPLE_ZH = ("妈", "爸", "母亲", "父亲", "老婆", "老公", "妻子", "丈夫", "儿子", "女儿",
              "孩子", "哥", "姐", "弟", "妹", "朋友", "老板", "老师", "同事", "邻居",
              "奶奶", "爷爷")  # fmt: skip
# Their own name: "Do you remember my name?" with none told was answered "Yes, I remember
# your name. My name is Mika." (the greeting was cut in two, its name never heard).
_OWN_ASKED = re.compile(
    rf"\bmy {_OWN_NAME}\b|\bwho am i\b(?!\s+\w)|\bwhat do you call me\b|我叫什么|我的名字"
)
# A name spoken of, or given in the words of the question itself ("Do you know my name?
# I'm Tomas."): the model is left to answer.
_NAMING_WORDS = re.compile(r"\bname\b|\bcall(?:ed)? me\b|我叫|名字", re.I)
_GIVES_A_NAME = re.compile(
    r"\b(?:[Ii]'?m|[Ii] am|[Ii]t'?s|[Tt]his is)\s+[A-Z]|我叫|我是"
)
_OWN_NOT_TOLD = "[neutral] Hmm, I don't think you've told me your name yet. What is it?"
_OWN_NOT_CAUGHT = "[neutral] Sorry, I didn't quite catch your name. What is it?"
_OWN_NOT_TOLD_ZH = "[neutral] 嗯，你好像还没告诉过我你的名字呢。你叫什么？"
_OWN_NOT_CAUGHT_ZH = "[neutral] 抱歉，我没听清你的名字。你叫什么？"


def unknown_start(
    question: str, told: Sequence[str], memory: str = "", *, chinese: bool = False
) -> str:
    """How the answer begins when `question` asks the user's name or the name of
    something of theirs and nothing they said answers it: not in the conversation
    (`told`, their messages, oldest first), not in the long-term memory's note
    `memory`. A 1.5B model asked "What was my kid and name again?" (the kitten's,
    misheard) with only the user's own name told answered "I think your kid is named
    Tomas."; asked "Do you remember my name?" with none told, "My name is Mika." So the
    app says it: "I don't think you've told me its name yet", or, when the conversation
    speaks of the thing (or of a name) but no name was read from it (the greeting's
    "kitten called Pepper" heard as "the kid and called her"), "I didn't quite catch
    its name". "" when something answers it, or when the memory's note speaks of the
    thing in words no fact was read from ("My cat is Nori": the model may know)."""
    if memory:  # its lines of memories only (its header speaks of "I" and "you")
        memory = "\n".join(line for line in memory.splitlines() if line.lstrip().startswith("- "))
    said = [memory, *told] if memory else list(told)
    if not asks_recall(question) or recall_answer(question, said, chinese=chinese):
        return ""
    low = question.lower().replace("’", "'")
    if own := _OWN_ASKED.search(low):
        # a name given in words no fact is read from ("I'm Tomas"): the model may know
        if any(_GIVES_A_NAME.search(text) for text in [*said, question[own.end() :]]):
            return ""
        mentions = [bool(_NAMING_WORDS.search(text)) for text in said]
        whose = "your"
    elif english := _THEIR_THING_NAME.search(low):
        thing = english[1]
        kinds = next((kind for kind in _PET_KINDS if thing in kind), frozenset({thing}))
        mentions = [bool(kinds & set(re.findall(r"[a-z]+", text.lower()))) for text in said]
        whose = "their" if thing in _PEOPLE else "its"
    elif han := _THEIR_THING_NAME_ZH.search(question):
        mentions = [han[1] in text for text in said]
        whose = "their" if any(word in han[1] for word in _PEOPLE_ZH) else "its"
    else:
        return ""
    if memory and mentions[0]:
        return ""
    caught = any(mentions[1:] if memory else mentions)
    if whose == "your":
        if chinese:
            return _OWN_NOT_CAUGHT_ZH if caught else _OWN_NOT_TOLD_ZH
        return _OWN_NOT_CAUGHT if caught else _OWN_NOT_TOLD
    if chinese:
        said_back = _NOT_CAUGHT_ZH if caught else _NOT_TOLD_ZH
        return said_back.format(its="他们" if whose == "their" else "它")
    return (_NOT_CAUGHT if caught else _NOT_TOLD).format(its=whose)


_PETS_ZH = {"cat": "猫", "kitten": "小猫", "kitty": "小猫", "dog": "狗", "puppy": "小狗",
            "bird": "鸟", "rabbit": "兔子", "hamster": "仓鼠", "fish": "鱼"}  # fmt: skip


def _in_chinese(answer: str) -> str:
    """A fact told in English said back in Chinese where it can be ("Your name is
    Tomas." -> "你叫Tomas。"; "Your kitten is called Pepper." -> "你的小猫叫Pepper。");
    other English sentences stay as they are."""
    if name := re.fullmatch(r"Your name is (.+)\.", answer):
        return f"你叫{name[1]}。"
    pet = re.fullmatch(r"Your (\w+) is called (.+)\.", answer)
    if pet and pet[1].lower() in _PETS_ZH:
        return f"你的{_PETS_ZH[pet[1].lower()]}叫{pet[2]}。"
    return answer


def telling_start(text: str, *, chinese: bool = False) -> str:
    """How the answer to `text` begins when it tells something about the user, with its
    face: "[joy] Hi Tomas, nice to meet you!", "[joy] Oh, you work at a bakery!" (""
    when it tells nothing)."""
    facts = told_facts([text])
    if not facts:
        return ""
    names = [fact.answer for fact in facts if fact.own_name]
    if names:  # a greeting: "Hi, my name is Tomas and I just adopted a kitten ..."
        name = names[-1].removeprefix("Your name is ").removeprefix("你叫").rstrip(".。")
        if chinese:
            return f"[joy] 你好，{name}，很高兴认识你！"
        return f"[joy] Hi {name}, nice to meet you!"
    said = facts[-1].answer
    if chinese:
        return f"[joy] 哦，{said.rstrip('。')}！"
    # Told that it is "you" (with an example, or not), the model said "I work at a bakery
    # in the old town." back; given the start of its answer, it goes on from there.
    said = said[:1].lower() + said[1:].rstrip(".")
    return f"[joy] Oh, {said}!"


def telling_line(text: str, *, chinese: bool = False) -> str:
    """The note's line when `text` tells something about the user ("I work at a
    bakery"): a 1.5B model answered it with the user's own words, "I work at a bakery
    in the old town." ("" when it tells nothing)."""
    start = telling_start(text, chinese=chinese)
    if not start:
        return ""
    if chinese:
        return f"（我在告诉你我的事。回答以这句开头：“{start}”）"
    return f'(I am telling you about me. Begin your answer with: "{start}")'

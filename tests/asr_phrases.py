"""Speech for judging recognition by language and by names: English sentences holding
names the companion would know (in six espeak-ng voices), Chinese phrases spoken by
espeak-ng's tone-numbered pinyin voice, and the character error rate.

Shared by tests/test_speech_languages.py and bench/bench_asr.py.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from tests.test_speech_wer import edit_distance, synthesize, words

# Six espeak-ng English voices (accents and a female variant).
NAME_VOICES = ("en-us", "en-gb", "en+f3", "en-gb-scotland", "en-gb-x-rp", "en-029")
# (sentence, the names in it): what a user says of the people and pets in their life.
NAME_SENTENCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("I just adopted a kitten called Pepper.", ("Pepper",)),
    ("My friend Siobhan is coming over on Friday.", ("Siobhan",)),
    ("Tell Mirabel that dinner is ready.", ("Mirabel",)),
    ("My dog Biscuit loves the park.", ("Biscuit",)),
    ("Xiaoming sent me a message this morning.", ("Xiaoming",)),
    ("Can you remind me to call Anouk tomorrow?", ("Anouk",)),
    ("My sister Saoirse lives in Dublin.", ("Saoirse",)),
    ("Good morning Mika, did you sleep well?", ("Mika",)),
    ("Our hamster Noodle escaped again.", ("Noodle",)),
    ("I had lunch with Priyanka and Tomasz.", ("Priyanka", "Tomasz")),
    ("Ask Kazuki if the train is late.", ("Kazuki",)),
    ("What did Pepper and Biscuit eat today?", ("Pepper", "Biscuit")),
)
# What the companion would know: the user's name, the character's, and the names in its
# long-term memory; every sentence is heard with all of them passed (not only its own).
KNOWN_NAMES: tuple[str, ...] = (
    "Mika",
    "Thomas",
    *dict.fromkeys(name for _, names in NAME_SENTENCES for name in names),
)

# The questions of the spoken conversation bench (bench/bench_conversation.py's SCRIPT,
# copied: that bench drives the window app), with the voice each is said in there. The
# voices are those six; `CONVERSATION_VOICES` says each question in every one of them.
CONVERSATION_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("Hi! My name is Tomas and I just adopted a kitten called Pepper.", "en-us"),
    ("What is twelve plus seven?", "en-gb"),
    ("Can you tell me what time it is right now?", "en-us+f3"),
    ("I'm a bit nervous about my job interview tomorrow.", "en-us+m3"),
    ("Do you have any advice to help me calm down?", "en-gb-x-rp"),
    ("What is eight times six?", "en-us+f2"),
    ("What day of the week is it today?", "en-gb"),
    ("I love rainy days, because I can read all afternoon.", "en-us+f3"),
    ("Do you remember my name?", "en-us"),
    ("What was my kitten's name again?", "en-us+m3"),
    ("How much is one hundred minus thirty five?", "en-gb-x-rp"),
    ("Thank you, that's all for now. Goodbye!", "en-us+f2"),
)
CONVERSATION_VOICES = tuple(dict.fromkeys(voice for _, voice in CONVERSATION_QUESTIONS))
# The speed bench_conversation's espeak-ng speaks at (words per minute).
CONVERSATION_SPEED = 150

# Everyday Chinese a user says to a companion (no digits: their spoken form is a choice).
CHINESE_PHRASES = (
    "你好，很高兴认识你。",
    "今天天气很好，我们出去走走吧。",
    "我喜欢听音乐，也喜欢看书。",
    "你吃饭了吗？",
    "我的猫叫小白。",
    "谢谢你的帮助。",
    "请帮我打开日历。",
    "明天早上叫我起床。",
    "我想听一首安静的音乐。",
    "你最喜欢什么颜色？",
    "晚安，祝你做个好梦。",
    "我正在学习中文。",
    "周末你有什么打算吗？",
    "别担心，一切都会好起来的。",
    "我们下次再聊吧。",
    "北京是中国的首都。",
    "请把窗户关上，外面有点冷。",
    "你能告诉我现在几点了吗？",
    "我今天有点累。",
    "帮我记住我妈妈的生日。",
    "这本书非常有意思。",
    "我们一起去公园散步吧。",
)

_NOT_COUNTED = re.compile(r"[\W_]+")


def to_pinyin(text: str) -> str:
    """Tone-numbered pinyin of Chinese text for espeak-ng's cmn-latn-pinyin voice
    ("你好" → "ni3 hao3"; the neutral tone as 5), punctuation kept as pauses."""
    from pypinyin import Style, lazy_pinyin

    syllables = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True)
    spoken = " ".join(s for s in syllables if s.strip())
    return re.sub(
        r"\s*([，。？！、,.?!])\s*",
        lambda m: {"，": ", ", "、": ", "}.get(m.group(1), ". "),
        spoken,
    ).strip()


def speak_chinese(text: str, folder: Path, *, speed: int = 120) -> bytes:
    """16 kHz s16le PCM of `text` said by espeak-ng's tone-numbered pinyin voice."""
    return synthesize(to_pinyin(text), folder, voice="cmn-latn-pinyin", speed=speed)


def characters(text: str) -> str:
    """The characters that count: no punctuation or spaces, full-width folded."""
    return _NOT_COUNTED.sub("", unicodedata.normalize("NFKC", text)).lower()


def cer(reference: str, heard: str) -> float:
    """Character error rate: edits from the reference to what was heard / its length."""
    ref, hyp = characters(reference), characters(heard)
    if not ref:
        return float(bool(hyp))
    return edit_distance(ref, hyp) / len(ref)


def names_heard(names: tuple[str, ...], heard: str) -> int:
    """How many of `names` are in `heard` as written (whole words, any case)."""
    return sum(
        bool(re.search(rf"\b{re.escape(name)}\b", heard, flags=re.IGNORECASE)) for name in names
    )


_ONES = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"),
    *("seventeen", "eighteen", "nineteen"),
)
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_words(n: int) -> str:
    """0-999 in words ("35" → "thirty five"); larger numbers stay digits."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = "" if n % 100 == 0 else " " + number_words(n % 100)
        return f"{_ONES[n // 100]} hundred{rest}"
    return str(n)


def spoken_numbers(text: str) -> str:
    """Digits written as words: "100 minus 35" → "one hundred minus thirty five"."""
    return re.sub(r"\d+", lambda m: f" {number_words(int(m.group()))} ", text)


def question_wer(reference: str, heard: str) -> float:
    """Word error rate with numbers as words on both sides ("8" = "eight")."""
    ref, hyp = words(spoken_numbers(reference)), words(spoken_numbers(heard))
    return edit_distance(ref, hyp) / len(ref) if ref else float(bool(hyp))

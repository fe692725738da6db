"""Chinese for espeak-ng: what its pinyin voice can say, run by run.

espeak-ng's Mandarin voice (`cmn`) on Linux has no full character dictionary: it reads
most Chinese characters as English words and digits. It does speak tone-numbered
pinyin well with its `cmn-latn-pinyin` voice ("ni3 hao3"), so a Chinese sentence is
turned into pinyin first (pypinyin, whose dictionary ships in its wheel, with the
tone changes of 一, 不 and two third tones), after its numbers become Chinese words
("12" → 十二 → shi2 er4). Latin words inside a Chinese sentence ("我喜欢Python") are a
run of their own, spoken by an English (or the asked-for) voice; Chinese punctuation
becomes the pauses espeak-ng makes for "," and ".".

Only espeak-ng needs this: the system voices of Windows and macOS read Chinese
characters themselves, and espeak-ng's Cantonese voice (`yue`) reads them too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.tts.chinese_numbers import numbers_to_chinese

__all__ = [
    "PINYIN_PACE",
    "PINYIN_PITCH",
    "PINYIN_VOICE",
    "PINYIN_WORD_GAP",
    "Run",
    "espeak_parts",
    "is_chinese",
    "mandarin_runs",
    "to_pinyin",
]

PINYIN_VOICE = "cmn-latn-pinyin"
# The pinyin voice slower than the rate asked for (each syllable is a "word" to it), with
# a pause between syllables (espeak-ng's word gap, in units of 10 ms at normal speed)
# and pitched higher (espeak-ng's 0-99; 50 is its default): at full pace, run together
# and low, its syllables blur into one another. Chosen by what a recognizer heard right
# (bench/bench_tts.py --chinese): 0.75, 15 and 70 beat the neighbouring settings tried.
PINYIN_PACE = 0.75
PINYIN_WORD_GAP = 15
PINYIN_PITCH = 70
LATIN_VOICE = "en"
# espeak-ng voices that read Chinese characters themselves (Cantonese, with its dictionary)
_READS_HAN = ("yue", "zh-yue")
_MANDARIN_VOICES = ("cmn", "zh", "zh-cmn")

_HAN = re.compile(r"[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_KANA_OR_HANGUL = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\uac00-\ud7af]")
# Symbols said as words in a Chinese sentence (after NFKC: ℃ is "°C", ＋ is "+").
_SYMBOLS = (
    ("°C", "摄氏度"),
    ("°F", "华氏度"),
    ("°", "度"),
    ("+", "加"),
    ("=", "等于"),
    ("&", "和"),
    ("×", "乘"),
    ("÷", "除以"),
)
# Marks that end a sentence, and marks that are a short pause, as espeak-ng's own.
_STOPS = {"。": ".", ".": ".", "!": "!", "?": "?", "．": "."}
_PAUSE_MARKS = frozenset(",、;:…—–-~·")


@dataclass(frozen=True, slots=True)
class Run:
    """A stretch of a sentence for one voice: pinyin for the pinyin voice, or Latin
    text (English words, names, letters) for the other voice."""

    text: str
    pinyin: bool


def is_chinese(text: str) -> bool:
    """Whether `text` has Chinese characters and no Japanese kana or Korean hangul (a
    Japanese sentence mixes kanji with kana: it is not read as Mandarin)."""
    return bool(_HAN.search(text)) and not _KANA_OR_HANGUL.search(text)


@cache
def _pinyin_module() -> Any:
    try:
        import pypinyin
    except ImportError:
        return None
    return pypinyin


def to_pinyin(han: str) -> list[str]:
    """Tone-numbered syllables for a string of Chinese characters: neutral tone as 5
    (what espeak-ng's pinyin voice reads as neutral; it reads a bare syllable as tone 1),
    ü as v; characters pypinyin does not know are left out."""
    pypinyin = _pinyin_module()
    if pypinyin is None:
        raise ImportError("pypinyin is not installed; install it with: pip install pypinyin")
    syllables: list[str] = pypinyin.lazy_pinyin(
        han,
        style=pypinyin.Style.TONE3,
        neutral_tone_with_five=True,
        tone_sandhi=True,
        errors="ignore",
    )
    return syllables


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)  # full-width letters, digits and marks
    text = re.sub(r"\.{2,}", ",", text)  # "……" and "..." (NFKC's "…") trail off: a pause
    text = numbers_to_chinese(text)
    for symbol, said in _SYMBOLS:
        if symbol in text:
            text = text.replace(symbol, said)
    return text


def _kind(char: str) -> str:
    """ "han", "latin" (a letter or digit of another script, spoken by the other voice),
    or "" for marks and spaces, which go with the run they are in."""
    if _HAN.match(char):
        return "han"
    if char.isalnum():
        return "latin"
    return ""


def _pinyin_text(chunk: str) -> str:
    """A Chinese stretch as pinyin, its punctuation as espeak-ng's pauses."""
    said: list[str] = []
    han = ""
    for char in chunk + "\n":
        if _HAN.match(char):
            han += char
            continue
        if han:
            said.extend(to_pinyin(han))
            han = ""
        if char in _STOPS:
            said.append(_STOPS[char])
        elif char in _PAUSE_MARKS:
            said.append(",")
    text = " ".join(said)
    return re.sub(r" ([,.!?])", r"\1", text)


def mandarin_runs(text: str) -> list[Run]:
    """`text` (a sentence with Chinese in it) as runs for the pinyin voice and for the
    Latin voice, in order; empty when nothing in it can be said."""
    text = _prepare(text)
    pieces: list[tuple[str, str]] = []  # (kind, text)
    for char in text:
        kind = _kind(char)
        if pieces and (not kind or kind == pieces[-1][0] or not pieces[-1][0]):
            last_kind, last_text = pieces[-1]
            pieces[-1] = (last_kind or kind, last_text + char)
        else:
            pieces.append((kind, char))
    runs: list[Run] = []
    for kind, chunk in pieces:
        if kind == "han":
            said = _pinyin_text(chunk)
            if said.strip(" ,.!?"):
                runs.append(Run(said, pinyin=True))
            elif runs:  # only marks: a pause after what came before
                runs[-1] = Run(runs[-1].text + said, runs[-1].pinyin)
        elif kind == "latin":
            runs.append(Run(_latin_text(chunk), pinyin=False))
    return runs


def _latin_text(chunk: str) -> str:
    """A Latin stretch with its Chinese marks as the Latin voice's pauses."""
    for mark, said in _STOPS.items():
        chunk = chunk.replace(mark, said)
    return re.sub(r"\s+", " ", "".join("," if c in "、" else c for c in chunk)).strip()


def _voice_name(voice: str | None) -> str:
    return (voice or "").lower().rsplit("/", 1)[-1]


def espeak_parts(text: str, voice: str | None) -> list[tuple[str, str | None]]:
    """What espeak-ng is given for `text` asked of `voice`: (text, voice) pairs, in order.

    A Chinese sentence is pinyin for the pinyin voice, with its Latin runs for `voice`
    (an English voice when `voice` is a Mandarin one or none); any other sentence, or
    a voice that reads Chinese characters itself, is `text` as it is.
    """
    name = _voice_name(voice)
    if name.startswith(_READS_HAN) or not is_chinese(text) or _pinyin_module() is None:
        return [(text, voice)]
    mandarin = not name or name.startswith(_MANDARIN_VOICES)
    latin_voice = LATIN_VOICE if mandarin else voice
    return [(run.text, PINYIN_VOICE if run.pinyin else latin_voice) for run in mandarin_runs(text)]

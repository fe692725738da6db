"""What Whisper says when nobody spoke: told apart from the user's words.

On silence, noise or music Whisper writes what its training subtitles said in such
places: "you", "Thank you.", "Thanks for watching!", "[Music]", "…", or one phrase over
and over. Such a segment is left out when the model itself thought there was no
speech (`no_speech_prob`), when it is only a sound description, or when it is a loop;
the same words with speech under them (a real "Thank you.") are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["WhisperSegment", "is_silent", "spoken_text", "without_prompt"]

# Below this the recording holds no speech at all: digital silence, or a muted mic
# (-70 dBFS RMS; a quiet room is about -60).
SILENT_RMS = 10 ** (-70 / 20)
# The model's own belief that a segment holds no speech, above which its text is
# suspect. Measured with tiny.en: digital silence gave " you" at 0.93-0.95, espeak
# "Thank you." 0.12-0.16, a clean question 0.13-0.17.
NO_SPEECH = 0.5
# Whisper's own sign of a loop (its temperature fallback uses the same figure).
LOOPING_COMPRESSION = 2.4
MAX_REPEATS = 10  # a 1-3 word unit said more often than this in a row is a loop
# ... in Chinese or Japanese a 1-3 character unit: base wrote "作词作曲作曲作曲作曲作曲"
# ("lyrics, music" from song credits) for espeak-ng's "我正在学习中文"
MAX_CJK_REPEATS = 3

_KNOWN = (
    "you",
    "thank you",
    "thanks",
    "thank you very much",
    "thank you so much",
    "thanks for watching",
    "thank you for watching",
    "thanks for watching and see you next time",
    "please subscribe",
    "like and subscribe",
    "subscribe to my channel",
    "see you next time",
    "see you in the next video",
    "bye",
    "bye bye",
    "goodbye",
    "oh",
    "so",
    "okay",
    "hmm",
    "subtitles by the amara org community",
    "transcription by castingwords",
    # what the multilingual model writes on silence in Chinese (subtitle credits)
    "谢谢观看",
    "謝謝觀看",
    "谢谢大家",
    "请不吝点赞 订阅 转发 打赏支持明镜与点点栏目",
    "字幕由amara.org社区提供",
    "小编字幕由amara.org社区提供",
)
# "[Music]", "(applause)", "*laughs*", "♪ ♪": descriptions of sound, never words said.
_SOUND_ONLY = re.compile(r"^(\s*(\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|[♪♫#~]+)\s*)+$")
# A word: one CJK character (Chinese and Japanese have no spaces between words), or a
# run of letters, digits and apostrophes.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORDS = re.compile(rf"[{_CJK}]|(?:[^\W_{_CJK}]|')+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
# A 1-3 character unit said four or more times in a row at once: a decoding loop inside
# real words ("我喜欢粘粘粘粘粘粘"); said once it keeps the rest of the sentence.
_CJK_LOOP = re.compile(rf"([{_CJK}]{{1,3}}?)\1{{3,}}")


@dataclass(frozen=True, slots=True)
class WhisperSegment:
    """One segment as Whisper gave it (faster-whisper's `Segment` has these fields)."""

    text: str
    no_speech_prob: float = 0.0
    avg_logprob: float = 0.0
    compression_ratio: float = 1.0


def is_silent(audio: np.ndarray) -> bool:
    """Whether float32 `audio` is too quiet to hold speech (checked before transcribing)."""
    if audio.size == 0:
        return True
    return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) < SILENT_RMS


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower().replace("’", "'"))


KNOWN_HALLUCINATIONS = frozenset(" ".join(_words(phrase)) for phrase in _KNOWN)
_LONGEST = max(len(phrase.split()) for phrase in KNOWN_HALLUCINATIONS)  # in words


def _phrases_only(words: Sequence[str]) -> bool:
    """Whether `words` are known phrases one after another ("you you", "thank you bye")."""
    ends = {0}
    for end in range(1, len(words) + 1):
        if any(
            start in ends and " ".join(words[start:end]) in KNOWN_HALLUCINATIONS
            for start in range(max(0, end - _LONGEST), end)
        ):
            ends.add(end)
    return len(words) in ends


def _longest_run(words: Sequence[str]) -> int:
    """How many times in a row the most repeated 1-3 word unit occurs."""
    best = 1
    for size in (1, 2, 3):
        for start in range(size):
            run = 1
            for i in range(start + size, len(words) - size + 1, size):
                if words[i : i + size] == words[i - size : i]:
                    run += 1
                    best = max(best, run)
                else:
                    run = 1
    return best


def _is_hallucination(segment: WhisperSegment) -> bool:
    text = segment.text.strip()
    words = _words(text)
    if not words or _SOUND_ONLY.match(text):
        return True  # "…", "-", "[Music]", "♪"
    if segment.no_speech_prob >= NO_SPEECH and _phrases_only(words):
        return True
    if segment.compression_ratio > LOOPING_COMPRESSION:
        return True
    cjk = sum(bool(_CJK_CHAR.fullmatch(word)) for word in words) * 2 > len(words)
    return _longest_run(words) > (MAX_CJK_REPEATS if cjk else MAX_REPEATS) and len(set(words)) <= 3


_NOT_COUNTED = re.compile(r"[\W_]+")


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (characters)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _echoes(said: str, asked: str) -> bool:
    """Whether `said` is the prompt `asked`, or most of its start, give or take one
    character in five ("以下是普通的句子" for "以下是普通话的句子")."""
    if len(said) * 2 < len(asked):
        return False
    lengths = range(max(1, len(said) - 2), min(len(asked), len(said) + 2) + 1)
    closest = min((_edits(said, asked[:n]) for n in lengths), default=len(said))
    return closest <= len(asked) // 5


def without_prompt(text: str, prompt: str | None) -> str:
    """`text` without the prompt Whisper was given, written back as if heard: on speech
    it could not make out, base wrote its Chinese prompt "以下是普通话的句子。" (or its
    start "以下是普通话的句", or "以下是普通的句子") as the whole transcript, words
    nobody said."""
    if not prompt:
        return text
    said, asked = _NOT_COUNTED.sub("", text.lower()), _NOT_COUNTED.sub("", prompt.lower())
    if not said or not asked:
        return text
    if _echoes(said, asked):
        return ""  # the prompt, or most of its start
    if said.startswith(asked):  # the prompt, then words: only the words
        counted = 0
        for at, char in enumerate(text):
            counted += not _NOT_COUNTED.fullmatch(char)
            if counted == len(asked):
                return re.sub(r"^[\W_]+", "", text[at + 1 :])
    return text


def spoken_text(segments: Iterable[WhisperSegment], prompt: str | None = None) -> str:
    """The user's words in Whisper's segments, without what it makes up on silence or
    writes back of its `prompt`."""
    kept = [without_prompt(s.text.strip(), prompt) for s in segments if not _is_hallucination(s)]
    text = _CJK_LOOP.sub(r"\1", " ".join(t for t in kept if t).strip())
    words = _words(text)
    # A whole transcript of stock phrases said over and over ("you you you you") is
    # what long silence or noise gives, whatever each window thought of itself.
    if len(words) >= 4 and _phrases_only(words) and _longest_run(words) >= 4:
        return ""
    return text

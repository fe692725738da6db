"""The companion's own words, heard back: the one test the barge-in, the turns and the
memory use to know that what the microphone heard was the companion's voice, not the
user's (the recognizer slips: "It's Kid's name" for "It's Pepper, your kitten's name",
but most of its words, in order, are words the companion just said).

A leaf module (nothing of the app imported), so `app.session` and `app.memory` share it.
"""

from __future__ import annotations

import re

__all__ = ["HAN", "HAN_CHAR", "KANA_OR_HANGUL", "OWN_WORDS_SHARE", "is_own_words", "words"]

# Chinese characters (with the CJK compatibility ones), and Japanese or Korean script.
HAN = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
KANA_OR_HANGUL = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\uac00-\ud7af]")
# A word: a run of Latin letters and digits, or one Chinese character.
_WORD = re.compile(rf"[a-z0-9']+(?:-[a-z0-9']+)*|[{HAN}]")
HAN_CHAR = re.compile(f"[{HAN}]")


def words(text: str) -> list[str]:
    """The lowercase words of `text`, punctuation dropped; each Chinese character is one."""
    return _WORD.findall(text.lower().replace("’", "'"))


OWN_WORDS_SHARE = 0.75
_OWN_WORDS_LOOK_BACK = 120  # the companion's last words compared (a long reply's tail)
# In Chinese each character counts as a word: a word is one or two characters, so a
# reply's tail is twice as many, and a match needs four of them (two words), not two:
# an answer repeats its question's words in their order ("我喜欢猫" to "你喜欢猫吗？").
_CHARACTERS_PER_WORD = 2
_LEAST_CHARACTERS = 4


def is_own_words(heard: str, said: str) -> bool:
    """Whether `heard` (a transcript of the microphone) is the companion's own words
    `said` coming back: at least two of its words, and `OWN_WORDS_SHARE` of them, are
    found in order among what was said. A user who answers ("My cat is called Miso")
    shares a word or two with the question, not most of their sentence in order.
    Chinese (no spaces) is compared character by character, at least four of them."""
    chinese = bool(HAN_CHAR.search(heard))
    least = _LEAST_CHARACTERS if chinese else 2
    look_back = _OWN_WORDS_LOOK_BACK * (_CHARACTERS_PER_WORD if chinese else 1)
    heard_words = words(heard)
    said_words = words(said)[-look_back:]
    if len(heard_words) < least or not said_words:
        return False
    common = _common_in_order(heard_words, said_words)
    return common >= least and common >= OWN_WORDS_SHARE * len(heard_words)


def _common_in_order(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of `a` and `b` (word lists)."""
    previous = [0] * (len(b) + 1)
    for word in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if word == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]

"""A user who goes on with their turn after a pause: what they said before it and what
they went on with, as one text; and, when the turn is heard again as a whole, which of
its words are the ones they went on with.

The recognizer hears a sentence better with the others around it (alone, "I work as a
pharmacist at the corner pharmacy." came out "I work on the pharmacies to"), so a turn
the user went on with is transcribed once more as a whole, instead of its new part
alone. The new part's words are still needed on their own: to tell the companion's own
voice, a listener's "mm-hm" or a cough (no new words) from the user going on.
"""

from __future__ import annotations

import re

from app.own_words import HAN, words

__all__ = ["join_words", "went_on_with"]

# A word as `app.own_words.words` counts them, found in the original text (its place kept).
_WORD = re.compile(rf"[a-z0-9']+(?:-[a-z0-9']+)*|[{HAN}]", re.IGNORECASE)
# Hearing the first part with a word more or less than it had costs this much of a word
# in common: the cut lands where the first part's words end, not at a repeated word.
_LENGTH_COST = 0.5
_CJK_RANGES = (("\u3000", "\u30ff"), ("\u3400", "\u9fff"), ("\uff00", "\uffef"))


def join_words(before: str, after: str) -> str:
    """What the user said before a pause and what they went on with, as one text
    (Chinese and Japanese run on without a space)."""
    before, after = before.strip(), after.strip()
    if not before or not after:
        return before or after
    if _cjk(before[-1]) or _cjk(after[0]):
        return before + after
    return f"{before} {after}"


def went_on_with(before: str, whole: str) -> str:
    """The words of `whole` (the turn heard as one) after those of `before` (its first
    part, heard alone): "" when it says nothing more. The first part may be heard
    differently in the whole ("Hello, I made sure." / "Hello, I'm Asia. I work ..."): the
    cut is where most of the first part's words, in order, have been said, at about as
    many words as it had."""
    found = list(_WORD.finditer(whole.replace("’", "'")))
    heard = [match.group().lower() for match in found]
    common = _common_by_prefix(words(before), heard)
    first = len(words(before))
    cut = max(range(len(heard) + 1), key=lambda k: common[k] - _LENGTH_COST * abs(k - first))
    if cut >= len(found):
        return ""
    return whole[found[cut].start() :].strip()


def _common_by_prefix(a: list[str], b: list[str]) -> list[int]:
    """For each k, the longest common subsequence of `a` and `b[:k]` (k = 0 … len(b))."""
    row = [0] * (len(b) + 1)
    for word in a:
        above, row = row, [0]
        for j, other in enumerate(b):
            row.append(above[j] + 1 if word == other else max(above[j + 1], row[j]))
    return row


def _cjk(char: str) -> bool:
    """Han, kana, and CJK and full-width punctuation."""
    return any(low <= char <= high for low, high in _CJK_RANGES)

"""The companion's own words, heard back: never a memory about the user.

Without headphones the microphone hears the companion's voice, and the recognizer
makes a "user" turn of it ("How can I help?", "I can see with it."). Whatever the
session lets through, the memory takes nothing from such words: before a turn is
looked at for memories, each of its sentences that is mostly the companion's recent
words (in order: the barge-in's own test, `app.own_words.is_own_words`)
is left out, and a turn with nothing else left teaches nothing. The companion's
recent words are its last replies in the history, and what it was saying when the
words were heard, when the session says so in the user message's metadata
(`SPOKEN_OVER`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.llm import Msg, Role
from app.own_words import OWN_WORDS_SHARE, is_own_words

__all__ = ["OWN_WORDS_SHARE", "SPOKEN_OVER", "is_own_words", "own_recent_words", "users_part"]

# A user message's metadata key: what the companion was saying (its words as far as
# they were spoken) while the user's words were heard. Set by the session.
SPOKEN_OVER = "spoken_over"
REPLIES_BACK = 2  # the companion's replies before the turn compared

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def own_recent_words(history: Sequence[Msg], start: int) -> list[str]:
    """What the companion said just before the user's message `history[start]`: its
    last replies, and what it was saying when the message was heard (`SPOKEN_OVER`)."""
    replies = [
        m.text for m in history[:start] if m.role == Role.ASSISTANT and m.text.strip()
    ][-REPLIES_BACK:]
    if start < len(history):
        spoken = history[start].metadata.get(SPOKEN_OVER)
        if isinstance(spoken, str) and spoken.strip():
            replies.append(spoken)
    return replies


def users_part(said: str, own: Sequence[str]) -> str:
    """`said` without its sentences that are the companion's own words `own` ("" when
    nothing is left: the whole turn was the companion heard back)."""
    if not own or not said.strip():
        return said
    if any(is_own_words(said, words) for words in own):
        return ""
    kept = [
        part.strip()
        for part in _SENTENCE.findall(said)
        if part.strip() and not any(is_own_words(part, words) for words in own)
    ]
    return " ".join(kept)

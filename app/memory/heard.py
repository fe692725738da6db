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

__all__ = [
    "OWN_WORDS_SHARE",
    "SPOKEN_OVER",
    "is_own_words",
    "own_recent_words",
    "users_earlier_words",
    "users_part",
]

# A user message's metadata key: what the companion was saying (its words as far as
# they were spoken) while the user's words were heard. Set by the session.
SPOKEN_OVER = "spoken_over"
REPLIES_BACK = 2  # the companion's replies before the turn compared

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def own_recent_words(history: Sequence[Msg], start: int) -> list[str]:
    """What the companion said just before the user's message `history[start]`: its
    last replies, and what it was saying when the message was heard (`SPOKEN_OVER`)."""
    replies: list[str] = []
    for index in range(min(start, len(history)) - 1, -1, -1):  # back to its last replies
        msg = history[index]
        if msg.role == Role.ASSISTANT and msg.text.strip():
            replies.insert(0, msg.text)
            if len(replies) == REPLIES_BACK:
                break
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


def users_earlier_words(history: Sequence[Msg], start: int, limit: int) -> list[str]:
    """The user's own last `limit` messages before `history[start]`, oldest first
    (without the companion's words heard back as theirs). Read back from the turn, so
    the work is the turn's own, however long the conversation (not the whole history
    again for each of its messages)."""
    texts: list[str] = []
    for i in range(min(start, len(history)) - 1, -1, -1):
        m = history[i]
        if m.role == Role.USER and not m.tool_results and m.text:
            text = users_part(m.text, own_recent_words(history, i))
            if text.strip():
                texts.insert(0, text)
                if len(texts) == limit:
                    break
    return texts

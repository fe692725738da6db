"""The reply's markup, read in one place: expression tags (`[joy]`, `[joy:0.6]`, `【开心】`,
`<|ACT {...}|>`), reasoning written into the text (`<think>…</think>`), and where a
streamed reply's sentences end.

The reply pipeline, the reply guard, the transcript of a stored conversation and the
Live2D tag table all read a reply through this module, so a tag, a thought and a
sentence are the same thing live, in the guard's count and in history.
"""

from __future__ import annotations

from app.agent.markup._sentences import (
    CLOSING_MARKS,
    ENDING_MARKS,
    SENTENCE_STOPS,
    Piece,
    SentenceSplitter,
    ends_a_sentence,
)
from app.agent.markup._tags import (
    TAG,
    THINK_CLOSE,
    THINK_OPEN,
    ThinkPart,
    ThinkSplitter,
    is_tag_name,
    might_hold_tag,
    take_tags,
    without_trailing_tags,
)

__all__ = [
    "CLOSING_MARKS",
    "ENDING_MARKS",
    "SENTENCE_STOPS",
    "TAG",
    "THINK_CLOSE",
    "THINK_OPEN",
    "Piece",
    "SentenceSplitter",
    "ThinkPart",
    "ThinkSplitter",
    "ends_a_sentence",
    "is_tag_name",
    "might_hold_tag",
    "take_tags",
    "without_trailing_tags",
]

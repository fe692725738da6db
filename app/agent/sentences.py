"""The sentence divider: streamed model tokens become sentences (fragments) as soon as
each one is known to be complete, with reasoning marked as thinking (typed
`ThinkingDelta`s from the provider, or `<think>` written into the text by the model).

Where a sentence ends is `app.agent.markup`'s to say (the reply guard counts the same
sentences). Import the divider from `app.agent.transformers`, the reply pipeline's
public face.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from typing import TypeVar

from app.agent.markup import SENTENCE_STOPS, TAG, Piece, SentenceSplitter
from app.agent.outputs import SentenceBreak, ThinkingDelta

__all__ = ["Fragment", "sentence_divider"]

Passthrough = TypeVar("Passthrough")

# The splitter's patterns under the names tests/test_transformers.py patches when it
# measures the divider's work; the splitter's own work is measured in tests/test_markup.py.
_NEXT_STOP, _MARKUP = SENTENCE_STOPS, TAG


@dataclass(slots=True, frozen=True)
class Fragment:
    """One sentence (or the comma-cut start of a reply), stripped; thinking is never spoken."""

    text: str
    is_thinking: bool = False


def _fragments(pieces: list[Piece]) -> list[Fragment]:
    return [Fragment(piece.text, piece.is_thinking) for piece in pieces]


async def sentence_divider(
    tokens: AsyncIterable[str | ThinkingDelta | SentenceBreak | Passthrough],
    *,
    first_fragment_at_comma: bool = True,
    first_fragment_min_words: int = 3,
) -> AsyncGenerator[Fragment | Passthrough, None]:
    """Split streamed tokens into sentences as they arrive; reasoning is marked as
    thinking, whether it comes typed (`ThinkingDelta`) or as `<think>` in the text.

    The first spoken fragment may end at a comma once it has `first_fragment_min_words`
    words (twice as many characters of CJK text), for a fast first sound. A sentence
    ending in "." waits for the next token (it may be "3.14" or "Mr. Smith"); CJK
    。！？；… end a sentence as soon as the next character is not more of the ending.
    Brackets and quotes are never cut, so an expression tag split across tokens stays
    whole. Anything that is not text (a `ToolStatus`) passes through in order, after the
    text before it is flushed as a fragment.
    """
    splitter = SentenceSplitter(
        comma_cut=first_fragment_at_comma, min_words=first_fragment_min_words
    )
    try:
        try:
            async for token in tokens:
                if isinstance(token, str | ThinkingDelta):
                    pieces = (
                        splitter.feed(token)
                        if isinstance(token, str)
                        else splitter.feed_thinking(token.text)
                    )
                    for fragment in _fragments(pieces):
                        yield fragment
                    continue
                if isinstance(token, SentenceBreak):  # what came before is a whole sentence
                    for fragment in _fragments(splitter.end_message()):
                        yield fragment
                    continue
                for fragment in _fragments(splitter.end_message()):
                    yield fragment
                yield token
        except Exception:
            # The model failed mid-reply: what it had said is still shown, then the error.
            for fragment in _fragments(splitter.finish()):
                yield fragment
            raise
        for fragment in _fragments(splitter.finish()):
            yield fragment
    finally:
        await close_source(tokens)


async def close_source(source: object) -> None:
    """Close an async generator feeding a stage, so an interrupted reply stops its source."""
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()

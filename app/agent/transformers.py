"""The reply pipeline: streamed model tokens become sentences the user sees, hears and
the avatar acts out (`sentence_divider → actions_extractor → display_processor → tts_filter`).

Each stage is an async-iterator transformer, usable and testable alone. Closing a stage
closes its source, so an interrupted reply also stops the model stream feeding it.
Anything in the stream that is not the stage's own kind of item (a `ToolStatus`) passes
through every stage untouched and in order.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Sequence
from typing import NamedTuple, TypeGuard, TypeVar, cast

from app.agent.markup import might_hold_tag, take_tags
from app.agent.outputs import Actions, SentenceBreak, SentenceOutput, ThinkingDelta
from app.agent.reply_guard import ReplyCut, drop_cut_tail
from app.agent.sentences import Fragment, close_source, sentence_divider
from app.agent.speech_text import speakable, tidy_spaces
from app.avatar.state import EXPRESSIONS

__all__ = [
    "DisplayFragment",
    "Fragment",
    "actions_extractor",
    "display_processor",
    "reply_pipeline",
    "sentence_divider",
    "tts_filter",
]

Passthrough = TypeVar("Passthrough")


class DisplayFragment(NamedTuple):
    """A fragment with its actions and the text the transcript shows."""

    fragment: Fragment
    actions: Actions
    display_text: str


# ---------------------------------------------------------------- actions_extractor


async def actions_extractor(
    fragments: AsyncIterable[Fragment | Passthrough], *, expressions: Sequence[str] = EXPRESSIONS
) -> AsyncGenerator[tuple[Fragment, Actions] | Passthrough, None]:
    """Take expression tags out of each spoken fragment: `[joy]`, `[joy:0.6]` and
    `<|ACT {"emotion": "joy", "intensity": 0.6}|>`.

    Names match case-insensitively; every found name gets an intensity (1.0 when none is
    written, clamped to 0..1). A tag of one or two words is never shown or spoken: a name
    the pack lacks becomes the pack's nearest expression through the synonym table
    (`[laughs]` and `[开心]` are joy), or is dropped; longer bracketed text (`[laughs
    softly at you]`) is an aside, shown and not spoken. An inline `<|...|>` tag always
    goes, whatever it holds. Thinking fragments pass through with no actions.
    """
    known = {name.lower(): name for name in expressions}
    try:
        async for fragment in fragments:
            if not isinstance(fragment, Fragment):
                yield fragment
            elif fragment.is_thinking or not might_hold_tag(fragment.text):
                yield fragment, Actions()
            else:
                text, named = take_tags(fragment.text, known)
                actions = Actions()
                for name, intensity in named:
                    actions.expressions.append(name)
                    actions.intensities[name] = intensity
                yield Fragment(text, fragment.is_thinking), actions
    finally:
        await close_source(fragments)


# ---------------------------------------------------------------- display_processor


async def display_processor(
    items: AsyncIterable[tuple[Fragment, Actions] | Passthrough],
) -> AsyncGenerator[DisplayFragment | Passthrough, None]:
    """The transcript text: tags already gone, whitespace left by them tidied.

    Thinking is shown as written (and stays marked on the fragment); markdown, emoji and
    asides are kept for the reader.
    """
    try:
        async for item in items:
            if _is_fragment_pair(item):
                fragment, actions = item
                shown = fragment.text if fragment.is_thinking else tidy_spaces(fragment.text)
                yield DisplayFragment(fragment, actions, shown)
            else:
                yield cast(Passthrough, item)
    finally:
        await close_source(items)


def _is_fragment_pair(item: object) -> TypeGuard[tuple[Fragment, Actions]]:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Fragment)


# ---------------------------------------------------------------- tts_filter

_CODE_FENCES = ("```", "~~~")


async def tts_filter(
    items: AsyncIterable[DisplayFragment | Passthrough],
) -> AsyncGenerator[SentenceOutput | Passthrough, None]:
    """What is spoken: markdown marks, emoji, URLs, asides, actions and code blocks are not.

    Thinking is never spoken. A fragment with nothing to say is still passed on when it
    has display text or actions (the avatar needs its expression); an empty one is dropped.
    """
    in_code_block = False
    try:
        async for item in items:
            if not isinstance(item, DisplayFragment):
                in_code_block = False  # a tool status ends the model's message
                yield item
                continue
            fragment, actions, shown = item
            if fragment.is_thinking:
                spoken = ""
            elif fragment.text.lstrip().startswith(_CODE_FENCES):
                in_code_block, spoken = not in_code_block, ""
            elif in_code_block:
                spoken = ""
            else:
                spoken = speakable(fragment.text)
            if shown or spoken or actions:
                yield SentenceOutput(shown, spoken, actions, fragment.is_thinking)
    finally:
        await close_source(items)


# ---------------------------------------------------------------- the whole pipeline


def reply_pipeline(
    tokens: AsyncIterable[str | ThinkingDelta | SentenceBreak | ReplyCut | Passthrough],
    *,
    expressions: Sequence[str] = EXPRESSIONS,
    first_fragment_at_comma: bool = True,
    first_fragment_min_words: int = 3,
) -> AsyncGenerator[SentenceOutput | Passthrough, None]:
    """Model tokens in, `SentenceOutput`s out, each as soon as its sentence is complete.

    A tag belongs to the sentence it starts (or sits in). A tag after the last sentence
    ("Bye! [joy]") comes out as a final output with empty text and that expression.
    The stream may mix text with typed reasoning (`ThinkingDelta`, shown as thinking) and
    `ToolStatus` items: each status comes out unchanged, in order, after the sentence
    pending before it. A `ReplyCut` (the turn stopped the model inside a sentence)
    drops that unfinished sentence: it is neither shown nor spoken.
    """
    divided: AsyncIterable[Fragment | ReplyCut | Passthrough] = sentence_divider(
        tokens,
        first_fragment_at_comma=first_fragment_at_comma,
        first_fragment_min_words=first_fragment_min_words,
    )
    fragments: AsyncIterable[Fragment | Passthrough] = drop_cut_tail(divided)
    return tts_filter(display_processor(actions_extractor(fragments, expressions=expressions)))

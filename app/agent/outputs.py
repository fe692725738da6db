"""What the reply pipeline hands to speech, the avatar and the transcript."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Actions:
    """Avatar actions carried by one sentence. `expressions` are tag names in order."""

    expressions: list[str] = field(default_factory=list)
    intensities: dict[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.expressions)


@dataclass(slots=True)
class SentenceOutput:
    """One reply fragment: what the transcript shows, what is spoken, what the avatar does.

    `tts_text` may be empty (a fragment made only of a tag, an emoji or thinking):
    such a fragment is shown but not spoken. `is_thinking` marks model reasoning
    shown dimmed and never spoken.
    """

    display_text: str
    tts_text: str
    actions: Actions = field(default_factory=Actions)
    is_thinking: bool = False


@dataclass(slots=True, frozen=True)
class ThinkingDelta:
    """A piece of the model's reasoning, as its provider streamed it (typed, never spoken).

    The token stream into the reply pipeline is `str` (the answer), `ThinkingDelta` and
    passthrough items such as `ToolStatus`; reasoning never travels as `<think>` text.
    """

    text: str


@dataclass(slots=True, frozen=True)
class SentenceBreak:
    """In the answer's token stream: the text before it ends a sentence, to be spoken now
    (the reply's start the app knew, `LLMRequest.reply_start`; without it, "It's 4:13
    p.m." would wait for the model's next token to show the sentence is over)."""


@dataclass(slots=True)
class ToolStatus:
    """A tool is running (or finished) so the user never waits on a blank."""

    name: str
    text: str
    done: bool = False

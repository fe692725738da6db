"""Replies shaped for a voice: at most N sentences, never cut mid-sentence, never a loop.

`ReplyGuard` watches one model call's text as it streams. It stops the call

* when the reply has said `max_sentences` sentences (a voice answer is short),
* when the reply reaches `MAX_REPLY_CHARS`, whatever the server does (a voice reply
  that long would take half an hour to say),
* when the model starts a sentence it already said, or circles on a few words
  ("I'm sorry, I'm sorry, I'm sorry"): what came before the loop is kept, the loop is
  neither spoken nor stored, so it cannot teach the next turns to loop,

and after a call cut short by `max_tokens` it keeps only the whole sentences. `kept`
is what may be stored. When the text already passed on holds an unfinished sentence,
the turn yields a `ReplyCut`; `drop_cut_tail` (a reply pipeline stage after the
sentence divider) then drops that unfinished fragment instead of speaking it.

`has_words` tells a reply worth speaking from one that is only a tag or empty (the
turn asks once more, then says `fallback_reply`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from app.agent.markup import (
    CLOSING_MARKS,
    ENDING_MARKS,
    TAG,
    Piece,
    SentenceSplitter,
    ends_a_sentence,
    take_tags,
    without_trailing_tags,
)
from app.agent.sentences import Fragment, close_source
from app.agent.speech_text import speakable
from app.llm import ContentBlock, LLMRequest, Msg, Role, TextBlock, ThinkingBlock

__all__ = [
    "CutReason",
    "ReplyCut",
    "ReplyGuard",
    "drop_cut_tail",
    "fallback_reply",
    "has_words",
    "kept_message",
    "nudged",
]

Passthrough = TypeVar("Passthrough")
CutReason = Literal["sentences", "loop", "length"]

_COMMAS = ",，、:;：；"  # where a first fragment may end, besides a sentence's end
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# A loop: the same unit of 1..12 words at least three times in a row, 6 words at least.
_MAX_UNIT = 12
_MIN_REPEATS = 3
_MIN_LOOP_WORDS = 6
_DOTS = ".…。·"  # one kind of mark: "...", "……", "。。。" all trail off
_MAX_MARKS_RUN = 6  # "...", "?!", "!!!!!!" end sentences; a seventh mark in a row is a loop
_WINDOW = 120  # words looked back at
# A sentence said again counts as a loop once it has this much to it.
_MIN_REPEATED_CHARS = 4
MAX_REPLY_CHARS = 20_000  # about 3,000 words; what was said up to the last sentence is kept


@dataclass(slots=True, frozen=True)
class ReplyCut:
    """The turn's text stopped inside a sentence: drop the unfinished fragment before it."""

    reason: CutReason


def has_words(text: str) -> bool:
    """Whether `text` says anything aloud once tags, markup and emoji are gone (a
    capitalised name in brackets, "[Tofu]", is said, as the reply pipeline keeps it)."""
    return bool(speakable(take_tags(text, {})[0]).strip())


def fallback_reply(user_text: str) -> str:
    """What the companion says when the model found no words twice, in the user's language."""
    if _CJK.search(user_text):
        return "嗯……我一时不知道该怎么说。你能换个说法再问我一次吗？"
    return "Hmm, I lost my words for a moment. Could you say that another way?"


def _normal(sentence: str) -> str:
    """A sentence as compared for repeats: tags, case, spaces and punctuation aside."""
    return " ".join(w.lower() for w in _WORD.findall(TAG.sub(" ", sentence)))


@dataclass(slots=True)
class ReplyGuard:
    """The guard of one model call (see the module docstring). Feed it each text delta;
    it answers with the part to pass on and whether to stop the call now.

    Its sentences are the ones the sentence divider cuts (`app.agent.markup`'s
    `SentenceSplitter`, without the divider's early cut of a first fragment at a comma,
    which is no sentence): a reply stops after exactly the sentences that were spoken.
    """

    max_sentences: int = 3  # 0: no limit
    text: str = ""  # what was passed on
    boundary: int = 0  # where the last whole sentence ended in `text`
    sentences: int = 0
    cut: CutReason | None = None
    _splitter: SentenceSplitter = field(default_factory=SentenceSplitter)
    _start: int = 0  # where the current sentence began
    _ends: list[int] = field(default_factory=list)  # where each sentence ended, in order
    _seen: set[str] = field(default_factory=set)
    _words: list[tuple[str, int]] = field(default_factory=list)  # (word, start in text)
    _words_from: int = 0  # no word starts before this (reasoning comes before it)
    _run: str = ""  # the marks in a row just before, one kind

    @property
    def kept(self) -> str:
        """The text to store: all of it, or only its whole sentences after a cut."""
        return (self.text if self.cut is None else self.text[: self.boundary]).strip()

    @property
    def tail_unfinished(self) -> bool:
        """Whether text already passed on goes past the kept sentences."""
        return has_words(self.text[self.boundary :])

    def feed(self, delta: str) -> tuple[str, bool]:
        """(text to pass on, stop now) for the next streamed piece."""
        if self.cut is not None:
            return "", True
        begun = len(self.text)
        for offset, char in enumerate(delta):
            at = len(self.text)
            if self._marks_run(char):
                # "again.……………………": what came before it is kept, up to its first mark
                self.cut = "loop"
                self.text = self.text[: at - len(self._run) + 2]
                if has_words(self.text[self.boundary :]):
                    self.boundary = len(self.text)
                return delta[:offset], True
            if self._looping_at(char, at):
                self.cut = "loop"
                self.text += delta[:offset]
                return delta[:offset], True
            if at - self._words_from >= MAX_REPLY_CHARS and not self._splitter.thinking:
                self.cut = "length"
                return delta[:offset], True
            self.text += char
            was_thinking = self._splitter.thinking
            for piece in self._splitter.feed(char):
                self._take(piece)
                if self.max_sentences and self.sentences >= self.max_sentences:
                    # The sentence may have been known only from text after it: what of
                    # that was passed on already is the unfinished tail.
                    self.cut = "sentences"
                    keep = max(piece.end, begun)
                    self.text = self.text[:keep]
                    return delta[: keep - begun], True
            if was_thinking or self._splitter.thinking:  # reasoning is not the answer
                self._words_from = len(self.text)
                continue
            if self._note_word(at) and self._word_loop():
                self.cut = "loop"
                return delta[: offset + 1], True
        return delta, False

    def finished(self, *, cut_by_length: bool) -> None:
        """The call ended by itself; `cut_by_length` when it ran out of tokens."""
        for piece in self._splitter.finish():
            if self.cut is None:
                self._take(piece)
        if cut_by_length and self.cut is None and self.tail_unfinished:
            self.cut = "length"

    # -- sentences ---------------------------------------------------------------------

    def _take(self, piece: Piece) -> None:
        """A piece the splitter cut: a whole sentence, or the end of the text."""
        self._start = piece.end
        if not (piece.is_thinking or piece.whole or ends_a_sentence(piece.text)):
            return  # the text stopped inside a sentence
        if not piece.is_thinking and has_words(piece.text):
            self._seen.add(_normal(piece.text))
            self.sentences += 1
        self.boundary = piece.end
        self._ends.append(piece.end)

    def _looping_at(self, char: str, at: int) -> bool:
        """The model is about to end a sentence it already said: that is a loop."""
        if self._splitter.thinking or char not in ENDING_MARKS:
            return False
        before = self.text[self._start : at]
        if before.rstrip(CLOSING_MARKS)[-1:] in tuple(ENDING_MARKS):
            return False  # more of an ending ("?!", '."!')
        sentence = _normal(before)
        return len(sentence) >= _MIN_REPEATED_CHARS and sentence in self._seen

    def _marks_run(self, char: str) -> bool:
        """The model strings marks together with no words ("……………", "!!!!!!"): one
        more would make a run longer than any sentence ends with."""
        if self._splitter.thinking or char.isalnum() or char.isspace():
            self._run = ""
            return False
        kind = "." if char in _DOTS else char
        self._run = self._run + kind if self._run.endswith(kind) else kind
        return len(self._run) > _MAX_MARKS_RUN

    # -- words ---------------------------------------------------------------------------

    def _note_word(self, at: int) -> bool:
        """Advance over the character at `at`; True when it completed a word."""
        char = self.text[at]
        added = False
        if _CJK.match(char):
            self._words.append((char, at))
            added = True
        elif not (char.isalnum() or char in "'’"):
            tail = self.text[self._last_word_end() : at]
            match = _WORD.search(tail)
            if match:
                self._words.append((match[0].lower(), at - len(tail) + match.start()))
                added = True
        if len(self._words) > _WINDOW:
            del self._words[: len(self._words) - _WINDOW]
        return added

    def _last_word_end(self) -> int:
        if not self._words:
            return self._words_from
        word, start = self._words[-1]
        return max(start + len(word), self._words_from)

    def _word_loop(self) -> bool:
        """The last words are one short unit said three times or more in a row."""
        words = [w for w, _ in self._words]
        n = len(words)
        for unit in range(1, _MAX_UNIT + 1):
            repeats = 1
            last = words[n - unit :]
            while (
                n >= (repeats + 1) * unit
                and words[n - (repeats + 1) * unit : n - repeats * unit] == last
            ):
                repeats += 1
            if repeats >= _MIN_REPEATS and repeats * unit >= _MIN_LOOP_WORDS:
                loop_start = self._words[n - repeats * unit][1]
                self.boundary = min(self.boundary, self._last_end_before(loop_start))
                return True
        return False

    def _last_end_before(self, position: int) -> int:
        """The end of the last whole sentence at or before `position`."""
        before = bisect_right(self._ends, position)
        return self._ends[before - 1] if before else 0


async def drop_cut_tail(
    fragments: AsyncIterable[Fragment | ReplyCut | Passthrough],
) -> AsyncGenerator[Fragment | Passthrough, None]:
    """Hold a spoken fragment that does not end a sentence until the next item: if that
    is a `ReplyCut`, the fragment was the unfinished tail of a stopped reply and goes;
    otherwise it comes out as it was. `ReplyCut`s themselves never come out.

    The reply's first fragment may end at a comma (the divider cuts it there for a fast
    first sound): that one passes at once; any later fragment ending at a comma can only
    be the divider flushing an unfinished sentence, and is held."""
    held: Fragment | None = None
    first = True
    try:
        try:
            async for item in fragments:
                if isinstance(item, ReplyCut):
                    held = None
                    continue
                if held is not None:
                    yield held
                    held = None
                if isinstance(item, Fragment) and not item.is_thinking:
                    if _unfinished(item.text, comma_ends=first):
                        held = item
                        continue
                    first = first and not has_words(item.text)
                yield item
        except Exception:
            # The model failed mid-reply: what it had said is still shown, then the error.
            if held is not None:
                yield held
            raise
        if held is not None:
            yield held
    finally:
        await close_source(fragments)


def _unfinished(text: str, *, comma_ends: bool) -> bool:
    """A fragment that stops inside a sentence (not at an ending or a closing mark, tags
    after it aside; nor at a comma when `comma_ends`)."""
    stripped = without_trailing_tags(text)
    if not stripped or ends_a_sentence(stripped) or (comma_ends and stripped[-1] in _COMMAS):
        return False
    return has_words(stripped)


# -- what the turn keeps and asks again ---------------------------------------------------

NUDGE = "(Say your answer out loud in words.)"


def kept_message(message: Msg | None, guard: ReplyGuard) -> Msg:
    """The assistant message to store for a call the guard cut: its whole sentences (and
    its reasoning), no unfinished sentence, no loop, no half-made tool call."""
    kept: list[ContentBlock] = [
        block for block in (message.blocks if message else []) if isinstance(block, ThinkingBlock)
    ]
    kept.append(TextBlock(text=guard.kept))
    metadata = dict(message.metadata) if message else {}
    metadata["cut"] = guard.cut
    return Msg.assistant(kept, metadata=metadata)


def nudged(request: LLMRequest) -> LLMRequest:
    """The request asked again after a reply with no words: its last user message ends
    with a reminder to answer in words (only the end changes, so a local model's cached
    prefix still holds)."""
    messages = list(request.messages)
    for index in range(len(messages) - 1, -1, -1):
        msg = messages[index]
        if msg.role == Role.USER and not msg.tool_results:
            blocks = [*msg.blocks, TextBlock(text=NUDGE)]
            messages[index] = msg.model_copy(update={"content": blocks})
            break
    return request.model_copy(update={"messages": messages})

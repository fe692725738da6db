"""Replies shaped for a voice: at most N sentences, never cut mid-sentence, never a loop.

`ReplyGuard` watches one model call's text as it streams. It stops the call

* when the reply has said `max_sentences` sentences (a voice answer is short),
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
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from app.agent.expression_words import is_feeling
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

_ENDS = ".!?…"
_CJK_ENDS = "。！？；｡"
_CLOSERS = "\"')]}’”」』）】»"
# "Mr. Smith", "e.g. this": a full stop after these does not end the sentence.
_ABBREVIATIONS = frozenset(
    [
        *("mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "mt", "ft", "cf"),
        *("e.g", "i.e", "fig", "approx", "dept", "a.m", "p.m"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    ]
)
_FINISHED = _ENDS + _CJK_ENDS + _CLOSERS + ",，、:;：；"  # where a first fragment may end
_ENDING = re.compile(rf"[{re.escape(_ENDS + _CJK_ENDS)}][{re.escape(_CLOSERS)}]*")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# A loop: the same unit of 1..12 words at least three times in a row, 6 words at least.
_MAX_UNIT = 12
_MIN_REPEATS = 3
_MIN_LOOP_WORDS = 6
_WINDOW = 120  # words looked back at
# A sentence said again counts as a loop once it has this much to it.
_MIN_REPEATED_CHARS = 4


@dataclass(slots=True, frozen=True)
class ReplyCut:
    """The turn's text stopped inside a sentence: drop the unfinished fragment before it."""

    reason: CutReason


def has_words(text: str) -> bool:
    """Whether `text` says anything aloud once tags, markup and emoji are gone."""
    without_tags = _BRACKETED.sub(_spoken_part, text)
    return bool(speakable(without_tags).strip())


_BRACKETED = re.compile(r"[\[【]([^\]】\n]{0,40})[\]】]|<\|[^\n]{0,500}?\|>")


def _spoken_part(match: re.Match[str]) -> str:
    """A capitalised name in brackets is said ("[Tofu]", as the reply pipeline keeps it);
    any other tag or markup is not."""
    inside = match[1] or ""
    words = inside.split()
    if 1 <= len(words) <= 2 and inside[:1].isupper() and not is_feeling(inside):
        return f" {inside} "
    return " "


def fallback_reply(user_text: str) -> str:
    """What the companion says when the model found no words twice, in the user's language."""
    if _CJK.search(user_text):
        return "嗯……我一时不知道该怎么说。你能换个说法再问我一次吗？"
    return "Hmm, I lost my words for a moment. Could you say that another way?"


def _normal(sentence: str) -> str:
    """A sentence as compared for repeats: tags, case, spaces and punctuation aside."""
    sentence = re.sub(r"[\[【][^\]】\n]{0,40}[\]】]", " ", sentence)
    return " ".join(w.lower() for w in _WORD.findall(sentence))


@dataclass(slots=True)
class ReplyGuard:
    """The guard of one model call (see the module docstring). Feed it each text delta;
    it answers with the part to pass on and whether to stop the call now."""

    max_sentences: int = 3  # 0: no limit
    text: str = ""
    boundary: int = 0  # where the last whole sentence ended in `text`
    sentences: int = 0
    cut: CutReason | None = None
    _start: int = 0  # where the current sentence began
    _seen: set[str] = field(default_factory=set)
    _words: list[tuple[str, int]] = field(default_factory=list)  # (word, start in text)
    _pending_end: int = -1  # a full stop seen, waiting to know whether it ends a sentence
    _thinking: bool = False

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
        for offset, char in enumerate(delta):
            at = len(self.text)
            if self._looping_at(char, at):
                self.cut = "loop"
                self.text += delta[:offset]
                return delta[:offset], True
            self.text += char
            if self._thinking_text(at):
                continue
            new_word = self._step(char, at)
            if self.max_sentences and self.sentences >= self.max_sentences:
                self.cut = "sentences"
                return delta[: offset + 1], True
            if new_word and self._word_loop():
                self.cut = "loop"
                return delta[: offset + 1], True
        return delta, False

    def finished(self, *, cut_by_length: bool) -> None:
        """The call ended by itself; `cut_by_length` when it ran out of tokens."""
        if self.cut is None and self._pending_end >= 0:
            self._end_sentence(self._pending_end)
        if cut_by_length and self.cut is None and self.tail_unfinished:
            self.cut = "length"

    # -- sentences ---------------------------------------------------------------------

    def _thinking_text(self, at: int) -> bool:
        """Reasoning written into the text (`<think>...</think>`) is not the answer."""
        if self.text.endswith("<think>"):
            self._thinking = True
        elif self._thinking and self.text.endswith("</think>"):
            self._thinking = False
            self._start = self.boundary = len(self.text)
            return True
        return self._thinking

    def _step(self, char: str, at: int) -> bool:
        """Advance over one character; True when it completed a word."""
        if self._pending_end >= 0:
            if char in _ENDS or char in _CLOSERS:
                self._pending_end = at + 1  # "?!", "...", '."'
                return False
            ended = self._pending_end
            self._pending_end = -1
            follows = char.isspace() or _CJK.match(char) or char in "[【<"
            if follows and not self._abbreviation(ended):
                self._end_sentence(ended)
        if char in _CJK_ENDS:
            self._end_sentence(at + 1)
        elif char in _ENDS:
            self._pending_end = at + 1
        return self._note_word(at)

    def _abbreviation(self, end: int) -> bool:
        before = self.text[self._start : end].rstrip(_ENDS + _CLOSERS)
        last = before.rsplit(None, 1)[-1].lower() if before.split() else ""
        if self.text[end - 1 : end] != "." or "..." in self.text[end - 3 : end]:
            return False
        return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha() and last != "i")

    def _end_sentence(self, end: int) -> None:
        sentence = self.text[self._start : end]
        if has_words(sentence):
            self._seen.add(_normal(sentence))
            self.sentences += 1
        self.boundary = end
        self._start = end

    def _looping_at(self, char: str, at: int) -> bool:
        """The model is about to end a sentence it already said: that is a loop."""
        if self._thinking or (char not in _ENDS and char not in _CJK_ENDS):
            return False
        if self._pending_end >= 0:
            return False  # more of an ending already being checked
        sentence = _normal(self.text[self._start : at])
        return len(sentence) >= _MIN_REPEATED_CHARS and sentence in self._seen

    # -- words ---------------------------------------------------------------------------

    def _note_word(self, at: int) -> bool:
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
            return 0
        word, start = self._words[-1]
        return start + len(word)

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
                self.boundary = min(self.boundary, self._sentence_start_before(loop_start))
                return True
        return False

    def _sentence_start_before(self, position: int) -> int:
        """The end of the last whole sentence at or before `position`."""
        return self.boundary if self.boundary <= position else self._last_boundary(position)

    def _last_boundary(self, position: int) -> int:
        best = 0
        for match in _ENDING.finditer(self.text[:position]):
            end = match.end()
            if match[0][0] in _CJK_ENDS or end >= len(self.text) or self.text[end].isspace():
                best = end
        return best


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
    """A fragment that stops inside a sentence (not at an ending or a closing tag; nor
    at a comma when `comma_ends`)."""
    stripped = re.sub(r"[\[【][^\]】\n]{0,40}[\]】]\s*$", "", text.rstrip()).rstrip()
    if not stripped:
        return False
    finished = _FINISHED if comma_ends else _ENDS + _CJK_ENDS + _CLOSERS
    return stripped[-1] not in finished and has_words(stripped)


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

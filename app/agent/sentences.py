"""The sentence divider: streamed model tokens become sentences (fragments) as soon as
each one is known to be complete, with reasoning marked as thinking (typed
`ThinkingDelta`s from the provider, or `<think>` written into the text by the model).

Import it from `app.agent.transformers`, the reply pipeline's public face.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from typing import TypeVar

from app.agent.outputs import ThinkingDelta
from app.agent.speech_text import INLINE_TAG

__all__ = ["Fragment", "sentence_divider"]

Passthrough = TypeVar("Passthrough")


@dataclass(slots=True, frozen=True)
class Fragment:
    """One sentence (or the comma-cut start of a reply), stripped; thinking is never spoken."""

    text: str
    is_thinking: bool = False


_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
# End a sentence the moment they are followed by anything that is not more of the ending.
_CJK_TERMINATORS = "。！？；｡"
_OPENERS = "([{（【「『“"
_CLOSERS = ")]}）】」』”"
# What an ending may carry along: "你好！？」", "Really?!".
_ENDING_RUN = _CJK_TERMINATORS + "…!?" + _CLOSERS
# May follow a terminator and still belong to its sentence: `He said "hi!" Then`.
_TRAILING = ")]）】」』”\"'’»"
_WORD_START = _OPENERS + "\"'"
_CJK_COMMAS = "，、："
_ASCII_COMMAS = ",;:"
_FACE_EYES = ":;="  # ":(" is a face, not an opening bracket
# Never end a sentence: titles and Latin abbreviations sit before more of the sentence.
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "vs", "cf", "e.g", "i.e", "viz"}
    | {"dept", "gen", "gov", "capt", "col", "lt", "sgt", "rev", "hon", "pres", "sen", "rep"}
    | {"supt", "insp", "cpl", "pvt", "adm", "maj", "cmdr", "messrs", "mme", "mlle", "fr"}
)
# Sit before a number or a name ("Jan. 5", "p. 12", "Mt. Everest", "Main St. It is"):
# they end a sentence only before a word that starts one, as a dotted capital does.
_BEFORE_NUMBER_OR_NAME = frozenset(
    {"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
    | {"mon", "tue", "tues", "thu", "thur", "thurs", "fri"}
    | {"vol", "vols", "ch", "chap", "p", "pp", "ca", "c", "approx", "nr", "ref", "pt", "pts"}
    | {"st", "mt", "ft", "ave", "blvd", "rd", "hwy", "ln", "sq", "mtn", "univ", "assn"}
)
# Ordinary words too ("I said no.", "I love art."): abbreviations only before a digit.
_BEFORE_NUMBER = frozenset({"no", "nos", "art", "sec", "fig", "op", "est", "ex", "eq", "para"})
# End a sentence only when the next word looks like a new sentence ("etc. Do you?").
_WEAK_ABBREVIATIONS = frozenset({"etc", "inc", "ltd", "co", "corp", "al", "esp"})
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")  # u.s, a.m, p.m
# After a capitalised dotted abbreviation ("U.S.", "U.K.") a capital is usually a name
# ("The U.S. Army"); only these words show that a new sentence began ("...the U.S. It").
_STARTER_WORDS = (
    "i i'm i've i'll i'd it it's its the this that these those there there's here here's "
    "then they they're we we're he he's she she's you you're my our your his her a an "
    "in on at as if so but and or also however now today yes no oh well what how why "
    "who when where which let's please thanks sure anyway after before for to do did "
    "does is are was were can could will would should"
)
_SENTENCE_STARTERS = frozenset(_STARTER_WORDS.split())
_SENTENCE_MARKS = ".!?…" + _CJK_TERMINATORS + _TRAILING
_CJK_RANGES = "\u3040-\u9fff\uac00-\ud7af\uf900-\ufaff"  # as in _is_cjk
# The only characters the scan stops at: brackets, quotes, endings, commas, and a space,
# bracket or CJK character right after a mark that may end a sentence. The rest of a
# token is skipped in C, so the per-character work is paid only where a decision is.
_STOPS = '\n"…' + _OPENERS + _CLOSERS + _CJK_TERMINATORS + _CJK_COMMAS + _ASCII_COMMAS
_NEXT_STOP = re.compile(
    f"[{re.escape(_STOPS)}]|(?<=[{re.escape(_SENTENCE_MARKS)}])[\\s\\[<{_CJK_RANGES}]"
)
_MARKUP = re.compile(rf"\[[^\[\]\n]*\]|{INLINE_TAG.pattern}")
# An unclosed bracket must not hold speech back forever.
_MAX_ASIDE_CHARS = 200
# Look-behind and look-ahead are bounded, so each character is examined a bounded number
# of times however the reply is cut into tokens.
_MAX_WORD = 64
_MAX_GAP = 32
_MAX_ENDING_RUN = 16
# A fragment longer than this keeps only its recent tail in the scanned buffer; the
# settled start waits in a list, so appending a token never copies the whole fragment.
_COMPACT_AT = 4096
_KEEP = 256


def _is_cjk(c: str) -> bool:
    return "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff"


def _is_cjk_text(c: str) -> bool:
    """A CJK character or CJK punctuation (an ellipsis after it ends a CJK sentence)."""
    return _is_cjk(c) or "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef"


class _SentenceSplitter:
    """The sentence divider's state: feed tokens, get finished fragments.

    `_buf` holds only text not yet emitted (its settled start in `_head` when a fragment
    grows long) and `_scan` is where scanning resumes, so each character is looked at a
    bounded number of times however many tokens arrive: a reply's time is linear in its
    length.
    """

    def __init__(self, *, comma_cut: bool, min_words: int) -> None:
        self._comma_cut_wanted = comma_cut
        self._comma_cut = comma_cut  # cleared once a spoken fragment is out
        self._min_words = min_words
        self._thinking = False
        self._typed_thinking = False  # the reasoning comes typed, not as <think> text
        self._held = ""  # a possible partial <think> tag
        self._list_number = 0  # the last numbered-list item seen ("2." continues "1.")
        self._head: list[str] = []
        self._reset_fragment()

    def _reset_fragment(self) -> None:
        self._head.clear()
        self._buf = ""
        self._scan = 0
        self._depth = 0  # open brackets
        self._quoted = False  # an ASCII " is open
        self._opened_at = 0  # where the outermost open bracket began
        self._words = 0  # words and CJK characters before `_counted_to`, for the comma cut
        self._cjk_chars = 0
        self._counted_to = 0

    def feed(self, token: str) -> list[Fragment]:
        out: list[Fragment] = []
        if self._typed_thinking:  # the answer begins: the reasoning before it is complete
            self._flush(out)
            self._thinking = self._typed_thinking = False
        text, self._held = self._held + token, ""
        while text:
            tag = _THINK_CLOSE if self._thinking else _THINK_OPEN
            at = text.find(tag)
            # A stray </think> (reasoning whose opening tag the server ate) is dropped; it
            # still ends a fragment, so the reasoning and the answer do not run together.
            stray = -1 if self._thinking else text.find(_THINK_CLOSE)
            if stray >= 0 and (at < 0 or stray < at):
                self._add(text[:stray], out)
                self._flush(out)
                text = text[stray + len(_THINK_CLOSE) :]
                continue
            if at < 0:
                hold = _partial_tag_start(text) if "<" in text else len(text)
                self._add(text[:hold], out)
                self._held = text[hold:]
                break
            self._add(text[:at], out)
            self._flush(out)  # thinking and speech never share a fragment
            self._thinking = not self._thinking
            text = text[at + len(tag) :]
        return out

    def feed_thinking(self, text: str) -> list[Fragment]:
        """Reasoning the provider streamed on its own channel: shown, never spoken.

        It is taken as written (a `<think>` inside it is just text); the answer text
        before it is complete.
        """
        out: list[Fragment] = []
        if not self._typed_thinking:
            self._add(self._held, out)
            self._held = ""
            self._flush(out)
            self._thinking = self._typed_thinking = True
        self._add(text, out)
        return out

    def finish(self) -> list[Fragment]:
        out: list[Fragment] = []
        self._add(self._held, out)
        self._held = ""
        self._flush(out)
        return out

    def end_message(self) -> list[Fragment]:
        """Something else (a tool status) comes between model messages: flush, start over.

        The next message starts outside thinking, and its first fragment may again be cut
        at a comma: the user has been waiting on the tool.
        """
        out = self.finish()
        self._thinking = self._typed_thinking = False
        self._comma_cut = self._comma_cut_wanted
        self._list_number = 0
        return out

    def _add(self, text: str, out: list[Fragment]) -> None:
        if text:
            self._buf += text
            self._split(out)

    def _flush(self, out: list[Fragment]) -> None:
        self._emit(self._buf, out)
        self._reset_fragment()

    def _emit(self, text: str, out: list[Fragment]) -> None:
        if self._head:
            text = "".join(self._head) + text
            self._head.clear()
        self._words = self._cjk_chars = 0
        text = text.strip()
        if text:
            out.append(Fragment(text, self._thinking))
            if not self._thinking:
                self._comma_cut = False

    def _split(self, out: list[Fragment]) -> None:
        buf, n = self._buf, len(self._buf)
        i, start = self._scan, 0
        depth, quoted, opened_at = self._depth, self._quoted, self._opened_at
        while i < n:
            stop = _NEXT_STOP.search(buf, i)
            if stop is None:
                i = n
                break
            i = stop.start()
            c = buf[i]
            if c == "\n":
                self._emit(buf[start:i], out)
                start, depth, quoted = i + 1, 0, False
                i += 1
                continue
            held = depth > 0
            if held and i - opened_at > _MAX_ASIDE_CHARS:
                depth, held = 0, False
            if (
                not held
                and i > start
                and buf[i - 1] in _SENTENCE_MARKS
                and (c.isspace() or c in "[<" or _is_cjk(c))
            ):
                ends = self._ends_sentence(buf, start, i)
                if ends is None:
                    break  # decided by text not here yet; resume at i
                if ends:
                    self._emit(buf[start:i], out)
                    start = i
            if c in _OPENERS and not (c == "(" and i > 0 and buf[i - 1] in _FACE_EYES):
                if not held:
                    opened_at = i
                depth += 1
            elif c in _CLOSERS and depth:
                depth -= 1
                if depth == 0 and self._ends_cjk_before(buf, start, i):
                    self._emit(buf[start : i + 1], out)  # 「你好！」
                    start = i + 1
            elif c == '"' and not held:
                # Which quote mark closes matters only after a CJK ending: in `。"好"` the
                # mark opens the next sentence. After a digit it opens nothing (5" long).
                if quoted or not (i > 0 and buf[i - 1].isdigit()):
                    quoted = not quoted
            elif not held and self._is_cjk_end(buf, start, i):
                # Emitted once the next character shows the ending is over ("！" may
                # become "！？"); the token that carries it needs no other token.
                j, still_quoted = i + 1, quoted
                while j < n and j - i < _MAX_ENDING_RUN:
                    if buf[j] == '"' and still_quoted:
                        still_quoted = False
                    elif buf[j] not in _ENDING_RUN:
                        break
                    j += 1
                if j == n and j - i < _MAX_ENDING_RUN:
                    break
                quoted = still_quoted
                self._emit(buf[start:j], out)
                start = i = j
                continue
            elif (c in _CJK_COMMAS or c in _ASCII_COMMAS) and self._cuts_at_comma(held):
                if c in _ASCII_COMMAS and i + 1 == n:
                    break  # "1," might become "1,000"
                long_enough = self._long_enough_for_comma_cut(buf, max(start, self._counted_to), i)
                self._counted_to = i + 1
                if long_enough and (c in _CJK_COMMAS or buf[i + 1].isspace()):
                    self._emit(buf[start : i + 1], out)
                    start = i + 1
            i += 1
        self._buf = buf[start:]
        self._scan, self._depth, self._quoted = i - start, depth, quoted
        self._opened_at = opened_at - start
        self._counted_to = self._counted_to - start if self._counted_to > start else 0
        if len(self._buf) > _COMPACT_AT and self._scan > _KEEP:
            self._compact(self._scan - _KEEP)

    def _compact(self, cut: int) -> None:
        if self._comma_cut:
            self._long_enough_for_comma_cut(self._buf, self._counted_to, cut)
        self._head.append(self._buf[:cut])
        self._buf = self._buf[cut:]
        self._scan -= cut
        self._opened_at -= cut
        self._counted_to = max(0, self._counted_to - cut)

    def _cuts_at_comma(self, held: bool) -> bool:
        # Only the first spoken fragment is cut early: thinking is never spoken.
        return not held and self._comma_cut and not self._thinking

    def _long_enough_for_comma_cut(self, buf: str, counted_to: int, i: int) -> bool:
        """Counts the words since the last comma looked at, so a long fragment is read once."""
        if counted_to < i:
            words = _MARKUP.sub(" ", buf[counted_to:i])
            self._words += len(words.split())
            self._cjk_chars += sum(map(_is_cjk, words))
        return self._words >= self._min_words or self._cjk_chars >= 2 * self._min_words

    def _is_cjk_end(self, buf: str, start: int, k: int) -> bool:
        """Is `buf[k]` a CJK sentence ending: 。！？； or an ellipsis after CJK text?"""
        c = buf[k]
        if c in _CJK_TERMINATORS:
            return True
        if c != "…":
            return False
        return self._after_cjk_text(buf, start, k)

    def _after_cjk_text(self, buf: str, start: int, k: int) -> bool:
        """Does the ellipsis ending at `buf[k]` follow CJK text ("嗯……", "好的...")?"""
        p, limit = k, max(start, k - _MAX_ENDING_RUN)
        while p > limit and buf[p - 1] in "….":
            p -= 1
        return p > start and _is_cjk_text(buf[p - 1])

    def _ends_cjk_before(self, buf: str, start: int, closer: int) -> bool:
        k = closer - 1
        while k > start and buf[k] in _TRAILING:
            k -= 1
        return k >= start and self._is_cjk_end(buf, start, k)

    def _ends_sentence(self, buf: str, start: int, i: int) -> bool | None:
        """Does `buf[start:i]` end a sentence? None when the text after `i` must decide."""
        k = i - 1
        while k > start and buf[k] in _TRAILING:
            k -= 1
        mark = buf[k]
        if mark in "!?" or mark in _CJK_TERMINATORS:
            return True
        if mark == "…" or (mark == "." and k > start and buf[k - 1] in ".…"):
            # "嗯……我想" ends at the ellipsis; "Well... I think" is one sentence.
            return self._after_cjk_text(buf, start, k)
        if mark != ".":
            return False
        j, limit = k, max(start, k - _MAX_WORD)
        while j > limit and not buf[j - 1].isspace() and buf[j - 1] not in _WORD_START:
            j -= 1
        if (j == limit and limit > start) or (j == 0 and self._head):
            return True  # a very long "word": a URL or a run-on, not an abbreviation
        word = buf[j:k]
        lowered = word.lower()
        if lowered in _ABBREVIATIONS:
            return False
        if len(word) == 1 and word.isupper():
            return False  # an initial: "J. R. R. Tolkien"
        if word.isdigit() and len(word) <= 3 and self._is_list_item(buf, start, j, int(word)):
            return False  # a numbered list item: "1. Preheat the oven"
        if lowered in _BEFORE_NUMBER:
            return _next_is_not_a_number(buf, i)  # "No. 5", but "I said no. Then"
        if lowered in _BEFORE_NUMBER_OR_NAME or (_DOTTED.fullmatch(lowered) and word[0].isupper()):
            return _next_word_starts_sentence(buf, i, _SENTENCE_STARTERS)  # "The U.S. Army"
        if lowered in _WEAK_ABBREVIATIONS or _DOTTED.fullmatch(lowered):
            return _next_word_starts_sentence(buf, i)
        return True

    def _is_list_item(self, buf: str, start: int, j: int, number: int) -> bool:
        """Is the number before "." a list marker: first in its line, after a colon, or the
        next number of a list already begun ("Steps: 1. Mix 2. Bake")?"""
        p, limit = j, max(start, j - _MAX_GAP)
        while p > limit and buf[p - 1].isspace():
            p -= 1
        first = p == start and not (start == 0 and self._head)
        after_colon = p > start and buf[p - 1] in ":："
        if first or after_colon or number == self._list_number + 1 > 1:
            self._list_number = number
            return True
        return False


def _next_word_at(buf: str, i: int) -> int | bool | None:
    """Where the word after `buf[i]` begins; True when a line break or a long gap comes
    first (a new sentence, whatever follows), None when it is not here yet."""
    j, n = i, len(buf)
    while j < n and buf[j].isspace():
        if buf[j] == "\n" or j - i > _MAX_GAP:
            return True
        j += 1
    return None if j == n else j


def _next_word_starts_sentence(
    buf: str, i: int, starters: frozenset[str] | None = None
) -> bool | None:
    """Does the word after `buf[i]` start a new sentence? None when it is not here yet.

    With `starters`, a capitalised word starts one only if it is among them.
    """
    j = _next_word_at(buf, i)
    if j is None or j is True:
        return j
    n = len(buf)
    c = buf[j]
    if c.islower() or c.isdigit() or c in ",;:)":
        return False
    if starters is None or not c.isalpha():
        return True
    end = j
    while end < n and (buf[end].isalpha() or buf[end] in "'’") and end - j < _MAX_GAP:
        end += 1
    if end == n:
        return None
    return buf[j:end].lower().replace("’", "'") in starters


def _next_is_not_a_number(buf: str, i: int) -> bool | None:
    """Is the word after `buf[i]` something other than a number? None when not here yet."""
    j = _next_word_at(buf, i)
    if j is None or j is True:
        return j
    return not (buf[j].isdigit() or buf[j] == "#")


def _partial_tag_start(text: str) -> int:
    """Where a trailing, possibly unfinished `<think>`/`</think>` starts (len(text) if none)."""
    at = text.rfind("<", max(0, len(text) - len(_THINK_CLOSE) + 1))
    if at >= 0:
        tail = text[at:]
        if _THINK_OPEN.startswith(tail) or _THINK_CLOSE.startswith(tail):
            return at
    return len(text)


async def sentence_divider(
    tokens: AsyncIterable[str | ThinkingDelta | Passthrough],
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
    splitter = _SentenceSplitter(
        comma_cut=first_fragment_at_comma, min_words=first_fragment_min_words
    )
    try:
        try:
            async for token in tokens:
                if isinstance(token, str | ThinkingDelta):
                    fed = (
                        splitter.feed(token)
                        if isinstance(token, str)
                        else splitter.feed_thinking(token.text)
                    )
                    for fragment in fed:
                        yield fragment
                    continue
                for fragment in splitter.end_message():
                    yield fragment
                yield token
        except Exception:
            # The model failed mid-reply: what it had said is still shown, then the error.
            for fragment in splitter.finish():
                yield fragment
            raise
        for fragment in splitter.finish():
            yield fragment
    finally:
        await close_source(tokens)


async def close_source(source: object) -> None:
    """Close an async generator feeding a stage, so an interrupted reply stops its source."""
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()

"""Where a streamed reply's sentences end: the one splitter (`app.agent.markup`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.agent.markup._tags import TAG, ThinkSplitter, without_trailing_tags

# ---------------------------------------------------------------- sentences

_CJK_TERMINATORS = "。！？；｡"
ENDING_MARKS = ".!?…" + _CJK_TERMINATORS
# Closing brackets and quotes: `He said "hi!"` ends at its quote.
CLOSING_MARKS = "\"')]}’”」』）】»"
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
# The only characters a splitter's scan stops at: brackets, quotes, endings, commas, and a space,
# bracket or CJK character right after a mark that may end a sentence. The rest of a
# token is skipped in C, so the per-character work is paid only where a decision is.
_STOPS = '\n"…' + _OPENERS + _CLOSERS + _CJK_TERMINATORS + _CJK_COMMAS + _ASCII_COMMAS
SENTENCE_STOPS = re.compile(
    f"[{re.escape(_STOPS)}]|(?<=[{re.escape(_SENTENCE_MARKS)}])[\\s\\[<{_CJK_RANGES}]"
)
# An unclosed bracket must not hold speech back forever.
_MAX_ASIDE_CHARS = 200
# Look-behind and look-ahead are bounded, so each character is examined a bounded number
# of times however the reply is cut into tokens.
_MAX_WORD = 64
_MAX_GAP = 32
_MAX_ENDING_RUN = 16
# A piece longer than this keeps only its recent tail in the scanned buffer; the settled
# start waits in a list, so appending a token never copies the whole piece.
_COMPACT_AT = 4096
_KEEP = 256


def ends_a_sentence(text: str) -> bool:
    """Whether `text` stops where a sentence may end: at an ending or a closing mark,
    tags after it aside."""
    last = without_trailing_tags(text)[-1:]
    return bool(last) and last in ENDING_MARKS + CLOSING_MARKS


@dataclass(slots=True, frozen=True)
class Piece:
    """One piece of a streamed reply as `SentenceSplitter` cut it: a sentence, a line,
    a run of reasoning, or the comma-cut start of a reply; stripped."""

    text: str
    is_thinking: bool
    end: int  # where the next piece begins in the text fed (a tag or line break before it)
    whole: bool  # ends where the text showed a sentence or line ended, not where it stopped


def _is_cjk(c: str) -> bool:
    return "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff"


def _is_cjk_text(c: str) -> bool:
    """A CJK character or CJK punctuation (an ellipsis after it ends a CJK sentence)."""
    return _is_cjk(c) or "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef"


class SentenceSplitter:
    """A streamed reply cut into sentences (`Piece`s) as soon as each is known to be
    complete; reasoning, typed or written as `<think>`, comes out marked as thinking.

    A sentence ending in "." waits for what follows (it may be "3.14", "Mr. Smith",
    "Jan. 5", "the U.S. Army"); CJK 。！？；… end one as soon as the next character is
    not more of the ending, closing quotes and brackets included. A line break ends a
    piece. Brackets and quotes are never cut, so a tag split across tokens stays whole.
    With `comma_cut`, the first spoken piece may end at a comma once it has `min_words`
    words (twice as many characters of CJK text), for a fast first sound. Where the text
    stops (a `<think>` tag, reasoning, another message, the end) what waits is decided
    as at a line's end, so it is cut the same however the text arrived.

    `_buf` holds only text not yet emitted (its settled start in `_head` when a piece
    grows long) and `_scan` is where scanning resumes, so each character is looked at a
    bounded number of times however many tokens arrive: a reply's time is linear in its
    length.
    """

    def __init__(self, *, comma_cut: bool = False, min_words: int = 3) -> None:
        self._comma_cut_wanted = comma_cut
        self._comma_cut = comma_cut  # cleared once a spoken piece is out
        self._min_words = min_words
        self._think = ThinkSplitter()
        self._thinking = False  # the text being added is reasoning
        self._typed_thinking = False  # the reasoning comes typed, not as <think> text
        self._list_number = 0  # the last numbered-list item seen ("2." continues "1.")
        self._fed = 0  # characters fed, tags included: where `Piece.end`s are counted
        self._head: list[str] = []
        self._reset_piece()

    @property
    def thinking(self) -> bool:
        """Whether the text fed last is reasoning."""
        return self._typed_thinking or self._think.thinking

    def _reset_piece(self) -> None:
        self._head.clear()
        self._buf = ""
        self._base = self._fed  # where `_buf` begins in the text fed
        self._scan = 0
        self._depth = 0  # open brackets
        self._quoted = False  # an ASCII " is open
        self._opened_at = 0  # where the outermost open bracket began
        self._words = 0  # words and CJK characters before `_counted_to`, for the comma cut
        self._cjk_chars = 0
        self._counted_to = 0

    def feed(self, text: str) -> list[Piece]:
        out: list[Piece] = []
        if self._typed_thinking:  # the answer begins: the reasoning before it is complete
            self._flush(out)
            self._thinking = self._typed_thinking = self._think.thinking = False
        for part in self._think.feed(text):
            self._thinking = part.is_thinking
            self._add(part.text, out)
            if part.tag:  # thinking and speech never share a piece
                self._flush(out, tag=part.tag)
        return out

    def feed_thinking(self, text: str) -> list[Piece]:
        """Reasoning the provider streamed on its own channel: a `<think>` inside it is
        just text; the answer text before it is complete."""
        out: list[Piece] = []
        if not self._typed_thinking:
            self._add_held(out)
            self._flush(out)
            self._thinking = self._typed_thinking = True
        self._add(text, out)
        return out

    def finish(self) -> list[Piece]:
        out: list[Piece] = []
        self._add_held(out)
        self._flush(out)
        return out

    def end_message(self) -> list[Piece]:
        """Something else (a tool status) comes between model messages: flush, start over.

        The next message starts outside thinking, and its first piece may again be cut
        at a comma: the user has been waiting on the tool.
        """
        out = self.finish()
        self._thinking = self._typed_thinking = self._think.thinking = False
        self._comma_cut = self._comma_cut_wanted
        self._list_number = 0
        return out

    def _add_held(self, out: list[Piece]) -> None:
        for part in self._think.finish():
            self._thinking = part.is_thinking
            self._add(part.text, out)

    def _add(self, text: str, out: list[Piece]) -> None:
        if text:
            self._buf += text
            self._fed += len(text)
            self._split(out, final=False)

    def _flush(self, out: list[Piece], *, tag: int = 0) -> None:
        """The text stops here (`tag` characters of a tag come next and go)."""
        self._split(out, final=True)
        self._fed += tag
        self._emit(self._buf, out, self._fed, whole=False)
        self._reset_piece()

    def _emit(self, text: str, out: list[Piece], end: int, *, whole: bool) -> None:
        if self._head:
            text = "".join(self._head) + text
            self._head.clear()
        self._words = self._cjk_chars = 0
        text = text.strip()
        if text:
            out.append(Piece(text, self._thinking, end, whole))
            if not self._thinking:
                self._comma_cut = False

    def _split(self, out: list[Piece], *, final: bool) -> None:
        """Cut what the buffer holds; `final`: no more text comes to decide by."""
        buf, n, base = self._buf, len(self._buf), self._base
        i, start = self._scan, 0
        depth, quoted, opened_at = self._depth, self._quoted, self._opened_at
        while i < n:
            stop = SENTENCE_STOPS.search(buf, i)
            if stop is None:
                i = n
                break
            i = stop.start()
            c = buf[i]
            if c == "\n":
                self._emit(buf[start:i], out, base + i + 1, whole=True)
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
                ends = self._ends_sentence(buf, start, i, final)
                if ends is None:
                    break  # decided by text not here yet; resume at i
                if ends:
                    self._emit(buf[start:i], out, base + i, whole=True)
                    start = i
            if c in _OPENERS and not (c == "(" and i > 0 and buf[i - 1] in _FACE_EYES):
                if not held:
                    opened_at = i
                depth += 1
            elif c in _CLOSERS and depth:
                depth -= 1
                if depth == 0 and self._ends_cjk_before(buf, start, i):
                    self._emit(buf[start : i + 1], out, base + i + 1, whole=True)  # 「你好！」
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
                if j == n and j - i < _MAX_ENDING_RUN and not final:
                    break
                quoted = still_quoted
                self._emit(buf[start:j], out, base + j, whole=True)
                start = i = j
                continue
            elif (c in _CJK_COMMAS or c in _ASCII_COMMAS) and self._cuts_at_comma(held):
                if c in _ASCII_COMMAS and i + 1 == n:
                    break  # "1," might become "1,000"
                long_enough = self._long_enough_for_comma_cut(buf, max(start, self._counted_to), i)
                self._counted_to = i + 1
                if long_enough and (c in _CJK_COMMAS or buf[i + 1].isspace()):
                    self._emit(buf[start : i + 1], out, base + i + 1, whole=False)
                    start = i + 1
            i += 1
        self._buf = buf[start:]
        self._base = base + start
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
        self._base += cut
        self._scan -= cut
        self._opened_at -= cut
        self._counted_to = max(0, self._counted_to - cut)

    def _cuts_at_comma(self, held: bool) -> bool:
        # Only the first spoken piece is cut early: thinking is never spoken.
        return not held and self._comma_cut and not self._thinking

    def _long_enough_for_comma_cut(self, buf: str, counted_to: int, i: int) -> bool:
        """Counts the words since the last comma looked at, so a long piece is read once."""
        if counted_to < i:
            words = TAG.sub(" ", buf[counted_to:i])
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

    def _ends_sentence(self, buf: str, start: int, i: int, final: bool) -> bool | None:
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
            return _next_is_not_a_number(buf, i, final)  # "No. 5", but "I said no. Then"
        if lowered in _BEFORE_NUMBER_OR_NAME or (_DOTTED.fullmatch(lowered) and word[0].isupper()):
            # "The U.S. Army"
            return _next_word_starts_sentence(buf, i, final, _SENTENCE_STARTERS)
        if lowered in _WEAK_ABBREVIATIONS or _DOTTED.fullmatch(lowered):
            return _next_word_starts_sentence(buf, i, final)
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


def _next_word_at(buf: str, i: int, final: bool) -> int | bool | None:
    """Where the word after `buf[i]` begins; True when a line break, a long gap or (when
    `final`) the end comes first (a new sentence, whatever follows), None when it is not
    here yet."""
    j, n = i, len(buf)
    while j < n and buf[j].isspace():
        if buf[j] == "\n" or j - i > _MAX_GAP:
            return True
        j += 1
    if j == n:
        return True if final else None
    return j


def _next_word_starts_sentence(
    buf: str, i: int, final: bool, starters: frozenset[str] | None = None
) -> bool | None:
    """Does the word after `buf[i]` start a new sentence? None when it is not here yet.

    With `starters`, a capitalised word starts one only if it is among them.
    """
    j = _next_word_at(buf, i, final)
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
    if end == n and not final:
        return None
    return buf[j:end].lower().replace("’", "'") in starters


def _next_is_not_a_number(buf: str, i: int, final: bool) -> bool | None:
    """Is the word after `buf[i]` something other than a number? None when not here yet."""
    j = _next_word_at(buf, i, final)
    if j is None or j is True:
        return j
    return not (buf[j].isdigit() or buf[j] == "#")

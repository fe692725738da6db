"""The reply pipeline: streamed model tokens become sentences the user sees, hears and
the avatar acts out (`sentence_divider → actions_extractor → display_processor → tts_filter`).

Each stage is an async-iterator transformer, usable and testable alone. Closing a stage
closes its source, so an interrupted reply also stops the model stream feeding it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from app.agent.outputs import Actions, SentenceOutput
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


@dataclass(slots=True, frozen=True)
class Fragment:
    """One sentence (or the comma-cut start of a reply), stripped; thinking is never spoken."""

    text: str
    is_thinking: bool = False


class DisplayFragment(NamedTuple):
    """A fragment with its actions and the text the transcript shows."""

    fragment: Fragment
    actions: Actions
    display_text: str


# ---------------------------------------------------------------- sentence_divider

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_CJK_TERMINATORS = "。！？"
_OPENERS = "([（【「『“"
_CLOSERS = ")]）】」』”"
# May follow a terminator and still belong to its sentence: `He said "hi!" Then`.
_TRAILING = _CLOSERS + "\"'’»"
_WORD_START = _OPENERS + "\"'"
_CJK_COMMAS = "，、；："
_ASCII_COMMAS = ",;:"
# Never end a sentence: titles and Latin abbreviations sit before more of the sentence.
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "mt", "ft", "cf", "e.g", "i.e"}
    | {"fig", "approx", "dept", "gen", "gov", "capt", "col", "lt", "sgt", "rev", "hon"}
)
# End a sentence only when the next word looks like a new sentence ("etc. Do you?").
_WEAK_ABBREVIATIONS = frozenset({"etc", "inc", "ltd", "co", "corp", "al", "esp"})
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")  # u.s, a.m, p.m
_TAG_IN_TEXT = re.compile(r"\[[^\]]*\]")
# An unclosed bracket must not hold speech back forever.
_MAX_ASIDE_CHARS = 200


def _is_cjk(c: str) -> bool:
    return "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff"


def _long_enough_for_comma_cut(text: str) -> bool:
    text = _TAG_IN_TEXT.sub(" ", text)
    return len(text.split()) >= 3 or sum(map(_is_cjk, text)) >= 6


class _SentenceSplitter:
    """The sentence divider's state: feed tokens, get finished fragments.

    `_buf` holds only text not yet emitted and `_scan` is where scanning resumes, so each
    character is looked at about once however many tokens arrive.
    """

    def __init__(self, first_fragment_at_comma: bool) -> None:
        self._comma_cut = first_fragment_at_comma  # cleared once a spoken fragment is out
        self._thinking = False
        self._held = ""  # a possible partial <think> tag
        self._buf = ""
        self._scan = 0
        self._depth = 0
        self._opened_at = 0

    def feed(self, token: str) -> list[Fragment]:
        out: list[Fragment] = []
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
                hold = _partial_tag_start(text)
                self._add(text[:hold], out)
                self._held = text[hold:]
                break
            self._add(text[:at], out)
            self._flush(out)  # thinking and speech never share a fragment
            self._thinking = not self._thinking
            text = text[at + len(tag) :]
        return out

    def finish(self) -> list[Fragment]:
        out: list[Fragment] = []
        self._add(self._held, out)
        self._held = ""
        self._flush(out)
        return out

    def _add(self, text: str, out: list[Fragment]) -> None:
        if text:
            self._buf += text
            self._split(out)

    def _flush(self, out: list[Fragment]) -> None:
        self._emit(self._buf, out)
        self._buf, self._scan, self._depth = "", 0, 0

    def _emit(self, text: str, out: list[Fragment]) -> None:
        text = text.strip()
        if text:
            out.append(Fragment(text, self._thinking))
            if not self._thinking:
                self._comma_cut = False

    def _split(self, out: list[Fragment]) -> None:
        buf, n = self._buf, len(self._buf)
        i, start, depth, opened_at = self._scan, 0, self._depth, self._opened_at
        while i < n:
            c = buf[i]
            if c == "\n":
                self._emit(buf[start:i], out)
                start, depth = i + 1, 0
                i += 1
                continue
            if depth and i - opened_at > _MAX_ASIDE_CHARS:
                depth = 0
            if depth == 0 and i > start and (c.isspace() or c == "[" or _is_cjk(c)):
                ends = self._ends_sentence(buf, start, i)
                if ends is None:
                    break  # decided by text not here yet; resume at i
                if ends:
                    self._emit(buf[start:i], out)
                    start = i
            if c in _OPENERS:
                if depth == 0:
                    opened_at = i
                depth += 1
            elif c in _CLOSERS and depth:
                depth -= 1
                if depth == 0 and _last_mark(buf, start, i) in _CJK_TERMINATORS:
                    self._emit(buf[start : i + 1], out)  # 「你好！」
                    start = i + 1
            elif depth == 0 and c in _CJK_TERMINATORS:
                # Unambiguous: emit now, with any punctuation already behind it.
                j = i + 1
                while j < n and (buf[j] in _CJK_TERMINATORS or buf[j] in _TRAILING):
                    j += 1
                self._emit(buf[start:j], out)
                start = i = j
                continue
            elif (c in _CJK_COMMAS or c in _ASCII_COMMAS) and self._cuts_at_comma(depth):
                if c in _ASCII_COMMAS and i + 1 == n:
                    break  # "1," might become "1,000"
                spaced = c in _CJK_COMMAS or buf[i + 1].isspace()
                if spaced and _long_enough_for_comma_cut(buf[start:i]):
                    self._emit(buf[start : i + 1], out)
                    start = i + 1
            i += 1
        self._buf = buf[start:]
        self._scan, self._depth, self._opened_at = i - start, depth, opened_at - start

    def _cuts_at_comma(self, depth: int) -> bool:
        # Only the first spoken fragment is cut early: thinking is never spoken.
        return depth == 0 and self._comma_cut and not self._thinking

    def _ends_sentence(self, buf: str, start: int, i: int) -> bool | None:
        """Does `buf[start:i]` end a sentence? None when the text after `i` must decide."""
        k = i - 1
        while k > start and buf[k] in _TRAILING:
            k -= 1
        mark = buf[k]
        if mark in "!?" or mark in _CJK_TERMINATORS:
            return True
        ellipsis = mark == "…" or (mark == "." and k > start and buf[k - 1] in ".…")
        if ellipsis:
            # "嗯……我想" pauses inside a sentence; "Well... I" may start a new one.
            return False if _is_cjk(buf[i]) else _next_word_starts_sentence(buf, i)
        if mark != ".":
            return False
        j = k
        while j > start and not buf[j - 1].isspace() and buf[j - 1] not in _WORD_START:
            j -= 1
        word = buf[j:k].lower()
        if word in _ABBREVIATIONS:
            return False
        if len(word) == 1 and buf[j].isupper():
            return False  # an initial: "J. R. R. Tolkien"
        if word.isdigit() and not buf[start:j].strip():
            return False  # a numbered list item: "1. Preheat the oven"
        if word in _WEAK_ABBREVIATIONS or _DOTTED.fullmatch(word):
            return _next_word_starts_sentence(buf, i)
        return True


def _last_mark(buf: str, start: int, closer: int) -> str:
    k = closer - 1
    while k > start and buf[k] in _TRAILING:
        k -= 1
    return buf[k] if k >= start else ""


def _next_word_starts_sentence(buf: str, i: int) -> bool | None:
    j = i
    while j < len(buf) and buf[j].isspace():
        if buf[j] == "\n":
            return True
        j += 1
    if j == len(buf):
        return None
    c = buf[j]
    return not (c.islower() or c.isdigit() or c in ",;:)")


def _partial_tag_start(text: str) -> int:
    """Where a trailing, possibly unfinished `<think>`/`</think>` starts (len(text) if none)."""
    at = text.rfind("<", max(0, len(text) - len(_THINK_CLOSE) + 1))
    if at >= 0:
        tail = text[at:]
        if _THINK_OPEN.startswith(tail) or _THINK_CLOSE.startswith(tail):
            return at
    return len(text)


async def sentence_divider(
    tokens: AsyncIterable[str], *, first_fragment_at_comma: bool = True
) -> AsyncGenerator[Fragment, None]:
    """Split streamed tokens into sentences as they arrive; `<think>` content is marked.

    The first spoken fragment may end at a comma once it has a few words, for a fast
    first sound. A sentence ending in "." waits for the next token (it may be "3.14" or
    "Mr. Smith"); CJK 。！？ end a sentence at once. Brackets are never cut, so an
    expression tag split across tokens stays whole.
    """
    splitter = _SentenceSplitter(first_fragment_at_comma)
    try:
        async for token in tokens:
            for fragment in splitter.feed(token):
                yield fragment
        for fragment in splitter.finish():
            yield fragment
    finally:
        await _close(tokens)


# ---------------------------------------------------------------- actions_extractor

_EXPRESSION_TAG = re.compile(
    r"\[\s*([A-Za-z][\w-]*)\s*(?::\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*)?\](?!\()"
)


def _extract_actions(text: str, known: dict[str, str]) -> tuple[str, Actions]:
    actions = Actions()

    def take(match: re.Match[str]) -> str:
        name = known.get(match[1].lower())
        if name is None:
            return match[0]  # "[laughs]" is an aside, not an expression
        actions.expressions.append(name)
        actions.intensities[name] = min(1.0, max(0.0, float(match[2]))) if match[2] else 1.0
        return " "  # keeps "so[joy]happy" two words; display_processor tidies the spaces

    return _EXPRESSION_TAG.sub(take, text).strip(), actions


async def actions_extractor(
    fragments: AsyncIterable[Fragment], *, expressions: Sequence[str] = EXPRESSIONS
) -> AsyncGenerator[tuple[Fragment, Actions], None]:
    """Take `[joy]` / `[joy:0.6]` tags of known expressions out of each spoken fragment.

    Names match case-insensitively; every found name gets an intensity (1.0 when none is
    written, clamped to 0..1). Thinking fragments pass through with no actions.
    """
    known = {name.lower(): name for name in expressions}
    try:
        async for fragment in fragments:
            if fragment.is_thinking or "[" not in fragment.text:
                yield fragment, Actions()
                continue
            text, actions = _extract_actions(fragment.text, known)
            yield Fragment(text, fragment.is_thinking), actions
    finally:
        await _close(fragments)


# ---------------------------------------------------------------- display_processor

_CJK_IDEOGRAPH = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SPACES = re.compile(r"[ \t\u3000]+")
_SPACE_BEFORE_PUNCT = re.compile(r" +(?=[,.!?;:…]+(?:\s|$))| +(?=[，。！？、；：）」』”])")
_SPACE_BETWEEN_CJK = re.compile(rf"(?<=[{_CJK_IDEOGRAPH}，。！？、；：]) +(?=[{_CJK_IDEOGRAPH}])")


def _tidy(text: str) -> str:
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    return _SPACE_BETWEEN_CJK.sub("", text).strip()


async def display_processor(
    items: AsyncIterable[tuple[Fragment, Actions]],
) -> AsyncGenerator[DisplayFragment, None]:
    """The transcript text: tags already gone, whitespace left by them tidied.

    Thinking is shown as written (and stays marked on the fragment); markdown, emoji and
    asides are kept for the reader.
    """
    try:
        async for fragment, actions in items:
            shown = fragment.text if fragment.is_thinking else _tidy(fragment.text)
            yield DisplayFragment(fragment, actions, shown)
    finally:
        await _close(items)


# ---------------------------------------------------------------- tts_filter

_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>+\s*|(?:[-*+•]|\d+[.)])\s+)+")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
# A starred span opening or closing a sentence is a roleplay action ("*waves* Hi!");
# one inside a sentence is emphasis and its words are spoken ("I *really* do").
_ACTION = re.compile(r"^\s*\*[^*\n]+\*|\*[^*\n]+\*[\s.!?。！？]*$")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])|(?<!\w)_([^_\n]+?)_(?!\w)")
_CODE = re.compile(r"`+([^`]*)`+")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]|【[^【】]*】")
_EMOJI = re.compile(
    "["
    "\U0001f000-\U0001faff"  # pictographs, emoticons, transport, flags, extended-A
    "\u2600-\u27bf"  # miscellaneous symbols and dingbats (☀ ♪ ✨ ❤)
    "\u2b00-\u2bff"  # ⭐ ⬆
    "\u2300-\u23ff"  # ⌚ ⏰
    "\u2190-\u21ff"  # arrows
    "\ufe00-\ufe0f\u200d\u20e3"  # variation selectors, joiner, keycap
    "\U000e0020-\U000e007f"  # flag tag sequences
    "\u3030\u303d\u3297\u3299"
    "]+"
)
_UNSPOKEN_MARKS = re.compile(r"[*`|~～]+")


def _speakable(text: str) -> str:
    text = _LINE_MARKUP.sub("", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    text = _CODE.sub(r"\1", text)
    text = _BOLD.sub(lambda m: m[1] or m[2], text)
    text = _ACTION.sub(" ", text)
    text = _EMPHASIS.sub(lambda m: m[1] or m[2], text)
    while True:  # innermost asides first, so nested ones go too
        text, removed = _ASIDE.subn(" ", text)
        if not removed:
            break
    text = _EMOJI.sub(" ", text)
    text = _UNSPOKEN_MARKS.sub(" ", text).replace("_", " ")
    text = _tidy(text)
    return text if any(c.isalnum() for c in text) else ""


async def tts_filter(items: AsyncIterable[DisplayFragment]) -> AsyncGenerator[SentenceOutput, None]:
    """What is spoken: markdown marks, emoji, URLs, asides, actions and code blocks are not.

    Thinking is never spoken. A fragment with nothing to say is still passed on when it
    has display text or actions (the avatar needs its expression); an empty one is dropped.
    """
    in_code_block = False
    try:
        async for fragment, actions, shown in items:
            if fragment.is_thinking:
                spoken = ""
            elif fragment.text.lstrip().startswith("```"):
                in_code_block, spoken = not in_code_block, ""
            elif in_code_block:
                spoken = ""
            else:
                spoken = _speakable(fragment.text)
            if shown or spoken or actions:
                yield SentenceOutput(shown, spoken, actions, fragment.is_thinking)
    finally:
        await _close(items)


# ---------------------------------------------------------------- the whole pipeline


def reply_pipeline(
    tokens: AsyncIterable[str],
    *,
    expressions: Sequence[str] = EXPRESSIONS,
    first_fragment_at_comma: bool = True,
) -> AsyncGenerator[SentenceOutput, None]:
    """Model tokens in, `SentenceOutput`s out, each as soon as its sentence is complete.

    A tag belongs to the sentence it starts (or sits in). A tag after the last sentence
    ("Bye! [joy]") comes out as a final output with empty text and that expression.
    """
    fragments = sentence_divider(tokens, first_fragment_at_comma=first_fragment_at_comma)
    return tts_filter(display_processor(actions_extractor(fragments, expressions=expressions)))


async def _close(source: object) -> None:
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()

"""Expression tags (`[joy]`, `[joy:0.6]`, `【开心】`, `<|ACT {...}|>`) and reasoning written
into the text (`<think>…</think>`): the one reading of both (`app.agent.markup`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.agent.expression_words import is_feeling, resolve_expression, resolve_inside

# ---------------------------------------------------------------- expression tags

# `[joy]`, `[Joy:0.6]`, `[big smile]`, `[开心]`, `【难过】`: one or two words of letters
# (digits or "_" only in the art's own names, `[f03]`, `[exp_2]`; `[p1]` names an image,
# see `take_tags`); not a markdown link label (`[docs](...)`). `<|...|>` is a model's
# inline tag (`<|ACT {"emotion": "joy"}|>`) or a stray special token (`<|im_end|>`),
# bounded so an unclosed `<|` costs at most 500 characters of look-ahead.
_TAG_WORDS = r"[^\W\d_][\w'-]*(?:[ '-][^\W\d_]+)?"
_INTENSITY = r"(?::\s*(?P<intensity>[+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*)?"
TAG = re.compile(
    rf"[\[【]\s*(?P<words>{_TAG_WORDS})\s*{_INTENSITY}[\]】](?!\()"
    r"|<\|(?P<inline>[^\n]{0,500}?)\|>"
)
_TAG_OPENERS = ("[", "【", "<|")
_TAG_CLOSERS = ("]", "】", "|>")


def might_hold_tag(text: str) -> bool:
    """A quick test before `take_tags`: most sentences hold no tag."""
    return "[" in text or "【" in text or "<|" in text


def is_tag_name(name: str) -> bool:
    """Whether `[name]` in a reply is a tag naming `name` (an avatar's expression name)."""
    match = TAG.fullmatch(f"[{name}]")
    return match is not None and match["words"] == name


def take_tags(text: str, known: Mapping[str, str]) -> tuple[str, list[tuple[str, float]]]:
    """`text` without its tags, and the expressions they name with their intensities, in
    order. `known` maps the pack's expression names, lower-cased, to the names.

    A tag is never shown or spoken: it names the pack's expression, the nearest one for a
    word of feeling (`[laughs]`, `[sorrow]`, `[开心]`), or nothing (it just goes). Only a
    capitalised name that is no feeling (`[Tofu]`, an answer to "what's my cat called?")
    keeps its words, without the brackets. A bracketed label with digits that is none of
    the pack's names (`[p1]`) is no tag and stays. An inline `<|...|>` tag always goes.
    """
    named: list[tuple[str, float]] = []

    def take(match: re.Match[str]) -> str:
        inline = match["inline"]
        if inline is not None:
            for name, intensity in _inline_expressions(inline):
                found = resolve_expression(name, known)
                if found is not None:
                    named.append((found, intensity))
            return " "
        words = match["words"]
        if not _letters_only(words) and words.lower() not in known:
            return match[0]
        found = _tag_expression(words, known)
        if found is None and words[:1].isupper() and not is_feeling(words):
            return f" {words} "
        if found is not None:
            written = match["intensity"]
            named.append((found, _intensity(written) if written else 1.0))
        return " "  # keeps "so[joy]happy" two words; the shown text tidies the spaces

    return TAG.sub(take, text).strip(), named


def without_trailing_tags(text: str) -> str:
    """`text` without the tags (and spaces) it ends with: "Bye! [joy]" is "Bye!"."""
    text = text.rstrip()
    while text.endswith(_TAG_CLOSERS):
        starts = (text.rfind(opener) for opener in _TAG_OPENERS)
        at = next((s for s in sorted(starts, reverse=True) if TAG.fullmatch(text, s)), -1)
        if at < 0:
            break
        text = text[:at].rstrip()
    return text


def _letters_only(words: str) -> bool:
    return not any(c == "_" or c.isdecimal() for c in words)


def _tag_expression(words: str, known: Mapping[str, str]) -> str | None:
    """The pack's expression a tag's words mean: the whole, then each word, then (for
    Chinese, written without spaces) a feeling word inside it."""
    found = resolve_expression(words, known)
    if found is None and (" " in words or "-" in words):
        for word in words.replace("-", " ").split():
            found = found or resolve_expression(word, known)
    if found is None and not words.isascii():
        found = resolve_inside(words, known)
    return found


def _intensity(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 1.0
    try:
        number = float(value)
    except ValueError:
        return 1.0
    return min(1.0, max(0.0, number)) if math.isfinite(number) else 1.0


def _inline_expressions(body: str) -> list[tuple[str, float]]:
    """The (emotion, intensity) pairs in `<|ACT {"emotion": "joy", "intensity": 0.6}|>`."""
    body = body.strip()
    if body[:3].upper() != "ACT":
        return []
    try:
        data = json.loads(body[3:])
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    names = data.get("emotion", data.get("expression"))
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list):
        return []
    intensity = _intensity(data.get("intensity", 1.0))
    return [(name, intensity) for name in names if isinstance(name, str)]


# ---------------------------------------------------------------- reasoning as text

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass(slots=True, frozen=True)
class ThinkPart:
    """A run of answer or reasoning text; `tag` is the length of the `<think>` or
    `</think>` right after it (0: none), which ends the run."""

    text: str
    is_thinking: bool
    tag: int = 0


class ThinkSplitter:
    """Streamed text with `<think>…</think>` written into it, as answer and reasoning runs.

    A tag split across chunks is held until it is whole. A stray `</think>` (reasoning
    whose opening tag the server ate) is dropped but still ends its run, so the
    reasoning and the answer do not run together.
    """

    __slots__ = ("_held", "thinking")

    def __init__(self) -> None:
        self.thinking = False  # inside `<think>`; whoever feeds it may end that
        self._held = ""  # a possible partial tag

    def feed(self, chunk: str) -> list[ThinkPart]:
        out: list[ThinkPart] = []
        text, self._held = self._held + chunk, ""
        while text:
            tag = THINK_CLOSE if self.thinking else THINK_OPEN
            at = text.find(tag)
            stray = -1 if self.thinking else text.find(THINK_CLOSE)
            if stray >= 0 and (at < 0 or stray < at):
                out.append(ThinkPart(text[:stray], False, len(THINK_CLOSE)))
                text = text[stray + len(THINK_CLOSE) :]
                continue
            if at < 0:
                hold = _partial_tag_start(text) if "<" in text else len(text)
                if hold:
                    out.append(ThinkPart(text[:hold], self.thinking))
                self._held = text[hold:]
                break
            out.append(ThinkPart(text[:at], self.thinking, len(tag)))
            self.thinking = not self.thinking
            text = text[at + len(tag) :]
        return out

    def finish(self) -> list[ThinkPart]:
        """The text held back as a possible tag, now that no more comes."""
        held, self._held = self._held, ""
        return [ThinkPart(held, self.thinking)] if held else []


def _partial_tag_start(text: str) -> int:
    """Where a trailing, possibly unfinished `<think>`/`</think>` starts (len(text) if none)."""
    at = text.rfind("<", max(0, len(text) - len(THINK_CLOSE) + 1))
    if at >= 0:
        tail = text[at:]
        if THINK_OPEN.startswith(tail) or THINK_CLOSE.startswith(tail):
            return at
    return len(text)

"""What a check says: a pass with a detail, a pass with a warning (`Warn`), or a
failure in words (`CheckFailed`), collected as a timed `CheckResult` by `run_check`.

Messages a person reads in the app are `Words`: English text with `{name}` fields,
which `str()` fills in and a UI may translate first (Qt context `Words.CONTEXT`;
`scripts/translations.py` lists every `Words("...")` text of `app/checks` for it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class Words:
    """A message for a person: English `text` with `{name}` fields filled from `fields`."""

    CONTEXT: ClassVar[str] = "Checks"

    text: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.shown(lambda text: text)

    def shown(self, translate: Callable[[str], str]) -> str:
        """The message in the language `translate` gives for its text."""
        text = translate(self.text)
        return text.format(**self.fields) if self.fields else text


Said = str | Words
"""What a check says: plain text (a device's name, a file's size) or `Words`."""


@dataclass(frozen=True, slots=True)
class Found:
    """What a check found, said twice: in `plain` words a newcomer can act on ("Speech
    recognition is ready (works offline)") and as the technical `detail` (the model's
    name and size), which a UI keeps one click away."""

    plain: Said
    detail: Said


class CheckFailed(RuntimeError):
    """A check did not pass; the message says why, in words (never a secret), and
    `plain` (when given) says it for a newcomer, with what they can do."""

    def __init__(self, words: Said, *, plain: Said | None = None) -> None:
        super().__init__(str(words))
        self.words = words
        self.plain = plain


class Warn(Exception):
    """A check that passed but has something to say (e.g. no audio device)."""


def in_words(exc: BaseException) -> str:
    """An exception's own message, or its type's name when it has none."""
    return str(exc).strip() or type(exc).__name__


@dataclass
class CheckResult:
    """One check: its name, whether it passed, how long it took, and in words what it
    found (`detail`), what is wrong (`problem`) or what to know (`warning`); `plain`
    is the same for a newcomer (empty when the check has no plain words)."""

    name: str
    ok: bool
    seconds: float
    detail: str = ""
    problem: str = ""
    warning: str = ""
    plain: str = ""

    @property
    def text(self) -> str:
        """The technical line: the problem, else the warning, else the detail."""
        return self.problem or self.warning or self.detail

    @property
    def line(self) -> str:
        """The line a newcomer reads: the plain words, else the name and the text."""
        return self.plain or f"{self.name}: {self.text}"


def run_check(
    name: str, check: Callable[[], Said | Found], *, show: Callable[[Said], str] = str
) -> CheckResult:
    """Run `check` and time it. What it returns is the detail (a `Found`: the plain
    words and the detail); a `Warn` passes with a warning; a `CheckFailed` (or any
    `RuntimeError`) fails with its own message and anything else with the exception's
    type as well. `show` turns `Words` into text (a UI translates them there)."""
    started = time.perf_counter()
    result = CheckResult(name=name, ok=True, seconds=0.0)
    try:
        found = check()
        if isinstance(found, Found):
            result.plain = show(found.plain)
            result.detail = show(found.detail)
        else:
            result.detail = show(found)
    except Warn as exc:
        result.warning = str(exc)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        result.ok = False
        if isinstance(exc, CheckFailed):
            result.problem = show(exc.words)
            result.plain = show(exc.plain) if exc.plain is not None else ""
        elif isinstance(exc, RuntimeError):
            result.problem = str(exc)
        else:
            text = str(exc).strip()
            result.problem = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    result.seconds = round(time.perf_counter() - started, 3)
    return result

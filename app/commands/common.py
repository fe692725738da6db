"""What the `companion` subcommands share: failing in one line, and naming the system
library to install when one is missing."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.session.turn import TurnResult

EXIT_USAGE = 2


def fail(message: str, code: int = 1) -> int:
    print(f"companion: {message}", file=sys.stderr)
    return code


def not_saved_words(result: TurnResult) -> str:
    """Why a command's turn (a `TurnResult` with `saved` False) is not in the history:
    the process ends, so what waited in memory is lost with it."""
    problem = result.save_problem or "unknown"
    # The problem is in the app's own words (`write_problem_words`): they say which fix.
    allowed = "read-only" not in problem and "may not be written" not in problem
    fix = "make some room" if allowed else "let Companion write to its data folder"
    return (
        f"the turn could not be saved to the history: {problem}. "
        f"Its messages are lost when this command ends; {fix} and ask again."
    )


# A shared library a frozen or installed app needs from the system: what to install.
_SYSTEM_LIBRARIES = (
    ("portaudio", "PortAudio", "libportaudio2 (Debian/Ubuntu) or portaudio (Fedora, Homebrew)"),
    ("espeak", "espeak-ng", "espeak-ng (Debian/Ubuntu: espeak-ng-data and libespeak-ng1)"),
)


def missing_library_message(exc: BaseException) -> str | None:
    """Words naming the package to install when `exc` is a missing PortAudio/espeak-ng."""
    text = str(exc).lower()
    for key, name, package in _SYSTEM_LIBRARIES:
        if key in text:
            return f"the {name} library was not found ({exc}). Install {package}, then start again."
    return None

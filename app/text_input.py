"""Text as it comes into Companion — typed on the command line or in the window, a tool's
result (an MCP server, the clipboard), a program using the agent — made valid Unicode at
the edge, so every later part (a model's wire, the history file, the terminal) can
encode it.

Python hands over what it could not decode as lone surrogates: bytes of a command line
that are not UTF-8 (`surrogateescape`), a UTF-16 source cut between the halves of a
pair, a JSON `"\\ud800"` escape. A pair is joined into its character; each lone half
becomes U+FFFD and is counted, so the user can be told.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REPLACEMENT = "\ufffd"
_SURROGATES = re.compile("[\ud800-\udfff]+")


@dataclass(frozen=True, slots=True)
class ReadText:
    """`text` made valid; `replaced`: how many characters of it could not be read (each
    is now U+FFFD)."""

    text: str
    replaced: int = 0


def read_text(text: str) -> ReadText:
    """`text` with its surrogates joined into characters or replaced (see the module)."""
    if _SURROGATES.search(text) is None:
        return ReadText(text)
    replaced = 0

    def fix(found: re.Match[str]) -> str:
        nonlocal replaced
        run = found.group()
        # Through UTF-16: a high half followed by a low half is one character again.
        fixed = run.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        replaced += fixed.count(REPLACEMENT)
        return fixed

    return ReadText(_SURROGATES.sub(fix, text), replaced)


def readable(text: str) -> str:
    """`read_text(text).text`: for a source whose damage needs no words of its own."""
    return read_text(text).text


def replaced_words(where: str, count: int) -> str:
    """What the user is told when `count` characters of `where` could not be read."""
    what = "1 character" if count == 1 else f"{count} characters"
    return (
        f"{where} held {what} that could not be read (not valid UTF-8); "
        f"each was sent as {REPLACEMENT!r} instead."
    )

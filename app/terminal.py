"""Text on its way to a terminal: what a command prints (a reply, what was typed, a
server's error, a file's name) and the log lines.

A model's reply or a typed argument can hold control characters that would recolour,
retitle or clear the user's terminal; they go out shown as escapes (`\\u001b`, as JSON
writes them), never run. `VisibleStream` does it to everything a command writes, so no
`print` can forget. Line breaks and tabs stay; characters no encoding can write (lone
surrogates) become U+FFFD instead of a crash.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from app.text_input import readable

# C0 controls but tab and line feed, DEL, and the C1 controls (U+009B is a CSI too).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def visible(text: str) -> str:
    """`text` with its control characters written as escapes (valid inside a JSON
    string too: `\\u001b`) and its lone surrogates as U+FFFD."""
    return _CONTROLS.sub(_escape, readable(text))


class VisibleStream:
    """A text stream (stdout, stderr) that writes everything through `visible`; the
    rest (flush, fileno, isatty, buffer, encoding) is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

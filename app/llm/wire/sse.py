"""Server-sent-event framing for streamed HTTP replies, with a limit on one event's size.

httpx-sse interprets the fields of each line (`SSEDecoder`); the lines are cut here,
because a server that never ends a line would otherwise grow one string without bound
(a 10 MB line once took 950 MB and 19 s). `iter_sse` raises `SSEEventTooLarge` as soon
as the line or event being read passes `max_event_chars`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

import httpx
from httpx_sse import ServerSentEvent, SSEError
from httpx_sse._decoders import SSEDecoder  # the field rules of the spec (not re-exported)

__all__ = [
    "MAX_EVENT_CHARS",
    "SSE_FRAMING",
    "SSEError",
    "SSEEventTooLarge",
    "SSEFraming",
    "ServerSentEvent",
    "is_event_stream",
    "iter_sse",
]

# Far above any event a chat model sends (a Responses `response.completed` with a long
# answer is tens of kilobytes), far below what hurts.
MAX_EVENT_CHARS = 1 << 20


class SSEEventTooLarge(SSEError):
    """One event (or one line) of the stream is larger than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a single event of the stream is larger than {limit:,} characters")
        self.limit = limit


def is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0]
    return "text/event-stream" in content_type


class _Lines:
    """Text in any pieces, out as lines (only CR, LF and CRLF end one, as the SSE spec
    says), with the line still open never longer than `limit`."""

    __slots__ = ("_open", "_open_size", "_trailing_cr", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: list[str] = []
        self._open_size = 0
        self._trailing_cr = False

    def feed(self, text: str) -> list[str]:
        if self._trailing_cr:  # a CR at a piece's end may be the first half of CRLF
            text = "\r" + text
            self._trailing_cr = False
        if text.endswith("\r"):
            self._trailing_cr = True
            text = text[:-1]
        if not text:
            return []
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            self._open.append(text)
            self._open_size += len(text)
            if self._open_size > self.limit:
                raise SSEEventTooLarge(self.limit)
            return []
        lines = text.split("\n")
        if self._open:
            lines[0] = "".join(self._open) + lines[0]
            self._open.clear()
        rest = lines.pop()  # after the last line break: the start of the next line
        self._open_size = len(rest)
        if rest:
            self._open.append(rest)
        if self._open_size > self.limit:  # (a whole line too long is the caller's to see)
            raise SSEEventTooLarge(self.limit)
        return lines

    def flush(self) -> list[str]:
        if not self._open and not self._trailing_cr:
            return []
        line = "".join(self._open)
        self._open.clear()
        self._open_size = 0
        self._trailing_cr = False
        return [line]


async def iter_sse(
    response: httpx.Response, *, max_event_chars: int = MAX_EVENT_CHARS
) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of a `text/event-stream` body, in order, without comments or keep-alives.

    Raises `SSEError` when the body is not an event stream, and `SSEEventTooLarge` when
    one event passes `max_event_chars`.
    """
    if not is_event_stream(response):
        kind = response.headers.get("content-type", "").partition(";")[0]
        raise SSEError(f"Expected Content-Type text/event-stream, got {kind!r}")
    lines = _Lines(max_event_chars)
    decoder = SSEDecoder()
    event_size = 0
    async for text in response.aiter_text():
        for line in lines.feed(text):
            event_size = event_size + len(line) if line else 0
            if event_size > max_event_chars:
                raise SSEEventTooLarge(max_event_chars)
            event = decoder.decode(line)
            if event is not None:
                yield event
    for line in lines.flush():  # an event without its closing blank line is not one
        event = decoder.decode(line)
        if event is not None:
            yield event


class SSEFraming:
    """The `Framing` of every wire but Bedrock's: (event name, data) per server-sent event."""

    media_type = "text/event-stream"

    def __init__(self, max_event_chars: int = MAX_EVENT_CHARS) -> None:
        self.max_event_chars = max_event_chars

    def matches(self, response: httpx.Response) -> bool:
        return is_event_stream(response)

    async def events(self, response: httpx.Response) -> AsyncGenerator[tuple[str, str], None]:
        events = iter_sse(response, max_event_chars=self.max_event_chars)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event.event, event.data


SSE_FRAMING = SSEFraming()

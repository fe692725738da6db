"""AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
ConverseStream sends it: each message is a prelude (total and header lengths, CRC32),
typed headers, a JSON payload and a CRC32 of the whole. botocore's decoder (AWS's own)
checks both checksums; a mismatch, a bad length or a body that stops inside a message
is a `StreamFramingError` in words.

Event names as the wire parser gets them: an event is its `:event-type`
(`contentBlockDelta`); an exception is `exception:` and its `:exception-type`
(`exception:throttlingException`); an error message is `error:` and its `:error-code`,
with `{"message": :error-message}` as data.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx
from botocore.eventstream import EventStreamBuffer, ParserError

from app.llm.wire.base import StreamFramingError

__all__ = ["EVENT_STREAM", "MEDIA_TYPE", "EventStreamFraming", "event_name"]

MEDIA_TYPE = "application/vnd.amazon.eventstream"


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def event_name(headers: dict[str, Any]) -> str:
    """The name a message goes to the parser under (see the module docstring)."""
    kind = _text(headers.get(":message-type", "event"))
    if kind == "exception":
        return f"exception:{_text(headers.get(':exception-type', ''))}"
    if kind == "error":
        return f"error:{_text(headers.get(':error-code', ''))}"
    return _text(headers.get(":event-type", ""))


class EventStreamFraming:
    """The `Framing` of Bedrock's streamed replies."""

    media_type = MEDIA_TYPE

    def matches(self, response: httpx.Response) -> bool:
        return response.headers.get("content-type", "").partition(";")[0].strip() == MEDIA_TYPE

    async def events(self, response: httpx.Response) -> AsyncGenerator[tuple[str, str], None]:
        buffer = EventStreamBuffer()
        received = used = 0  # bytes fed to the decoder, and bytes of whole messages
        async for chunk in response.aiter_bytes():
            buffer.add_data(chunk)
            received += len(chunk)
            while True:
                try:
                    message = next(buffer)
                except StopIteration:
                    break
                except ParserError as exc:
                    raise StreamFramingError(
                        f"sent a damaged event-stream message ({exc}); the reply was stopped."
                    ) from None
                used += message.prelude.total_length
                headers = message.headers
                data = _text(message.payload)
                if _text(headers.get(":message-type", "event")) == "error":
                    text = _text(headers.get(":error-message", ""))
                    data = json.dumps({"message": text})
                yield event_name(headers), data
        if received > used:
            raise StreamFramingError(
                f"ended its reply in the middle of an event-stream message "
                f"({received - used} bytes of it arrived)."
            )


EVENT_STREAM = EventStreamFraming()

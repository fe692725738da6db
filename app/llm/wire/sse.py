"""Server-sent-event framing for streamed HTTP replies (httpx-sse does the parsing)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

__all__ = ["SSEError", "ServerSentEvent", "is_event_stream", "iter_sse"]


def is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0]
    return "text/event-stream" in content_type


def iter_sse(response: httpx.Response) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of a `text/event-stream` body, in order, without comments or keep-alives.

    Raises `SSEError` on iteration when the body is not an event stream.
    """
    return EventSource(response).aiter_sse()

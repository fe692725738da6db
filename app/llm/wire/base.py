"""The shape every HTTP wire module has, so one generic client drives them all.

A wire module (`openai_chat`, `anthropic`, `gemini`, `openai_responses`, `mistral`,
`bedrock`) is itself the implementation of `Wire`: the names below live at module level.
Its stream parser is a `WireParser`; its `FRAMING` cuts a streamed body into events
(server-sent events for most, AWS's binary event stream for Bedrock).
The contract in words is `/work/notes/wire_spec.md`; the client that
uses it is `app.llm.http_client.HttpWireClient`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Protocol

import httpx

from app.llm.errors import ProviderError
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.request import LLMRequest

__all__ = ["Framing", "StreamFramingError", "Wire", "WireParser"]


class StreamFramingError(Exception):
    """A streamed body that breaks its framing (a checksum that does not match, a message
    cut in half). The message says how, in words, after the provider's label."""


class Framing(Protocol):
    """How a streamed reply body is cut into events."""

    media_type: str
    """What a streaming request asks for in `Accept`."""

    def matches(self, response: httpx.Response) -> bool:
        """Whether the reply is a stream in this framing (by its content type)."""
        ...

    def events(self, response: httpx.Response) -> AsyncGenerator[tuple[str, str], None]:
        """(name, data) per event, in order; raises `StreamFramingError` for a broken
        body. For SSE the name is the `event:` field; see each framing for its own."""
        ...


class WireParser(Protocol):
    """One reply's stream parser: SSE events in, `ModelStreamEvent`s out.

    No method raises: broken input ends the stream with `response.failed`. After a
    terminal event every call returns an empty list.
    """

    @property
    def terminated(self) -> bool:
        """A terminal event was produced."""
        ...

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        """One event of the wire's framing: for SSE `event` is its `event:` name ("" when
        absent) and `data` its data; other framings say what their names are.

        Bad JSON or unknown shapes end the stream with `response.failed`, or are
        ignored when the protocol says unknown types are ignorable.
        """
        ...

    def finish(self, *, done: bool) -> list[ModelStreamEvent]:
        """The HTTP body ended; `done=False` when it was cut short (a dropped connection):
        then `response.failed` keeping what was received in the partial snapshot, unless
        the protocol's own end marker was already seen."""
        ...

    def fail(self, error: ProviderError) -> list[ModelStreamEvent]: ...

    def cancel(self, error: ProviderError | None = None) -> list[ModelStreamEvent]: ...


class Wire(Protocol):
    """A wire module, at module level (`from app.llm.wire import anthropic` is a `Wire`)."""

    NAME: str
    """"openai_chat" | "anthropic" | "gemini" | "openai_responses" | "mistral" | "bedrock"."""

    @property
    def FRAMING(self) -> Framing:
        """How a streamed reply body is cut into events."""
        ...

    def endpoint(self, base_url: str, model: str, *, stream: bool) -> str:
        """The full URL of one request, e.g. f"{base_url}/messages"."""
        ...

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Auth and protocol headers. They hold the key: never log them."""
        ...

    def to_wire(self, request: LLMRequest, *, model: str, provider: str) -> dict[str, Any]:
        """The JSON body (the stream flag from `request.stream`). Raises `ValidationError`
        naming the block kind and the provider for content the protocol cannot carry."""
        ...

    def new_parser(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
    ) -> WireParser: ...

    def map_http_error(
        self,
        status: int,
        body: bytes,
        headers: Mapping[str, str],
        *,
        label: str,
        provider: str,
        model: str,
        base_url: str,
        secrets: Sequence[str | None],
    ) -> ProviderError:
        """The typed error, in words and redacted of `secrets`, for an HTTP error reply."""
        ...

    def parse_response(
        self, payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
    ) -> list[ModelStreamEvent]:
        """A non-streamed JSON body as the events a stream would give, ending in one
        terminal event. Garbage gives `response.failed`."""
        ...

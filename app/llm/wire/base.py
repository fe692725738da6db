"""The shape every HTTP wire module has, so one generic client drives them all.

A wire module (`openai_chat`, `anthropic`, `gemini`, `openai_responses`) is itself the
implementation of `Wire`: the names below live at module level. Its stream parser is a
`WireParser`. The contract in words is `/work/notes/wire_spec.md`; the client that
uses it is `app.llm.http_client.HttpWireClient`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from app.llm.errors import ProviderError
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.request import LLMRequest

__all__ = ["Wire", "WireParser"]


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
        """One SSE event: `event` is its `event:` name ("" when absent), `data` its data.

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
    """"openai_chat" | "anthropic" | "gemini" | "openai_responses"."""

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

"""A chat model the app did not build (a host's, a test's) seen as a `ModelClient`.

`model_client(provider)` is the one place a provider from outside is looked at: a
`ModelClient` is used as it is; anything else is wrapped once, its `stream()` (or its
`complete()`, replayed as a stream) and, of the capabilities `ModelClient` declares,
the ones it has itself (each one a protocol here), the defaults for the rest. Past this
point the app calls the declared methods and never asks what a client has.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Protocol, runtime_checkable

from app.llm.base import ModelClient, Progress
from app.llm.events import ModelStreamEvent
from app.llm.replay import ReplayedStream
from app.llm.request import LLMRequest
from app.llm.response import LLMResponse

__all__ = ["AdaptedClient", "model_client"]


@runtime_checkable
class _Streams(Protocol):
    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]: ...


@runtime_checkable
class _Completes(Protocol):
    async def complete(self, request: LLMRequest) -> LLMResponse: ...


@runtime_checkable
class _Loads(Protocol):
    async def load(self) -> None: ...


@runtime_checkable
class _Closes(Protocol):
    async def aclose(self) -> None: ...


@runtime_checkable
class _Estimates(Protocol):
    def estimate_input_tokens(self, request: LLMRequest) -> int: ...


@runtime_checkable
class _ReadsAhead(Protocol):
    async def read_ahead(self, request: LLMRequest) -> None: ...


def model_client(provider: object) -> ModelClient:
    """`provider` as the app asks it: a `ModelClient` as it is, anything that streams
    or completes wrapped (`AdaptedClient`); `TypeError` for anything else."""
    if isinstance(provider, ModelClient):
        return provider
    if isinstance(provider, _Streams | _Completes):
        return AdaptedClient(provider)
    raise TypeError(
        f"a chat model provider needs a stream(request) or complete(request) method: "
        f"{type(provider).__name__} has neither"
    )


class AdaptedClient(ModelClient):
    """A provider from outside as a `ModelClient`: what it has of its own is used."""

    def __init__(self, provider: _Streams | _Completes) -> None:
        self.provider = provider
        self._events: _Streams = (
            provider if isinstance(provider, _Streams) else ReplayedStream(provider)
        )

    def __repr__(self) -> str:
        return f"AdaptedClient({self.provider!r})"

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        return self._events.stream(request)

    async def load(self, progress: Progress | None = None) -> None:
        if isinstance(self.provider, _Loads):
            await self.provider.load()

    async def aclose(self) -> None:
        if isinstance(self.provider, _Closes):
            await self.provider.aclose()

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        if isinstance(self.provider, _Estimates):
            return self.provider.estimate_input_tokens(request)
        return super().estimate_input_tokens(request)

    @property
    def reads_ahead(self) -> bool:
        return isinstance(self.provider, _ReadsAhead)

    @property
    def continues_replies(self) -> bool:
        return bool(getattr(self.provider, "continues_replies", False))

    async def read_ahead(self, request: LLMRequest) -> None:
        if isinstance(self.provider, _ReadsAhead):
            await self.provider.read_ahead(request)

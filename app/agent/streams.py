"""A stream that is read for its items, then asked how it ended (as pydantic-ai's
`StreamedResponse.get()` or pi-mono's `EventStream.result()`): a model call, a turn, a
reply all give their outcome this way, never through out-parameters."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Generic, Self, TypeVar

T = TypeVar("T")


class OutcomeStream(Generic[T]):
    """An async iterator over `_items()`, which it starts on the first read. Closing it
    (`aclose`, or cancelling whoever reads it) stops the work behind it; a subclass
    tells how it ended in an `outcome` property."""

    _running: AsyncGenerator[T, None] | None = None

    def _items(self) -> AsyncGenerator[T, None]:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        if self._running is None:
            self._running = self._items()
        return await self._running.__anext__()

    async def aclose(self) -> None:
        if self._running is not None:
            await self._running.aclose()

"""Screenshots the user sees: every capture is announced, and with confirmation on, the
model's request waits for the user's answer (`CaptureRequested` → `answer`)."""

from __future__ import annotations

import asyncio

from app.events import CaptureRequested, CaptureTaken, EventHub
from app.media import Capture


class CaptureDesk:
    def __init__(self, events: EventHub) -> None:
        self._events = events
        self._waiters: dict[int, asyncio.Future[bool]] = {}
        self._ids = 0

    def taken(self, capture: Capture) -> None:
        """A screenshot was taken: the user always sees that it happened."""
        self._events.emit(
            CaptureTaken(capture.path, capture.monitor, capture.width, capture.height)
        )

    async def confirm(self, monitor: str) -> bool:
        """Ask the user (a `CaptureRequested` event) and wait for `answer`."""
        self._ids += 1
        request_id = self._ids
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = future
        try:
            self._events.emit(CaptureRequested(request_id, monitor))
            return await future
        finally:
            self._waiters.pop(request_id, None)

    def answer(self, request_id: int, allowed: bool) -> None:
        """The user's answer to a `CaptureRequested`."""
        future = self._waiters.get(request_id)
        if future is not None and not future.done():
            future.set_result(allowed)

    def refuse_all(self) -> None:
        """Closing: no capture waits for an answer that will never come."""
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_result(False)

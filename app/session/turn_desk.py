"""One turn at a time: a new turn (typed, spoken, a barge-in's words) first interrupts the
one in flight — the session's one interruption — and waits until it has stored what was
heard, then runs in a task of its own under a fresh interruption scope. `ReplyStarted`
and `ReplyOver` tell every part that a turn is in flight."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from app.session.interruption import Interruptions, Scope
from app.session.speaking import ReplyOver, ReplyStarted, Signals
from app.session.turn import TurnResult

log = logging.getLogger(__name__)

TurnMaker = Callable[[Scope], Coroutine[Any, Any, TurnResult]]


class TurnDesk:
    """Runs the session's turns one at a time."""

    def __init__(
        self,
        signals: Signals,
        interruptions: Interruptions,
        *,
        before_each: Callable[[], None],
        hold: Callable[[], contextlib.AbstractContextManager[object]],
        turn_ids: Callable[[], int],
    ) -> None:
        self._signals = signals
        self._interruptions = interruptions
        self._before_each = before_each  # a held speculative reply is thrown away
        self._hold = hold  # what must wait while a turn runs (the memory's work)
        self._turn_ids = turn_ids
        self._turn: asyncio.Task[TurnResult] | None = None  # the turn in flight

    @property
    def busy(self) -> bool:
        """A turn is in flight (thinking, speaking, or paused by a barge-in)."""
        return self._turn is not None and not self._turn.done()

    async def settle(self) -> None:
        """Interrupt a turn in flight and wait until it has saved what was heard."""
        turn = self._turn
        if turn is not None and not turn.done():
            self._interruptions.interrupt()
            with contextlib.suppress(BaseException):
                await turn

    async def run(self, make: TurnMaker, *, spoken: bool = False) -> TurnResult:
        """Run the turn `make` builds, once the one in flight is over (`spoken`: it
        answers what the user said aloud)."""
        self._before_each()
        await self.settle()
        scope = self._interruptions.scope()

        async def turn() -> TurnResult:
            try:
                return await make(scope)
            finally:
                self._signals.emit(ReplyOver())

        self._signals.emit(ReplyStarted(spoken))
        task: asyncio.Task[TurnResult] = asyncio.create_task(turn())
        self._turn = task
        with scope.hooked(task.cancel), self._hold():
            try:
                result = await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    raise  # our caller was cancelled; the turn goes on
                result = TurnResult(self._turn_ids(), "", interrupted=True)
        if result.user_words or result.interrupted or result.error is not None:
            # (speech that came to nothing, or was its own voice, was no turn)
            log.info("turn %d timings %s", result.turn_id, result.timings_ms)
        return result


__all__ = ["TurnDesk", "TurnMaker"]

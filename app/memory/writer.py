"""The memory's writer: extraction after a turn, off the voice path.

Turns wait in a queue; one is looked at only when the session is quiet: no turn
running (`hold()`), nothing heard for `idle_s` (`activity()`). A model that answers
one request at a time (the embedded one) is given back at once when the user starts
again: the running extraction is stopped and that turn is looked at again later. A
hosted model answers both at the same time, so there the extraction just goes on.
Closing (`aclose()`) looks at what is still queued first, for a while, since the turn
is already answered (a one-turn command still learns from its turn), and gives back
what it had no time for, to be kept until the next start.

Besides the queue, one piece of work may be set to run ahead (`ahead()`): reading the
next turn's prompt on the embedded model. It starts as soon as no turn runs, before any
queued turn is looked at, runs again after each one (a new memory changes what the
next turn reads), and only a turn stops it: not the user speaking, since the turn that
follows needs what it reads.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

IDLE_S = 1.5  # quiet needed after a turn or speech before a side request starts
CLOSE_WAIT_S = 8.0  # closing waits this long for queued turns; the rest wait in the file

Job = TypeVar("Job")


class MemoryWriter(Generic[Job]):
    """Runs `work(job)` for each submitted job, one at a time, when the session is quiet."""

    def __init__(
        self,
        work: Callable[[Job], Awaitable[None]],
        *,
        yields_to_turns: bool,
        idle_s: float = IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._work = work
        self.yields_to_turns = yields_to_turns
        self.idle_s = idle_s
        self._clock = clock
        self._queue: collections.deque[Job] = collections.deque()  # never drops a turn
        self._holds = 0
        self._last_activity = clock()
        self._changed: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._running: asyncio.Task[None] | None = None
        self._closing = False
        self._ahead: Callable[[], Awaitable[None]] | None = None
        self._ahead_due = False
        self._running_ahead = False
        self.yielded = 0  # extractions stopped to give the model back to a turn
        self.done = 0

    @property
    def pending(self) -> int:
        running = self._running is not None and not self._running_ahead
        return len(self._queue) + (1 if running else 0)

    def submit(self, job: Job) -> None:
        if self._closing:
            return
        self._queue.append(job)
        self._poke()
        self._start()

    def ahead(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` as soon as no turn runs, before the queued jobs, and again after
        each of them (a later call replaces it)."""
        if self._closing:
            return
        self._ahead, self._ahead_due = work, True
        self._poke()
        self._start()

    def _start(self) -> None:
        if self._worker is None or self._worker.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop (a synchronous caller): looked at when one runs
            self._worker = loop.create_task(self._run(), name="memory-writer")

    def activity(self) -> None:
        """The user or the companion is active: wait before the next side request, and
        give a one-at-a-time model back now."""
        self._last_activity = self._clock()
        running = self._running
        yields = self.yields_to_turns and not self._closing and not self._running_ahead
        if running is not None and not running.done() and yields:
            self.yielded += 1
            running.cancel()
        self._poke()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """While a turn runs: no side request starts (and a running one yields)."""
        self._holds += 1
        if self._running is not None and self._running_ahead:
            self._running.cancel()  # the turn reads the rest itself
        self.activity()
        try:
            yield
        finally:
            self._holds -= 1
            self._last_activity = self._clock()
            self._poke()

    def _poke(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _quiet(self) -> None:
        while not self._closing:
            wait = self._last_activity + self.idle_s - self._clock()
            if self._holds == 0 and (wait <= 0 or self._ahead_due):
                return  # quiet, or a read ahead to do first
            self._changed = asyncio.Event()
            timeout = None if self._holds else max(wait, 0.01)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout)

    async def _no_turn(self) -> None:
        while not self._closing and self._holds:
            self._changed = asyncio.Event()
            await self._changed.wait()

    async def _run(self) -> None:
        while self._queue or (self._ahead_due and not self._closing):
            if self._ahead_due and not self._closing:
                await self._no_turn()
                work = self._ahead
                if await self._attempt(self._read_ahead(), ahead=True) and work is self._ahead:
                    self._ahead_due = False
                continue  # stopped by a turn: again after it
            await self._quiet()
            if self._ahead_due and not self._closing:
                continue
            job = self._queue[0]
            if not await self._attempt(self._safely(job), ahead=False):
                continue  # it gave the model back: the same turn again, later
            if self._queue and self._queue[0] is job:
                self._queue.popleft()
            self.done += 1
            self._ahead_due = self._ahead is not None

    async def _attempt(self, work: Coroutine[Any, Any, None], *, ahead: bool) -> bool:
        """Run `work` as the running side request: False if a turn stopped it."""
        name = "memory-read-ahead" if ahead else "memory-extraction"
        self._running, self._running_ahead = asyncio.create_task(work, name=name), ahead
        try:
            await asyncio.shield(self._running)
        except asyncio.CancelledError:
            if self._running.cancelled() and (ahead or not self._closing):
                return False
            self._running.cancel()
            raise
        finally:
            self._running, self._running_ahead = None, False
        return True

    async def _read_ahead(self) -> None:
        work = self._ahead
        if work is None or self._closing:
            return
        try:
            await work()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reading the next turn's prompt ahead failed")

    async def _safely(self, job: Job) -> None:
        try:
            await self._work(job)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("looking at a turn for memories failed; that turn is skipped")

    def kick(self) -> None:
        """Start on what is queued (turns kept from the last time), on the running loop."""
        if self._queue and (self._worker is None or self._worker.done()) and not self._closing:
            self._worker = asyncio.get_running_loop().create_task(
                self._run(), name="memory-writer"
            )

    async def aclose(self, wait_s: float = CLOSE_WAIT_S) -> list[Job]:
        """Look at what is still queued (for at most `wait_s`), then stop; returns the
        jobs left undone (to keep for the next time)."""
        worker = self._worker
        self._closing = True
        if self._running is not None and self._running_ahead:
            self._running.cancel()  # no next turn to read ahead for
        self._poke()
        if worker is not None and not worker.done():
            try:
                await asyncio.wait_for(asyncio.shield(worker), wait_s)
            except TimeoutError:
                log.info(
                    "closing: %d turn(s) not looked at for memories yet; kept for next time",
                    len(self._queue),
                )
            except Exception:
                log.exception("the memory writer failed")
            finally:
                if not worker.done():
                    worker.cancel()
                    with contextlib.suppress(BaseException):
                        await worker
        return self.take_left()

    def take_left(self) -> list[Job]:
        """The jobs not done (the one stopped midway first); the queue is empty after."""
        left = list(self._queue)
        self._queue.clear()
        return left

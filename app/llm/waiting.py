"""How long a hosted model's reply may keep the user waiting, how that wait (or the
user) ends it, and the words for it.

`timeout` is the longest wait without content: for the first word (retries included,
so three tries never take three timeouts) and between words once the reply streams.
Keep-alive comments and empty events are not content. `deadline` bounds a whole reply
however it trickles. When a reply is given up, the message says what happened: how
many tries over how long, or when the provider said to come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from datetime import datetime, timedelta
from typing import Any

__all__ = ["MIN_TRY_S", "REPLY_DEADLINE_S", "ReplyBudget", "ReplyControl", "when_to_retry"]

REPLY_DEADLINE_S = 600.0  # a whole reply at most (unless the timeout itself is longer)
MIN_TRY_S = 1.0  # a retry is only started with at least this much of the wait left


class ReplyBudget:
    """The clock of one reply, on the event loop's time (`now` is `loop.time()`)."""

    __slots__ = ("content", "deadline", "end_by", "first_by", "started", "timeout", "tries")

    def __init__(self, timeout: float, deadline: float, now: float) -> None:
        self.timeout = timeout
        self.deadline = max(deadline, timeout)
        self.started = now
        self.first_by = now + timeout
        self.end_by = now + self.deadline
        self.content = False
        self.tries = 1

    def wait_until(self, now: float) -> float:
        """When the current wait for content ends."""
        if not self.content:
            return self.first_by
        return min(now + self.timeout, self.end_by)

    def can_retry(self, now: float, delay: float) -> bool:
        return not self.content and now + delay + MIN_TRY_S <= self.first_by

    def timed_out(self, label: str, now: float) -> str:
        """The sentence for a wait that ran out at `now`."""
        if self.content:
            if now >= self.end_by - 0.05:
                return f"{label} did not finish its reply within {_seconds(self.deadline)}."
            return f"{label} stopped answering: nothing came for {_seconds(self.timeout)}."
        elapsed = now - self.started
        if self.tries == 1:
            return f"{label} did not answer within {_seconds(min(elapsed, self.timeout))}."
        return f"{label} did not answer in {self.tries} tries over {_seconds(elapsed)}."


def _seconds(value: float) -> str:
    shown = f"{value:.0f}" if value >= 10 else f"{value:.3g}"
    return f"{shown} second{'' if shown == '1' else 's'}"


class ReplyControl:
    """One reply in progress. `cancel()` may come from anywhere: it sets the flag, and if
    the reply is waiting on the network (or a retry pause) it interrupts that wait.

    The wait for content has a time limit (`arm`): when it passes while the reply waits
    on the network, that wait is interrupted the same way and `timed_out` is set; when
    it passes while the caller holds the stream, the next wait ends at once."""

    __slots__ = ("_late", "_timer", "cancelled", "interrupted", "task", "timed_out", "waiting")

    def __init__(self) -> None:
        self.cancelled = False
        self.interrupted = False
        self.timed_out = False
        self.waiting = False
        self.task: asyncio.Task[Any] | None = None
        self._timer: asyncio.Handle | None = None
        self._late = False

    def resume(self) -> None:
        """The generator runs again (in whichever task drives it now) and may wait."""
        self.task = asyncio.current_task()
        self.waiting = True
        if self._late:
            self._late = False
            self._timer = asyncio.get_running_loop().call_soon(self._expire)

    def arm(self, when: float) -> None:
        """The wait for content ends at loop time `when`."""
        self.disarm()
        self._timer = asyncio.get_running_loop().call_at(when, self._expire)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._late = False

    def _expire(self) -> None:
        self._timer = None
        task = self.task
        if task is None or task.done() or self.interrupted:
            return
        if not self.waiting:
            self._late = True
            return
        self.interrupted = self.timed_out = True
        task.cancel()

    def take_timeout(self) -> bool:
        timed_out, self.timed_out = self.timed_out, False
        return timed_out

    def cancel(self) -> None:
        self.cancelled = True
        task = self.task
        if task is not None and not task.done():
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing waits
                task.get_loop().call_soon_threadsafe(self._interrupt)

    def _interrupt(self) -> None:
        task = self.task
        if self.waiting and not self.interrupted and task is not None and not task.done():
            self.interrupted = True
            task.cancel()

    def owns(self) -> bool:
        """Whether this cancellation was ours alone (then it is swallowed)."""
        task = asyncio.current_task()
        if not self.interrupted or task is None:
            return False
        self.interrupted = False
        return task.uncancel() == 0


def when_to_retry(seconds: float, now: datetime | None = None) -> str:
    """'Try again in …' in words, with the local time for waits of a minute or more."""
    if seconds < 60:
        count = max(1, math.ceil(seconds))
        return f"Try again in {count} second{'s' if count != 1 else ''}."
    now = now or datetime.now().astimezone()
    at = now + timedelta(seconds=seconds)
    if seconds < 55 * 60:
        minutes = max(1, round(seconds / 60))
        span = "a minute" if minutes == 1 else f"about {minutes} minutes"
    elif seconds < 90 * 60:
        span = "about an hour"
    else:
        span = f"about {round(seconds / 3600)} hours"
    clock = f"{at:%H:%M}"
    if at.date() == now.date():
        moment = f"at {clock}"
    elif at.date() == (now + timedelta(days=1)).date():
        moment = f"tomorrow at {clock}"
    else:
        moment = f"on {at:%a %d %b} at {clock}"
    return f"Try again in {span} ({moment})."

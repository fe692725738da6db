"""The session's background tasks: started by name, cancelled together at close, and a
task that dies told to the user in words (with the log file that has the details) while
the app keeps running."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from app.events import Notice, SessionEvent

log = logging.getLogger(__name__)


class Supervisor:
    """Holds the tasks; `crashed` (the task's name, its masked words) follows a report."""

    def __init__(
        self,
        emit: Callable[[SessionEvent], None],
        redact: Callable[[str], str],
        crashed: Callable[[str], None],
    ) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.closing = False
        self._emit, self._redact, self._crashed = emit, redact, crashed

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(self.report_crash)
        return task

    def report_crash(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or self.closing:
            return
        exc = task.exception()
        if exc is None:
            return
        log.error("the %s task failed", task.get_name(), exc_info=exc)
        from app.logs import log_file

        where = log_file()
        words = self._redact(str(exc).strip()) or type(exc).__name__
        message = f"Something went wrong ({task.get_name()}: {words})."
        if where is not None:
            message += f" Details are in the log: {where}"
        self._emit(Notice(message, error=True))
        self._crashed(words)

    async def cancel_all(self) -> None:
        """Cancel every task and wait for each to end."""
        self.closing = True
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            with contextlib.suppress(BaseException):
                await task

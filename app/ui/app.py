"""Runs the Companion window on a qasync event loop and drives a session through it.

`run_window` owns the lifecycle: the QApplication, the loop, `session.start()` in
the background, and on close `session.aclose()` and a clean loop shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QApplication

from app.events import EventHub, Notice, Status, StatusChanged
from app.ui.main_window import MainWindow, describe_error

log = logging.getLogger(__name__)

ACLOSE_TIMEOUT_S = 10.0
SIGNAL_POLL_MS = 250  # lets Python see Ctrl+C while Qt's loop is waiting


class SessionLike(Protocol):
    """What the window drives: a `VoiceSession`, or anything shaped like one."""

    @property
    def events(self) -> EventHub: ...

    @property
    def expressions(self) -> tuple[str, ...]: ...

    async def start(self) -> None: ...

    def set_mic_enabled(self, enabled: bool) -> None: ...

    async def send_text(self, text: str) -> object: ...

    def interrupt(self) -> None: ...

    async def aclose(self) -> None: ...


def run_window(
    make_session: Callable[[], SessionLike],
    *,
    title: str = "Companion",
    quit_after_s: float | None = None,
) -> int:
    """Show the window for a new session until the user closes it (or `quit_after_s` passes).

    Returns the process exit code: 0 when the window closed, even if the session
    failed to start (the window showed why).
    """
    app = QApplication.instance() or QApplication(sys.argv[:1] or ["companion"])
    if not isinstance(app, QApplication):
        raise RuntimeError("a non-widget Qt application already exists in this process")
    quit_on_last_window = app.quitOnLastWindowClosed()
    # The loop must outlive the window: it still has to run session.aclose().
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    try:
        return loop.run_until_complete(_show_session(make_session, title, quit_after_s))
    finally:
        _close_loop(loop)
        app.setQuitOnLastWindowClosed(quit_on_last_window)


async def _show_session(
    make_session: Callable[[], SessionLike], title: str, quit_after_s: float | None
) -> int:
    loop = asyncio.get_running_loop()
    session = make_session()
    window = MainWindow(session, title=title)
    closed: asyncio.Future[None] = loop.create_future()

    def on_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    window.closed.connect(on_closed)
    window.show()
    starting = loop.create_task(_start(session, window), name="companion-session-start")
    quit_timer = loop.call_later(quit_after_s, window.close) if quit_after_s is not None else None
    restore_sigint = _close_on_sigint(loop, window)
    try:
        await closed
    finally:
        restore_sigint()
        if quit_timer is not None:
            quit_timer.cancel()
        window.close()  # a no-op unless we got here by cancellation
        await _cancel(starting, *window.pending_tasks())
        await _aclose(session)
        window.deleteLater()
    return 0


async def _start(session: SessionLike, window: MainWindow) -> None:
    try:
        await session.start()
    except Exception as exc:  # the window stays open and says what went wrong
        log.warning("The session failed to start: %s", describe_error(exc))
        window.present(StatusChanged(Status.ERROR, "could not start"))
        window.present(Notice(f"Could not start: {describe_error(exc)}", error=True))


async def _cancel(*tasks: asyncio.Task[None]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _aclose(session: SessionLike) -> None:
    try:
        await asyncio.wait_for(session.aclose(), ACLOSE_TIMEOUT_S)
    except TimeoutError:
        log.warning("The session did not close within %.0f s; leaving it", ACLOSE_TIMEOUT_S)
    except Exception as exc:
        log.warning("Closing the session failed: %s", describe_error(exc))


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left, finish async generators, close: no 'Task was destroyed' warnings."""
    try:
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            log.debug("cancelling leftover task %r", task)
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


def _close_on_sigint(loop: asyncio.AbstractEventLoop, window: MainWindow) -> Callable[[], None]:
    """Ctrl+C in the terminal closes the window the normal way; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(window.close)

    signal.signal(signal.SIGINT, on_sigint)
    # Python runs signal handlers only between bytecodes; this timer makes sure there are some.
    poll = QTimer(window)
    poll.timeout.connect(lambda: None)
    poll.start(SIGNAL_POLL_MS)

    def restore() -> None:
        with contextlib.suppress(RuntimeError):
            poll.stop()
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)

    return restore


def protect_none_from_binding_refcount_bug() -> bool:
    """Work around Qt bindings that drop a reference to None on every void method call.

    PySide6 6.12.0 does this; Python 3.12+ made None, True and False immortal, so
    there it is harmless, but on 3.11 None's count reaches zero within seconds of
    painting and the process aborts ("Fatal Python error: none_dealloc"). When the
    probe sees the bug, this gives the three singletons a count no process can use
    up, which is what 3.12 does for them. Returns True when it did. The real fix is
    a binding without the bug (pin PySide6 below 6.12 on Python 3.11).
    """
    if sys.version_info >= (3, 12) or hasattr(sys, "gettotalrefcount"):
        return False  # immortal already / a debug build lays objects out differently
    probe = QPainterPath()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.moveTo(0.0, 0.0)
    if sys.getrefcount(None) > before - 32:
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every object in a release build.
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40
    log.info("Qt bindings leak references to None; made None/True/False immortal")
    return True


__all__ = ["SessionLike", "protect_none_from_binding_refcount_bug", "run_window"]

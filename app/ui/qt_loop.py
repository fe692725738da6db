"""Qt's event loop as asyncio's: what running coroutines on a qasync loop needs beyond
qasync itself (async generators closed on the loop, a clean close, Ctrl+C, a
binding workaround), for `run_window`."""

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
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtGui import QPainterPath

log = logging.getLogger(__name__)

SIGNAL_POLL_MS = 250  # lets Python see Ctrl+C while Qt's loop is waiting


def install_asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> Any:
    """Let the loop finish async generators (asyncio's own loops do this in
    run_forever; qasync does not): an abandoned generator (an HTTP response stream)
    is then closed on the loop instead of printing "Exception ignored" at collection.
    Returns the hooks that were there before."""
    before = sys.get_asyncgen_hooks()
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is not None and finalizer is not None:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
    return before


def wait_for_decoders() -> None:
    """No picture-decoding thread may still run Python code when the interpreter exits."""
    from app.ui.pictures import wait_for_image_decoding

    if not wait_for_image_decoding(2000):
        log.warning("some pictures were still being decoded at quit")


async def cancel_tasks(*tasks: asyncio.Task[Any]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
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
        release_loop_timers(loop)


def release_loop_timers(loop: asyncio.AbstractEventLoop) -> None:
    """Hand a closed qasync loop's timer object to the QApplication (call after
    `loop.close()`, on the GUI thread).

    qasync leaves the Qt timers of handles that never fired (a cancelled `call_later`,
    a `wait_for` that finished early) registered on that object after `close()`. The
    loop sits in reference cycles, so the garbage collector would free it later, on
    whichever thread allocates at that moment: Qt then stops the timers from the
    wrong thread ("Timers cannot be stopped from another thread") and crashes when one
    comes due. Owned by the application, the object lives on the GUI thread; its
    leftover timers fire once more and are killed there."""
    timer = getattr(loop, "_timer", None)
    app = QCoreApplication.instance()
    if isinstance(timer, QObject) and shiboken6.isValid(timer) and app is not None:
        timer.setParent(app)


def close_on_sigint(
    loop: asyncio.AbstractEventLoop, close: Callable[[], None]
) -> Callable[[], None]:
    """Ctrl+C in the terminal closes the window the normal way; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(close)

    signal.signal(signal.SIGINT, on_sigint)
    # Python runs signal handlers only between bytecodes; this timer makes sure there are some.
    poll = QTimer()
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


__all__ = [
    "cancel_tasks",
    "close_loop",
    "close_on_sigint",
    "install_asyncgen_hooks",
    "protect_none_from_binding_refcount_bug",
    "release_loop_timers",
    "wait_for_decoders",
]

"""The app ends the same way whoever asks: SIGTERM (a logout, `kill`, a service manager)
and SIGHUP (the terminal closed) do what Ctrl+C (SIGINT) does at that moment — the
window closes the normal way, a command stops its turn and records it as interrupted —
instead of the process dying with the user's words unwritten.

Each is passed to whatever handles SIGINT when it arrives (asyncio's runner, the
window's handler, or Python's default, which raises `KeyboardInterrupt`) — once: a
logout or a closed terminal often sends both, and a second Ctrl+C would cut the clean
ending short. A signal the app was started to ignore (`nohup`) stays ignored.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["end_like_ctrl_c"]

_LIKE_CTRL_C = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def end_like_ctrl_c() -> None:
    """Make SIGTERM and SIGHUP (where the platform has them) end the app as SIGINT does
    (call once, from the main thread; elsewhere it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _LIKE_CTRL_C:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _as_ctrl_c)


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    for other in _LIKE_CTRL_C:  # the app is ending now: the next one changes nothing
        signal.signal(other, signal.SIG_IGN)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    elif handler == signal.SIG_IGN:
        return
    else:
        raise KeyboardInterrupt

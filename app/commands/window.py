"""`companion` / `companion run`: the window, with the session made after it shows."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from app.commands.common import EXIT_USAGE, fail, missing_library_message


def run_window(settings: Any, *, quit_after: float | None = None) -> int:
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if sys.platform.startswith("linux") and headless and not os.environ.get("QT_QPA_PLATFORM"):
        # Qt would abort with a core dump; say it in words instead.
        return fail(
            "no display found: the window needs a desktop session. Run it from one, "
            "or use `companion turn --wav FILE` for one turn without a window.",
            EXIT_USAGE,
        )
    if sys.platform.startswith("linux") and os.environ.get("WAYLAND_DISPLAY"):
        # Qt's Wayland backend cannot keep a window on top or move it: prefer XWayland.
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb;wayland")
    from app.ui import run_window as ui_run_window

    def make_session() -> Any:
        # Imported after the window shows (preloaded in a worker thread): app.session
        # brings numpy, httpx, the agent and the audio stack.
        try:
            from app.session import VoiceSession

            return VoiceSession(settings)
        except (OSError, ImportError) as exc:
            message = missing_library_message(exc)
            if message is None:
                raise
            raise RuntimeError(message) from exc

    try:
        return ui_run_window(
            make_session, settings=settings, preload=("app.session",), quit_after_s=quit_after
        )
    except Exception as exc:  # pragma: no cover - last resort: say it in words
        message = missing_library_message(exc)
        if message is not None:
            return fail(message)
        logging.getLogger(__name__).exception("the window failed")
        return fail(f"the window could not run: {exc}")

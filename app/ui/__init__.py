"""The Qt desktop shell: the main window, the desktop pet, the tray, and `run_window`.

This is the only package that imports Qt. The window presents a session's events
and calls the members `SessionPort` declares; the session does the work. The pet and the tray
are imported on first use: they come after the window shows.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from app.ui.app import SessionLike, Shell, protect_none_from_binding_refcount_bug, run_window
from app.ui.avatar_widget import AvatarWidget
from app.ui.main_window import MainWindow, TranscriptEntry, TranscriptView
from app.ui.session_port import SessionPort

if TYPE_CHECKING:
    from app.ui.pet import PetWindow
    from app.ui.tray import CompanionTray, tray_available

_LAZY = {
    "PetWindow": "app.ui.pet",
    "CompanionTray": "app.ui.tray",
    "tray_available": "app.ui.tray",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# Before any widget exists: some Qt binding builds would otherwise abort the process
# within seconds on Python 3.11 (see the function's docstring).
protect_none_from_binding_refcount_bug()

__all__ = [
    "AvatarWidget",
    "CompanionTray",
    "MainWindow",
    "PetWindow",
    "SessionLike",
    "SessionPort",
    "Shell",
    "TranscriptEntry",
    "TranscriptView",
    "run_window",
    "tray_available",
]

"""The Qt desktop shell: the main window, the desktop pet, the tray, and `run_window`.

This is the only package that imports Qt. The window presents a session's events
and calls its few public methods; the session does the work.
"""

from app.ui.app import SessionLike, Shell, protect_none_from_binding_refcount_bug, run_window
from app.ui.avatar_widget import AvatarWidget
from app.ui.main_window import MainWindow, TranscriptEntry, TranscriptView
from app.ui.pet import PetWindow
from app.ui.tray import CompanionTray, tray_available

# Before any widget exists: some Qt binding builds would otherwise abort the process
# within seconds on Python 3.11 (see the function's docstring).
protect_none_from_binding_refcount_bug()

__all__ = [
    "AvatarWidget",
    "CompanionTray",
    "MainWindow",
    "PetWindow",
    "SessionLike",
    "Shell",
    "TranscriptEntry",
    "TranscriptView",
    "run_window",
    "tray_available",
]

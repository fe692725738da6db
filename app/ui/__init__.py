"""The Qt desktop shell: the main window, the sprite avatar, and `run_window` to show them.

This is the only package that imports Qt. The window presents a session's events
and calls its few public methods; the session does the work.
"""

from app.ui.app import SessionLike, protect_none_from_binding_refcount_bug, run_window
from app.ui.avatar_widget import AvatarWidget
from app.ui.main_window import MainWindow, TranscriptEntry, TranscriptView

# Before any widget exists: some Qt binding builds would otherwise abort the process
# within seconds on Python 3.11 (see the function's docstring).
protect_none_from_binding_refcount_bug()

__all__ = [
    "AvatarWidget",
    "MainWindow",
    "SessionLike",
    "TranscriptEntry",
    "TranscriptView",
    "run_window",
]

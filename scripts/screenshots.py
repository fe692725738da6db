"""Render the main window, the desktop pet and the settings dialog to PNGs, offscreen.

    python scripts/screenshots.py OUTDIR

A scripted session plays a short exchange so the pictures show a conversation.
No display, microphone or model is needed.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication, QWidget

from app.avatar.state import EXPRESSIONS
from app.config import Settings
from app.events import (
    AssistantSentence,
    EventHub,
    ExpressionChanged,
    MicStateChanged,
    Status,
    StatusChanged,
    UserTranscript,
)
from app.ui import MainWindow, PetWindow
from app.ui.settings_dialog import SettingsDialog


class ScriptedSession:
    """Plays a fixed exchange; does nothing when driven."""

    def __init__(self) -> None:
        self.events = EventHub()
        self.expressions = EXPRESSIONS
        self.settings = Settings.model_construct()

    async def start(self) -> None:
        await asyncio.sleep(0)

    def set_mic_enabled(self, enabled: bool) -> None:
        self.events.emit(MicStateChanged(enabled=enabled, available=True))

    async def send_text(self, text: str) -> None:
        await asyncio.sleep(0)

    def interrupt(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    def play(self) -> None:
        emit = self.events.emit
        emit(MicStateChanged(enabled=True, available=True))
        emit(UserTranscript("Hi Mika! Can you help me plan my afternoon?", final=True, turn_id=1))
        emit(ExpressionChanged("joy"))
        for text in ("Of course!", "Let's start with what matters most today."):
            emit(AssistantSentence(text, text, ("joy",), 1))
        emit(UserTranscript("Finishing my report, then a walk.", final=True, turn_id=2))
        for text in ("Great plan.", "Report first, walk as a reward!"):
            emit(AssistantSentence(text, text, (), 2))
        emit(StatusChanged(Status.SPEAKING))


def _save(widget: QWidget, path: Path) -> Path:
    for _ in range(5):
        QApplication.processEvents()
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def render(outdir: Path) -> list[Path]:
    """Write main_window.png, pet.png and settings.png into `outdir`; returns the paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1] or ["screenshots"])
    assert isinstance(app, QApplication)
    session = ScriptedSession()
    window = MainWindow(session)
    pet = PetWindow(session)
    dialog = SettingsDialog(Settings.model_construct(), save=None)
    try:
        window.resize(900, 640)
        window.show()
        pet.show()
        session.play()
        dialog.show()
        written = [
            _save(window, outdir / "main_window.png"),
            _save(pet, outdir / "pet.png"),
            _save(dialog, outdir / "settings.png"),
        ]
    finally:
        dialog.close()
        pet.close()
        window.close()
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in render(Path(argv[1])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

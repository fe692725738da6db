"""Render the main window, the desktop pet and the settings dialog to PNGs, offscreen.

    python scripts/screenshots.py OUTDIR [--language zh_CN]

A scripted session plays a short exchange (with the model's thinking, a tool call and
a screenshot) so the pictures show a conversation. No display, microphone or model
is needed. Chinese text needs a CJK font (fonts-noto-cjk or fonts-wqy-microhei).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication, QWidget

from app.agent.storage import ConversationInfo
from app.avatar.state import EXPRESSIONS
from app.config import Settings
from app.events import (
    AssistantSentence,
    CaptureTaken,
    EventHub,
    ExpressionChanged,
    MicStateChanged,
    Status,
    StatusChanged,
    ToolUsed,
    UserTranscript,
)
from app.ui import MainWindow, PetWindow
from app.ui.settings_dialog import SettingsDialog


class ScriptedSession:
    """Plays a fixed exchange; does nothing when driven (every `SessionPort` member)."""

    def __init__(self, capture: Path | None = None) -> None:
        self.events = EventHub()
        self.expressions = EXPRESSIONS
        self.settings = Settings.model_construct()
        self.mic_mode = "always_on"
        self.capture = capture
        self.conversation_id = "c3"
        self.character = SimpleNamespace(name="Mika")
        self.avatar_pack = None  # the built-in art
        self.live2d_model = None
        self.memory = None  # no Memory button in these pictures

    def conversations(self) -> list[ConversationInfo]:
        return [
            ConversationInfo("c1", "Birthday present ideas", 12),
            ConversationInfo("c2", "Learning Japanese", 30),
            ConversationInfo("c3", "Planning the afternoon", 6),
        ]

    def history_messages(self) -> list[object]:
        return []

    async def new_conversation(self) -> str:
        return "c4"

    async def switch_conversation(self, uid: str) -> None:
        await asyncio.sleep(0)

    def rename_conversation(self, uid: str, title: str) -> None:
        pass

    async def delete_conversation(self, uid: str) -> None:
        await asyncio.sleep(0)

    async def start(self) -> None:
        await asyncio.sleep(0)

    def set_mic_enabled(self, enabled: bool) -> None:
        self.events.emit(MicStateChanged(enabled=enabled, available=True))

    async def send_text(self, text: str) -> None:
        await asyncio.sleep(0)

    def interrupt(self) -> None:
        pass

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        pass

    def set_mic_mode(self, mode: str) -> None:
        self.mic_mode = mode

    def set_push_to_talk(self, pressed: bool) -> None:
        pass

    def set_turns_paused(self, paused: bool) -> None:
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
        emit(UserTranscript("What's on my screen right now?", final=True, turn_id=2))
        thought = "They want me to look. A screenshot of the screen under the mouse."
        emit(AssistantSentence(thought, "", (), 2, is_thinking=True))
        emit(ToolUsed("take_screenshot", 2))
        if self.capture is not None:
            emit(CaptureTaken(self.capture, 1, 1280, 800))
        for text in ("Your report, half written.", "The chart on page two looks great!"):
            emit(AssistantSentence(text, text, (), 2))
        emit(StatusChanged(Status.SPEAKING))


def _save(widget: QWidget, path: Path) -> Path:
    for _ in range(5):
        QApplication.processEvents()
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def _desktop_picture(path: Path) -> Path:
    """A stand-in screenshot: a document with a chart, drawn in code."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    image = QImage(1280, 800, QImage.Format.Format_RGB32)
    image.fill(QColor("#e8eef7"))
    p = QPainter(image)
    p.fillRect(QRectF(200, 60, 880, 700), QColor("#ffffff"))
    p.setPen(QColor("#c6d0de"))
    for y in range(120, 400, 28):
        p.drawLine(260, y, 1020, y)
    for i, h in enumerate((120, 200, 90, 260, 180)):
        p.fillRect(QRectF(300 + i * 140, 700 - h, 80, h), QColor("#7c5cff"))
    p.setPen(Qt.GlobalColor.black)
    p.end()
    image.save(str(path))
    return path


def render(outdir: Path, language: str = "en") -> list[Path]:
    """Write main_window.png, pet.png, settings.png (the first tab) and settings_<tab>.png
    (the others) into `outdir`; returns the paths."""
    from app.ui.i18n import install_translators

    outdir.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1] or ["screenshots"])
    assert isinstance(app, QApplication)
    install_translators(app, language)
    session = ScriptedSession(_desktop_picture(outdir / "desktop.png"))
    window = MainWindow(session)
    pet = PetWindow(session)
    dialog = SettingsDialog(Settings.model_construct(), save=None)
    try:
        window.resize(1100, 680)
        window.show()
        pet.show()
        session.play()
        from app.ui.transcript import wait_for_image_decoding

        wait_for_image_decoding(3000)
        dialog.resize(820, 940)  # the size it opens at on a usual screen
        dialog.show()
        written = [
            _save(window, outdir / "main_window.png"),
            _save(pet, outdir / "pet.png"),
            _save(dialog, outdir / "settings.png"),
        ]
        for index in range(1, dialog.tabs.count()):  # the other tabs, settings_<tab>.png
            dialog.tabs.setCurrentIndex(index)
            name = dialog.tabs.widget(index).widget().objectName().removeprefix("tab_")
            written.append(_save(dialog, outdir / f"settings_{name}.png"))
    finally:
        dialog.close()
        pet.close()
        window.close()
    return written


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--language", default="en", choices=("en", "zh_CN"))
    args = parser.parse_args(argv[1:])
    for path in render(args.outdir, args.language):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

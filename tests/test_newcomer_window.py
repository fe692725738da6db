"""What a newcomer meets in the window (offscreen Qt; `tests/test_newcomer.py` meets the
same on a real X server): the pet's way back to the main window (issue 15, item 6)
and a conversation list whose long titles are cut with "…", never scrolled sideways
(item 9)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings, UiSettings
from app.llm import Msg
from app.session import VoiceSession
from app.ui import MainWindow, Shell
from tests.ui_sessions import ScriptedSession

LONG_TITLE = "What we talked about on the long walk along the river last Sunday afternoon"


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


@pytest.mark.parametrize("way", ["ctrl+p", "double-click"])
def test_the_pet_brings_the_main_window_back(qapp: QApplication, way: str) -> None:
    session = ScriptedSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=False)
    try:
        shell.show_main()
        shell.show_pet()
        settle()
        assert shell.pet.isVisible() and not window.isVisible()
        if way == "ctrl+p":
            QTest.keyClick(shell.pet, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
        else:
            QTest.mouseDClick(shell.pet, Qt.MouseButton.LeftButton, pos=QPoint(60, 120))
        settle()
        assert window.isVisible() and not shell.pet.isVisible()
    finally:
        shell.dispose()
        window.close()


async def test_long_conversation_titles_are_cut_with_an_ellipsis(
    qapp: QApplication, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    storage = FileStorage(tmp_path / "history")
    settings = Settings()
    settings.chat.model = "openai-compatible/none"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    session = VoiceSession(settings, sink=MemorySink(), storage=storage)
    try:
        for title in ("Short one", LONG_TITLE):
            uid = await session.new_conversation()
            storage.append(
                session.agent.core.conf_uid, uid, [Msg.user("hi"), Msg.assistant("hello")]
            )
            session.rename_conversation(uid, title)
        window = MainWindow(session)
        window.resize(900, 600)
        window.show()
        settle()
        listed = window.conversations
        assert listed is not None
        listed.refresh()
        settle()
        view = listed.list
        item = next(view.item(i) for i in range(view.count()) if view.item(i).text() == LONG_TITLE)
        assert item.toolTip() == LONG_TITLE
        assert view.horizontalScrollBar().maximum() == 0
        assert not view.horizontalScrollBar().isVisible()
        # The title does not fit: it is drawn cut ("…") inside the list's width.
        assert view.fontMetrics().horizontalAdvance(LONG_TITLE) > view.viewport().width()
        assert view.visualItemRect(item).right() <= view.viewport().width()
        assert view.textElideMode() is Qt.TextElideMode.ElideRight
        window.close()
        await asyncio.sleep(0)
    finally:
        await session.aclose()

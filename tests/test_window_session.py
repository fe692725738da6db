"""The window driving a real VoiceSession (offscreen): typed turn, no-microphone notice,
and the `companion` command opening and closing the window cleanly."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, TurnFinished
from app.session import VoiceSession
from app.ui import MainWindow
from app.ui.app import release_loop_timers
from tests.llm_servers import Reply, ScriptedChatServer
from tests.ui_sessions import ScriptedSession


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    reply = Reply.text_stream(["[joy] Hello", " from the", " window!"], delay=0.01)
    with ScriptedChatServer([reply]) as srv:
        yield srv


def test_typing_in_the_window_gets_a_spoken_reply_in_the_transcript(
    qapp: QApplication, server: ScriptedChatServer
) -> None:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    hub = EventHub(keep_history=True)
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    window = MainWindow(session)
    window.show()
    done = asyncio.Event()
    hub.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)

    async def scenario() -> None:
        await session.start()  # no microphone on this machine: the window must say so
        window.text_input.setText("Hi there")
        window.send_button.click()
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(0.1)
        QApplication.processEvents()

    loop = qasync.QEventLoop(qapp)
    try:
        loop.run_until_complete(scenario())
        texts = [e.text for e in window.transcript.entries]
        assert texts[0] == "Hi there"
        assert texts[-1] == "Hello from the window!"
        assert window.avatar.expression == "joy"
        assert not window.mic_button.isEnabled()
        assert "microphone" in window.mic_button.toolTip().lower()
        loop.run_until_complete(session.aclose())
    finally:
        window.close()
        loop.close()
        release_loop_timers(loop)  # else a later GC on another thread crashes Qt


def test_the_companion_command_opens_and_closes_the_window(server: ScriptedChatServer) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "app", "--quit-after", "4"],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Task was destroyed" not in done.stderr


def test_a_screenshot_is_always_shown_to_the_user(qapp: QApplication, tmp_path: Path) -> None:
    from app.events import CaptureTaken

    session = ScriptedSession()
    window = MainWindow(session)
    try:
        session.events.emit(CaptureTaken(tmp_path / "c.png", 1, 1280, 720))
        QApplication.processEvents()
        assert "screenshot" in window.status_text().lower()
        assert "1280×720" in window.status_text()
    finally:
        window.close()


def test_the_user_answers_a_capture_request(qapp: QApplication) -> None:
    from PySide6.QtWidgets import QMessageBox

    from app.events import CaptureRequested

    session = ScriptedSession()
    window = MainWindow(session)
    try:
        answers = ((7, QMessageBox.StandardButton.Yes), (8, QMessageBox.StandardButton.No))
        for request_id, button in answers:
            session.events.emit(CaptureRequested(request_id, "under_mouse"))
            QApplication.processEvents()
            box = window.findChild(QMessageBox, "captureQuestion")
            assert box is not None and box.isVisible()
            box.button(button).click()
            QApplication.processEvents()
            box.setObjectName("answered")
        assert session.answers == [(7, True), (8, False)]
    finally:
        window.close()


def test_the_app_shows_the_window_first_then_the_real_session_answers_in_it(
    qapp: QApplication, server: ScriptedChatServer
) -> None:
    from app.ui import run_window

    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    settings.ui.first_run_done = True
    hub = EventHub(keep_history=True)
    seen: dict[str, object] = {}

    def the_window() -> MainWindow:
        (window,) = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        ]
        return window

    async def type_once_attached() -> None:
        window = the_window()
        while window.session is None:
            await asyncio.sleep(0.02)
        done = asyncio.Event()
        hub.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)
        window.send_button.click()
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(0.1)
        seen["texts"] = [e.text for e in window.transcript.entries]
        window.close()

    def make() -> VoiceSession:
        window = the_window()
        seen["status while starting"] = window.status_text()
        window.text_input.setText("Hi there")  # typed before the session exists: kept
        seen["could send while starting"] = window.send_button.isEnabled()
        asyncio.get_running_loop().create_task(type_once_attached())
        return VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)

    code = run_window(
        make, settings=settings, use_tray=False, quit_after_s=60, preload=("app.session",)
    )
    assert code == 0
    assert str(seen["status while starting"]).startswith("Starting")
    assert seen["could send while starting"] is False
    assert seen["texts"] == ["Hi there", "Hello from the window!"]

"""The window driving a real VoiceSession (offscreen): typed turn, no-microphone notice,
and the `companion` command opening and closing the window cleanly."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, TurnFinished
from app.session import VoiceSession
from app.ui import MainWindow
from tests.llm_servers import Reply, ScriptedChatServer


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

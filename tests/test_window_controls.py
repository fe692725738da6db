"""The main window's controls against a real VoiceSession (offscreen Qt, a loopback chat
server, conversations on disk): the conversation list, the mic mode selector and
push-to-talk, the level meter, the privacy pills, load progress and a slow model."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QInputDialog, QLabel, QMessageBox

from app.agent.storage import FileStorage
from app.audio.capture import ChunkListSource
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import CaptureTaken, EventHub, LoadProgress, ToolUsed, TurnFinished
from app.session import VoiceSession
from app.ui import MainWindow
from app.ui.app import release_loop_timers
from tests.llm_servers import Reply, ScriptedChatServer


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer() as srv:
        yield srv


def make(
    server: ScriptedChatServer, tmp_path: Path, *, source: Any = None
) -> tuple[VoiceSession, MainWindow, EventHub]:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    hub = EventHub()
    session = VoiceSession(
        settings,
        sink=MemorySink(),
        storage=FileStorage(tmp_path / "history"),
        events=hub,
        source=source,
    )
    window = MainWindow(session)
    window.show()
    return session, window, hub


def run(qapp: QApplication, scenario: Callable[[], Awaitable[None]]) -> None:
    loop = qasync.QEventLoop(qapp)
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
        release_loop_timers(loop)  # else a later GC on another thread crashes Qt


async def settle(seconds: float = 0.05) -> None:
    # The qasync loop runs Qt's events while it sleeps (never processEvents() inside a
    # task: that would run other tasks' steps re-entrantly).
    await asyncio.sleep(seconds)


async def turn(session: VoiceSession, hub: EventHub, window: MainWindow, text: str) -> None:
    done = asyncio.Event()
    unsubscribe = hub.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)
    window.text_input.setText(text)
    window.send_button.click()
    await asyncio.wait_for(done.wait(), 30)
    unsubscribe()
    await settle()


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await settle(0.02)
    raise AssertionError("the window never got there")


def test_conversations_are_started_switched_renamed_and_deleted_from_the_side_list(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    server.push(
        Reply.text_stream(["Paris is the capital."]), Reply.text_stream(["Bring an umbrella."])
    )
    session, window, hub = make(server, tmp_path)
    side = window.conversations
    assert side is not None

    async def scenario() -> None:
        await turn(session, hub, window, "What is the capital of France?")
        first = session.conversation_id
        # The companion's bubbles carry the character's name.
        captions = [c.text() for c in window.transcript.findChildren(QLabel, "caption")]
        assert session.character.name in captions and "You" in captions
        assert side.titles() == ["What is the capital of France?"]

        side.new_button.click()
        await until(lambda: session.conversation_id != first)
        assert window.transcript.entries == []  # the new one is empty
        await turn(session, hub, window, "Will it rain?")
        second = session.conversation_id
        assert side.uids() == [second, first]  # newest first
        assert side.current_uid() == second

        # Clicking the older one shows its turns again, and the model is back in it.
        side.list.itemClicked.emit(side.list.item(1))
        await until(lambda: session.conversation_id == first)
        await until(lambda: len(window.transcript.entries) == 2)
        assert [e.text for e in window.transcript.entries] == [
            "What is the capital of France?",
            "Paris is the capital.",
        ]

        # Rename through the dialog the user gets.
        dialog = side.ask_rename(second)
        await settle()
        dialog.setTextValue("Weather")
        dialog.done(QInputDialog.DialogCode.Accepted)
        await settle()
        assert dict(zip(side.uids(), side.titles(), strict=True))[second] == "Weather"

        # Delete asks first; "No" keeps it, "Yes" deletes it from the disk.
        box = side.ask_delete(second)
        await settle()
        box.done(QMessageBox.StandardButton.No.value)
        await settle()
        assert second in side.uids()
        box = side.ask_delete(second)
        await settle()
        box.done(QMessageBox.StandardButton.Yes.value)
        await until(lambda: second not in side.uids())
        assert not (tmp_path / "history" / "default" / f"{second}.jsonl").exists()
        await session.aclose()

    try:
        run(qapp, scenario)
    finally:
        window.close()


def remember_one_turn(qapp: QApplication, server: ScriptedChatServer, tmp_path: Path) -> None:
    """A first run: one turn ("Remember me?" / "Hello again.") saved under `tmp_path`."""
    server.push(Reply.text_stream(["Hello again."]))
    session, window, hub = make(server, tmp_path)

    async def first_run() -> None:
        await turn(session, hub, window, "Remember me?")
        await session.aclose()

    run(qapp, first_run)
    window.close()


def test_the_window_opens_on_the_conversation_the_session_resumes(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    remember_one_turn(qapp, server, tmp_path)
    # A new session over the same folder: the window shows the last conversation.
    session, window, _ = make(server, tmp_path)
    try:
        assert [e.text for e in window.transcript.entries] == ["Remember me?", "Hello again."]
        run(qapp, session.aclose)
    finally:
        window.close()


def test_the_mic_mode_selector_push_to_talk_and_the_live_pill(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    session, window, _ = make(server, tmp_path, source=ChunkListSource([]))

    async def scenario() -> None:
        session.set_mic_enabled(True)
        await settle()
        assert window.mic_live.isVisible()  # always on: the mic is live
        assert window.mode_box.currentData() == "always_on"

        window.mode_box.setCurrentIndex(1)
        window.mode_box.activated.emit(1)
        await settle()
        assert session.mic_mode == "push_to_talk"
        assert window.talk_button.isVisible()
        assert not window.mic_live.isVisible()  # not live until the button is held
        window.talk_button.pressed.emit()
        await settle()
        assert session.gate.held and window.mic_live.isVisible()
        window.talk_button.released.emit()
        await settle()
        assert not session.gate.held and not window.mic_live.isVisible()
        # Held from elsewhere (a global hotkey): the button and the pill show it too.
        session.set_push_to_talk(True)
        await settle()
        assert window.talk_button.isDown() and window.mic_live.isVisible()
        session.set_push_to_talk(False)
        await settle()
        assert not window.talk_button.isDown() and not window.mic_live.isVisible()

        window.mode_box.setCurrentIndex(2)
        window.mode_box.activated.emit(2)
        await settle()
        assert session.mic_mode == "muted"
        assert not window.mic_live.isVisible() and not window.talk_button.isVisible()
        assert not window.mic_button.isChecked()

        window.mic_button.click()  # the quick mic button turns it back on
        await settle()
        assert session.mic_mode == "always_on" and window.mode_box.currentData() == "always_on"
        assert window.mic_live.isVisible()
        await session.aclose()

    try:
        run(qapp, scenario)
    finally:
        window.close()


def test_the_level_meter_moves_with_the_voice_and_rests_when_muted(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    rate = 16000
    tone = (np.sin(2 * np.pi * 300 * np.arange(rate) / rate) * 12000).astype("<i2").tobytes()
    session, window, _ = make(server, tmp_path, source=ChunkListSource([]))

    async def scenario() -> None:
        session.set_mic_enabled(True)
        await settle()
        assert window.level_meter.fraction == 0
        await session.listen(
            ChunkListSource([tone[i : i + 3200] for i in range(0, rate * 2, 3200)])
        )
        await settle()
        assert window.level_meter.fraction > 0.8  # about -9 dBFS on a -60..0 scale
        session.set_mic_mode("muted")
        await settle()
        assert window.level_meter.fraction == 0 and not window.level_meter.active
        await session.aclose()

    try:
        run(qapp, scenario)
    finally:
        window.close()


def test_progress_a_slow_model_a_tool_chip_and_a_screenshot_are_shown(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.session.turn as session_module

    monkeypatch.setattr(session_module, "STILL_WAITING_S", 0.2)
    server.push(Reply.text_stream(["Finally.", " Here."], delay=1.0))
    session, window, hub = make(server, tmp_path)
    shot = tmp_path / "shot.png"
    image = QImage(640, 400, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    assert image.save(str(shot))
    seen_status: list[str] = []

    async def scenario() -> None:
        hub.emit(LoadProgress("loading the models", 1, 3))
        await settle()
        assert window.progress.isVisible() and window.progress.value() == 1
        hub.emit(LoadProgress("voice ready", 3, 3))
        await settle()
        assert not window.progress.isVisible()

        window.text_input.setText("Are you there?")
        window.send_button.click()
        for _ in range(100):
            await settle(0.02)
            seen_status.append(window.status_text())
            if "still waiting" in seen_status[-1]:
                break
        assert any("still waiting for scripted" in s for s in seen_status)
        await until(lambda: "Finally." in [e.answer for e in window.transcript.entries][-1:][0])

        turn_id = window.transcript.entries[-1].turn_id
        hub.emit(ToolUsed("take_screenshot", turn_id))
        hub.emit(CaptureTaken(shot, 1, 640, 400))
        await settle()
        assert window.capture_pill.isVisible()  # the privacy pill
        entry = window.transcript.entries[-1]
        assert entry.tools == ["take_screenshot"] and entry.images == [shot]
        await until(lambda: not window.pending_tasks())
        await session.aclose()

    try:
        run(qapp, scenario)
    finally:
        window.close()


def test_a_window_shown_before_its_session_gets_the_conversations_history_and_mic_mode(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    remember_one_turn(qapp, server, tmp_path)

    # The app's order: the window shows first, then the session is made and attached.
    window = MainWindow()
    window.show()
    assert window.conversations is None and window.status_text().startswith("Starting")
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    settings.audio.mic_mode = "push_to_talk"
    later = VoiceSession(
        settings,
        sink=MemorySink(),
        storage=FileStorage(tmp_path / "history"),
        events=EventHub(),
        source=ChunkListSource([]),
    )
    window.attach_session(later)
    try:
        assert window.conversations is not None and window.conversations.isVisible()
        assert window.conversations.titles() == ["Remember me?"]
        assert [e.text for e in window.transcript.entries] == ["Remember me?", "Hello again."]
        assert window.mode_box.currentData() == "push_to_talk"
        assert window.talk_button.isVisible() and window.talk_button.isEnabled()
        assert window.avatar.pack is later.avatar_pack

        async def scenario() -> None:
            later.events.emit(LoadProgress("loading the models", 1, 3))
            await settle()
            assert window.progress.isVisible()  # the window follows the session's events
            await later.aclose()

        run(qapp, scenario)
    finally:
        window.close()

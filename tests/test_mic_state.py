"""The microphone says one thing everywhere (issue 28, item 5): the mic button, the
"● Mic live" pill and the status line agree in every state the user can meet: on,
muted, push-to-talk (held or not), during a sound test, and with the device gone; and
the first-run guide asks how it should listen instead of leaving it always on."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QLabel

from app.agent.storage import FileStorage
from app.audio.capture import ChunkListSource
from app.audio.format import pcm_bytes
from app.audio.playback import MemorySink
from app.config import Settings, load_settings
from app.events import EventHub, MicStateChanged, Status, StatusChanged
from app.session import VoiceSession
from app.ui import MainWindow
from app.ui.app import release_loop_timers
from app.ui.mic_state import MicState
from tests import test_ui_settings as shared
from tests.llm_servers import ScriptedChatServer
from tests.test_ui_first_run import GUIDE_PAGES, quiet_checks, walk
from tests.test_ui_settings import run_check
from tests.ui_sessions import ScriptedSession

qapp = shared.qapp
config_file = shared.config_file
memory_keyring = shared.memory_keyring


# -- the one state -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "shown", "live"),
    [
        (MicState(enabled=True), "on", True),
        (MicState(enabled=False), "off", False),
        (MicState(enabled=True, mode="muted"), "off", False),
        (MicState(enabled=True, testing=True), "paused", False),
        (MicState(enabled=False, testing=True), "off", False),  # the user's off wins
        (MicState(enabled=True, mode="push_to_talk"), "push_to_talk", False),
        (MicState(enabled=True, mode="push_to_talk", held=True), "push_to_talk", True),
        (MicState(enabled=True, mode="push_to_talk", held=True, testing=True), "paused", False),
        (MicState(enabled=True, available=False), "unavailable", False),
        (MicState(enabled=True, available=False, testing=True), "unavailable", False),
    ],
)
def test_one_state_decides_what_the_microphone_does(
    state: MicState, shown: str, live: bool
) -> None:
    assert state.shown == shown
    assert state.live is live


# -- the window, against a real session ----------------------------------------------------


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer() as srv:
        yield srv


def run(qapp: QApplication, scenario: Callable[[], Awaitable[None]]) -> None:
    loop = qasync.QEventLoop(qapp)
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
        release_loop_timers(loop)


async def settle() -> None:
    await asyncio.sleep(0.05)  # the qasync loop runs Qt's events meanwhile


def said(window: MainWindow) -> tuple[str, bool, str]:
    """The button's words, whether the pill shows, and the status row."""
    return (
        window.mic_button.text(),
        window.mic_live.isVisibleTo(window),
        window.status_label.text(),
    )


# What each state looks like: the button, the pill, how the status row begins. A row
# that says the mic listens while the button says it does not (or the reverse) fails.
ON = ("Mic on", True, "Listening")
OFF = ("Mic off", False, "Mic off")
PAUSED = ("Mic paused", False, "Mic paused — until the sound test ends")
PTT_READY = ("Mic ready", False, "Ready — hold to talk")
PTT_HELD = ("Mic ready", True, "Listening")


def agrees(window: MainWindow, expected: tuple[str, bool, str]) -> None:
    button, pill, status = said(window)
    assert (button, pill) == expected[:2], said(window)
    assert status.startswith(expected[2]), said(window)
    listening = status.startswith(("Listening", "Hearing"))
    assert pill is listening, said(window)  # the pill and the row never disagree
    # The button looks pressed ("on") only while the conversation can hear.
    assert window.mic_button.isChecked() is (button in ("Mic on", "Mic ready")), said(window)
    assert "sound test" not in status or status.startswith("Mic paused"), said(window)


def test_the_button_pill_and_status_agree_in_every_state(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    hub = EventHub()
    session = VoiceSession(
        settings,
        sink=MemorySink(),
        storage=FileStorage(tmp_path / "history"),
        events=hub,
        source=ChunkListSource([]),
    )
    window = MainWindow(session)
    window.show()
    sound_test = window.mic.during_sound_tests(session.set_turns_paused)

    async def scenario() -> None:
        session.set_mic_enabled(True)
        await settle()
        agrees(window, ON)
        # A sound test: the conversation hears nothing meanwhile, and everything says so.
        sound_test(True)
        await settle()
        agrees(window, PAUSED)
        assert not window.mic_button.isEnabled()
        sound_test(True)  # a second test at once (the voice while the mic records)
        sound_test(False)
        await settle()
        agrees(window, PAUSED)
        sound_test(False)
        await settle()
        agrees(window, ON)
        # Muted (with the button), then a sound test: still off, not "paused".
        window.mic_button.click()
        await settle()
        agrees(window, OFF)
        sound_test(True)
        await settle()
        agrees(window, OFF)
        sound_test(False)
        await settle()
        agrees(window, OFF)
        window.mic_button.click()
        await settle()
        agrees(window, ON)
        # Push to talk: ready until held; held, it listens; a test pauses it.
        window.mic.choose_mode("push_to_talk")
        await settle()
        agrees(window, PTT_READY)
        window.talk_button.pressed.emit()
        await settle()
        agrees(window, PTT_HELD)
        sound_test(True)
        await settle()
        agrees(window, PAUSED)
        sound_test(False)
        window.talk_button.released.emit()
        await settle()
        agrees(window, PTT_READY)
        window.mic.choose_mode("always_on")
        await settle()
        agrees(window, ON)
        # The microphone is unplugged (as the session says it), during a test or not.
        hub.emit(MicStateChanged(False, False, "the microphone was unplugged"))
        hub.emit(StatusChanged(Status.IDLE, "the microphone is gone: type your messages"))
        await settle()
        button, pill, status = said(window)
        assert button == "No mic" and not pill and not window.mic_button.isEnabled()
        assert status.startswith("Ready") and "gone" in status
        sound_test(True)
        await settle()
        assert said(window) == (button, pill, status)
        sound_test(False)
        hub.emit(MicStateChanged(True, True, "USB microphone"))
        hub.emit(StatusChanged(Status.LISTENING))
        await settle()
        agrees(window, ON)
        await session.aclose()

    try:
        run(qapp, scenario)
    finally:
        window.close()


def test_the_session_word_for_a_test_pause_shows_as_paused_with_the_button(
    qapp: QApplication,
) -> None:
    """The session's own "Mic off — paused during a sound test" status (it says so when
    a test starts while it listens) reads as the button does."""
    session = ScriptedSession()
    window = MainWindow(session)
    try:
        session.set_mic_enabled(True)
        session.events.emit(StatusChanged(Status.LISTENING))
        QApplication.processEvents()
        agrees(window, ON)
        window.mic.show_sound_test(True)
        session.events.emit(StatusChanged(Status.MUTED, "paused during a sound test"))
        QApplication.processEvents()
        agrees(window, PAUSED)
        window.mic.show_sound_test(False)  # the test ends before the session's next word
        QApplication.processEvents()
        agrees(window, ON)
        assert window.status_label.text() == "Listening"
        session.events.emit(StatusChanged(Status.LISTENING))
        QApplication.processEvents()
        agrees(window, ON)
    finally:
        window.close()


class _Recorder:
    """A microphone for the guide's test that notes what the window says while it is
    recorded from."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.seen: list[tuple[str, bool, str]] = []

    async def chunks(self) -> AsyncIterator[bytes]:
        for _ in range(3):
            self.seen.append(said(self.window))
            yield bytes(pcm_bytes(0.5))

    async def aclose(self) -> None:
        return None


def test_during_the_guides_microphone_test_everything_says_paused(
    qapp: QApplication, config_file: Path
) -> None:
    from app.ui import Shell

    session = ScriptedSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=Settings().ui, use_tray=False, settings=Settings())
    try:
        session.set_mic_enabled(True)
        session.events.emit(StatusChanged(Status.LISTENING))
        guide = shell.open_first_run()
        assert guide is not None
        recorder = _Recorder(window)
        guide.mic_check.source_factory = lambda s: recorder
        guide.mic_check.sink_factory = lambda s: MemorySink()
        run_check(guide.mic_check)
        assert recorder.seen and all(
            seen[:2] == PAUSED[:2] and seen[2].startswith(PAUSED[2]) for seen in recorder.seen
        ), recorder.seen
        assert session.pauses == [True, False]
        agrees(window, ON)
    finally:
        if shell.first_run_guide is not None:
            shell.first_run_guide.reject()
        shell.dispose()
        window.close()


# -- the guide asks how it should listen ----------------------------------------------------


def test_the_guide_asks_how_to_listen_and_saves_the_choice(
    qapp: QApplication, config_file: Path, memory_keyring: object
) -> None:
    from app.ui import Shell

    session = ScriptedSession()
    window = MainWindow(session)
    settings = Settings()
    shell = Shell(session, window, ui=settings.ui, use_tray=False, settings=settings)
    try:
        guide = shell.open_first_run()
        assert guide is not None
        guide.next()
        assert guide.pages.currentWidget() is guide.listening
        # Nothing chosen for the user: Next waits for a choice, and says so.
        assert guide.listening.mode is None and not guide.next_button.isEnabled()
        assert guide.listening.hint.isVisibleTo(guide)
        guide.next()
        assert guide.pages.currentWidget() is guide.listening
        labels = " ".join(label.text() for label in guide.listening.findChildren(QLabel))
        assert "may hear its own voice" in labels and "never hears itself" in labels
        walk(guide, GUIDE_PAGES - 1, mode="push_to_talk")
        assert guide.result() == guide.DialogCode.Accepted
        # Saved, and in effect at once: the session and the window's mode box follow.
        assert load_settings().audio.mic_mode == "push_to_talk"
        assert settings.audio.mic_mode == "push_to_talk"
        assert session.modes == ["push_to_talk"]
        QApplication.processEvents()  # the session's events reach the window
        assert window.mode_box.currentData() == "push_to_talk"
        assert window.talk_button.isVisibleTo(window)
    finally:
        shell.dispose()
        window.close()


def test_a_way_already_in_the_settings_file_is_chosen_already(qapp: QApplication) -> None:
    from app.ui.first_run import FirstRunGuide

    chosen = Settings.model_validate({"audio": {"mic_mode": "push_to_talk"}})
    guide = FirstRunGuide(chosen, checks=quiet_checks(), save=None)
    assert guide.listening.mode == "push_to_talk"
    default = FirstRunGuide(Settings(), checks=quiet_checks(), save=None)
    assert default.listening.mode is None  # the default is not a choice the user made


def test_the_listening_choice_works_from_the_keyboard(qapp: QApplication) -> None:
    """As the newcomer walk does it: the keyboard lands on the first way, Space chooses
    it, Return goes on, and the next page's Space is Next again (not a checkbox)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from app.ui.first_run import FirstRunGuide

    guide = FirstRunGuide(Settings(), checks=quiet_checks(), save=None)
    guide.show()
    guide.activateWindow()
    try:
        guide.next()
        QApplication.processEvents()
        assert guide.listening.always_on.hasFocus()
        QTest.keyClick(guide.listening.always_on, Qt.Key.Key_Space)
        assert guide.listening.mode == "always_on"
        QTest.keyClick(guide.listening.always_on, Qt.Key.Key_Return)
        assert guide.pages.currentIndex() == 2 and guide.next_button.hasFocus()
        asked = guide.ask_screenshots.isChecked()
        QTest.keyClick(guide.next_button, Qt.Key.Key_Space)
        assert guide.pages.currentIndex() == 3 and guide.ask_screenshots.isChecked() is asked
    finally:
        guide.reject()

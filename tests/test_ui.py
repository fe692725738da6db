"""The Qt window: it presents a session's events and calls the session's methods.

Runs offscreen (no display needed). The session here is a small scripted stand-in
that emits the same events a `VoiceSession` does.
"""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import itertools
import random
import subprocess
import sys
import textwrap
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from app.avatar.state import EXPRESSIONS
from app.events import (
    AssistantSentence,
    ExpressionChanged,
    MicStateChanged,
    MouthLevel,
    Notice,
    Status,
    StatusChanged,
    TurnFinished,
    UserTranscript,
)
from app.ui import AvatarWidget, MainWindow, run_window
from app.ui.app import release_loop_timers
from tests.ui_sessions import ScriptedSession

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def session() -> ScriptedSession:
    return ScriptedSession()


@pytest.fixture
def window(qapp: QApplication, session: ScriptedSession) -> Iterator[MainWindow]:
    win = MainWindow(session)
    yield win
    win.close()


def flush() -> None:
    """Deliver queued session events to the window."""
    QApplication.processEvents()


def run_on_qt_loop(coro: Coroutine[Any, Any, None]) -> None:
    loop = qasync.QEventLoop(QApplication.instance())
    try:
        loop.run_until_complete(coro)
    finally:
        loop.close()
        release_loop_timers(loop)  # else a later GC on another thread crashes Qt


def window_of(session: ScriptedSession) -> MainWindow:
    (found,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, MainWindow) and w.session is session
    ]
    return found


# -- lifecycle ---------------------------------------------------------------------------


def test_run_window_starts_the_session_and_closes_it_with_exit_code_0(qapp: QApplication) -> None:
    sessions: list[ScriptedSession] = []

    def make() -> ScriptedSession:
        sessions.append(ScriptedSession())
        return sessions[-1]

    assert run_window(make, quit_after_s=0.3) == 0
    (only,) = sessions
    assert only.started and only.closed


def test_a_failing_start_shows_the_error_in_words_and_still_exits_0(qapp: QApplication) -> None:
    seen: dict[str, str] = {}

    def look_at_window(session: ScriptedSession) -> None:
        win = window_of(session)
        seen["status"] = win.status_text()
        seen["error"] = str(win.notice_label.property("error"))

    session = ScriptedSession(
        start_error=RuntimeError("the speech model is missing"), on_aclose=look_at_window
    )
    assert run_window(lambda: session, quit_after_s=0.4) == 0
    assert session.closed
    assert "Could not start: the speech model is missing" in seen["status"]
    assert seen["status"].startswith("Error")
    assert seen["error"] == "True"


def test_closing_while_the_session_is_still_starting_cancels_the_start(
    qapp: QApplication,
) -> None:
    class SlowToStart(ScriptedSession):
        async def start(self) -> None:
            self.started = True
            await asyncio.Event().wait()  # models that take forever to load

    session = SlowToStart()
    assert run_window(lambda: session, quit_after_s=0.3) == 0
    assert session.started and session.closed


def test_the_window_runs_and_quits_cleanly_in_a_fresh_process() -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        from app.events import Status, StatusChanged
        from app.ui import run_window
        from tests.ui_sessions import ScriptedSession

        class Session(ScriptedSession):
            async def start(self):
                self.events.emit(StatusChanged(Status.LOADING))
                self.loading = asyncio.create_task(asyncio.sleep(60))  # still running at close
                self.events.emit(StatusChanged(Status.LISTENING))
            async def aclose(self):
                print("session closed", flush=True)

        sys.exit(run_window(Session, quit_after_s=1.0))
        """
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "session closed" in done.stdout
    assert "Traceback" not in done.stderr
    assert "was destroyed but it is pending" not in done.stderr
    assert "Fatal Python error" not in done.stderr


# -- presenting events -------------------------------------------------------------------


def test_a_partial_user_transcript_is_replaced_by_the_final_text(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(UserTranscript("what is the", final=False, turn_id=1))
    flush()
    assert [(e.text, e.final) for e in window.transcript.entries] == [("what is the", False)]
    session.events.emit(UserTranscript("what is the weather", final=False, turn_id=1))
    session.events.emit(UserTranscript("What is the weather like?", final=True, turn_id=1))
    session.events.emit(UserTranscript("what is", final=False, turn_id=1))  # late partial
    flush()
    (line,) = window.transcript.entries
    assert (line.speaker, line.text, line.final) == ("user", "What is the weather like?", True)


def test_assistant_sentences_append_to_one_bubble_per_turn(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(UserTranscript("Hi!", final=True, turn_id=1))
    for text, thinking in (("Let me see.", True), ("Hello there.", False), ("How are you?", False)):
        session.events.emit(AssistantSentence(text, text, (), turn_id=1, is_thinking=thinking))
    session.events.emit(AssistantSentence("Second turn.", "Second turn.", (), turn_id=2))
    flush()
    user, first, second = window.transcript.entries
    assert (user.speaker, first.speaker, second.speaker) == ("user", "companion", "companion")
    assert first.text == "Let me see. Hello there. How are you?"
    assert [thinking for _, thinking in first.parts] == [True, False, False]
    assert second.text == "Second turn."


def test_an_interrupted_turn_is_marked_in_its_bubble(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(AssistantSentence("Well,", "Well,", (), turn_id=3))
    session.events.emit(TurnFinished(turn_id=3, timings_ms={}, interrupted=True))
    flush()
    (reply,) = window.transcript.entries
    assert reply.interrupted


def test_expression_changed_switches_the_avatar_expression(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(ExpressionChanged("joy"))
    flush()
    assert window.avatar.expression == "joy"
    session.events.emit(ExpressionChanged("no-such-face"))
    flush()
    assert window.avatar.expression == "joy"


def test_the_avatar_looks_thoughtful_while_the_status_is_thinking(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(ExpressionChanged("smirk"))
    session.events.emit(StatusChanged(Status.THINKING))
    flush()
    assert window.avatar.shown_expression == "thinking"
    session.events.emit(StatusChanged(Status.SPEAKING))
    flush()
    assert window.avatar.shown_expression == "smirk"


def test_mouth_level_opens_the_mouth_smoothly(window: MainWindow, session: ScriptedSession) -> None:
    avatar = window.avatar
    assert avatar.mouth_openness == 0.0
    session.events.emit(MouthLevel(1.0))
    flush()
    avatar.step(0.01)
    partly = avatar.mouth_openness
    avatar.step(0.15)
    assert 0.0 < partly < avatar.mouth_openness
    assert avatar.mouth_openness > 0.9
    session.events.emit(MouthLevel(0.0))
    flush()
    for _ in range(10):
        avatar.step(0.033)
    assert avatar.mouth_openness < 0.05


def test_the_mouth_closes_when_the_levels_stop_coming(qapp: QApplication) -> None:
    avatar = AvatarWidget()
    avatar.set_mouth_level(0.8)
    for _ in range(40):
        avatar.step(0.02)
    assert avatar.mouth_openness < 0.1


def test_an_unavailable_microphone_is_shown_with_its_reason(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(MicStateChanged(enabled=False, available=False, detail="no input device"))
    flush()
    button = window.mic_button
    assert not button.isEnabled()
    assert not button.isChecked()
    assert "no input device" in button.toolTip()
    assert "Microphone unavailable — no input device" in window.status_text()
    session.events.emit(MicStateChanged(enabled=True, available=True))
    flush()
    assert button.isEnabled() and button.isChecked()
    assert "unavailable" not in window.status_text()


def test_status_and_notices_show_in_the_status_line(
    window: MainWindow, session: ScriptedSession
) -> None:
    session.events.emit(StatusChanged(Status.LOADING, "speech model"))
    session.events.emit(Notice("The chat model is not reachable.", error=True))
    flush()
    assert window.status_text() == "Loading — speech model · The chat model is not reachable."
    assert window.notice_label.property("error") is True


def test_events_from_another_thread_reach_the_window(
    window: MainWindow, session: ScriptedSession
) -> None:
    worker = threading.Thread(
        target=session.events.emit, args=(UserTranscript("from a thread", True, 7),)
    )
    worker.start()
    worker.join()
    flush()
    assert [e.text for e in window.transcript.entries] == ["from a thread"]


# -- user actions ------------------------------------------------------------------------


def test_typing_a_message_and_pressing_send_calls_send_text(
    window: MainWindow, session: ScriptedSession
) -> None:
    async def type_and_send() -> None:
        assert not window.send_button.isEnabled()
        window.text_input.setText("  tell me a joke  ")
        assert window.send_button.isEnabled()
        window.send_button.click()
        await asyncio.sleep(0.05)

    run_on_qt_loop(type_and_send())
    assert session.sent == ["tell me a joke"]
    assert window.text_input.text() == ""


def test_a_failing_send_is_reported_in_the_status_line(
    window: MainWindow, session: ScriptedSession
) -> None:
    async def refuse(text: str) -> None:
        raise ConnectionError("the model server is down")

    session.send_text = refuse  # type: ignore[method-assign]

    async def send() -> None:
        window.text_input.setText("hello")
        window.send()
        await asyncio.sleep(0.05)

    run_on_qt_loop(send())
    assert "Could not send the message: the model server is down" in window.status_text()


def test_stop_calls_interrupt(window: MainWindow, session: ScriptedSession) -> None:
    window.present(StatusChanged(Status.SPEAKING))  # Stop works while a reply plays
    window.stop_button.click()
    assert session.interrupts == 1


def test_the_mic_toggle_switches_the_microphone(
    window: MainWindow, session: ScriptedSession
) -> None:
    window.mic_button.click()
    window.mic_button.click()
    assert session.mic_calls == [True, False]
    flush()
    assert not window.mic_button.isChecked()
    assert window.mic_button.text() == "Mic off"


# -- the avatar --------------------------------------------------------------------------


def test_the_avatar_blinks_briefly_every_few_seconds(qapp: QApplication) -> None:
    avatar = AvatarWidget(rng=random.Random(7))
    dt, starts, lengths = 0.01, [], []
    blinking_for = 0.0
    for i in range(6000):  # one minute
        was = avatar.is_blinking
        avatar.step(dt)
        if avatar.is_blinking:
            blinking_for += dt
            if not was:
                starts.append(i * dt)
        elif was:
            lengths.append(blinking_for)
            blinking_for = 0.0
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert 8 <= len(starts) <= 40
    assert all(0.12 <= length <= 0.18 for length in lengths)
    assert max(gaps) <= 6.3
    assert sum(1 for gap in gaps if gap >= 2.0) >= len(gaps) * 0.7  # mostly 2-6 s apart


def test_every_expression_draws_a_different_face(qapp: QApplication) -> None:
    avatar = AvatarWidget(rng=random.Random(1))
    avatar.resize(300, 400)
    faces: dict[str, QImage] = {}
    for name in EXPRESSIONS:
        assert avatar.set_expression(name)
        avatar.step(0.4)
        faces[name] = avatar.grab().toImage()
    names = list(faces)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert faces[a] != faces[b], f"{a} and {b} look the same"


def test_the_avatar_paints_many_frames_without_trouble(qapp: QApplication) -> None:
    avatar = AvatarWidget()
    avatar.resize(240, 320)
    for i in range(150):
        avatar.set_mouth_level((i % 10) / 10)
        avatar.step(0.033)
        avatar.grab()


def test_screenshots_of_the_window_and_faces(qapp: QApplication) -> None:
    """Writes PNGs to /tmp to look at: the window mid-conversation and some faces."""
    session = ScriptedSession()
    win = MainWindow(session)
    win.resize(900, 640)  # the offscreen screen is only 800x600
    win.show()
    for event in (
        StatusChanged(Status.SPEAKING),
        MicStateChanged(enabled=True, available=True),
        UserTranscript("Hey, can you see what is on my screen right now?", True, 1),
        AssistantSentence("Let me take a look first.", "", (), 1, is_thinking=True),
        AssistantSentence("Sure! You have a code editor open.", "", ("joy",), 1),
        AssistantSentence("It looks like a Python file about a voice companion.", "", (), 1),
        UserTranscript("Nice, what do you think of it", False, 2),
        ExpressionChanged("joy"),
        Notice("Screenshot taken."),
    ):
        session.events.emit(event)
    flush()
    win.avatar.step(0.4)
    flush()
    shot = Path("/tmp/companion_window.png")
    assert win.grab().save(str(shot))
    win.close()
    assert shot.stat().st_size > 20_000

    avatar = AvatarWidget(rng=random.Random(2))
    avatar.resize(360, 480)
    for name in ("joy", "sadness"):
        avatar.set_expression(name)
        avatar.step(0.4)
        assert avatar.grab().save(f"/tmp/companion_avatar_{name}.png")


# -- the window before its session ----------------------------------------------------------


def test_the_window_shows_saying_starting_before_the_session_is_made(qapp: QApplication) -> None:
    seen: dict[str, object] = {}
    session = ScriptedSession()

    def make() -> ScriptedSession:
        (pending,) = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        ]
        seen["session"] = pending.session
        seen["status"] = pending.status_text()
        return session

    assert run_window(make, quit_after_s=0.3, use_tray=False) == 0
    assert seen["session"] is None
    assert str(seen["status"]).startswith("Starting")
    assert session.started and session.closed


def test_a_message_typed_while_starting_waits_in_the_box_until_the_session_is_attached(
    qapp: QApplication,
) -> None:
    window = MainWindow()
    try:
        assert window.status_text().startswith("Starting")
        window.text_input.setText("are you there?")
        assert not window.send_button.isEnabled()
        assert "starting" in window.send_button.toolTip()
        window.text_input.returnPressed.emit()  # Enter does not lose it either
        assert window.text_input.text() == "are you there?"
        assert not window.mic_button.isEnabled() and not window.mode_box.isEnabled()

        session = ScriptedSession()
        window.attach_session(session)
        assert window.session is session
        assert window.send_button.isEnabled() and window.mic_button.isEnabled()

        async def send() -> None:
            window.send_button.click()
            await asyncio.sleep(0.05)

        run_on_qt_loop(send())
        assert session.sent == ["are you there?"]
        session.events.emit(UserTranscript("now it listens", True, 1))
        flush()
        assert [e.text for e in window.transcript.entries] == ["now it listens"]
        with pytest.raises(RuntimeError):
            window.attach_session(ScriptedSession())
    finally:
        window.close()


def test_a_session_that_cannot_be_made_is_reported_in_the_window(qapp: QApplication) -> None:
    seen: dict[str, str] = {}

    async def look_a_moment_later() -> None:
        await asyncio.sleep(0.2)
        (win,) = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        ]
        seen["status"] = win.status_text()
        win.close()

    def make() -> ScriptedSession:
        asyncio.get_running_loop().create_task(look_a_moment_later())
        raise ValueError("unknown provider 'nope'")

    assert run_window(make, quit_after_s=10, use_tray=False) == 0
    assert seen["status"].startswith("Error")
    assert "Could not start: unknown provider 'nope'" in seen["status"]


def test_closing_while_the_session_modules_still_load_exits_without_making_it(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The import (in the worker thread) outlasts the window by far: quit comes at 0.2 s.
    (tmp_path / "slow_to_import_for_test.py").write_text("import time\ntime.sleep(2.5)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[ScriptedSession] = []

    def make() -> ScriptedSession:
        made.append(ScriptedSession())
        return made[-1]

    code = run_window(make, quit_after_s=0.2, use_tray=False, preload=("slow_to_import_for_test",))
    assert code == 0
    assert made == []
    monkeypatch.delitem(sys.modules, "slow_to_import_for_test", raising=False)


def test_saving_the_shell_state_never_writes_values_from_the_environment(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import config_path, load_settings
    from app.ui.pet import PetWindow

    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[chat]\nmodel = "openai/gpt-4o-mini"\n\n[ui]\nfirst_run_done = true\n')
    monkeypatch.setenv("COMPANION_CHAT__MODEL", "openai-compatible/from-the-environment")
    monkeypatch.setenv("COMPANION_CHAT__TEMPERATURE", "0.25")
    settings = load_settings()
    assert settings.chat.model == "openai-compatible/from-the-environment"

    class MovesThePet(ScriptedSession):
        async def start(self) -> None:
            await super().start()
            (pet,) = [
                w
                for w in QApplication.topLevelWidgets()
                if isinstance(w, PetWindow) and w.session is self
            ]
            pet.move(pet.x() - 40, pet.y() - 30)
            pet.remember_geometry()  # what a drag ends with: the place is saved
            window_of(self).close()

    assert run_window(MovesThePet, settings=settings, use_tray=False, quit_after_s=10) == 0
    text = config.read_text()
    assert "pet_geometry" in text
    assert 'model = "openai/gpt-4o-mini"' in text
    assert "from-the-environment" not in text and "0.25" not in text


def test_an_abandoned_async_generator_is_closed_on_the_loop(qapp: QApplication) -> None:
    cleaned: list[str] = []

    async def stream() -> Any:
        try:
            yield 1
            yield 2
        finally:
            await asyncio.sleep(0)  # an HTTP stream's close awaits, too
            cleaned.append("closed on the loop")

    class AbandonsAStream(ScriptedSession):
        async def start(self) -> None:
            await super().start()
            chunks = stream()
            await chunks.__anext__()
            del chunks  # dropped half-read, as a cancelled request does
            await asyncio.sleep(0.05)
            window_of(self).close()

    assert run_window(AbandonsAStream, use_tray=False, quit_after_s=10) == 0
    assert cleaned == ["closed on the loop"]


def test_quitting_waits_for_pictures_being_decoded(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.ui.pictures as pictures

    waits: list[int] = []
    real = pictures.wait_for_image_decoding

    def recording(timeout_ms: int = 2000) -> bool:
        waits.append(timeout_ms)
        return real(timeout_ms)

    monkeypatch.setattr(pictures, "wait_for_image_decoding", recording)
    assert run_window(ScriptedSession, use_tray=False, quit_after_s=0.2) == 0
    assert waits == [2000]


def test_starting_in_pet_mode_never_shows_the_main_window(qapp: QApplication) -> None:
    from app.config import Settings
    from app.ui.pet import PetWindow

    settings = Settings()
    settings.ui.start_in_pet_mode = True
    settings.ui.first_run_done = True
    seen: dict[str, bool] = {}

    class Looks(ScriptedSession):
        async def start(self) -> None:
            await super().start()
            seen["main shown"] = window_of(self).isVisible()
            seen["pet shown"] = any(
                isinstance(w, PetWindow) and w.session is self and w.isVisible()
                for w in QApplication.topLevelWidgets()
            )

    def make() -> ScriptedSession:
        seen["main shown while starting"] = any(
            isinstance(w, MainWindow) and w.isVisible() for w in QApplication.topLevelWidgets()
        )
        return Looks()

    assert run_window(make, settings=settings, use_tray=False, quit_after_s=0.3) == 0
    assert seen == {"main shown while starting": False, "main shown": False, "pet shown": True}


def test_a_finished_window_loop_can_be_collected_on_any_thread(qapp: QApplication) -> None:
    """qasync keeps Qt timers of handles that never fired; freed by the garbage collector
    on another thread they would be stopped from the wrong thread and crash Qt later."""
    import gc

    from PySide6.QtCore import qInstallMessageHandler

    gc.collect()  # what earlier tests left is not this test's business
    messages: list[str] = []
    previous = qInstallMessageHandler(lambda kind, context, text: messages.append(text))
    try:

        class WaitsWithATimeout(ScriptedSession):
            async def start(self) -> None:
                await super().start()
                # Leaves a timer that never fires: the wait ends long before its timeout.
                await asyncio.wait_for(asyncio.sleep(0), 60)

        assert run_window(WaitsWithATimeout, use_tray=False, quit_after_s=0.2) == 0
        collector = threading.Thread(target=gc.collect)
        collector.start()
        collector.join()
    finally:
        qInstallMessageHandler(previous)
    assert not [m for m in messages if "another thread" in m]

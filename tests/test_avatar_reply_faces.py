"""Each reply sentence's expression reaches the avatar as that sentence starts playing
(or is shown, with no speaker), in the window and the pet alike, and the face is
neutral again after the reply. Offscreen Qt, a real VoiceSession, a scripted model on
loopback speaking the OpenAI wire, the real voice into a recording sink."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from PySide6.QtWidgets import QApplication

from app.agent.storage import InMemoryStorage
from app.audio.playback import LevelCallback, MemorySink, PlaybackReport
from app.config import Settings
from app.events import EventHub, ExpressionChanged, TurnFinished
from app.session import VoiceSession
from app.session.turn import FACE_HOLD_HEARD_S
from app.tts import SynthesizedAudio
from app.ui import MainWindow
from app.ui.pet import PetWindow
from tests.llm_servers import Reply, ScriptedChatServer

# Four sentences: tagged, untagged (keeps the face), tagged, tagged.
REPLY = [
    "[joy] Hello",
    " there, my friend!",
    " It is sunny.",
    " [surprise] Did you",
    " know that?",
    " [sadness] It will rain later.",
]
FACES = ["joy", "joy", "surprise", "sadness"]


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(REPLY, delay=0.01)] * 2) as srv:
        yield srv


@dataclass
class FaceWatchingSink(MemorySink):
    """Plays into memory; notes what the faces show as each sentence starts playing."""

    faces: Callable[[], tuple[str, ...]] = lambda: ()
    seen: list[tuple[str, ...]] = field(default_factory=list)

    async def play(
        self, audio: SynthesizedAudio, *, on_level: LevelCallback | None = None
    ) -> PlaybackReport:
        # The window takes session events queued, as Qt delivers them: give the loop a
        # moment (a real speaker's first chunk takes longer) before looking at the faces.
        await asyncio.sleep(0.05)
        self.seen.append(self.faces())
        return await super().play(audio, on_level=on_level)


def _session(server: ScriptedChatServer, sink: MemorySink | None) -> VoiceSession:
    settings = Settings()
    settings.persona.max_sentences = 0  # all four sentences (a voice reply has three)
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    settings.tts.engine = "pyttsx3"  # a fast voice: the faces are what is tested here
    return VoiceSession(settings, sink=sink, storage=InMemoryStorage(), events=EventHub())


def _run_turn(
    qapp: QApplication, session: VoiceSession, after: Callable[[], bool]
) -> list[ExpressionChanged]:
    changes: list[ExpressionChanged] = []
    done = asyncio.Event()
    session.events.subscribe(
        lambda e: changes.append(e) if isinstance(e, ExpressionChanged) else None
    )
    session.events.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)

    async def pump() -> None:  # Qt delivers the window's queued session events
        while True:
            QApplication.processEvents()
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        pumping = asyncio.create_task(pump())
        try:
            await asyncio.wait_for(session.send_text("Tell me about the weather."), 60)
            await asyncio.wait_for(done.wait(), 30)
            deadline = time.monotonic() + FACE_HOLD_HEARD_S + 10
            while not after() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        finally:
            await session.aclose()
            pumping.cancel()

    asyncio.run(scenario())
    return changes


def test_each_sentence_s_face_shows_as_it_plays_in_the_window_and_the_pet(
    qapp: QApplication, server: ScriptedChatServer
) -> None:
    sink = FaceWatchingSink()
    session = _session(server, sink)
    window, pet = MainWindow(session), PetWindow(session)
    sink.faces = lambda: (window.avatar.expression, pet.avatar.expression)
    window.show()
    try:
        neutral = lambda: window.avatar.expression == pet.avatar.expression == "neutral"  # noqa: E731
        changes = _run_turn(qapp, session, neutral)
        assert sink.seen == [(face, face) for face in FACES]
        assert neutral()  # after the reply
        assert [c.expression for c in changes][-1] == "neutral"
        assert session.avatar.current == "neutral"
    finally:
        pet.close()
        window.close()


def test_a_reply_shown_without_a_speaker_changes_the_face_too_and_ends_neutral(
    qapp: QApplication, server: ScriptedChatServer
) -> None:
    session = _session(server, None)
    window = MainWindow(session)
    shown: list[str] = []
    set_expression = window.avatar.set_expression

    def showing(expression: str, intensity: float = 1.0) -> bool:
        changed = set_expression(expression, intensity)
        shown.append(window.avatar.expression)
        return changed

    window.avatar.set_expression = showing  # type: ignore[method-assign]
    try:
        changes = _run_turn(qapp, session, lambda: window.avatar.expression == "neutral")
        assert [c.expression for c in changes] == [
            "thinking",
            "joy",
            "surprise",
            "sadness",
            "neutral",
        ]
        assert shown == ["thinking", "joy", "surprise", "sadness", "neutral"]
    finally:
        window.close()

"""What a sound test records or plays never becomes a turn (issue 15, item 2): while
the first-run guide or the settings test the microphone or the voice, the session
takes no turns; afterwards it listens as before."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.agent.storage import InMemoryStorage
from app.audio.capture import WavFileSource
from app.audio.format import pcm_bytes
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, SessionEvent, Status, StatusChanged, TurnFinished, UserTranscript
from app.session import VoiceSession
from tests import test_ui_settings as shared
from tests.conftest import speak_to_wav
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_ui_settings import run_check
from tests.ui_sessions import ScriptedSession

qapp = shared.qapp
config_file = shared.config_file
memory_keyring = shared.memory_keyring

TEST_PHRASE = "This is a microphone test, one two three."
QUESTION = "What is the weather like today?"


class SoundTestThenQuestion:
    """A microphone that hears a sound test (while the session's turns are paused),
    then, once the test is over, the user's question."""

    def __init__(self, session: VoiceSession, test: Path, question: Path) -> None:
        self.session = session
        self.test = WavFileSource(test, trailing_silence_s=1.5)
        self.question = WavFileSource(question, trailing_silence_s=1.5)

    async def chunks(self) -> AsyncIterator[bytes]:
        self.session.set_turns_paused(True)
        async for chunk in self.test.chunks():
            yield chunk
        self.session.set_turns_paused(False)
        await asyncio.sleep(0.7)  # the test's sound dies away
        silence = bytes(pcm_bytes(0.032))
        for _ in range(5):
            yield silence
        async for chunk in self.question.chunks():
            yield chunk

    async def aclose(self) -> None:
        return None


async def test_speech_during_a_sound_test_is_not_a_turn(tmp_path: Path) -> None:
    test = speak_to_wav(TEST_PHRASE, tmp_path / "test.wav")
    question = speak_to_wav(QUESTION, tmp_path / "question.wav")
    with ScriptedChatServer([Reply.text_stream(["It is sunny."])] * 2) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        seen: list[SessionEvent] = []
        events = EventHub()
        events.subscribe(seen.append)
        storage = InMemoryStorage()
        session = VoiceSession(settings, sink=MemorySink(), storage=storage, events=events)
        finished = asyncio.Event()
        events.subscribe(lambda e: finished.set() if isinstance(e, TurnFinished) else None)
        try:
            await session.listen(SoundTestThenQuestion(session, test, question))
            await asyncio.wait_for(finished.wait(), 60)
            await asyncio.sleep(0.3)
        finally:
            await session.aclose()
        asked = [r.json()["messages"][-1]["content"] for r in server.requests]
    # The live words while the question is said are partial transcripts; one final.
    heard = [e.text for e in seen if isinstance(e, UserTranscript) and e.final]
    assert len(heard) == 1 and "weather" in heard[0].lower(), heard
    partial = [e.text.lower() for e in seen if isinstance(e, UserTranscript) and not e.final]
    assert not any("microphone" in text or "testing" in text for text in partial), partial
    assert len(asked) == 1 and "weather" in asked[0].lower(), asked
    history = " ".join(m.text for m in session.history_messages())
    assert "microphone" not in history.lower() and "weather" in history.lower()
    statuses = [(e.status, e.detail) for e in seen if isinstance(e, StatusChanged)]
    assert (Status.MUTED, "paused during a sound test") in statuses


def test_the_guides_and_the_settings_sound_tests_pause_the_turns(
    qapp: QApplication, tmp_path: Path, config_file: Path
) -> None:
    from app.ui import MainWindow, Shell

    clip = speak_to_wav("Hello, can you hear me?", tmp_path / "hello.wav")
    settings = Settings()
    session = ScriptedSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=settings.ui, use_tray=False, settings=settings)
    try:
        guide = shell.open_first_run()
        dialog = shell.open_settings()
        assert guide is not None and dialog is not None
        for panels in (guide, dialog):
            before = len(session.pauses)
            panels.mic_check.source_factory = lambda s: WavFileSource(clip)
            panels.mic_check.sink_factory = lambda s: MemorySink()
            panels.voice_check.sink_factory = lambda s: MemorySink()
            run_check(panels.mic_check)
            run_check(panels.voice_check)
            assert session.pauses[before:] == [
                True,
                False,
                True,
                False,
            ]  # the mic test, then the voice
    finally:
        if shell.first_run_guide is not None:
            shell.first_run_guide.reject()
        shell.dispose()
        window.close()

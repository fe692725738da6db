"""The window shows the user's words while they speak: a pending "You: what's the
weather li…" bubble that becomes the final one. Offscreen Qt; once with scripted
events, once with a real session hearing espeak-ng speech through Silero, Smart Turn
and whisper."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from app.agent.storage import InMemoryStorage
from app.audio.capture import ChunkListSource
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import UserTranscript
from app.session import VoiceSession
from app.ui import MainWindow
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_turn_taking import chunks, silence, speak
from tests.test_ui import run_on_qt_loop
from tests.ui_sessions import ScriptedSession


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def user_bubble(window: MainWindow) -> tuple[str, bool] | None:
    """(what the user's bubble says, whether it is still pending), if there is one."""
    entries = window.transcript.entries
    for index, entry in enumerate(entries):
        if entry.speaker == "user":
            (label,) = [w for w in window.transcript.bubble_widgets(index) if isinstance(w, QLabel)]
            return label.text(), not entry.final
    return None


def test_partial_words_trail_off_and_the_final_words_replace_them(qapp: QApplication) -> None:
    session = ScriptedSession()
    window = MainWindow(session)
    try:
        session.events.emit(UserTranscript("what's the weather li", final=False, turn_id=1))
        QApplication.processEvents()
        assert user_bubble(window) == ("what's the weather li…", True)
        session.events.emit(UserTranscript("What's the weather like?", final=True, turn_id=1))
        QApplication.processEvents()
        assert user_bubble(window) == ("What's the weather like?", False)
        assert len(window.transcript.entries) == 1
    finally:
        window.close()


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(["Sure."], delay=0.01)]) as srv:
        yield srv


def test_a_real_session_shows_the_words_while_the_user_speaks(
    qapp: QApplication, server: ScriptedChatServer, tmp_path: Path
) -> None:
    said = speak('I want to tell you about <break time="1200ms"/> my cat.', tmp_path / "p.wav")
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    seen: list[tuple[str, bool]] = []

    async def main() -> None:
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
        window = MainWindow(session)

        async def watch() -> None:
            while True:
                shown = user_bubble(window)
                if shown is not None and (not seen or seen[-1] != shown):
                    seen.append(shown)
                await asyncio.sleep(0.005)

        watcher = asyncio.ensure_future(watch())
        try:
            await session.load_models()
            await session.listen(ChunkListSource(chunks(silence(0.3) + said + silence(3.0))))
            await session.host.until_idle()
            await asyncio.sleep(0.1)
        finally:
            watcher.cancel()
            await session.aclose()
            window.close()

    run_on_qt_loop(main())
    pending = [text for text, still in seen if still]
    # they trail off: the window's "…", or whisper's own "..." (with 5 beams it writes
    # "I want to tell you about..." at the pause, and the window adds none after it)
    assert pending and all(text.endswith(("…", "...")) for text in pending)
    assert any("tell" in text.lower() and " my " not in f" {text.lower()} " for text in pending)
    # the words after the pause are in the final: "my" (its last word is tiny.en's to
    # get right: in its short English window it hears "my card" now and then)
    final, still = seen[-1]
    assert not still and not final.endswith("…") and " my " in f" {final.lower()} ", final

"""A reply with no sound output, and a reply that fails (issue 15, items 4 and 5).

Without a speaker each sentence is shown when it is ready and no sooner than the one
before it takes to read, the status says the reply is being shown (not "Thinking"),
and what was shown is what counts as heard. A model that cannot be reached is one
error in one place, the avatar goes back to its face, and nothing empty is saved."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import (
    AssistantSentence,
    EventHub,
    ExpressionChanged,
    Notice,
    SessionEvent,
    Status,
    StatusChanged,
)
from app.llm import Role
from app.session import VoiceSession
from app.session.turn import reading_s
from tests.llm_servers import Reply, ScriptedChatServer

SENTENCES = [
    "Here is the first thing to read and it has quite a few words in it.",
    " Then a second sentence follows right away.",
    " And a third one closes the reply.",
]


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def session_for(
    base_url: str, tmp_path: Path, *, sink: MemorySink | None = None
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = base_url
    settings.chat.timeout_s = 5
    seen: list[SessionEvent] = []
    events = EventHub()
    events.subscribe(seen.append)
    storage = FileStorage(tmp_path / "history")
    return VoiceSession(settings, sink=sink, storage=storage, events=events), seen


def test_reading_time_grows_with_the_words() -> None:
    assert reading_s("One two three four five six.") > reading_s("One two.") > 0
    assert reading_s("今天天气很好，我们去公园散步吧。") > reading_s("好。") > 0


async def test_without_sound_the_reply_is_shown_at_reading_pace_and_said_so(
    tmp_path: Path,
) -> None:
    with ScriptedChatServer([Reply.text_stream(SENTENCES, delay=0.01)]) as server:
        session, seen = session_for(server.base_url, tmp_path)
        assert session.sink is None  # no speaker
        try:
            turn = asyncio.create_task(session.send_text("Tell me three things."))
            while not any(isinstance(e, AssistantSentence) for e in seen):
                await asyncio.sleep(0.01)
            # The model has said everything by now; the reply is still being read.
            await asyncio.sleep(0.3)
            shown_before_esc = [e.display_text for e in seen if isinstance(e, AssistantSentence)]
            session.interrupt()
            result = await turn
            stored = session.history_messages()
        finally:
            await session.aclose()
    assert server.requests  # the whole reply was streamed long before it was read
    assert shown_before_esc == [SENTENCES[0]]
    assert result.interrupted
    reply = [m for m in stored if m.role == Role.ASSISTANT][-1]
    assert reply.metadata.get("heard") == SENTENCES[0]  # what was read is what was "heard"
    statuses = [e for e in seen if isinstance(e, StatusChanged)]
    first_shown = seen.index(next(e for e in seen if isinstance(e, AssistantSentence)))
    before = [e for e in statuses if seen.index(e) < first_shown]
    assert before[-1] == StatusChanged(Status.REPLYING, "the reply is shown: no sound output")
    after = [e.status for e in statuses if seen.index(e) > first_shown]
    assert Status.THINKING not in after and Status.SPEAKING not in after


async def test_without_sound_every_sentence_is_shown_in_the_end(tmp_path: Path) -> None:
    with ScriptedChatServer([Reply.text_stream(SENTENCES, delay=0.01)]) as server:
        session, seen = session_for(server.base_url, tmp_path)
        try:
            result = await session.send_text("Tell me three things.")
        finally:
            await session.aclose()
    shown = [e.display_text for e in seen if isinstance(e, AssistantSentence)]
    assert shown == [s.strip() for s in SENTENCES] and not result.interrupted


async def test_an_unreachable_model_is_one_error_and_the_face_comes_back(
    qapp: QApplication, tmp_path: Path
) -> None:
    from app.ui import MainWindow

    session, seen = session_for("http://127.0.0.1:9/v1", tmp_path, sink=MemorySink())
    window = MainWindow(session)
    try:
        result = await session.send_text("Are you there?")
        for _ in range(20):
            QApplication.processEvents()
            await asyncio.sleep(0.01)
        stored = session.history_messages()
        status = window.status_text()
        face = window.avatar.expression
    finally:
        await session.aclose()
        window.close()
    assert result.error and "Could not reach" in result.error
    errors = [e.message for e in seen if isinstance(e, Notice) and e.error]
    assert len(errors) == 1, errors
    assert status.count("Could not reach") == 1, status
    assert status.startswith("Error · "), status
    faces = [e.expression for e in seen if isinstance(e, ExpressionChanged)]
    assert faces[0] == "thinking" and faces[-1] != "thinking", faces
    assert face != "thinking" and not window.avatar.thinking
    assert all(m.text.strip() for m in stored if m.role == Role.ASSISTANT)

"""An interrupted reply shows what was heard and a small "interrupted" mark, never the
note the model is told (issue 15, item 3); the model is still told, and nothing meant
for the model is shown as the companion's words, live or from history."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.agent.notes import INTERRUPTED_NOTE
from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import AssistantSentence, EventHub, SessionEvent
from app.session import VoiceSession
from app.ui.transcript import TranscriptView
from tests.llm_servers import Reply, ScriptedChatServer

FIRST = "The first sentence is short."
REPLY = [FIRST, " The second one goes on for quite a while, so it can be cut.", " A third."]


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def shown_words(view: TranscriptView) -> list[str]:
    """Every text a bubble shows, as the user reads it (the labels' rich text)."""
    from PySide6.QtWidgets import QLabel

    texts = []
    for index in range(len(view.entries)):
        for widget in view.bubble_widgets(index):
            texts.extend(
                label.text()
                for label in [widget, *widget.findChildren(QLabel)]
                if isinstance(label, QLabel)
            )
    return texts


async def test_an_interrupted_reply_shows_what_was_heard_not_the_note(
    qapp: QApplication, tmp_path: Path
) -> None:
    replies = [Reply.text_stream(REPLY, delay=0.01), Reply.text_stream(["Sure."])]
    with ScriptedChatServer(replies) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        events = EventHub()
        seen: list[SessionEvent] = []
        events.subscribe(seen.append)
        storage = FileStorage(tmp_path / "history")
        session = VoiceSession(
            settings, sink=MemorySink(realtime=True), storage=storage, events=events
        )
        try:
            turn = asyncio.create_task(session.send_text("Tell me something."))
            while len([e for e in seen if isinstance(e, AssistantSentence)]) < 2:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # into the second sentence
            session.interrupt()
            result = await turn
            await session.send_text("Go on.")
            messages = session.history_messages()
        finally:
            await session.aclose()
        told = server.requests[-1].json()["messages"]
    assert result.interrupted
    # The model is told where it was cut off.
    assert any(INTERRUPTED_NOTE in str(m.get("content")) for m in told), told
    view = TranscriptView()
    view.resize(640, 800)
    view.load_history(messages)
    reply = view.entries[1]
    assert reply.interrupted and reply.answer.startswith(FIRST)
    words = " ".join(shown_words(view))
    assert "interrupted" in words  # the small mark
    assert "[The user" not in words and "heard only" not in words, words
    # Live: a model that repeats the note back does not have it shown as its words.
    view.add_sentence(f"{INTERRUPTED_NOTE} Where was I?", turn_id=99)
    assert view.entries[-1].answer == "Where was I?"
    view.add_sentence(INTERRUPTED_NOTE.lower(), turn_id=99)
    assert view.entries[-1].answer == "Where was I?"
    view.close()

"""A conversation whose image file was deleted keeps working on every wire (the image
becomes a short note in the request), and a failed turn never stores an empty reply."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import SecretStr

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub
from app.llm import Msg, TextBlock
from app.media import import_image
from app.session import VoiceSession
from tests.llm_servers import WIRE_FIXTURES, Reply, ScriptedChatServer, sse
from tests.test_llm_openai_responses import text_stream as responses_stream

KEY = "sk-" + "test-IMAGESKEY0123456789"


def responses_reply(text: str) -> Reply:
    events = [sse(event) for event in responses_stream(text)]
    return Reply(headers={"content-type": "text/event-stream"}, chunks=events)


GEMINI_TEXT = WIRE_FIXTURES / "gemini" / "pydantic-ai_google-tool-call-thought-signature-turn2.sse"
WIRES: dict[str, tuple[str, str, Any]] = {
    "openai_chat": ("openai-compatible/scripted", "chat", lambda: Reply.text_stream(["Ok."])),
    "openai_responses": ("openai/gpt-5", "responses", lambda: responses_reply("Ok.")),
    "anthropic": ("anthropic/claude-sonnet-4-5", "chat", lambda: Reply.anthropic_stream(["Ok."])),
    "gemini": ("gemini/gemini-2.5-flash", "chat", lambda: Reply.fixture(GEMINI_TEXT)),
}


def history_with_a_deleted_image(root: Path, tmp_path: Path) -> tuple[FileStorage, str]:
    picture = tmp_path / "cat.png"
    Image.effect_noise((64, 64), 80).convert("RGB").save(picture)
    storage = FileStorage(root)
    uid = storage.create_history("default")
    image = import_image(picture, session_id=uid, name="p1", root=tmp_path / "data")
    storage.append(
        "default",
        uid,
        [
            Msg.user([TextBlock(text="What is this?"), image]),
            Msg.assistant("A noisy picture."),
        ],
    )
    for ref in (image.original, image.model):
        ref.path.unlink(missing_ok=True)
    return storage, uid


def session_for(server: ScriptedChatServer, wire: str, storage: FileStorage) -> VoiceSession:
    route, style, _ = WIRES[wire]
    settings = Settings()
    settings.chat.model = route
    settings.chat.api_style = style  # type: ignore[assignment]
    settings.chat.base_url = server.base_url
    settings.chat.api_key = SecretStr(KEY)
    settings.agent.chat_supports_vision = True
    settings.agent.enable_tool = False
    return VoiceSession(settings, sink=MemorySink(), storage=storage, events=EventHub())


@pytest.mark.parametrize("wire", sorted(WIRES))
async def test_a_deleted_history_image_becomes_a_note_on_every_wire(
    wire: str, tmp_path: Path
) -> None:
    storage, uid = history_with_a_deleted_image(tmp_path / "history", tmp_path)
    reply = WIRES[wire][2]
    with ScriptedChatServer([reply(), reply()]) as server:
        session = session_for(server, wire, storage)
        try:
            first = await session.send_text("And now?")
            second = await session.send_text("Still there?")
        finally:
            await session.aclose()
        bodies = [request.body.decode() for request in server.requests]
    assert first.error is None and second.error is None  # every later turn works
    assert len(bodies) == 2
    for body in bodies:
        assert "image p1: its file was deleted" in body
        assert not any(m in body for m in ("base64", "inlineData", "input_image", "image_url"))
        assert not re.search(r'"type":\s*"image"', body)
    saved = storage.load("default", uid)
    assert all(m.text.strip() for m in saved if m.role == "assistant")


def test_a_summary_kept_for_a_deleted_image_goes_into_its_note(tmp_path: Path) -> None:
    from app.agent.vision import SUMMARIES_KEY, missing_images_as_notes

    storage, uid = history_with_a_deleted_image(tmp_path / "history", tmp_path)
    question = storage.load("default", uid)[0]
    question.metadata[SUMMARIES_KEY] = {"p1": "a grey cat on a sofa"}
    [noted] = missing_images_as_notes([question])
    words = " ".join(b.text for b in noted.blocks if isinstance(b, TextBlock))
    assert "image p1: its file was deleted" in words and "a grey cat on a sofa" in words
    assert not noted.images
    assert question.images  # the history itself keeps the reference


async def test_a_failed_turn_stores_no_empty_reply(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "history")
    refused = Reply.error(400, {"error": {"message": "bad request", "type": "invalid_request"}})
    with ScriptedChatServer([refused, refused, Reply.text_stream(["Fine now."])]) as server:
        session = session_for(server, "openai_chat", storage)
        try:
            failed = await session.send_text("First try.")
            again = await session.send_text("Second try.")
            works = await session.send_text("Third try.")
        finally:
            await session.aclose()
        last = json.loads(server.requests[-1].body)
    assert failed.error and again.error and works.error is None
    saved = storage.load("default", session.conversation_id)
    assert [(m.role, m.text) for m in saved] == [
        ("user", "First try."),
        ("user", "Second try."),
        ("user", "Third try."),
        ("assistant", "Fine now."),
    ]
    assert "bad request" in saved[0].metadata["error"]
    # The model is sent what the user said, never an empty answer of its own.
    sent = [m for m in last["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "user", "user"]

""" "What's on my screen?" offline, on Xvfb with a real window showing known text: the
screenshot is taken (and announced), its text read by the real OCR engine, the window's
title named, and a text-only model gets it all as words; the embedded model, which has
no tools, gets it because the app looks on request. Hosted vision models keep getting
the image itself, and a model that cannot look is told so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.agent.looking import CANNOT_LOOK_HINT, LOOKS_ON_REQUEST_HINT
from app.agent.storage import FileStorage, InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import CaptureTaken, SessionEvent, ToolUsed
from app.llm import ImageBlock, LLMRequest, LLMResponse, Role, TextBlock, ToolUseBlock
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent
from app.media.windows import list_windows
from app.session import VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer, chat_chunk, sse
from tests.test_media_screenshot import xvfb_display  # noqa: F401  (a fixture)

pytest.importorskip("rapidocr_onnxruntime")

SENTENCE = "The purple giraffe reads quantum poetry at midnight."
TITLE = "Notes - purple giraffe"


@pytest.fixture
def text_window(xvfb_display: str) -> Iterator[subprocess.Popen[str]]:  # noqa: F811
    """A real Qt window on the Xvfb screen showing SENTENCE, titled TITLE."""
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": xvfb_display}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.text_window", TITLE, SENTENCE],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "shown"
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


@dataclass
class EchoingModel:
    """A text-only model that answers with the last user message it was given (the
    user's words and whatever the app added to them), so the reply shows exactly what
    reached the model."""

    requests: list[LLMRequest] = field(default_factory=list)
    provider: str = "echo"

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        self.requests.append(request)
        last = [m for m in request.messages if m.role == Role.USER][-1]
        text = "I was given: " + " ".join(last.text.split())
        emit = EventEmitter("echo", request.model)
        yield emit.started("r")
        yield emit.delta(BlockInfo(0, "b0", "text"), "text", text, text)
        yield emit.completed(
            LLMResponse(
                provider="echo",
                id="r",
                model=request.model,
                content=[TextBlock(text=text)],
                finish_reason="stop",
            )
        )


def events_of(session: VoiceSession) -> list[SessionEvent]:
    seen: list[SessionEvent] = []
    session.events.subscribe(seen.append)
    return seen


def test_the_windows_on_the_screen_are_listed_with_the_active_one(
    text_window: subprocess.Popen[str],
) -> None:
    (window,) = [w for w in list_windows() if w.title == TITLE]
    assert window.active and not window.own and window.width > 200
    (mine,) = [w for w in list_windows(pid=text_window.pid) if w.title == TITLE]
    assert mine.own  # the window of the process named as "own"


async def test_the_embedded_model_gets_the_screen_as_text_when_asked(
    text_window: subprocess.Popen[str], tmp_path: Path
) -> None:
    settings = Settings()
    settings.chat.model = "local/smollm2"  # no tools: the app looks for it
    settings.tts.engine = "pyttsx3"
    settings.persona.max_sentences = 0  # the echo says all it was given
    model = EchoingModel()
    storage = FileStorage(tmp_path / "history")
    session = VoiceSession(settings, provider=model, sink=MemorySink(), storage=storage)
    seen = events_of(session)
    try:
        result = await session.send_text("What's on my screen?")
        chit_chat = await session.send_text("I see. See you later!")
    finally:
        await session.aclose()
    reply = " ".join(s.display_text for s in result.sentences)
    assert "purple giraffe reads quantum poetry" in reply.lower()
    assert f"looking at the window “{TITLE}”" in reply
    captures = [e for e in seen if isinstance(e, CaptureTaken)]
    assert len(captures) == 1 and captures[0].path.is_file()  # the indicator fired, once
    assert [e.name for e in seen if isinstance(e, ToolUsed)] == ["take_screenshot"]
    echoed = " ".join(s.display_text for s in chit_chat.sentences)
    assert echoed.startswith("I was given: (Local time")  # no look, no screenshot
    assert "I see. See you later!" in echoed
    # The model never got an image or a tool call, and was told how it sees.
    first = model.requests[0]
    assert not any(
        isinstance(b, ImageBlock | ToolUseBlock) for m in first.messages for b in m.blocks
    )
    assert [m.role for m in first.messages] == [Role.SYSTEM, Role.USER]
    assert LOOKS_ON_REQUEST_HINT in first.messages[0].text
    # The next turn still has what was seen, as words after the question.
    later = model.requests[1].messages
    assert "the app looked at the screen" in later[1].text.lower() and SENTENCE in later[1].text
    # History keeps the screenshot as a file and its text as the summary.
    saved = storage.load("default", session.conversation_id)
    (tool_msg,) = [m for m in saved if m.role == Role.TOOL]
    (image,) = tool_msg.tool_results[0].images
    assert Path(image.original.path) == captures[0].path
    summary = tool_msg.metadata["image_summaries"]["tool1"]
    assert SENTENCE.lower().rstrip(".") in summary.lower()


async def test_a_hosted_text_only_model_that_calls_the_tool_reads_the_text_on_the_wire(
    text_window: subprocess.Popen[str],
) -> None:
    call = sse(
        chat_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "take_screenshot", "arguments": "{}"},
                    }
                ]
            }
        )
    )
    tool_reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=[
            sse(chat_chunk({"role": "assistant", "content": None})),
            call,
            sse(chat_chunk({}, finish_reason="tool_calls")),
            b"data: [DONE]\n\n",
        ],
    )
    with ScriptedChatServer([tool_reply, Reply.text_stream(["A giraffe poem!"])]) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/text-only"
        settings.chat.base_url = server.base_url
        settings.agent.chat_supports_vision = False
        settings.tts.engine = "pyttsx3"
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
        seen = events_of(session)
        try:
            result = await session.send_text("Look at my screen, what does it say?")
        finally:
            await session.aclose()
        second = server.requests[1].json()
    assert result.error is None
    assert any(isinstance(e, CaptureTaken) for e in seen)
    tool_text = json.dumps([m for m in second["messages"] if m["role"] == "tool"])
    assert "purple giraffe reads quantum poetry" in tool_text.lower()
    assert TITLE in tool_text and "image_url" not in json.dumps(second)


async def test_a_server_that_refuses_tools_still_gets_the_screen_when_asked(
    text_window: subprocess.Popen[str],
) -> None:
    refusal = Reply.error(400, {"error": {"message": "This model does not support tools."}})
    with ScriptedChatServer([refusal, Reply.text_stream(["I can see a giraffe."])]) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/no-tools"
        settings.chat.base_url = server.base_url
        settings.agent.chat_supports_vision = False
        settings.tts.engine = "pyttsx3"
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
        try:
            await session.send_text("Hello!")  # the server refuses tools here
            await session.send_text("What am I looking at?")
        finally:
            await session.aclose()
        last = server.requests[-1].json()
    assert "tools" not in last
    assert "purple giraffe" in json.dumps(last["messages"]).lower()


async def test_a_hosted_vision_model_still_gets_the_image(
    text_window: subprocess.Popen[str],
) -> None:
    call = sse(
        chat_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "take_screenshot", "arguments": "{}"},
                    }
                ]
            }
        )
    )
    tool_reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=[
            sse(chat_chunk({"role": "assistant", "content": None})),
            call,
            sse(chat_chunk({}, finish_reason="tool_calls")),
            b"data: [DONE]\n\n",
        ],
    )
    with ScriptedChatServer([tool_reply, Reply.text_stream(["Nice poem."])]) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/sees"
        settings.chat.base_url = server.base_url
        settings.agent.chat_supports_vision = True
        settings.tts.engine = "pyttsx3"
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
        try:
            await session.send_text("What's on my screen?")
        finally:
            await session.aclose()
        second = json.dumps(server.requests[1].json())
    assert "image_url" in second and "data:image/" in second
    assert TITLE in second  # the window's title comes with the picture


async def test_a_model_with_screenshots_turned_off_is_told_it_cannot_look(
    text_window: subprocess.Popen[str],
) -> None:
    settings = Settings()
    settings.chat.model = "local/smollm2"
    settings.agent.enable_tool = False
    settings.tts.engine = "pyttsx3"
    model = EchoingModel()
    session = VoiceSession(settings, provider=model, sink=MemorySink(), storage=InMemoryStorage())
    seen = events_of(session)
    try:
        await session.send_text("What's on my screen?")
    finally:
        await session.aclose()
    assert not any(isinstance(e, CaptureTaken) for e in seen)  # nothing was captured
    assert CANNOT_LOOK_HINT in model.requests[0].messages[0].text


@pytest.mark.slow
async def test_the_real_embedded_model_answers_a_screen_question_from_its_text(
    text_window: subprocess.Popen[str],
) -> None:
    """The whole path with the embedded model itself (llama.cpp in-process): the look
    reaches it as words it can take (no image, no tool call on its wire) and it answers.
    With Qwen2.5-1.5B the answer named the giraffe's poetry; SmolLM2-135M, the small
    choice, may ramble, so only the plumbing is checked here."""
    settings = Settings()
    settings.tts.engine = "pyttsx3"
    settings.chat.max_tokens = 32
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    seen = events_of(session)
    try:
        await session.load_models()
        result = await session.send_text("What's on my screen?")
    finally:
        await session.aclose()
    assert settings.chat.model.startswith("local/")
    assert result.error is None and result.sentences
    assert any(isinstance(e, CaptureTaken) for e in seen)
    (tool_msg,) = [m for m in session.agent.history if m.role == Role.TOOL]
    assert "purple giraffe" in tool_msg.metadata["image_summaries"]["tool1"].lower()

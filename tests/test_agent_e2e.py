"""End to end under Xvfb: a question about the screen makes the model (a scripted
OpenAI-compatible server streaming a real Chat Completions tool call) call
take_screenshot; the next request carries the capture as an image, and the session
tells the user a capture happened."""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path
from typing import Any

from PIL import Image

from app.agent.storage import FileStorage, InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import (
    AssistantSentence,
    CaptureRequested,
    CaptureTaken,
    EventHub,
    Notice,
    SessionEvent,
)
from app.session import VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer, chat_chunk, sse
from tests.test_agent_tools import MCP_SERVER
from tests.test_media_screenshot import xvfb_display  # noqa: F401  (a fixture)


def tool_call_reply(arguments: str = '{"monitor": "under_mouse"}') -> Reply:
    """A streamed Chat Completions answer that calls take_screenshot, as OpenAI sends it:
    the call's id and name first, then its arguments in pieces."""
    head = {"index": 0, "id": "call_screen1", "type": "function",
            "function": {"name": "take_screenshot", "arguments": ""}}
    cut = len(arguments) // 2
    events = [
        sse(chat_chunk({"role": "assistant", "content": None, "tool_calls": [head]})),
        sse(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:cut]}}]})),
        sse(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[cut:]}}]})),
        sse(chat_chunk({}, finish_reason="tool_calls")),
        b"data: [DONE]\n\n",
    ]
    return Reply(headers={"content-type": "text/event-stream"}, chunks=events)


def make_session(
    server: ScriptedChatServer, *, tools: dict[str, Any] | None = None,
    mcp: dict[str, Any] | None = None, **agent: Any
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = Settings(tools=tools or {}, mcp={"servers": mcp or {}})
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    # these tests count the chat requests; the memory's own are tested in test_memory_*
    settings.memory.learn = False
    settings.agent.chat_supports_vision = True
    for key, value in agent.items():
        setattr(settings.agent, key, value)
    hub = EventHub()
    seen: list[SessionEvent] = []
    hub.subscribe(seen.append)
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    return session, seen


def of(kind: type, events: list[SessionEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


async def test_a_question_about_the_screen_sends_a_screenshot_to_the_model(
    xvfb_display: str,  # noqa: F811
) -> None:
    replies = [tool_call_reply(), Reply.text_stream(["[joy] I see", " a blank screen."])]
    with ScriptedChatServer(replies) as server:
        session, seen = make_session(server)
        try:
            result = await session.send_text("What is on my screen right now?")
        finally:
            await session.aclose()
        first, second = (r.json() for r in server.requests)
    assert result.error is None, result.error
    # The model was offered the tool with its JSON schema.
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert "monitor" in offered["take_screenshot"]["parameters"]["properties"]
    # The next request carries the call, its result, and the capture as an image.
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    call = second["messages"][2]["tool_calls"][0]
    assert call["id"] == "call_screen1" and json.loads(call["function"]["arguments"]) == {
        "monitor": "under_mouse"
    }
    tool_msg = second["messages"][3]
    assert tool_msg["tool_call_id"] == "call_screen1" and "tool1" in tool_msg["content"]
    parts = second["messages"][4]["content"]
    assert {"type": "text", "text": "[image tool1]"} in parts
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        assert image.size == (1280, 720)
    # The user saw that a capture happened, and heard the answer.
    [capture] = of(CaptureTaken, seen)
    assert capture.monitor == 1 and (capture.width, capture.height) == (1280, 720)
    assert capture.path.is_file()
    assert "I see a blank screen." in [e.display_text for e in of(AssistantSentence, seen)]


async def test_with_confirmation_on_the_user_is_asked_before_each_capture(
    xvfb_display: str,  # noqa: F811
) -> None:
    replies = [tool_call_reply(), Reply.text_stream(["Thanks."])]
    with ScriptedChatServer(replies) as server:
        session, seen = make_session(server, confirm_screenshots=True)
        session.events.subscribe(
            lambda e: session.answer_capture(e.request_id, True)
            if isinstance(e, CaptureRequested)
            else None
        )
        try:
            await session.send_text("Look at my screen")
        finally:
            await session.aclose()
    kinds = [type(e) for e in seen if isinstance(e, CaptureRequested | CaptureTaken)]
    assert kinds == [CaptureRequested, CaptureTaken]


async def test_a_declined_capture_is_not_taken_and_the_model_is_told(tmp_path: Path) -> None:
    replies = [tool_call_reply('{"monitor": "all"}'), Reply.text_stream(["Okay."])]
    with ScriptedChatServer(replies) as server:
        session, seen = make_session(server, confirm_screenshots=True)
        session.events.subscribe(
            lambda e: session.answer_capture(e.request_id, False)
            if isinstance(e, CaptureRequested)
            else None
        )
        try:
            await session.send_text("Look at my screen")
        finally:
            await session.aclose()
        second = server.requests[1].json()
    assert of(CaptureRequested, seen)[0].monitor == "all"
    assert of(CaptureTaken, seen) == []
    assert "did not allow" in second["messages"][3]["content"]


async def test_a_damaged_history_file_is_reported_when_the_app_starts(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "history")
    uid = storage.create_history("default")
    path = tmp_path / "history" / "default" / f"{uid}.jsonl"
    path.write_bytes(b"not json at all\n")
    with ScriptedChatServer([Reply.text_stream(["Hi."])]) as server:
        session, seen = make_session(server)
        session = VoiceSession(
            session.settings, sink=MemorySink(), storage=storage, events=session.events
        )
        try:
            await session.start(listen=False)
            result = await session.send_text("hello")  # the app still works
        finally:
            await session.aclose()
    assert result.error is None
    assert any("damaged" in n.message and ".bad" in n.message for n in of(Notice, seen))
    assert path.with_name(path.name + ".bad").is_file()


async def test_a_user_tool_from_the_config_is_offered_and_run() -> None:
    call = tool_call_reply('{"city": "Oslo"}')
    call.chunks[0] = call.chunks[0].replace(b"take_screenshot", b"weather")
    weather = {
        "command": [sys.executable, "-c", "import sys; print('rain in', sys.argv[1])", "{city}"],
        "description": "The weather in a city.",
        "parameters": {"city": {"type": "string", "description": "the city"}},
    }
    with ScriptedChatServer([call, Reply.text_stream(["Rainy."])]) as server:
        session, _ = make_session(server, tools={"weather": weather})
        try:
            await session.send_text("Weather in Oslo?")
        finally:
            await session.aclose()
        first, second = (r.json() for r in server.requests)
    assert "weather" in [t["function"]["name"] for t in first["tools"]]
    assert second["messages"][3]["content"] == "rain in Oslo"


async def test_mcp_servers_from_the_config_add_their_tools(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(MCP_SERVER)
    servers = {
        "demo": {"command": sys.executable, "args": [str(script), "x"]},
        "ghost": {"command": str(tmp_path / "missing")},
    }
    with ScriptedChatServer([Reply.text_stream(["ok"])]) as server:
        session, seen = make_session(server, mcp=servers)
        try:
            await session.start_mcp_servers()
            await session.send_text("hi")
        finally:
            await session.aclose()
        offered = [t["function"]["name"] for t in server.requests[0].json()["tools"]]
    assert {"demo__echo", "demo__picture", "take_screenshot", "get_time"} <= set(offered)
    assert any("ghost" in n.message for n in of(Notice, seen))


def test_the_embedded_model_is_not_offered_tools() -> None:
    session = VoiceSession(Settings(), sink=MemorySink(), storage=InMemoryStorage())
    assert session.agent.core.enable_tool is False
    assert session.agent.core.context_window == Settings().chat.local_context

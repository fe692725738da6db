"""The Chat Completions wire: request bodies, and chunk streams parsed into events."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from app.llm import (
    ContextOverflowError,
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    Msg,
    ProviderStreamError,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ValidationError,
)
from app.llm.events import EventEmitter
from app.llm.transform import NO_RESULT
from app.llm.wire.openai_chat import ChatStreamParser, to_wire
from tests.llm_servers import WIRE_FIXTURES, assert_well_formed, chat_chunk

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _image(tmp_path: Path, name: str) -> ImageBlock:
    path = tmp_path / f"{name}.png"
    path.write_bytes(PNG)
    ref = ImageFileRef(path=path, mime_type="image/png", width=1, height=1)
    return ImageBlock(original=ref, model=ref, name=name)


def test_tool_results_become_tool_role_messages() -> None:
    request = LLMRequest(
        model="m",
        messages=[
            Msg.user("what time is it?"),
            Msg.assistant([ToolUseBlock(id="call_1", name="clock", input={"tz": "UTC"})]),
            Msg.tool_result("call_1", "12:00", name="clock"),
        ],
    )
    messages = to_wire(request, model="m")["messages"]
    assert messages[1]["role"] == "assistant"
    assert messages[1]["content"] is None
    call = messages[1]["tool_calls"][0]
    assert call["id"] == "call_1"
    assert json.loads(call["function"]["arguments"]) == {"tz": "UTC"}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "12:00"}


def test_user_image_becomes_a_data_url_read_from_the_file(tmp_path: Path) -> None:
    request = LLMRequest(
        model="m", messages=[Msg.user([TextBlock(text="what is this?"), _image(tmp_path, "p1")])]
    )
    parts = to_wire(request, model="m")["messages"][0]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert {"type": "text", "text": "[image p1]"} in parts


def test_tool_images_follow_the_tool_messages_in_a_user_message(tmp_path: Path) -> None:
    result = ToolResultBlock(
        tool_use_id="c1", content=[TextBlock(text="captured"), _image(tmp_path, "tool1")]
    )
    request = LLMRequest(
        model="m",
        messages=[
            Msg.assistant([ToolUseBlock(id="c1", name="screenshot")]),
            Msg(role="tool", content=[result]),
        ],
    )
    messages = to_wire(request, model="m")["messages"]
    assert [m["role"] for m in messages] == ["assistant", "tool", "user"]
    assert "tool1" in messages[1]["content"]
    assert any(p["type"] == "image_url" for p in messages[2]["content"])


def test_a_missing_image_file_is_a_validation_error(tmp_path: Path) -> None:
    block = _image(tmp_path, "gone")
    block.model.path.unlink()
    with pytest.raises(ValidationError, match="cannot be read"):
        to_wire(LLMRequest(model="m", messages=[Msg.user([block])]), model="m")


def test_thinking_from_another_provider_is_sent_as_plain_text() -> None:
    theirs = ThinkingBlock(text="let me think", provider="anthropic", signature="s")
    mine = ThinkingBlock(text="mine", provider="openai")
    request = LLMRequest(
        model="m",
        messages=[
            Msg.assistant([theirs, TextBlock(text="ok")]),
            Msg.assistant([mine, TextBlock(text="hi")]),
        ],
    )
    messages = to_wire(request, model="m", provider="openai")["messages"]
    assert messages[0]["content"] == "let me think\nok"
    assert messages[1]["content"] == "hi"


def test_streaming_body_asks_for_usage_and_carries_options() -> None:
    request = LLMRequest(
        model="m",
        messages=[Msg.system("be brief"), Msg.user("hi")],
        tools=[ToolSpec(name="look", description="take a screenshot")],
        tool_choice={"name": "look"},
        temperature=0.3,
        max_tokens=50,
        stream=True,
    )
    body = to_wire(request, model="m", provider="ollama")
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["tools"][0]["function"]["name"] == "look"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "look"}}
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 50
    assert "stream" not in to_wire(request.model_copy(update={"stream": False}), model="m")


def _parse_fixture(path: Path) -> list:
    parser = ChatStreamParser(EventEmitter("openai-compatible", "x"), label="Test server")
    events = []
    for line in path.read_text().split("\n"):
        data = line.removeprefix("data: ").strip() if path.suffix == ".sse" else line
        if not data or data == "[DONE]":
            continue
        events += parser.feed_data(data)
    return events + parser.finish()


def summarize(events: list) -> dict:
    """The oracle fields of a stream, in the `.expected.json` conventions."""
    done = events[-1]
    text = "".join(e.delta for e in events if e.kind == "block.delta" and e.channel == "text")
    thinking = "".join(
        e.delta for e in events if e.kind == "block.delta" and e.channel == "thinking"
    )
    response = done.response
    return {
        "final_text": text,
        "thinking_text": thinking or None,
        "tool_calls": [{"name": c.name, "arguments": c.input} for c in response.tool_calls],
        "finish": response.finish_reason,
        "usage": {"input": response.usage.input, "output": response.usage.output},
        "reasoning": response.reasoning,
    }


CHAT_FIXTURES = sorted((WIRE_FIXTURES / "openai_chat").glob("*.expected.json"))


@pytest.mark.skipif(not CHAT_FIXTURES, reason="shared wire fixtures not found")
@pytest.mark.parametrize("expected_path", CHAT_FIXTURES, ids=lambda p: p.name.split(".")[0])
def test_recorded_streams_parse_to_the_oracle(expected_path: Path) -> None:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in expected_path.parent.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    expected = json.loads(expected_path.read_text())
    events = _parse_fixture(body)
    assert_well_formed(events)
    assert events[-1].kind == "response.completed"
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key
    assert got["reasoning"] == expected["thinking_text"]


def test_interleaved_parallel_tool_calls_never_mix() -> None:
    parser = ChatStreamParser(EventEmitter("openai", "m"), label="OpenAI")
    calls = [
        {"index": 0, "id": "a", "function": {"name": "one", "arguments": '{"x": '}},
        {"index": 1, "id": "b", "function": {"name": "two", "arguments": '{"y": "h'}},
        {"index": 0, "function": {"arguments": "1}"}},
        {"index": 1, "function": {"arguments": 'i"}'}},
    ]
    events = []
    for call in calls:
        events += parser.feed(chat_chunk({"tool_calls": [call]}))
    events += parser.feed(chat_chunk({}, finish_reason="tool_calls"))
    events += parser.finish()
    assert_well_formed(events)
    response = events[-1].response
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("a", "one", {"x": 1}),
        ("b", "two", {"y": "hi"}),
    ]
    partial = [
        e.partial_input for e in events if e.kind == "block.delta" and e.channel == "tool_arguments"
    ]
    assert partial[1] == {"y": "h"}  # parsed while streaming, trailing string kept
    completed = [e for e in events if e.kind == "block.completed"]
    assert [e.block.input for e in completed] == [{"x": 1}, {"y": "hi"}]


def test_unknown_finish_reason_fails_instead_of_guessing() -> None:
    parser = ChatStreamParser(EventEmitter("openai", "m"), label="OpenAI")
    events = parser.feed(chat_chunk({"content": "hi"}))
    events += parser.feed(chat_chunk({}, finish_reason="mystery"))
    events += parser.finish()
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert "mystery" in str(events[-1].error)
    assert events[-1].semantic_output_emitted


def test_garbage_data_ends_the_stream_with_failed() -> None:
    parser = ChatStreamParser(EventEmitter("openai", "m"), label="OpenAI")
    events = parser.feed(chat_chunk({"content": "hi"})) + parser.feed_data("{not json")
    events += parser.feed(chat_chunk({"content": "ignored"})) + parser.finish()
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert "not JSON" in str(events[-1].error)


def test_error_object_inside_the_stream_becomes_a_typed_failure() -> None:
    parser = ChatStreamParser(EventEmitter("openrouter", "m"), label="OpenRouter")
    events = parser.feed({"error": {"message": "prompt is too long: 300000 tokens", "code": 400}})
    assert events[-1].kind == "response.failed"
    error = events[-1].error
    assert isinstance(error, ProviderStreamError)
    assert isinstance(error, ContextOverflowError)
    assert type(error.cause).__name__ == "ContextOverflowError"


@pytest.mark.parametrize(
    ("status", "body", "headers", "error_type", "words"),
    [
        (403, {"error": {"message": "region"}}, {}, "AuthenticationError", "refused access"),
        (
            429,
            {"error": {"message": "slow down"}},
            {"retry-after": "2"},
            "RateLimitError",
            "HTTP 429",
        ),
        (
            400,
            {"error": {"message": "x", "code": "context_length_exceeded"}},
            {},
            "ContextOverflowError",
            "too long for m",
        ),
        (422, {"detail": "bad field"}, {}, "InvalidRequestError", "refused the request"),
        (529, "<html>busy</html>", {}, "OverloadedError", "overloaded"),
        (500, "", {}, "ModelResponseFailed", "server error (HTTP 500)."),
    ],
)
def test_http_errors_map_to_typed_errors_in_words(status, body, headers, error_type, words) -> None:
    from app.llm.wire.openai_chat import map_http_error

    raw = body if isinstance(body, str) else json.dumps(body)
    error = map_http_error(status, raw, headers, label="OpenAI", provider="openai", model="m")
    assert type(error).__name__ == error_type
    assert words in str(error)
    assert error.status_code == status
    if status == 429:
        assert error.retry_after == 2.0 and error.retryable


def test_a_tool_call_without_a_result_gets_an_error_tool_message() -> None:
    request = LLMRequest(
        model="m",
        messages=[
            Msg.user("q"),
            Msg.assistant(
                [ToolUseBlock(id="call_a", name="clock"), ToolUseBlock(id="call_b", name="sky")]
            ),
            Msg.tool_result("call_a", "12:00"),
            Msg.user("never mind"),
        ],
    )
    messages = to_wire(request, model="m")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[3]["tool_call_id"] == "call_b"
    assert messages[3]["content"] == f"Error: {NO_RESULT}"


def test_long_or_odd_tool_call_ids_are_normalised_for_the_call_and_its_result() -> None:
    odd = "toolu:" + "x" * 60
    request = LLMRequest(
        model="m",
        messages=[Msg.assistant([ToolUseBlock(id=odd, name="clock")]), Msg.tool_result(odd, "ok")],
    )
    messages = to_wire(request, model="m")["messages"]
    call_id = messages[0]["tool_calls"][0]["id"]
    assert len(call_id) <= 40 and call_id.replace("_", "").isalnum()
    assert messages[1]["tool_call_id"] == call_id


def test_reasoning_effort_is_only_sent_to_models_that_reason() -> None:
    request = LLMRequest(model="m", messages=[Msg.user("q")], thinking="low")
    assert "reasoning_effort" not in to_wire(request, model="gpt-4o", provider="openai")
    assert to_wire(request, model="gpt-5-mini", provider="openai")["reasoning_effort"] == "low"


def test_sse_events_and_done_drive_the_parser() -> None:
    parser = ChatStreamParser(EventEmitter("openai", "m"), label="OpenAI")
    events = parser.feed_sse("", json.dumps(chat_chunk({"content": "hi"})))
    events += parser.feed_sse("", json.dumps(chat_chunk({}, finish_reason="stop")))
    events += parser.feed_sse("", "[DONE]")
    assert_well_formed(events)
    assert parser.terminated and events[-1].response.text == "hi"
    assert parser.feed_sse("", "[DONE]") == []

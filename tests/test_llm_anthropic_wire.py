"""The Anthropic Messages wire without a network: request bodies, and streams parsed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from app.llm import (
    AudioBlock,
    CacheRetention,
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    Msg,
    NativeBlock,
    OverloadedError,
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
from app.llm.wire.anthropic import AnthropicStreamParser, to_wire
from tests.llm_servers import WIRE_FIXTURES, anthropic_events, assert_well_formed
from tests.test_llm_openai_chat_wire import summarize

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
MODEL = "claude-sonnet-4-5"


def _image(tmp_path: Path, name: str) -> ImageBlock:
    path = tmp_path / f"{name}.png"
    path.write_bytes(PNG)
    ref = ImageFileRef(path=path, mime_type="image/png", width=1, height=1)
    return ImageBlock(original=ref, model=ref, name=name)


def _body(*messages: Msg, **options) -> dict:
    request = LLMRequest(model=MODEL, messages=list(messages), **options)
    return to_wire(request, model=MODEL, provider="anthropic")


# ---------------------------------------------------------------- request ----


def test_system_prompt_is_a_top_level_parameter() -> None:
    body = _body(Msg.system("Be brief."), Msg.user("hi"), cache=CacheRetention.NONE)
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert body["max_tokens"] > 0


def test_short_cache_marks_the_system_prompt_and_the_last_user_message() -> None:
    body = _body(Msg.system("Be brief."), Msg.user("one"), Msg.assistant("ok"), Msg.user("two"))
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    first, last = body["messages"][0]["content"][-1], body["messages"][-1]["content"][-1]
    assert "cache_control" not in first
    assert last == {"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}


def test_long_cache_asks_for_an_hour() -> None:
    body = _body(Msg.system("s"), Msg.user("u"), cache=CacheRetention.LONG)
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][0]["content"][0]["cache_control"]["ttl"] == "1h"


def test_consecutive_tool_results_merge_into_one_user_message() -> None:
    body = _body(
        Msg.user("time and weather?"),
        Msg.assistant(
            [
                ToolUseBlock(id="toolu_a", name="clock"),
                ToolUseBlock(id="toolu_b", name="weather"),
            ]
        ),
        Msg.tool_result("toolu_a", "12:00"),
        Msg.tool_result("toolu_b", "sunny", is_error=False),
        cache=CacheRetention.NONE,
    )
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "12:00"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "sunny"},
    ]


def test_images_are_read_from_their_files_in_user_messages_and_tool_results(tmp_path) -> None:
    data = base64.b64encode(PNG).decode()
    result = ToolResultBlock(
        tool_use_id="toolu_s", content=[TextBlock(text="captured"), _image(tmp_path, "tool1")]
    )
    body = _body(
        Msg.user([TextBlock(text="look"), _image(tmp_path, "p1")]),
        Msg.assistant([ToolUseBlock(id="toolu_s", name="screenshot")]),
        Msg(role="tool", content=[result]),
        cache=CacheRetention.NONE,
    )
    user, _, tool = body["messages"]
    source = {"type": "base64", "media_type": "image/png", "data": data}
    assert user["content"][1:] == [
        {"type": "text", "text": "[image p1]"},
        {"type": "image", "source": source},
    ]
    assert tool["content"][0]["content"] == [
        {"type": "text", "text": "captured"},
        {"type": "text", "text": "[image tool1]"},
        {"type": "image", "source": source},
    ]


def test_signed_thinking_is_replayed_verbatim_and_redacted_thinking_as_redacted() -> None:
    signed = ThinkingBlock(text="let me see", signature="sig-1", provider="anthropic")
    redacted = ThinkingBlock(signature="opaque", redacted=True, provider="anthropic")
    body = _body(Msg.user("q"), Msg.assistant([signed, redacted, TextBlock(text="a")]))
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "let me see", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "a"},
    ]


def test_thinking_from_another_provider_becomes_plain_text() -> None:
    theirs = ThinkingBlock(text="pondering", signature="gemini-sig", provider="gemini")
    body = _body(Msg.user("q"), Msg.assistant([theirs, TextBlock(text="a")]))
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "pondering"},
        {"type": "text", "text": "a"},
    ]


def test_an_anthropic_native_block_passes_through_verbatim() -> None:
    native = {"type": "search_result", "source": "s", "title": "t", "content": []}
    body = _body(Msg.user([TextBlock(text="see"), NativeBlock(format="anthropic", data=native)]))
    assert body["messages"][0]["content"][1] == native


def test_audio_is_refused_naming_the_block_and_the_provider(tmp_path) -> None:
    audio = AudioBlock(path=tmp_path / "a.wav", mime_type="audio/wav")
    with pytest.raises(ValidationError, match="Anthropic cannot take a audio block") as raised:
        _body(Msg.user([audio]))
    assert raised.value.provider == "anthropic"


def test_tool_call_ids_are_normalised_the_same_way_for_the_call_and_its_result() -> None:
    body = _body(
        Msg.user("q"),
        Msg.assistant([ToolUseBlock(id="call:1/abc", name="clock")]),
        Msg.tool_result("call:1/abc", "12:00"),
    )
    call_id = body["messages"][1]["content"][0]["id"]
    assert call_id.startswith("call_1_abc")
    assert all(c.isalnum() or c in "_-" for c in call_id)
    assert body["messages"][2]["content"][0]["tool_use_id"] == call_id


def test_a_tool_call_without_a_result_gets_an_error_result() -> None:
    body = _body(
        Msg.user("q"),
        Msg.assistant([ToolUseBlock(id="toolu_x", name="clock")]),
        Msg.user("never mind"),
        cache=CacheRetention.NONE,
    )
    assert body["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_x",
        "content": NO_RESULT,
        "is_error": True,
    }
    assert body["messages"][2]["content"][1] == {"type": "text", "text": "never mind"}


def test_tools_carry_their_input_schema() -> None:
    schema = {"type": "object", "properties": {"tz": {"type": "string"}}}
    body = _body(
        Msg.user("q"), tools=[ToolSpec(name="clock", description="time", input_schema=schema)]
    )
    assert body["tools"] == [{"name": "clock", "description": "time", "input_schema": schema}]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ({"name": "clock"}, {"type": "tool", "name": "clock"}),
    ],
)
def test_tool_choice_maps_to_anthropic_names(choice, wire) -> None:
    body = _body(Msg.user("q"), tools=[ToolSpec(name="clock")], tool_choice=choice)
    assert body["tool_choice"] == wire


def test_thinking_level_becomes_a_budget_with_room_left_to_answer() -> None:
    body = _body(Msg.user("q"), thinking="medium", temperature=0.2, max_tokens=2000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 2000 + 8192
    assert "temperature" not in body


def test_adaptive_models_take_an_effort_and_old_models_no_thinking() -> None:
    request = LLMRequest(model="m", messages=[Msg.user("q")], thinking="xhigh")
    body = to_wire(request, model="claude-opus-4-6", provider="anthropic")
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "max"}
    assert "thinking" not in to_wire(request, model="claude-3-5-haiku", provider="anthropic")


def test_streaming_flag_reaches_the_body() -> None:
    assert _body(Msg.user("q"), stream=True)["stream"] is True
    assert "stream" not in _body(Msg.user("q"))


# ----------------------------------------------------------------- stream ----


def _parser() -> AnthropicStreamParser:
    return AnthropicStreamParser(EventEmitter("anthropic", MODEL), label="Anthropic")


def _feed(parser: AnthropicStreamParser, body: bytes) -> list:
    events = []
    for raw in body.decode().split("\n\n"):
        lines = raw.strip().splitlines()
        name = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), "")
        data = "\n".join(ln[5:].strip() for ln in lines if ln.startswith("data:"))
        if data:
            events += parser.feed_sse(name, data)
    return events


ANTHROPIC_FIXTURES = sorted((WIRE_FIXTURES / "anthropic").glob("*.expected.json"))


@pytest.mark.skipif(not ANTHROPIC_FIXTURES, reason="shared wire fixtures not found")
@pytest.mark.parametrize("expected_path", ANTHROPIC_FIXTURES, ids=lambda p: p.name.split(".")[0])
def test_recorded_streams_parse_to_the_oracle(expected_path: Path) -> None:
    from tests.llm_servers import fixture_body

    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in expected_path.parent.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    parser = _parser()
    events = _feed(parser, fixture_body(body)) + parser.finish(done=True)
    assert_well_formed(events)
    expected = json.loads(expected_path.read_text())
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key


def test_thinking_keeps_its_signature_for_the_next_request() -> None:
    body = WIRE_FIXTURES / "anthropic" / "pydantic-ai_anthropic-thinking-part-stream.sse"
    parser = _parser()
    events = _feed(parser, body.read_bytes())
    (thinking,) = events[-1].response.thinking
    assert thinking.signature and thinking.signature.startswith("EvMCCkYICx")
    completed = [e.content for e in events if e.kind == "block.completed"]
    assert completed[0] == thinking
    replay = to_wire(
        LLMRequest(model=MODEL, messages=[Msg.user("q"), events[-1].response.to_msg()]),
        model=MODEL,
    )
    assert replay["messages"][1]["content"][0]["signature"] == thinking.signature


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
    ],
)
def test_stop_reasons_map_to_finish_reasons(stop_reason, finish) -> None:
    parser = _parser()
    events = _feed(parser, b"".join(anthropic_events(["hi"], stop_reason=stop_reason)))
    assert_well_formed(events)
    assert events[-1].response.finish_reason == finish


@pytest.mark.parametrize("stop_reason", ["pause_turn", "mystery"])
def test_pause_turn_and_unknown_stop_reasons_fail(stop_reason) -> None:
    parser = _parser()
    events = _feed(parser, b"".join(anthropic_events(["hi"], stop_reason=stop_reason)))
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert events[-1].error.code == stop_reason


def test_unknown_event_types_and_pings_are_ignored_and_padded_json_is_read() -> None:
    parser = _parser()
    body = b"".join(anthropic_events(["a", "b"], end=False))
    events = _feed(parser, body)
    events += parser.feed_sse("future_event", '{"type": "future_event", "x": 1}')
    events += parser.feed_sse(
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"c"}}     ',
    )
    events += parser.feed_sse("content_block_stop", '{"type":"content_block_stop","index":0}   ')
    events += parser.feed_sse(
        "message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}'
    )
    events += parser.finish(done=True)
    assert_well_formed(events)
    assert events[-1].response.text == "abc"


def test_a_mid_stream_error_event_is_a_typed_failure() -> None:
    parser = _parser()
    events = _feed(parser, b"".join(anthropic_events(["partial"], end=False)))
    events += parser.feed_sse(
        "error", '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    )
    assert_well_formed(events)
    error = events[-1].error
    assert isinstance(error, ProviderStreamError)
    assert isinstance(error, OverloadedError)
    assert type(error.cause).__name__ == "OverloadedError"
    assert error.semantic_output_emitted
    assert events[-1].semantic_output_emitted


def test_a_cut_stream_fails_keeping_the_partial_text() -> None:
    parser = _parser()
    events = _feed(parser, b"".join(anthropic_events(["Hel", "lo"], end=False)))
    events += parser.finish(done=False)
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    deltas = [e for e in events if e.kind == "block.delta"]
    assert deltas[-1].snapshot == "Hello"


def test_a_whole_message_body_gives_the_same_events() -> None:
    from app.llm.wire.anthropic import parse_response

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "clock", "input": {"tz": "UTC"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 20, "output_tokens": 9, "cache_read_input_tokens": 5},
    }
    events = parse_response(
        message, EventEmitter("anthropic", MODEL), label="Anthropic", secrets=()
    )
    assert_well_formed(events)
    response = events[-1].response
    assert response.finish_reason == "tool_use"
    assert response.thinking[0].signature == "sig"
    assert response.text == "Checking."
    assert [(c.id, c.input) for c in response.tool_calls] == [("toolu_1", {"tz": "UTC"})]
    assert (response.usage.input, response.usage.output, response.usage.cache_read) == (20, 9, 5)

"""The OpenAI Responses wire: request bodies, recorded streams parsed into events, errors,
non-streamed bodies, and the same recordings replayed over HTTP on loopback."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.llm import (
    AudioBlock,
    AuthenticationError,
    ContextOverflowError,
    FileBlock,
    ImageBlock,
    ImageFileRef,
    InvalidRequestError,
    LLMRequest,
    LLMResponse,
    ModelResponseFailed,
    Msg,
    NativeBlock,
    OverloadedError,
    ProviderConnectionError,
    RateLimitError,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ValidationError,
    create_provider_client,
)
from app.llm.events import EventEmitter
from app.llm.wire import openai_responses as wire
from tests.llm_servers import WIRE_FIXTURES, Reply, ScriptedChatServer, assert_well_formed

FIXTURES = WIRE_FIXTURES / "openai_responses"
MULTI = FIXTURES / "vercel-ai_openai-reasoning-encrypted-content-multi-response.jsonl"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
SECRET = "sk-" + "test-SECRETSECRETSECRET1234"

pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared wire fixtures not found")


# ---------------------------------------------------------------- helpers ----


def sse_events(path: Path) -> list[tuple[str, str]]:
    """A recording as (event name, data) pairs: `.sse` framed as stored, `.jsonl` one
    data line each with no event name (vercel/ai's recordings have none)."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [("", line) for line in text.split("\n") if line.strip()]
    events, name, data = [], "", []
    for line in [*text.split("\n"), ""]:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line.strip() and data:
            events.append((name, "\n".join(data)))
            name, data = "", []
    return events


def parse(pairs: list[tuple[str, str]], model: str = "gpt-5") -> list[Any]:
    parser = wire.new_parser(EventEmitter("openai", model), label="OpenAI", secrets=(SECRET,))
    events: list[Any] = []
    for name, data in pairs:
        events += parser.feed_sse(name, data)
    return events + parser.finish(done=True)


def feed_all(payloads: list[dict[str, Any]], *, done: bool = True) -> list[Any]:
    parser = wire.new_parser(EventEmitter("openai", "gpt-5"), label="OpenAI", secrets=(SECRET,))
    events: list[Any] = []
    for payload in payloads:
        events += parser.feed_sse("", json.dumps(payload))
    return events + parser.finish(done=done)


def summarize(events: list) -> dict[str, Any]:
    """The oracle fields of a stream, in the `.expected.json` conventions."""
    deltas = [e for e in events if e.kind == "block.delta"]
    done = events[-1]
    summary: dict[str, Any] = {
        "final_text": "".join(e.delta for e in deltas if e.channel == "text"),
        "thinking_text": "".join(e.delta for e in deltas if e.channel == "thinking") or None,
    }
    if done.kind == "response.completed":
        response = done.response
        usage = response.usage
        summary |= {
            "tool_calls": [{"name": c.name, "arguments": c.input} for c in response.tool_calls],
            "finish": response.finish_reason,
            "error_contains": None,
            "usage": None if not usage.known else {"input": usage.input, "output": usage.output},
        }
    else:
        summary |= {"tool_calls": [], "finish": "error", "error": done.error, "usage": None}
    return summary


def split_responses(path: Path) -> list[list[tuple[str, str]]]:
    """The multi-response recording cut at each `response.created`."""
    groups: list[list[tuple[str, str]]] = []
    for name, data in sse_events(path):
        if json.loads(data)["type"] == "response.created":
            groups.append([])
        groups[-1].append((name, data))
    return groups


def _image(tmp_path: Path, name: str) -> ImageBlock:
    path = tmp_path / f"{name}.png"
    path.write_bytes(PNG)
    ref = ImageFileRef(path=path, mime_type="image/png", width=1, height=1)
    return ImageBlock(original=ref, model=ref, name=name)


def body_of(*messages: Msg, model: str = "gpt-4o", **options: Any) -> dict[str, Any]:
    request = LLMRequest(model=model, messages=list(messages), **options)
    return wire.to_wire(request, model=model, provider="openai")


def text_stream(*pieces: str, status: str = "completed", **response: Any) -> list[dict]:
    """A small well-formed Responses stream (the shapes the API sends)."""
    head = {"id": "resp_1", "model": "gpt-5-2025-08-07", "status": "in_progress", "output": []}
    item = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    events: list[dict] = [
        {"type": "response.created", "response": head},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    ]
    events += [
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "delta": p}
        for p in pieces
    ]
    final = {**head, "status": status, **response}
    kind = "response.completed" if status == "completed" else f"response.{status}"
    return [*events, {"type": kind, "response": final}]


# ------------------------------------------------------ recorded streams ----

ORACLES = sorted(FIXTURES.glob("*.expected.json"))


def _recording(expected_path: Path) -> Path:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in FIXTURES.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    return body


@pytest.mark.parametrize("expected_path", ORACLES, ids=lambda p: p.name.split(".")[0])
def test_recorded_streams_parse_to_the_oracle(expected_path: Path) -> None:
    expected = json.loads(expected_path.read_text())
    events = parse(sse_events(_recording(expected_path)))
    assert_well_formed(events)
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key
    if expected["error_contains"]:
        assert expected["error_contains"] in str(got["error"])
    else:
        assert events[-1].kind == "response.completed"


def test_sse_event_names_are_only_a_fallback_for_the_type() -> None:
    pairs = [(name, data) for name, data in sse_events(_recording(ORACLES[0]))]
    assert all(name for name, _ in pairs)  # the pydantic-ai recording names every event
    without_type = []
    for name, data in pairs:
        payload = json.loads(data)
        payload.pop("type")
        without_type.append((name, json.dumps(payload)))
    assert summarize(parse(without_type)) == summarize(parse(pairs))


def test_encrypted_reasoning_without_summary_is_kept_before_the_call() -> None:
    events = parse(sse_events(_recording(ORACLES[0])))
    response = events[-1].response
    assert [b.kind for b in response.content] == ["native", "tool_use"]
    native = response.content[0]
    assert native.format == "openai_responses"
    assert native.data["type"] == "reasoning" and native.data["encrypted_content"]
    assert response.reasoning is None
    assert response.usage.reasoning == 448 and response.usage.cache_read == 0
    assert response.usage.total == 522
    assert response.model == "gpt-5-2025-08-07"
    assert response.id == "resp_0050471a34b36ae60068c97b94a480819587a9d70cf2979b33"


def test_out_of_credit_error_in_the_stream_is_not_retryable() -> None:
    events = parse(sse_events(FIXTURES / "vercel-ai_openai-error.jsonl"))
    assert_well_formed(events)
    assert [e.kind for e in events] == ["response.started", "response.failed"]
    error = events[-1].error
    assert isinstance(error, RateLimitError)
    assert error.retryable is False
    assert error.code == "insufficient_quota"
    assert "out of credit" in str(error)


# ------------------------------------------------- the multi-step agent run ----

GROUPS = split_responses(MULTI) if MULTI.exists() else []


def _multi_responses() -> list[LLMResponse]:
    responses = []
    for group in GROUPS:
        events = parse(group, model="gpt-5-mini")
        assert_well_formed(events)
        assert events[-1].kind == "response.completed", events[-1]
        responses.append(events[-1].response)
    return responses


def test_multi_response_recording_is_three_calculator_calls_then_text() -> None:
    responses = _multi_responses()
    assert len(responses) == 4
    assert len({r.id for r in responses}) == 4
    calls = [r.tool_calls for r in responses[:3]]
    assert [[c.name for c in cs] for cs in calls] == [["calculator"]] * 3
    assert [cs[0].input for cs in calls] == [
        {"a": 12, "b": 7, "op": "add"},
        {"a": 19, "b": 3, "op": "multiply"},
        {"a": 57, "b": 10, "op": "multiply"},
    ]
    assert [r.finish_reason for r in responses] == ["tool_use"] * 3 + ["stop"]
    assert responses[3].text == "The final result is **570**."
    assert responses[3].tool_calls == []
    assert [r.usage.input for r in responses] == [134, 221, 260, 299]
    assert [r.usage.output for r in responses] == [28, 26, 26, 12]


def test_reasoning_summary_of_the_first_reply_is_its_thinking_text() -> None:
    first = _multi_responses()[0]
    done = next(
        json.loads(d) for _, d in GROUPS[0] if '"response.reasoning_summary_text.done"' in d
    )
    assert first.reasoning == done["text"]
    assert done["text"].startswith("**Calculating step-by-step using calculator**\n\n")
    assert [b.kind for b in first.content] == ["thinking", "native", "tool_use"]
    assert first.thinking[0].provider == "openai"
    assert all(r.reasoning is None for r in _multi_responses()[1:])


def test_obfuscation_fields_never_reach_the_text() -> None:
    events = [e for group in GROUPS for e in parse(group) if e.kind == "block.delta"]
    obfuscations = {json.loads(d).get("obfuscation") for group in GROUPS for _, d in group} - {None}
    assert obfuscations
    assert not any(o in e.snapshot for e in events for o in obfuscations)


def test_encrypted_reasoning_is_replayed_verbatim_in_the_next_request() -> None:
    responses = _multi_responses()
    recorded_item = next(
        json.loads(d)["item"]
        for _, d in GROUPS[0]
        if '"response.output_item.done"' in d and '"type":"reasoning"' in d
    )
    messages = [Msg.system("Use the calculator."), Msg.user("What is (12 + 7) * 3 * 10?")]
    results = ["19", "57", "570"]
    for response, result in zip(responses[:3], results, strict=True):
        messages.append(response.to_msg())
        call = response.tool_calls[0]
        messages.append(Msg.tool_result(call.id, result, name=call.name))
    body = body_of(*messages, model="gpt-5-mini", thinking="low")
    items = body["input"]
    assert body["instructions"] == "Use the calculator."
    assert items[0] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "What is (12 + 7) * 3 * 10?"}],
    }
    assert items[1] == recorded_item  # byte for byte what the API sent, encrypted content too
    assert [i.get("type") for i in items[2:]] == ["function_call", "function_call_output"] * 3
    assert items[2]["call_id"] == "call_AB6AaRZ1FYZB2RwS6A5vbdqn"
    assert json.loads(items[2]["arguments"]) == {"a": 12, "b": 7, "op": "add"}
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        "output": "19",
    }
    # The reasoning summary travels inside the item, never again as plain text.
    assert not any(i.get("type") == "message" for i in items)
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["store"] is False
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}


def test_non_streamed_bodies_give_the_same_reply_as_the_stream() -> None:
    for pairs in [*GROUPS, sse_events(_recording(ORACLES[0]))]:
        streamed = parse(pairs)
        final = json.loads(pairs[-1][1])["response"]
        events: list[Any] = wire.parse_response(
            final, EventEmitter("openai", "gpt-5"), label="OpenAI", secrets=()
        )
        assert_well_formed(events)
        got, want = events[-1].response, streamed[-1].response
        assert [b.kind for b in got.content] == [b.kind for b in want.content]
        assert got.text == want.text and got.reasoning == want.reasoning
        assert [(c.id, c.name, c.input) for c in got.tool_calls] == [
            (c.id, c.name, c.input) for c in want.tool_calls
        ]
        assert (got.finish_reason, got.usage, got.id) == (
            want.finish_reason,
            want.usage,
            want.id,
        )


# ------------------------------------------------------------- to_wire ----


def test_system_messages_become_instructions() -> None:
    body = body_of(Msg.system("Be brief."), Msg.system("Speak English."), Msg.user("hi"))
    assert body["instructions"] == "Be brief.\n\nSpeak English."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert body["model"] == "gpt-4o"


def test_user_image_is_read_from_its_file_when_the_request_is_built(tmp_path: Path) -> None:
    image = _image(tmp_path, "p1")
    message = Msg.user([TextBlock(text="what is this?"), image])
    image.model.path.write_bytes(PNG + b"later")  # the bytes at request time are sent
    parts = body_of(message)["input"][0]["content"]
    assert parts == [
        {"type": "input_text", "text": "what is this?"},
        {"type": "input_text", "text": "[image p1]"},
        {
            "type": "input_image",
            "image_url": "data:image/png;base64," + base64.b64encode(PNG + b"later").decode(),
            "detail": "auto",
        },
    ]


def test_a_missing_image_file_is_a_validation_error(tmp_path: Path) -> None:
    block = _image(tmp_path, "gone")
    block.model.path.unlink()
    with pytest.raises(ValidationError, match="cannot be read"):
        body_of(Msg.user([block]))


def test_assistant_text_is_a_message_item_with_output_text() -> None:
    items = body_of(Msg.user("hi"), Msg.assistant("Hello!"))["input"]
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello!"}],
    }


def test_tool_calls_and_results_are_top_level_items() -> None:
    items = body_of(
        Msg.user("time?"),
        Msg.assistant(
            [
                TextBlock(text="Checking."),
                ToolUseBlock(id="call_1", name="clock", input={"tz": "UTC"}),
            ]
        ),
        Msg.tool_result("call_1", "12:00", name="clock"),
    )["input"]
    said = {"type": "output_text", "text": "Checking."}
    assert items[1:] == [
        {"type": "message", "role": "assistant", "content": [said]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "clock",
            "arguments": '{"tz": "UTC"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "12:00"},
    ]


def test_tool_result_images_go_inside_the_function_call_output(tmp_path: Path) -> None:
    result = ToolResultBlock(
        tool_use_id="c1", content=[TextBlock(text="captured"), _image(tmp_path, "tool1")]
    )
    items = body_of(
        Msg.assistant([ToolUseBlock(id="c1", name="screenshot")]),
        Msg(role="tool", content=[result]),
    )["input"]
    assert [i["type"] for i in items] == ["function_call", "function_call_output"]
    output = items[1]["output"]
    assert [p["type"] for p in output] == ["input_text", "input_text", "input_image"]
    assert output[0]["text"] == "captured" and output[1]["text"] == "[image tool1]"
    assert output[2]["image_url"].startswith("data:image/png;base64,")


def test_failed_tool_results_say_error() -> None:
    items = body_of(
        Msg.assistant([ToolUseBlock(id="c1", name="clock")]),
        Msg.tool_result("c1", "no clock here", is_error=True),
    )["input"]
    assert items[1]["output"] == "Error: no clock here"


def test_a_tool_call_without_result_gets_an_error_output() -> None:
    items = body_of(
        Msg.user("time and weather?"),
        Msg.assistant([ToolUseBlock(id="a", name="clock"), ToolUseBlock(id="b", name="weather")]),
        Msg.tool_result("a", "12:00"),
        Msg.user("never mind"),
        Msg.assistant([ToolUseBlock(id="c", name="clock")]),
    )["input"]
    kinds = [(i.get("type") or i["role"], i.get("call_id")) for i in items]
    assert kinds == [
        ("user", None),
        ("function_call", "a"),
        ("function_call", "b"),
        ("function_call_output", "a"),
        ("function_call_output", "b"),  # before the next user message
        ("user", None),
        ("function_call", "c"),
        ("function_call_output", "c"),  # at the end of the input
    ]
    assert items[4]["output"].startswith("Error:")
    assert items[7]["output"].startswith("Error:")


def test_a_result_without_its_call_is_left_out() -> None:
    items = body_of(Msg.user("hi"), Msg.tool_result("lost", "42", name="calc"))["input"]
    assert items == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


def test_tool_call_ids_are_normalised_for_the_api() -> None:
    long_id = "toolu_" + "x" * 80
    odd_id = "call|fc_123.abc"
    items = body_of(
        Msg.assistant([ToolUseBlock(id=long_id, name="a"), ToolUseBlock(id=odd_id, name="b")]),
        Msg.tool_result(long_id, "1"),
        Msg.tool_result(odd_id, "2"),
    )["input"]
    ids = [i["call_id"] for i in items]
    assert ids[0] == ids[2] and ids[1] == ids[3]  # calls still pair with their results
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids)
    assert ids[0] != ids[1]


def test_valid_call_ids_go_to_the_api_unchanged() -> None:
    items = body_of(
        Msg.assistant([ToolUseBlock(id="call_AB6AaRZ1FYZB2RwS6A5vbdqn", name="a")]),
        Msg.tool_result("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "1"),
    )["input"]
    assert [i["call_id"] for i in items] == ["call_AB6AaRZ1FYZB2RwS6A5vbdqn"] * 2


def test_thinking_from_another_provider_is_sent_as_plain_text() -> None:
    theirs = ThinkingBlock(text="let me think", provider="anthropic", signature="sig")
    mine = ThinkingBlock(text="my summary", provider="openai")
    items = body_of(
        Msg.assistant([theirs, TextBlock(text="ok")]), Msg.assistant([mine, TextBlock(text="hi")])
    )["input"]
    assert items[0]["content"] == [
        {"type": "output_text", "text": "let me think"},
        {"type": "output_text", "text": "ok"},
    ]
    assert items[1]["content"] == [{"type": "output_text", "text": "hi"}]


def test_native_blocks_of_this_protocol_pass_through_verbatim() -> None:
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    part = {"type": "input_text", "text": "native part"}
    other = NativeBlock(format="anthropic", data={"type": "server_tool_use"})
    items = body_of(
        Msg.user([TextBlock(text="a"), NativeBlock(format="openai_responses", data=part), other]),
        Msg.assistant([NativeBlock(format="openai_responses", data=item), TextBlock(text="b")]),
    )["input"]
    assert items[0]["content"] == [{"type": "input_text", "text": "a"}, part]
    assert items[1] == item
    assert items[2]["content"] == [{"type": "output_text", "text": "b"}]


def test_a_reasoning_item_that_nothing_follows_is_left_out() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
    items = body_of(
        Msg.user("hi"),
        Msg.assistant([NativeBlock(format="openai_responses", data=reasoning)]),
        Msg.user("again"),
    )["input"]
    assert [i.get("type") for i in items] == [None, None]


def test_audio_becomes_input_audio_where_the_format_allows(tmp_path: Path) -> None:
    wav = tmp_path / "q.wav"
    wav.write_bytes(b"RIFF....WAVE")
    parts = body_of(Msg.user([AudioBlock(path=wav, mime_type="audio/wav")]))["input"][0]["content"]
    assert parts == [
        {
            "type": "input_audio",
            "input_audio": {"data": base64.b64encode(b"RIFF....WAVE").decode(), "format": "wav"},
        }
    ]
    ogg = tmp_path / "q.ogg"
    ogg.write_bytes(b"OggS")
    with pytest.raises(
        ValidationError, match=r"\(openai\) cannot carry an audio block of type audio/ogg"
    ):
        body_of(Msg.user([AudioBlock(path=ogg, mime_type="audio/ogg")]))
    with pytest.raises(
        ValidationError, match="cannot carry an audio block in an assistant message"
    ):
        body_of(Msg.assistant([AudioBlock(path=wav, mime_type="audio/wav")]))


def test_pdf_files_become_input_file_with_file_data(tmp_path: Path) -> None:
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    parts = body_of(Msg.user([FileBlock(path=pdf, mime_type="application/pdf")]))["input"][0]
    assert parts["content"] == [
        {
            "type": "input_file",
            "filename": "notes.pdf",
            "file_data": "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4").decode(),
        }
    ]
    sheet = tmp_path / "t.xlsx"
    sheet.write_bytes(b"PK")
    with pytest.raises(ValidationError, match=r"\(openai\) cannot carry a file block .* only PDF"):
        body_of(Msg.user([FileBlock(path=sheet, mime_type="application/vnd.ms-excel")]))


def test_images_cannot_be_in_a_system_message(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="cannot carry an image block in a system message"):
        body_of(Msg.system([_image(tmp_path, "p1")]), Msg.user("hi"))


def test_tools_are_flat_function_tools_with_explicit_strictness() -> None:
    body = body_of(
        Msg.user("hi"),
        tools=[
            ToolSpec(name="look", description="take a screenshot"),
            ToolSpec(name="calc", input_schema={"type": "object"}, strict=True),
        ],
    )
    assert body["tools"] == [
        {
            "type": "function",
            "name": "look",
            "description": "take a screenshot",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        },
        {"type": "function", "name": "calc", "parameters": {"type": "object"}, "strict": True},
    ]


@pytest.mark.parametrize(
    ("choice", "wire_choice"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"name": "look"}, {"type": "function", "name": "look"}),
    ],
)
def test_tool_choice_maps_to_the_responses_shape(choice: Any, wire_choice: Any) -> None:
    assert body_of(Msg.user("hi"), tool_choice=choice)["tool_choice"] == wire_choice


def test_sampling_options_and_output_limit_for_a_non_reasoning_model() -> None:
    body = body_of(Msg.user("hi"), temperature=0.3, top_p=0.9, max_tokens=50)
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.3, 0.9, 50)
    assert "reasoning" not in body and "include" not in body
    assert body["store"] is False


def test_reasoning_models_get_no_sampling_options() -> None:
    body = body_of(Msg.user("hi"), model="gpt-5", temperature=0.3, top_p=0.9)
    assert "temperature" not in body and "top_p" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "reasoning" not in body  # `off` asks for nothing: the model's own default


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        ("gpt-5", "minimal", "minimal"),
        ("gpt-5", "xhigh", "high"),  # clamped down: gpt-5 has no xhigh
        ("gpt-5.1", "minimal", "low"),  # clamped up first
        ("o3", "medium", "medium"),
    ],
)
def test_thinking_levels_map_to_reasoning_effort(model: str, level: str, effort: str) -> None:
    body = body_of(Msg.user("hi"), model=model, thinking=level)
    assert body["reasoning"] == {"effort": effort, "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_thinking_on_a_model_that_does_not_reason_asks_for_nothing() -> None:
    body = body_of(Msg.user("hi"), model="gpt-4o", thinking="high")
    assert "reasoning" not in body and "include" not in body


def test_cache_retention_maps_to_prompt_cache_key_and_retention() -> None:
    short = body_of(Msg.user("hi"), session_id="s-1")
    assert short["prompt_cache_key"] == "s-1" and "prompt_cache_retention" not in short
    long = body_of(Msg.user("hi"), session_id="s-1", cache="long")
    assert long["prompt_cache_key"] == "s-1" and long["prompt_cache_retention"] == "24h"
    none = body_of(Msg.user("hi"), session_id="s-1", cache="none")
    assert "prompt_cache_key" not in none and "prompt_cache_retention" not in none


def test_stream_flag_and_response_format() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}
    body = body_of(Msg.user("hi"), stream=True, response_format=fmt)
    assert body["stream"] is True
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "out", "schema": schema, "strict": True}
    }
    assert "stream" not in body_of(Msg.user("hi"))


def test_endpoint_and_headers() -> None:
    assert wire.endpoint("https://api.openai.com/v1/", "gpt-5", stream=True) == (
        "https://api.openai.com/v1/responses"
    )
    assert wire.headers("sk-key") == {"Authorization": "Bearer sk-key"}
    assert wire.headers(None) == {}


# ---------------------------------------------------------- the parser ----


def test_interleaved_parallel_function_calls_stay_apart() -> None:
    def added(index: int, call_id: str, name: str) -> dict:
        item = {"type": "function_call", "id": f"fc_{index}", "call_id": call_id, "name": name}
        return {"type": "response.output_item.added", "output_index": index, "item": item}

    def args(index: int, delta: str) -> dict:
        return {
            "type": "response.function_call_arguments.delta",
            "output_index": index,
            "item_id": f"fc_{index}",
            "delta": delta,
        }

    head = {"id": "resp_p", "status": "in_progress"}
    events = feed_all(
        [
            {"type": "response.created", "response": head},
            added(0, "call_a", "one"),
            added(1, "call_b", "two"),
            args(0, '{"x": '),
            args(1, '{"y": "h'),
            args(0, "1}"),
            args(1, 'i"}'),
            {"type": "response.completed", "response": {**head, "status": "completed"}},
        ]
    )
    assert_well_formed(events)
    response = events[-1].response
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("call_a", "one", {"x": 1}),
        ("call_b", "two", {"y": "hi"}),
    ]
    assert response.finish_reason == "tool_use"
    partial = [e.partial_input for e in events if e.channel == "tool_arguments"]
    assert partial[1] == {"y": "h"}


def test_summary_parts_are_kept_apart_as_paragraphs() -> None:
    def summary(n: int, delta: str) -> dict:
        return {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": n,
            "delta": delta,
        }

    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    stream = text_stream("Hi")
    stream[1:1] = [
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        summary(0, "First."),
        summary(1, "Second."),
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
    ]
    for event in stream[5:]:  # the message moves to output_index 1
        if "output_index" in event:
            event["output_index"] = 1
    response = feed_all(stream)[-1].response
    assert response.reasoning == "First.\n\nSecond."
    assert [b.kind for b in response.content] == ["thinking", "native", "text"]
    assert response.content[1].data is not None


def test_an_empty_reasoning_item_is_fine() -> None:
    empty = {"type": "reasoning", "id": "rs_e", "summary": []}
    stream = text_stream("Hello")
    stream[1:1] = [
        {"type": "response.output_item.added", "output_index": 0, "item": empty},
        {"type": "response.output_item.done", "output_index": 0, "item": empty},
    ]
    events = feed_all(stream)
    assert_well_formed(events)
    response = events[-1].response
    assert response.text == "Hello" and response.reasoning is None
    assert [b.kind for b in response.content] == ["text"]  # nothing to replay


def test_usage_counts_cached_and_reasoning_tokens() -> None:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 64},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 120,
    }
    events = feed_all(text_stream("Hi", usage=usage))
    (update,) = [e for e in events if e.kind == "usage.updated"]
    assert update.complete
    got = events[-1].response.usage
    assert (got.input, got.output, got.cache_read, got.reasoning, got.total) == (
        100,
        20,
        64,
        12,
        120,
    )
    assert got.cache_write is None


def test_a_reply_without_usage_reports_none_rather_than_zero() -> None:
    response = feed_all(text_stream("Hi"))[-1].response
    assert response.usage.input is None and response.usage.output is None


@pytest.mark.parametrize(
    ("reason", "finish"), [("max_output_tokens", "length"), ("content_filter", "content_filter")]
)
def test_incomplete_replies_map_their_reason(reason: str, finish: str) -> None:
    events = feed_all(
        text_stream("Par", status="incomplete", incomplete_details={"reason": reason})
    )
    assert_well_formed(events)
    assert events[-1].kind == "response.completed"
    assert events[-1].response.finish_reason == finish
    assert events[-1].response.text == "Par"


def test_an_unknown_incomplete_reason_fails_instead_of_guessing() -> None:
    events = feed_all(
        text_stream("Par", status="incomplete", incomplete_details={"reason": "mystery"})
    )
    assert events[-1].kind == "response.failed"
    assert "mystery" in str(events[-1].error)
    assert events[-1].semantic_output_emitted


def test_nested_error_event_is_a_typed_failure() -> None:
    nested = {
        "type": "error",
        "sequence_number": 3,
        "error": {
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model.",
            "param": "input",
        },
    }
    events = feed_all([*text_stream("Hi")[:2], nested])
    assert_well_formed(events)
    assert isinstance(events[-1].error, ContextOverflowError)


def test_flat_error_event_is_a_typed_failure() -> None:
    flat = {
        "type": "error",
        "sequence_number": 2,
        "code": "insufficient_quota",
        "message": "You exceeded your current quota.",
        "param": None,
    }
    events = feed_all([text_stream()[0], flat])
    assert_well_formed(events)
    error = events[-1].error
    assert isinstance(error, RateLimitError) and not error.retryable
    assert "You exceeded your current quota" in str(error)


def test_a_rate_limit_error_event_is_a_rate_limit_error() -> None:
    flat = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down."}
    error = feed_all([text_stream()[0], flat])[-1].error
    assert isinstance(error, RateLimitError) and error.retryable


def test_response_failed_event_carries_the_error() -> None:
    failed = {
        "type": "response.failed",
        "response": {
            "id": "resp_1",
            "status": "failed",
            "error": {"code": "server_error", "message": "The server had an error."},
        },
    }
    events = feed_all([*text_stream("Partial")[:3], failed])
    assert_well_formed(events)
    assert isinstance(events[-1].error, ModelResponseFailed)
    assert "The server had an error" in str(events[-1].error)
    assert events[-1].semantic_output_emitted


def test_garbage_data_fails_and_keeps_the_partial_text() -> None:
    parser = wire.new_parser(EventEmitter("openai", "gpt-5"), label="OpenAI", secrets=())
    events: list[Any] = []
    for payload in text_stream("Hello", " wor")[:-1]:
        events += parser.feed_sse("", json.dumps(payload))
    events += parser.feed_sse("", "{not json " + SECRET)
    events += parser.feed_sse("", json.dumps(text_stream("ignored")[2]))
    events += parser.finish(done=True)
    assert_well_formed(events)
    failed = events[-1]
    assert failed.kind == "response.failed" and "not JSON" in str(failed.error)
    assert SECRET not in str(failed.error)
    assert [e.snapshot for e in events if e.kind == "block.delta"][-1] == "Hello wor"
    assert failed.semantic_output_emitted


def test_a_cut_stream_fails_and_keeps_the_partial_text() -> None:
    events = feed_all(text_stream("Hello", " wor")[:-1], done=False)
    assert_well_formed(events)
    assert isinstance(events[-1].error, ProviderConnectionError)
    assert [e.snapshot for e in events if e.kind == "block.delta"][-1] == "Hello wor"


def test_a_stream_that_ends_without_completed_fails() -> None:
    events = feed_all(text_stream("Hello")[:-1], done=True)
    assert events[-1].kind == "response.failed"
    assert "before the reply was complete" in str(events[-1].error)
    assert feed_all([])[-1].kind == "response.failed"


def test_unknown_events_and_done_markers_are_ignored() -> None:
    stream = text_stream("Hi")
    stream.insert(2, {"type": "response.some_future_event", "output_index": 0, "x": 1})
    stream.insert(2, {"type": "keepalive"})
    parser = wire.new_parser(EventEmitter("openai", "gpt-5"), label="OpenAI", secrets=())
    events: list[Any] = []
    for payload in stream:
        events += parser.feed_sse("", json.dumps(payload))
    events += parser.feed_sse("", "[DONE]") + parser.finish(done=True)
    assert_well_formed(events)
    assert events[-1].response.text == "Hi"


def test_an_event_in_a_strange_shape_fails_without_raising() -> None:
    events = feed_all([text_stream()[0], {"type": "response.output_item.done", "item": 7}])
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert "response.output_item.done" in str(events[-1].error)


def test_nothing_follows_a_terminal_event() -> None:
    parser = wire.new_parser(EventEmitter("openai", "gpt-5"), label="OpenAI", secrets=())
    for payload in text_stream("Hi"):
        parser.feed_sse("", json.dumps(payload))
    assert parser.terminated
    assert parser.feed_sse("", json.dumps(text_stream("more")[2])) == []
    assert parser.finish(done=False) == [] and parser.cancel() == []


def test_parse_response_reads_refusals_and_rejects_garbage() -> None:
    body = {
        "id": "resp_r",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I can't help with that."}],
            }
        ],
    }
    emitter = EventEmitter("openai", "gpt-5")
    events: list[Any] = wire.parse_response(body, emitter, label="OpenAI", secrets=())
    assert_well_formed(events)
    assert events[-1].response.text == "I can't help with that."
    for garbage in (["not", "a", "reply"], {"id": "resp_x"}, {**body, "status": "queued"}):
        events = wire.parse_response(
            garbage, EventEmitter("openai", "m"), label="OpenAI", secrets=()
        )
        assert_well_formed(events)
        assert events[-1].kind == "response.failed"
    error_body = {"error": {"code": "context_length_exceeded", "message": "too long"}}
    events = wire.parse_response(
        error_body, EventEmitter("openai", "m"), label="OpenAI", secrets=()
    )
    assert isinstance(events[-1].error, ContextOverflowError)


# -------------------------------------------------------- HTTP errors ----


def _openai_error(message: str, kind: str, code: str | None, param: str | None = None) -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": kind, "param": param, "code": code}}
    ).encode()


@pytest.mark.parametrize(
    ("status", "body", "headers", "error_type", "retryable", "words"),
    [
        (
            401,
            _openai_error(
                f"Incorrect API key provided: {SECRET}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "invalid_request_error",
                "invalid_api_key",
            ),
            {},
            AuthenticationError,
            False,
            "rejected the API key",
        ),
        (
            429,
            _openai_error(
                "Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): "
                "Limit 30000, Used 29000, Requested 2000. Please try again in 1.5s.",
                "tokens",
                "rate_limit_exceeded",
            ),
            {"retry-after-ms": "1500", "retry-after": "2"},
            RateLimitError,
            True,
            "limiting how fast",
        ),
        (
            429,
            _openai_error(
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                "insufficient_quota",
            ),
            {"retry-after": "1"},
            RateLimitError,
            False,
            "out of credit",
        ),
        (
            400,
            _openai_error(
                "Your input exceeds the context window of this model. Please adjust your input "
                "and try again.",
                "invalid_request_error",
                "context_length_exceeded",
                "input",
            ),
            {},
            ContextOverflowError,
            False,
            "too long for gpt-5",
        ),
        (
            404,
            _openai_error(
                "The model `gpt-5` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            ),
            {},
            InvalidRequestError,
            False,
            "no model named 'gpt-5'",
        ),
        (
            500,
            _openai_error(
                "The server had an error while processing your request. Sorry about that!",
                "server_error",
                None,
            ),
            {},
            ModelResponseFailed,
            True,
            "server error (HTTP 500)",
        ),
        (503, b"<html>Service Unavailable</html>", {}, OverloadedError, True, "overloaded"),
    ],
)
def test_http_errors_map_to_typed_errors_in_words(
    status: int, body: bytes, headers: dict, error_type: type, retryable: bool, words: str
) -> None:
    error = wire.map_http_error(
        status,
        body,
        headers,
        label="OpenAI",
        provider="openai",
        model="gpt-5",
        base_url="https://api.openai.com/v1",
        secrets=(SECRET,),
    )
    assert type(error) is error_type
    assert error.retryable is retryable
    assert words in str(error)
    assert SECRET not in str(error)
    assert error.status_code == status
    if "retry-after-ms" in headers:
        assert error.retry_after == 1.5


# --------------------------------------------------------- over HTTP ----


def _client(server: ScriptedChatServer, **options: Any) -> Any:
    return create_provider_client(
        "openai/gpt-5",
        api_style="responses",
        base_url=server.base_url,
        api_key=SECRET,
        **options,
    )


async def _stream(server: ScriptedChatServer, request: LLMRequest) -> list[Any]:
    client = _client(server)
    try:
        return [event async for event in client.stream(request)]
    finally:
        await client.aclose()


def _request(*messages: Msg, **options: Any) -> LLMRequest:
    return LLMRequest(
        model="openai/gpt-5", messages=list(messages) or [Msg.user("hi")], stream=True, **options
    )


@pytest.mark.parametrize("expected_path", ORACLES, ids=lambda p: p.name.split(".")[0])
async def test_recorded_streams_over_http_match_the_oracle(expected_path: Path) -> None:
    expected = json.loads(expected_path.read_text())
    with ScriptedChatServer([Reply.fixture(_recording(expected_path))]) as server:
        events = await _stream(server, _request())
    assert_well_formed(events)
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key
    if expected["error_contains"]:
        assert expected["error_contains"] in str(got["error"])
    (received,) = server.requests
    assert received.path == "/v1/responses"
    assert received.headers["authorization"] == f"Bearer {SECRET}"


async def test_an_agent_run_replays_its_reasoning_over_http() -> None:
    """The four recorded replies served in turn to a tool loop: each request the server
    receives carries the earlier reasoning item verbatim, and the last reply is text."""
    bodies = [
        "".join(f"data: {data}\n\n" for _, data in group).encode() + b"data: [DONE]\n\n"
        for group in GROUPS
    ]
    messages = [Msg.system("Use the calculator."), Msg.user("What is (12 + 7) * 3 * 10?")]
    with ScriptedChatServer([Reply.body(b) for b in bodies]) as server:
        client = _client(server)
        try:
            for turn in range(4):
                events = [e async for e in client.stream(_request(*messages, thinking="low"))]
                assert_well_formed(events)
                assert events[-1].kind == "response.completed", events[-1]
                response = events[-1].response
                messages.append(response.to_msg())
                for call in response.tool_calls:
                    value = {0: 19, 1: 57, 2: 570}[turn]
                    messages.append(Msg.tool_result(call.id, str(value), name=call.name))
        finally:
            await client.aclose()
    assert response.text == "The final result is **570**."
    recorded_item = next(
        json.loads(d)["item"]
        for _, d in GROUPS[0]
        if '"response.output_item.done"' in d and '"type":"reasoning"' in d
    )
    sent = [r.json() for r in server.requests]
    assert len(sent) == 4
    assert all(body["model"] == "gpt-5" and body["stream"] is True for body in sent)
    assert all(body["store"] is False for body in sent)
    assert recorded_item not in sent[0]["input"]
    for body in sent[1:]:
        assert body["input"][1] == recorded_item
        assert body["include"] == ["reasoning.encrypted_content"]
    assert [i.get("type") for i in sent[3]["input"][2:]] == [
        "function_call",
        "function_call_output",
    ] * 3


async def test_out_of_credit_is_not_retried_over_http() -> None:
    body = _openai_error(
        "You exceeded your current quota.", "insufficient_quota", "insufficient_quota"
    )
    reply = Reply(
        status=429,
        headers={"content-type": "application/json", "retry-after": "0"},
        chunks=[body],
        streamed=False,
    )
    with ScriptedChatServer([reply, Reply.fixture(_recording(ORACLES[0]))]) as server:
        events = await _stream(server, _request())
    assert_well_formed(events)
    assert isinstance(events[-1].error, RateLimitError)
    assert len(server.requests) == 1


async def test_a_dropped_connection_over_http_keeps_the_partial_text() -> None:
    stream = text_stream("Hello", " wor")[:-1]
    body = b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in stream)
    with ScriptedChatServer([Reply.body(body, drop=True)]) as server:
        events = await _stream(server, _request())
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert isinstance(events[-1].error, ProviderConnectionError)
    assert [e.snapshot for e in events if e.kind == "block.delta"][-1] == "Hello wor"


async def test_complete_reads_a_non_streamed_body_over_http() -> None:
    final = json.loads(GROUPS[3][-1][1])["response"]
    reply = Reply(
        headers={"content-type": "application/json"},
        chunks=[json.dumps(final).encode()],
        streamed=False,
    )
    with ScriptedChatServer([reply]) as server:
        client = _client(server)
        try:
            response = await client.complete(
                LLMRequest(model="openai/gpt-5", messages=[Msg.user("hi")])
            )
        finally:
            await client.aclose()
    assert response.text == "The final result is **570**."
    assert response.usage.input == 299
    assert "stream" not in server.requests[0].json()

"""The Gemini wire: request bodies, recorded streams parsed into events, Google's error
bodies, and the same over real HTTP on loopback."""

from __future__ import annotations

import base64
import json
import logging
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
    ThinkingLevel,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ValidationError,
    create_provider_client,
    is_context_overflow,
)
from app.llm.events import EventEmitter
from app.llm.wire import gemini
from tests.llm_servers import (
    WIRE_FIXTURES,
    Reply,
    ScriptedChatServer,
    assert_well_formed,
    fixture_body,
)

GEMINI_FIXTURES = WIRE_FIXTURES / "gemini"
TURN1 = GEMINI_FIXTURES / "pydantic-ai_google-tool-call-thought-signature-turn1.sse"
TURN2 = GEMINI_FIXTURES / "pydantic-ai_google-tool-call-thought-signature-turn2.sse"
EXPECTED = sorted(GEMINI_FIXTURES.glob("*.expected.json"))
needs_fixtures = pytest.mark.skipif(not EXPECTED, reason="shared wire fixtures not found")

KEY = "AIza" + "SyD-test-KEY-0123456789abcdefghijk"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
B64_PNG = base64.b64encode(PNG).decode()


# ----------------------------------------------------------------- helpers ----


def sse_data(body: bytes) -> list[str]:
    """The data of each event of an SSE body, framed by the WHATWG rules (CR, LF or
    CRLF line ends; an event ends at a blank line)."""
    events: list[str] = []
    data: list[str] = []
    for line in re.split(r"\r\n|\r|\n", body.decode("utf-8")):
        if not line:
            if data:
                events.append("\n".join(data))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return events


def parse(datas: list[str], *, done: bool = True, model: str = "gemini-test") -> list[Any]:
    parser = gemini.new_parser(EventEmitter("gemini", model), label="Google Gemini", secrets=())
    events: list[Any] = []
    for data in datas:
        events += parser.feed_sse("", data)
    events += parser.finish(done=done)
    assert parser.terminated
    return events


def parse_chunks(*chunks: dict[str, Any], done: bool = True) -> list[Any]:
    return parse([json.dumps(c) for c in chunks], done=done)


def parse_fixture(path: Path) -> list[Any]:
    return parse(sse_data(fixture_body(path)))


def response_of(events: list[Any]) -> LLMResponse:
    assert_well_formed(events)
    assert events[-1].kind == "response.completed", getattr(events[-1], "error", None)
    return events[-1].response


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "resp-1", **extra}


def summarize(events: list[Any]) -> dict[str, Any]:
    """The oracle fields of a stream, in the `.expected.json` conventions."""
    response = response_of(events)
    deltas = [e for e in events if e.kind == "block.delta"]
    thinking = "".join(e.delta for e in deltas if e.channel == "thinking")
    return {
        "final_text": "".join(e.delta for e in deltas if e.channel == "text"),
        "thinking_text": thinking or None,
        "tool_calls": [{"name": c.name, "arguments": c.input} for c in response.tool_calls],
        "finish": response.finish_reason,
        "usage": {"input": response.usage.input, "output": response.usage.output},
    }


def image(tmp_path: Path, name: str) -> ImageBlock:
    path = tmp_path / f"{name}.png"
    path.write_bytes(PNG)
    ref = ImageFileRef(path=path, mime_type="image/png", width=1, height=1)
    return ImageBlock(original=ref, model=ref, name=name)


def body_of(*messages: Msg, model: str = "gemini-2.5-flash", **options: Any) -> dict[str, Any]:
    request = LLMRequest(model=model, messages=list(messages), **options)
    return gemini.to_wire(request, model=model, provider="gemini")


def signature_in(path: Path) -> str:
    match = re.search(rb'"thoughtSignature": "([^"]+)"', path.read_bytes())
    assert match
    return match.group(1).decode()


# --------------------------------------------------------- recorded streams ----


@needs_fixtures
@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.name.split(".")[0])
def test_recorded_streams_parse_to_the_oracle(expected_path: Path) -> None:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in GEMINI_FIXTURES.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    expected = json.loads(expected_path.read_text())
    events = parse_fixture(body)
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key
    assert events[-1].response.reasoning == expected["thinking_text"]


@needs_fixtures
def test_crlf_framed_recording_gives_whole_json_events() -> None:
    raw = TURN2.read_bytes()
    assert b"\r\n\r\n" in raw
    datas = sse_data(raw)
    assert len(datas) == 3 and not any("\r" in d for d in datas)
    assert response_of(parse(datas)).text == "The capital of Mexico is Mexico City."


@needs_fixtures
def test_usage_is_the_last_reported_with_counts_and_thoughts_are_reasoning() -> None:
    events = parse_fixture(TURN1)
    usage = response_of(events).usage
    assert (usage.input, usage.output, usage.reasoning, usage.total) == (29, 10, 202, 241)
    usage_events = [e for e in events if e.kind == "usage.updated"]
    assert usage_events[-1].complete


@needs_fixtures
def test_streamed_call_arguments_are_parsed_while_they_arrive() -> None:
    events = parse_fixture(GEMINI_FIXTURES / "vercel-ai_google-stream-no-args-tool-call.jsonl")
    arguments = [e for e in events if e.kind == "block.delta" and e.channel == "tool_arguments"]
    assert [e.partial_input for e in arguments[:3]] == [{"id": "A"}, {"id": "A"}, {"id": "A"}]
    assert arguments[2].snapshot == '{"id":"A"}'
    ids = [c.id for c in response_of(events).tool_calls]
    assert len(set(ids)) == 4 and all(i.startswith(gemini.GENERATED_ID_PREFIX) for i in ids)


def test_nested_partial_arguments_with_numbers_and_arrays_build_one_object() -> None:
    def piece(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
        call: dict[str, Any] = {"partialArgs": list(args)}
        if more:
            call["willContinue"] = True
        return chunk({"functionCall": call})

    events = parse_chunks(
        chunk({"functionCall": {"name": "plan", "willContinue": True}}),
        piece({"jsonPath": "$.trip.city", "stringValue": "Par", "willContinue": True}),
        piece({"jsonPath": "$.trip.city", "stringValue": "is"}),
        piece({"jsonPath": "$.trip.days", "numberValue": 3}),
        piece(
            {"jsonPath": "$.stops[0]", "stringValue": "Louvre"},
            {"jsonPath": "$.ok", "boolValue": True},
        ),
        piece(more=False),
        chunk({"text": ""}, finish="STOP"),
    )
    (call,) = response_of(events).tool_calls
    assert call.input == {"trip": {"city": "Paris", "days": 3}, "stops": ["Louvre"], "ok": True}


def test_whole_parallel_calls_keep_their_own_arguments_and_gemini_ids() -> None:
    events = parse_chunks(
        chunk(
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "g-1"}},
            {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
        ),
        chunk({"text": ""}, finish="STOP"),
    )
    response = response_of(events)
    assert [(c.name, c.input) for c in response.tool_calls] == [
        ("weather", {"city": "Oslo"}),
        ("weather", {"city": "Rome"}),
    ]
    assert response.tool_calls[0].id == "g-1"
    assert response.tool_calls[1].id.startswith(gemini.GENERATED_ID_PREFIX)
    assert response.finish_reason == "tool_use"


def test_thought_parts_go_to_the_thinking_channel_with_their_signature() -> None:
    events = parse_chunks(
        chunk({"text": "Let me think.", "thought": True, "thoughtSignature": "c2lnMQ=="}),
        chunk({"text": "Hi", "thoughtSignature": "c2lnMg=="}),
        chunk({"text": " there"}, finish="STOP"),
    )
    response = response_of(events)
    assert [e.channel for e in events if e.kind == "block.delta"] == ["thinking", "text", "text"]
    thinking, marker, text = response.content
    assert thinking == ThinkingBlock(text="Let me think.", signature="c2lnMQ==", provider="gemini")
    assert marker == ThinkingBlock(signature="c2lnMg==", provider="gemini")
    assert text == TextBlock(text="Hi there")
    assert response.reasoning == "Let me think."


def test_a_signature_on_an_empty_final_part_belongs_to_the_text_before_it() -> None:
    events = parse_chunks(
        chunk({"text": "Done."}), chunk({"text": "", "thoughtSignature": "c2ln"}, finish="STOP")
    )
    assert response_of(events).content == [
        ThinkingBlock(signature="c2ln", provider="gemini"),
        TextBlock(text="Done."),
    ]


def test_a_lone_signature_part_is_kept_verbatim() -> None:
    events = parse_chunks(
        chunk({"functionCall": {"name": "look", "args": {}}}),
        chunk({"text": "", "thoughtSignature": "c2ln"}, finish="STOP"),
    )
    content = response_of(events).content
    assert content[-1] == NativeBlock(
        format="gemini", data={"text": "", "thoughtSignature": "c2ln"}
    )


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("RECITATION", "content_filter")],
)
def test_finish_reasons_map_to_neutral_ones(reason: str, finish: str) -> None:
    response = response_of(parse_chunks(chunk({"text": "Hi"}, finish=reason)))
    assert response.finish_reason == finish
    assert response.metadata["finish_reason_raw"] == reason


@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "SOMETHING_NEW"])
def test_malformed_call_and_unknown_finish_reasons_fail_instead_of_guessing(reason: str) -> None:
    events = parse_chunks(chunk({"text": "Hi"}, finish=reason, finishMessage="bad call"))
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert reason in str(events[-1].error) and events[-1].error.code == reason


def test_a_blocked_prompt_fails_as_a_content_filter() -> None:
    events = parse_chunks(
        {
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 8},
        }
    )
    assert_well_formed(events)
    error = events[-1].error
    assert isinstance(error, InvalidRequestError) and error.code == "content_filter"
    assert "PROHIBITED_CONTENT" in str(error) and not error.retryable


def test_cached_tokens_are_cache_reads_and_cumulative_usage_is_not_summed() -> None:
    usage = {"promptTokenCount": 100, "candidatesTokenCount": 2, "cachedContentTokenCount": 64}
    final = {**usage, "candidatesTokenCount": 5, "totalTokenCount": 105}
    events = parse_chunks(
        chunk({"text": "a"}, usageMetadata=usage),
        chunk({"text": "b"}, finish="STOP", usageMetadata=final),
    )
    result = response_of(events).usage
    assert (result.input, result.output, result.cache_read, result.total) == (100, 5, 64, 105)
    assert [e.complete for e in events if e.kind == "usage.updated"] == [False, True]


def test_garbage_data_ends_the_stream_with_failed() -> None:
    events = parse(
        [json.dumps(chunk({"text": "Hi"})), "{not json", json.dumps(chunk({"text": "x"}))]
    )
    assert_well_formed(events)
    assert isinstance(events[-1].error, ModelResponseFailed)
    assert "not JSON" in str(events[-1].error)


def test_an_error_chunk_mid_stream_fails_with_the_mapped_error_after_the_partial_text() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    events = parse_chunks(chunk({"text": "Hello wor"}), error, chunk({"text": "ld"}))
    assert_well_formed(events)
    assert isinstance(events[-1].error, OverloadedError)
    assert events[-1].semantic_output_emitted
    assert [e.snapshot for e in events if e.kind == "block.delta"] == ["Hello wor"]


def test_a_cut_stream_fails_and_keeps_the_partial_text() -> None:
    events = parse_chunks(chunk({"text": "Hello "}), chunk({"text": "wor"}), done=False)
    assert_well_formed(events)
    assert isinstance(events[-1].error, ProviderConnectionError)
    assert events[-1].semantic_output_emitted
    assert [e.snapshot for e in events if e.kind == "block.delta"][-1] == "Hello wor"


def test_a_cut_stream_after_the_finish_reason_still_completes() -> None:
    events = parse_chunks(chunk({"text": "Hi"}, finish="STOP"), done=False)
    assert response_of(events).text == "Hi"


def test_unknown_fields_and_parts_are_ignored() -> None:
    events = parse_chunks(
        {
            **chunk({"text": "Hi", "futureField": 1}, {"executableCode": {"code": "1"}}),
            "newThing": {},
        },
        chunk({"text": "!"}, finish="STOP"),
    )
    assert response_of(events).text == "Hi!"


def test_a_whole_generate_content_body_gives_the_same_events() -> None:
    body = chunk(
        {"text": "Thinking...", "thought": True},
        {"text": "It is sunny."},
        finish="STOP",
        usageMetadata={"promptTokenCount": 12, "candidatesTokenCount": 4},
        modelVersion="gemini-2.5-flash-001",
    )
    events = gemini.parse_response(body, EventEmitter("gemini", "gemini-2.5-flash"), label="Gemini")
    response = response_of(events)
    assert (response.text, response.reasoning) == ("It is sunny.", "Thinking...")
    assert response.model == "gemini-2.5-flash-001" and response.id == "resp-1"
    assert response.usage.output == 4


def test_a_garbage_whole_body_fails() -> None:
    events = gemini.parse_response("<html>", EventEmitter("gemini", "m"), label="Gemini")
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"


# ------------------------------------------------------------------- request ----


def test_system_messages_become_the_system_instruction() -> None:
    body = body_of(Msg.system("Be brief."), Msg.system("Speak English."), Msg.user("hi"))
    assert body["systemInstruction"] == {
        "parts": [{"text": "Be brief."}, {"text": "Speak English."}]
    }
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


def test_roles_are_user_and_model_and_same_role_turns_merge() -> None:
    body = body_of(Msg.user("hi"), Msg.user("are you there?"), Msg.assistant("yes"), Msg.user("ok"))
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}, {"text": "are you there?"}]},
        {"role": "model", "parts": [{"text": "yes"}]},
        {"role": "user", "parts": [{"text": "ok"}]},
    ]


def test_user_images_are_inline_data_read_from_the_file(tmp_path: Path) -> None:
    body = body_of(Msg.user([TextBlock(text="what is this?"), image(tmp_path, "p1")]))
    assert body["contents"][0]["parts"] == [
        {"text": "what is this?"},
        {"text": "[image p1]"},
        {"inlineData": {"mimeType": "image/png", "data": B64_PNG}},
    ]


def test_consecutive_tool_results_merge_into_one_user_turn_of_function_responses() -> None:
    body = body_of(
        Msg.user("weather?"),
        Msg.assistant(
            [
                ToolUseBlock(id="c1", name="weather", input={"city": "Oslo"}),
                ToolUseBlock(id="c2", name="time"),
            ]
        ),
        Msg.tool_result("c1", "sunny"),
        Msg.tool_result("c2", "no clock", is_error=True),
    )
    model_turn, results = body["contents"][1:]
    assert model_turn["parts"] == [
        {"functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "c1"}},
        {"functionCall": {"name": "time", "args": {}, "id": "c2"}},
    ]
    assert results == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"output": "sunny"}, "id": "c1"}},
            {"functionResponse": {"name": "time", "response": {"error": "no clock"}, "id": "c2"}},
        ],
    }


def test_generated_and_foreign_call_ids_are_not_sent_to_gemini() -> None:
    ours = ToolUseBlock(id=f"{gemini.GENERATED_ID_PREFIX}abc_0", name="look")
    theirs = ToolUseBlock(id="toolu_01", name="look")
    body = body_of(
        Msg.assistant([ours]),
        Msg.tool_result(ours.id, "ok"),
        Msg.assistant([theirs], metadata={"provider": "anthropic"}),
        Msg.tool_result(theirs.id, "ok"),
    )
    for turn in body["contents"]:
        for part in turn["parts"]:
            assert "id" not in next(iter(part.values()))


def test_a_tool_image_follows_the_function_response_as_a_labelled_user_part(tmp_path: Path) -> None:
    result = ToolResultBlock(
        tool_use_id="c1", content=[TextBlock(text="captured"), image(tmp_path, "tool1")]
    )
    body = body_of(
        Msg.assistant([ToolUseBlock(id="c1", name="screenshot")]),
        Msg(role="tool", content=[result]),
    )
    (turn,) = body["contents"][1:]
    response, label, data = turn["parts"]
    assert response["functionResponse"]["name"] == "screenshot"
    assert "tool1" in response["functionResponse"]["response"]["output"]
    assert "inlineData" not in json.dumps(response)
    assert label == {"text": "[image tool1, returned by the tool screenshot]"}
    assert data == {"inlineData": {"mimeType": "image/png", "data": B64_PNG}}


def test_a_call_without_a_result_gets_an_error_result() -> None:
    body = body_of(
        Msg.user("look"),
        Msg.assistant([ToolUseBlock(id="c1", name="look")]),
        Msg.user("never mind"),
    )
    turn = body["contents"][2]
    assert turn["parts"][0]["functionResponse"]["name"] == "look"
    assert "error" in turn["parts"][0]["functionResponse"]["response"]
    assert turn["parts"][1] == {"text": "never mind"}


@needs_fixtures
def test_thought_signatures_are_replayed_verbatim_across_two_turns() -> None:
    turn1 = response_of(parse_fixture(TURN1))
    turn2 = response_of(parse_fixture(TURN2))
    (call,) = turn1.tool_calls
    history = [
        Msg.user("What is the capital of my country?"),
        turn1.to_msg(),
        Msg.tool_result(call.id, "Mexico", name="get_country"),
        turn2.to_msg(),
        Msg.user("And its population?"),
    ]
    # History is stored as JSON between turns; the signature must survive that too.
    history = [Msg.model_validate_json(m.model_dump_json()) for m in history]
    body = body_of(*history, model="gemini-3-pro-preview")
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "get_country", "args": {}},
                "thoughtSignature": signature_in(TURN1),
            }
        ],
    }
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "get_country", "response": {"output": "Mexico"}}}
    ]
    assert body["contents"][3] == {
        "role": "model",
        "parts": [{"text": "The capital of Mexico is Mexico City."}],
    }


def test_gemini_3_gets_the_documented_stand_in_for_calls_without_a_signature() -> None:
    history = [
        Msg.assistant([ToolUseBlock(id="c1", name="a"), ToolUseBlock(id="c2", name="b")]),
        Msg.tool_result("c1", "x"),
        Msg.tool_result("c2", "y"),
    ]
    parts = body_of(*history, model="gemini-3-flash-preview")["contents"][0]["parts"]
    assert parts[0]["thoughtSignature"] == gemini.SKIP_SIGNATURE
    assert "thoughtSignature" not in parts[1]
    assert "thoughtSignature" not in body_of(*history)["contents"][0]["parts"][0]


def test_thinking_from_another_provider_is_sent_as_plain_text() -> None:
    body = body_of(
        Msg.assistant(
            [
                ThinkingBlock(text="hmm", signature="anthropic-sig", provider="anthropic"),
                TextBlock(text="ok"),
            ]
        ),
        Msg.assistant([ThinkingBlock(text="mine", signature="c2ln", provider="gemini")]),
    )
    assert body["contents"][0]["parts"] == [
        {"text": "hmm"},
        {"text": "ok"},
        {"text": "mine", "thought": True, "thoughtSignature": "c2ln"},
    ]


def test_native_gemini_blocks_pass_through_and_others_are_left_out() -> None:
    part = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    body = body_of(
        Msg.assistant(
            [
                NativeBlock(format="gemini", data=part),
                NativeBlock(format="anthropic", data={"x": 1}),
            ]
        )
    )
    assert body["contents"] == [{"role": "model", "parts": [part]}]


def test_audio_and_pdf_go_inline_and_an_unknown_file_type_is_refused(tmp_path: Path) -> None:
    wav, pdf, zip_file = tmp_path / "q.wav", tmp_path / "a.pdf", tmp_path / "b.zip"
    for path in (wav, pdf, zip_file):
        path.write_bytes(b"data")
    body = body_of(
        Msg.user(
            [
                AudioBlock(path=wav, mime_type="audio/wav"),
                FileBlock(path=pdf, mime_type="application/pdf"),
            ]
        )
    )
    assert [p["inlineData"]["mimeType"] for p in body["contents"][0]["parts"]] == [
        "audio/wav",
        "application/pdf",
    ]
    with pytest.raises(ValidationError, match=r"file block.*b\.zip.*application/zip") as refused:
        body_of(Msg.user([FileBlock(path=zip_file, mime_type="application/zip")]))
    assert "gemini" in str(refused.value)


def test_a_missing_image_file_is_a_validation_error(tmp_path: Path) -> None:
    block = image(tmp_path, "gone")
    block.model.path.unlink()
    with pytest.raises(ValidationError, match="cannot be read"):
        body_of(Msg.user([block]))


def test_tool_schemas_are_cleaned_of_keys_gemini_refuses() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": False,
            }
        },
        "properties": {
            "where": {"$ref": "#/$defs/Place"},
            "units": {"type": ["string", "null"], "enum": ["c", "f"]},
            "kind": {"const": "now"},
            "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
        },
        "required": ["where"],
    }
    body = body_of(
        Msg.user("hi"), tools=[ToolSpec(name="weather", input_schema=schema), ToolSpec(name="ping")]
    )
    weather, ping = body["tools"][0]["functionDeclarations"]
    assert weather["parameters"] == {
        "type": "object",
        "properties": {
            "where": {"type": "object", "properties": {"city": {"type": "string"}}},
            "units": {"type": "string", "nullable": True, "enum": ["c", "f"]},
            "kind": {"enum": ["now"]},
            "when": {"type": "string", "format": "date-time", "nullable": True},
        },
        "required": ["where"],
    }
    assert ping == {"name": "ping"}  # no parameters: Gemini refuses an empty OBJECT


def test_a_recursive_schema_is_refused_in_words() -> None:
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    with pytest.raises(ValidationError, match="recursive"):
        body_of(Msg.user("hi"), tools=[ToolSpec(name="walk", input_schema=schema)])


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ({"name": "look"}, {"mode": "ANY", "allowedFunctionNames": ["look"]}),
    ],
)
def test_tool_choice_becomes_the_function_calling_config(
    choice: Any, config: dict[str, Any]
) -> None:
    body = body_of(Msg.user("hi"), tools=[ToolSpec(name="look")], tool_choice=choice)
    assert body["toolConfig"] == {"functionCallingConfig": config}


def test_a_named_tool_choice_must_name_a_tool() -> None:
    with pytest.raises(ValidationError, match="'missing'"):
        body_of(Msg.user("hi"), tools=[ToolSpec(name="look")], tool_choice={"name": "missing"})


@pytest.mark.parametrize(
    ("model", "level", "config"),
    [
        ("gemini-3-pro-preview", "high", {"thinkingLevel": "high", "includeThoughts": True}),
        ("gemini-3-pro-preview", "medium", {"thinkingLevel": "high", "includeThoughts": True}),
        ("gemini-3-pro-preview", "off", {"thinkingLevel": "low"}),
        ("gemini-2.5-flash", "off", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "medium", {"thinkingBudget": 8192, "includeThoughts": True}),
        ("gemini-2.5-pro", "minimal", {"thinkingBudget": 512, "includeThoughts": True}),
        ("gemini-2.5-pro", "off", {"thinkingBudget": 128}),
        ("gemini-3-flash-preview", "off", {"thinkingLevel": "minimal"}),
        ("gemini-3-flash-preview", "xhigh", {"thinkingLevel": "high", "includeThoughts": True}),
        ("gemini-2.0-flash", "high", None),
    ],
)
def test_thinking_levels_map_to_the_model_family_setting(
    model: str, level: str, config: Any
) -> None:
    body = body_of(Msg.user("hi"), model=model, thinking=ThinkingLevel(level))
    assert body.get("generationConfig", {}).get("thinkingConfig") == config


def test_generation_options_and_room_for_the_thinking_budget() -> None:
    body = body_of(
        Msg.user("hi"),
        temperature=0.2,
        top_p=0.9,
        max_tokens=100,
        thinking=ThinkingLevel.LOW,
        response_format={
            "type": "json_schema",
            "json_schema": {
                "name": "r",
                "schema": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "additionalProperties": False,
                },
            },
        },
    )
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 100 + 1024,
        "responseMimeType": "application/json",
        "responseSchema": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
    }


def test_endpoint_and_headers_keep_the_key_out_of_the_url() -> None:
    base = "https://generativelanguage.googleapis.com/v1beta/"
    assert gemini.endpoint(base, "gemini-2.5-flash", stream=True) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    )
    assert gemini.endpoint(base, "models/gemini-2.5-flash", stream=False).endswith(
        "/v1beta/models/gemini-2.5-flash:generateContent"
    )
    assert gemini.headers(KEY) == {"x-goog-api-key": KEY}
    assert gemini.headers(None) == {}


# ------------------------------------------------------------------- errors ----


def google_error(code: int, status: str, message: str, *details: dict[str, Any]) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return json.dumps({"error": error}).encode()


INVALID_KEY = google_error(
    400,
    "INVALID_ARGUMENT",
    "API key not valid. Please pass a valid API key.",
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
    },
)


def map_error(status: int, body: bytes, headers: dict[str, str] | None = None) -> Any:
    return gemini.map_http_error(
        status,
        body,
        headers or {},
        label="Google Gemini",
        provider="gemini",
        model="gemini-2.5-flash",
        base_url="https://generativelanguage.googleapis.com/v1beta",
        secrets=(KEY,),
    )


def test_an_invalid_key_is_an_authentication_error_although_google_says_400() -> None:
    error = map_error(400, INVALID_KEY)
    assert isinstance(error, AuthenticationError)
    assert error.status_code == 400 and error.code == "API_KEY_INVALID"
    assert "API key not valid" in str(error) and not error.retryable


def test_resource_exhausted_waits_as_long_as_retry_info_says() -> None:
    body = google_error(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan.",
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"},
    )
    error = map_error(429, body)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 13.0 and error.retryable


def test_unavailable_is_overloaded() -> None:
    error = map_error(
        503, google_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    )
    assert isinstance(error, OverloadedError) and error.retryable


def test_too_many_input_tokens_is_a_context_overflow() -> None:
    message = (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    error = map_error(400, google_error(400, "INVALID_ARGUMENT", message))
    assert isinstance(error, ContextOverflowError)
    assert is_context_overflow(error)


def test_an_unknown_model_names_the_model() -> None:
    message = (
        "models/gemini-9 is not found for API version v1beta, "
        "or is not supported for generateContent."
    )
    error = map_error(404, google_error(404, "NOT_FOUND", message))
    assert isinstance(error, InvalidRequestError)
    assert "'gemini-2.5-flash'" in str(error) and "HTTP 404" in str(error)


def test_a_proxy_html_page_and_an_echoed_key_are_reported_in_words_without_the_key() -> None:
    error = map_error(502, f"<html><body>Bad gateway for key={KEY}</body></html>".encode())
    assert isinstance(error, OverloadedError)
    assert KEY not in str(error) and "Bad gateway" in str(error)


# ----------------------------------------------------------------- over HTTP ----


def gemini_client(server: ScriptedChatServer) -> Any:
    return create_provider_client("gemini/gemini-2.5-flash", base_url=server.base_url, api_key=KEY)


def request(**options: Any) -> LLMRequest:
    options.setdefault("stream", True)
    return LLMRequest(model="gemini/gemini-2.5-flash", messages=[Msg.user("hello")], **options)


async def collect(client: Any, req: LLMRequest | None = None) -> list[Any]:
    try:
        return [event async for event in client.stream(req or request())]
    finally:
        await client.aclose()


@needs_fixtures
@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.name.split(".")[0])
async def test_recorded_streams_over_http_match_the_oracle(expected_path: Path) -> None:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in GEMINI_FIXTURES.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    expected = json.loads(expected_path.read_text())
    with ScriptedChatServer([Reply.fixture(body)]) as server:
        events = await collect(gemini_client(server))
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key


@needs_fixtures
async def test_crlf_framed_stream_cut_into_small_pieces_over_http() -> None:
    raw = fixture_body(TURN2)
    pieces = [raw[i : i + 7] for i in range(0, len(raw), 7)]  # CR and LF land in different pieces
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=pieces)
    with ScriptedChatServer([reply]) as server:
        events = await collect(gemini_client(server))
    assert response_of(events).text == "The capital of Mexico is Mexico City."


@needs_fixtures
async def test_the_key_goes_in_a_header_and_never_in_the_url() -> None:
    with ScriptedChatServer([Reply.fixture(TURN2)]) as server:
        await collect(gemini_client(server), request(temperature=0.5))
    (received,) = server.requests
    assert received.path == "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert received.headers["x-goog-api-key"] == KEY
    assert KEY not in received.path and "key=" not in received.path
    body = received.json()
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    assert body["generationConfig"]["temperature"] == 0.5


async def test_an_invalid_key_fails_without_the_key_in_the_error_or_the_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echoed = INVALID_KEY.replace(b"Please pass", f"Key {KEY} refused. Please pass".encode())
    with ScriptedChatServer(
        [
            Reply(
                status=400,
                headers={"content-type": "application/json"},
                chunks=[echoed],
                streamed=False,
            )
        ]
    ) as server:
        events = await collect(gemini_client(server))
    assert_well_formed(events)
    error = events[-1].error
    assert isinstance(error, AuthenticationError)
    assert len(server.requests) == 1  # a wrong key is not retried
    for text in (str(error), repr(error), caplog.text, repr(events)):
        assert KEY not in text


@needs_fixtures
async def test_resource_exhausted_is_retried_after_the_retry_info_delay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    body = json.loads(
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            f"Quota exceeded for key {KEY}.",
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.05s"},
        )
    )
    with ScriptedChatServer([Reply.error(429, body), Reply.fixture(TURN2)]) as server:
        events = await collect(gemini_client(server))
    assert response_of(events).text == "The capital of Mexico is Mexico City."
    assert len(server.requests) == 2
    assert events[-1].scope.attempt == 2
    assert "Trying again" in caplog.text and KEY not in caplog.text


async def test_complete_uses_generate_content_and_the_whole_body() -> None:
    reply = chunk(
        {"text": "Hello!"},
        finish="STOP",
        usageMetadata={"promptTokenCount": 3, "candidatesTokenCount": 2},
    )
    with ScriptedChatServer([Reply.error(200, reply)]) as server:
        client = gemini_client(server)
        try:
            response = await client.complete(request(stream=False))
        finally:
            await client.aclose()
    assert server.requests[0].path == "/v1/models/gemini-2.5-flash:generateContent"
    assert (response.text, response.finish_reason, response.usage.input) == ("Hello!", "stop", 3)


async def test_a_dropped_connection_mid_stream_fails_in_words() -> None:
    pieces = [f"data: {json.dumps(chunk({'text': 'Hel'}))}\r\n\r\n".encode()]
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=pieces, drop=True)
    with ScriptedChatServer([reply]) as server:
        events = await collect(gemini_client(server))
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert isinstance(events[-1].error, ProviderConnectionError)
    assert [e.snapshot for e in events if e.kind == "block.delta"] == ["Hel"]

"""Mistral over HTTP: a loopback server that speaks its chat-completions API (its
chunk shapes, nine-character tool-call ids, thinking parts and error bodies), reached
through `create_provider_client("mistral/...")`."""

from __future__ import annotations

import json
import logging
import re

import pytest

from app.llm import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    LLMRequest,
    Msg,
    OverloadedError,
    ProviderStreamError,
    RateLimitError,
    TextBlock,
    ThinkingBlock,
    ToolSpec,
    ToolUseBlock,
    create_provider_client,
)
from app.llm.wire import mistral
from tests.llm_servers import Reply, ScriptedChatServer, assert_well_formed, mistral_events

SECRET = "mistral" + "SECRETKEY0123456789abcdefABCD"
NINE = re.compile(r"^[A-Za-z0-9]{9}$")
CLOCK = ToolSpec(name="clock", description="The time now.")


def _client(server: ScriptedChatServer, **options):
    options.setdefault("api_key", SECRET)
    client = create_provider_client(
        "mistral/mistral-small-latest", base_url=server.base_url, **options
    )
    client._retry_base_delay = 0.01
    return client


def _request(*messages: Msg, **options) -> LLMRequest:
    options.setdefault("stream", True)
    return LLMRequest(
        model="mistral/mistral-small-latest",
        messages=list(messages) or [Msg.system("Be brief."), Msg.user("hello")],
        **options,
    )


async def _collect(client, request: LLMRequest | None = None) -> list:
    events = [event async for event in client.stream(request or _request())]
    assert_well_formed(events)
    return events


async def test_text_streams_from_the_chat_completions_endpoint_with_the_key() -> None:
    with ScriptedChatServer([Reply.mistral_stream(mistral_events(text=["Bon", "jour"]))]) as srv:
        events = await _collect(_client(srv))
    (received,) = srv.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {SECRET}"
    body = received.json()
    assert body["model"] == "mistral-small-latest" and body["stream"] is True
    assert "stream_options" not in body  # Mistral refuses it
    deltas = [e.delta for e in events if e.kind == "block.delta" and e.channel == "text"]
    assert deltas == ["Bon", "jour"]
    response = events[-1].response
    assert response.text == "Bonjour" and response.finish_reason == "stop"
    assert (response.usage.input, response.usage.output, response.usage.total) == (21, 9, 30)


async def test_thinking_parts_stream_as_thinking_and_stay_out_of_the_text() -> None:
    reply = mistral_events(thinking=["The user ", "greets me."], text=["Salut !"])
    with ScriptedChatServer([Reply.mistral_stream(reply)]) as srv:
        events = await _collect(_client(srv))
    thinking = [e.delta for e in events if e.kind == "block.delta" and e.channel == "thinking"]
    assert thinking == ["The user ", "greets me."]
    response = events[-1].response
    assert response.text == "Salut !"
    assert response.reasoning == "The user greets me."
    assert isinstance(response.content[0], ThinkingBlock)


async def test_a_tool_call_streams_with_its_nine_character_id_and_arguments() -> None:
    reply = mistral_events(
        calls=[("D681PevKs", "clock", '{"zone": "CET"}')], finish_reason="tool_calls"
    )
    with ScriptedChatServer([Reply.mistral_stream(reply)]) as srv:
        events = await _collect(_client(srv), _request(Msg.user("time?"), tools=[CLOCK]))
    response = events[-1].response
    assert response.finish_reason == "tool_use"
    (call,) = response.tool_calls
    assert (call.id, call.name, call.input) == ("D681PevKs", "clock", {"zone": "CET"})
    started = [e for e in events if e.kind == "block.started" and e.block.kind == "tool_use"]
    assert started[0].block.tool_call_id == "D681PevKs"


@pytest.mark.parametrize(
    "original",
    ["call_AB6AaRZ1FYZB2RwS6A5vbdqn", "toolu_01A09q90qw90lq917835lq9", "fc|1.2", "x", "D681PevKs"],
)
async def test_any_history_id_goes_out_as_nine_letters_and_digits_matching_its_result(
    original,
) -> None:
    history = [
        Msg.user("time?"),
        Msg.assistant([ToolUseBlock(id=original, name="clock", input={})]),
        Msg.tool_result(original, "12:00", name="clock"),
        Msg.user("and now?"),
    ]
    with ScriptedChatServer([Reply.mistral_stream(mistral_events(text=["ok"]))]) as srv:
        await _collect(_client(srv), _request(*history, tools=[CLOCK]))
    messages = srv.requests[0].json()["messages"]
    (call,) = messages[1]["tool_calls"]
    assert NINE.match(call["id"])
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": "12:00",
        "name": "clock",
    }
    if NINE.match(original):
        assert call["id"] == original  # Mistral's own ids pass unchanged


def test_two_ids_that_clean_alike_stay_apart() -> None:
    history = [
        Msg.assistant([ToolUseBlock(id="call-1", name="a"), ToolUseBlock(id="call_1", name="b")]),
        Msg.tool_result("call-1", "A"),
        Msg.tool_result("call_1", "B"),
    ]
    body = mistral.to_wire(LLMRequest(model="m", messages=history), model="m")
    ids = [c["id"] for c in body["messages"][0]["tool_calls"]]
    assert len(set(ids)) == 2 and all(NINE.match(i) for i in ids)
    assert [m["tool_call_id"] for m in body["messages"][1:]] == ids


@pytest.mark.parametrize(
    ("choice", "sent"),
    [("required", "any"), ("auto", "auto"), ("none", "none"), ({"name": "clock"}, None)],
)
def test_tool_choice_in_mistrals_words(choice, sent) -> None:
    request = LLMRequest(model="m", messages=[Msg.user("hi")], tools=[CLOCK], tool_choice=choice)
    body = mistral.to_wire(request, model="mistral-small-latest")
    if sent is None:
        assert body["tool_choice"] == {"type": "function", "function": {"name": "clock"}}
    else:
        assert body["tool_choice"] == sent


def test_a_conversation_ending_with_the_assistant_continues_it() -> None:
    request = LLMRequest(model="m", messages=[Msg.user("Count"), Msg.assistant("1, 2,")])
    body = mistral.to_wire(request, model="mistral-small-latest")
    assert body["messages"][-1] == {"role": "assistant", "content": "1, 2,", "prefix": True}
    plain = mistral.to_wire(LLMRequest(model="m", messages=[Msg.user("hi")]), model="m")
    assert "prefix" not in json.dumps(plain)


def test_thinking_is_asked_with_reasoning_effort_only_where_the_model_takes_it() -> None:
    ask = LLMRequest(model="m", messages=[Msg.user("hi")], thinking="medium")
    assert mistral.to_wire(ask, model="mistral-small-latest")["reasoning_effort"] == "high"
    assert "reasoning_effort" not in mistral.to_wire(ask, model="magistral-medium-latest")
    assert "reasoning_effort" not in mistral.to_wire(ask, model="codestral-latest")
    off = ask.model_copy(update={"thinking": "off"})
    assert "reasoning_effort" not in mistral.to_wire(off, model="mistral-small-latest")


VALIDATION = {
    "object": "error",
    "message": {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": ["body", "stream_options"],
                "msg": "Extra inputs are not permitted",
                "input": {"include_usage": True},
            }
        ]
    },
    "type": "invalid_request_message_error",
    "param": None,
    "code": None,
}
BAD_ID = {
    "object": "error",
    "message": "Tool call id was call_98660886 but must be a-z, A-Z, 0-9, with a length of 9.",
    "type": "invalid_function_call",
    "param": None,
    "code": "3280",
}
TOO_LONG = {
    "object": "error",
    "message": "Prompt contains 140000 tokens and 0 draft tokens, too large for model with "
    "131072 maximum context length",
    "type": "invalid_request_message_error",
    "param": None,
    "code": "3051",
}


@pytest.mark.parametrize(
    ("status", "body", "error_type", "words"),
    [
        (422, VALIDATION, InvalidRequestError, "stream_options: Extra inputs are not permitted"),
        (400, BAD_ID, InvalidRequestError, "with a length of 9"),
        (400, TOO_LONG, ContextOverflowError, "too long for mistral-small-latest"),
        (
            401,
            {"message": "Unauthorized", "request_id": "r1"},
            AuthenticationError,
            "rejected the API key",
        ),
        (429, {"message": "Requests rate limit exceeded"}, RateLimitError, "limiting how fast"),
        (
            429,
            {
                "object": "error",
                "message": "Service tier capacity exceeded for this model.",
                "type": "service_tier_capacity_exceeded",
                "param": None,
                "code": "3505",
            },
            OverloadedError,
            "no capacity",
        ),
        (
            422,
            {"detail": [{"loc": ["body", "model"], "msg": "Field required"}]},
            InvalidRequestError,
            "model: Field required",
        ),
    ],
)
def test_mistrals_error_bodies_become_typed_errors_in_words(
    status, body, error_type, words
) -> None:
    error = mistral.map_http_error(
        status,
        json.dumps(body),
        {},
        label="Mistral",
        provider="mistral",
        model="mistral-small-latest",
    )
    assert isinstance(error, error_type), error
    assert words in str(error)
    assert error.status_code == status


async def test_a_capacity_429_is_retried_and_then_answers() -> None:
    busy = {
        "object": "error",
        "message": "Service tier capacity exceeded for this model.",
        "type": "service_tier_capacity_exceeded",
        "param": None,
        "code": "3505",
    }
    with ScriptedChatServer(
        [Reply.error(429, busy), Reply.mistral_stream(mistral_events(text=["fine"]))]
    ) as srv:
        events = await _collect(_client(srv))
    assert events[-1].response.text == "fine"
    assert len(srv.requests) == 2


async def test_a_rejected_key_fails_in_words_and_never_shows_the_key(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    body = {"message": f"Unauthorized: {SECRET}", "request_id": "r1"}
    with ScriptedChatServer([Reply.error(401, body)]) as srv:
        client = _client(srv)
        events = await _collect(client)
    error = events[-1].error
    assert isinstance(error, AuthenticationError) and isinstance(error, ProviderStreamError)
    assert str(error).startswith("Mistral rejected the API key (HTTP 401)")
    for text in (str(error), repr(error), caplog.text, repr(events), repr(client)):
        assert "SECRETKEY" not in text


async def test_without_a_key_it_says_which_variable_to_set(monkeypatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    client = create_provider_client("mistral/mistral-small-latest")
    events = await _collect(client)
    assert isinstance(events[-1].error, AuthenticationError)
    assert "MISTRAL_API_KEY" in str(events[-1].error)


async def test_an_error_chunk_inside_the_stream_fails_the_reply_keeping_the_text() -> None:
    error = {
        "object": "error",
        "message": "Internal error",
        "type": "internal_error",
        "code": "1000",
    }
    body = [*mistral_events(text=["Once"])[:2], f"data: {json.dumps(error)}\n\n".encode()]
    with ScriptedChatServer([Reply.mistral_stream(body)]) as srv:
        events = await _collect(_client(srv))
    failed = events[-1]
    assert failed.kind == "response.failed" and failed.semantic_output_emitted
    assert "Internal error" in str(failed.error)


async def test_a_whole_reply_with_thinking_parts_completes() -> None:
    whole = {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "magistral-medium-2509",
        "usage": {"prompt_tokens": 11, "total_tokens": 48, "completion_tokens": 37},
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "tool_calls": None,
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": [{"type": "text", "text": "Say READY."}],
                            "closed": True,
                        },
                        {"type": "text", "text": "READY"},
                    ],
                },
            }
        ],
    }
    with ScriptedChatServer([Reply.json(whole)]) as srv:
        response = await _client(srv).complete(_request(stream=False))
    assert response.text == "READY"
    assert response.reasoning == "Say READY."
    assert response.content[-1] == TextBlock(text="READY")

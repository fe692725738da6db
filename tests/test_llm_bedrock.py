"""Amazon Bedrock over HTTP: a loopback server that speaks ConverseStream's binary event
stream (built from AWS's documented framing), reached through
`create_provider_client("bedrock/...")`; requests signed with SigV4 from the standard
AWS credential sources and checked by the server the way AWS checks them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.llm import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    LLMRequest,
    ModelResponseFailed,
    Msg,
    OverloadedError,
    ProviderConnectionError,
    ProviderStreamError,
    RateLimitError,
    ThinkingBlock,
    ToolSpec,
    ValidationError,
    create_provider_client,
)
from tests.llm_servers import (
    Reply,
    ScriptedChatServer,
    assert_well_formed,
    bedrock_event,
    bedrock_events,
    bedrock_exception,
    verify_sigv4,
)

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
ACCESS = "AKIA" + "IOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE" + "sessiontoken0123456789abcdefABCDEF+/="
CLOCK = ToolSpec(name="clock", description="The time now.")
AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)


@pytest.fixture
def aws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No AWS setting of this machine leaks in: empty config files of our own, and the
    variables cleared (the metadata service is off too, though the signer never asks)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "aws"
    folder.mkdir()
    (folder / "credentials").write_text("")
    (folder / "config").write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(folder / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(folder / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return folder


@pytest.fixture
def keys(aws: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    return aws


def _client(server: ScriptedChatServer, *, region: str | None = "us-east-1", **options):
    client = create_provider_client(
        f"bedrock/{MODEL}", base_url=server.base_url, aws_region=region, **options
    )
    client._retry_base_delay = 0.01
    return client


def _request(*messages: Msg, **options) -> LLMRequest:
    options.setdefault("stream", True)
    return LLMRequest(
        model=f"bedrock/{MODEL}",
        messages=list(messages) or [Msg.system("Be brief."), Msg.user("hello")],
        **options,
    )


async def _collect(client, request: LLMRequest | None = None) -> list:
    events = [event async for event in client.stream(request or _request())]
    assert_well_formed(events)
    return events


def _deltas(events: list, channel: str) -> list[str]:
    return [e.delta for e in events if e.kind == "block.delta" and e.channel == channel]


async def test_text_streams_from_converse_stream_signed_with_sigv4(keys) -> None:
    with ScriptedChatServer([Reply.bedrock_stream(bedrock_events(text=["Hel", "lo!"]))]) as srv:
        events = await _collect(_client(srv))
    (received,) = srv.requests
    # The model id is one path segment, its ':' encoded once on the wire.
    assert (
        received.path == "/v1/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    )
    assert received.headers["accept"] == "application/vnd.amazon.eventstream"
    assert received.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS}/")
    assert "/us-east-1/bedrock/aws4_request" in received.headers["authorization"]
    assert verify_sigv4(received, SECRET, region="us-east-1", service="bedrock")
    assert not verify_sigv4(received, SECRET + "x", region="us-east-1", service="bedrock")
    assert _deltas(events, "text") == ["Hel", "lo!"]
    response = events[-1].response
    assert response.text == "Hello!" and response.finish_reason == "stop"
    assert (response.usage.input, response.usage.output, response.usage.total) == (25, 12, 37)
    assert response.metadata["latency_ms"] == 321


async def test_a_session_token_is_sent_and_signed(keys, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    with ScriptedChatServer([Reply.bedrock_stream(bedrock_events(text=["ok"]))]) as srv:
        await _collect(_client(srv))
    (received,) = srv.requests
    assert received.headers["x-amz-security-token"] == TOKEN
    assert "x-amz-security-token" in received.headers["authorization"]
    assert verify_sigv4(received, SECRET, region="us-east-1", service="bedrock")


async def test_credentials_come_from_a_profile_in_the_shared_files(aws, monkeypatch) -> None:
    (aws / "credentials").write_text(
        f"[work]\naws_access_key_id = {ACCESS}\naws_secret_access_key = {SECRET}\n"
    )
    (aws / "config").write_text("[profile work]\nregion = eu-west-3\n")
    with ScriptedChatServer([Reply.bedrock_stream(bedrock_events(text=["ok"]))]) as srv:
        client = _client(srv, region=None, aws_profile="work")
        events = await _collect(client)
    assert events[-1].kind == "response.completed"
    (received,) = srv.requests
    assert "/eu-west-3/bedrock/aws4_request" in received.headers["authorization"]
    assert verify_sigv4(received, SECRET, region="eu-west-3", service="bedrock")


def test_the_region_comes_from_settings_then_aws_region_then_the_profile(aws, monkeypatch) -> None:
    (aws / "config").write_text("[default]\nregion = ap-northeast-1\n")
    assert create_provider_client(f"bedrock/{MODEL}").base_url == (
        "https://bedrock-runtime.ap-northeast-1.amazonaws.com"
    )
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    assert "us-west-2" in create_provider_client(f"bedrock/{MODEL}").base_url
    client = create_provider_client(f"bedrock/{MODEL}", aws_region="eu-central-1")
    assert client.base_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"
    assert (
        "cn-north-1.amazonaws.com.cn"
        in create_provider_client(f"bedrock/{MODEL}", aws_region="cn-north-1").base_url
    )


async def test_a_bedrock_api_key_is_sent_as_a_bearer_token_instead_of_signing(aws) -> None:
    key = "ABSK" + "QmVkcm9ja0FQSUtleS1FWEFNUExFMDEyMzQ1Njc4OQ=="
    with ScriptedChatServer([Reply.bedrock_stream(bedrock_events(text=["ok"]))]) as srv:
        events = await _collect(_client(srv, api_key=key))
    assert events[-1].kind == "response.completed"
    (received,) = srv.requests
    assert received.headers["authorization"] == f"Bearer {key}"
    assert "x-amz-date" not in received.headers


async def test_without_credentials_it_says_where_to_put_them_and_sends_nothing(aws) -> None:
    with ScriptedChatServer([Reply.bedrock_stream(bedrock_events(text=["ok"]))]) as srv:
        events = await _collect(_client(srv))
    error = events[-1].error
    assert isinstance(error, AuthenticationError)
    assert "AWS_ACCESS_KEY_ID" in str(error) and "AWS_BEARER_TOKEN_BEDROCK" in str(error)
    assert srv.requests == []


async def test_an_unknown_profile_is_named(aws) -> None:
    with ScriptedChatServer([]) as srv:
        events = await _collect(_client(srv, aws_profile="nobody"))
    assert isinstance(events[-1].error, AuthenticationError)
    assert "'nobody'" in str(events[-1].error)


async def test_without_a_region_it_says_how_to_set_one(keys) -> None:
    client = create_provider_client(f"bedrock/{MODEL}")
    events = await _collect(client)
    error = events[-1].error
    assert isinstance(error, ValidationError)
    assert "AWS region" in str(error) and "AWS_REGION" in str(error)


async def test_thinking_streams_with_its_signature_kept_for_replay(keys) -> None:
    reply = bedrock_events(thinking=["Let me ", "think."], signature="EqQBCkYIBx", text=["42"])
    with ScriptedChatServer([Reply.bedrock_stream(reply)]) as srv:
        events = await _collect(_client(srv), _request(Msg.user("6*7?"), thinking="low"))
    assert _deltas(events, "thinking") == ["Let me ", "think."]
    response = events[-1].response
    thinking = response.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert (thinking.text, thinking.signature, thinking.provider) == (
        "Let me think.",
        "EqQBCkYIBx",
        "bedrock",
    )
    assert response.text == "42"
    body = srv.requests[0].json()
    assert body["additionalModelRequestFields"]["thinking"]["type"] == "enabled"
    # Replayed next turn verbatim.
    from app.llm.wire.bedrock import to_wire

    again = to_wire(_request(Msg.user("6*7?"), response.to_msg(), Msg.user("sure?")), model=MODEL)
    assert again["messages"][1]["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "Let me think.", "signature": "EqQBCkYIBx"}}
    }


async def test_redacted_reasoning_is_kept_opaque(keys) -> None:
    events_bytes = [
        bedrock_event("messageStart", {"role": "assistant"}),
        bedrock_event(
            "contentBlockDelta",
            {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": "b3BhcXVl"}},
            },
        ),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hi"}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
        bedrock_event("messageStop", {"stopReason": "end_turn"}),
    ]
    with ScriptedChatServer([Reply.bedrock_stream(events_bytes)]) as srv:
        events = await _collect(_client(srv))
    first = events[-1].response.content[0]
    assert isinstance(first, ThinkingBlock) and first.redacted and first.signature == "b3BhcXVl"
    assert events[-1].response.usage.input is None  # no metadata: unknown, not 0


async def test_tool_calls_stream_their_input_json_in_pieces(keys) -> None:
    reply = bedrock_events(
        text=["Checking."],
        calls=[
            ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "clock", ['{"zo', 'ne": "CET"}']),
            ("tooluse_2", "clock", ["{}"]),
        ],
        stop_reason="tool_use",
    )
    with ScriptedChatServer([Reply.bedrock_stream(reply)]) as srv:
        events = await _collect(_client(srv), _request(Msg.user("time?"), tools=[CLOCK]))
    response = events[-1].response
    assert response.finish_reason == "tool_use"
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "clock", {"zone": "CET"}),
        ("tooluse_2", "clock", {}),
    ]
    partial = [e.partial_input for e in events if e.channel == "tool_arguments"]
    assert partial[1] == {"zone": "CET"}
    body = srv.requests[0].json()
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "clock"


@pytest.mark.parametrize(
    ("kind", "error_type"),
    [
        ("throttlingException", RateLimitError),
        ("serviceUnavailableException", OverloadedError),
        ("internalServerException", ModelResponseFailed),
        ("modelStreamErrorException", ModelResponseFailed),
        ("validationException", InvalidRequestError),
    ],
)
async def test_exception_events_end_the_stream_with_typed_errors(keys, kind, error_type) -> None:
    body = [*bedrock_events(text=["Once"], end=False), bedrock_exception(kind, "It went wrong.")]
    with ScriptedChatServer([Reply.bedrock_stream(body)]) as srv:
        events = await _collect(_client(srv))
    failed = events[-1]
    assert isinstance(failed.error, error_type) and isinstance(failed.error, ProviderStreamError)
    assert failed.error.code == kind
    assert "It went wrong" in str(failed.error) and failed.semantic_output_emitted
    assert _deltas(events, "text") == ["Once"]
    assert len(srv.requests) == 1  # never retried after output


async def test_a_context_overflow_in_the_stream_is_recognised(keys) -> None:
    body = [bedrock_exception("validationException", "Input is too long for requested model.")]
    with ScriptedChatServer([Reply.bedrock_stream(body)]) as srv:
        events = await _collect(_client(srv))
    assert isinstance(events[-1].error, ContextOverflowError)


async def test_http_throttling_is_retried_then_answers(keys) -> None:
    limited = Reply.error(
        429,
        {"message": "Too many requests, please wait before trying again."},
        {
            "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"
        },
    )
    with ScriptedChatServer([limited, Reply.bedrock_stream(bedrock_events(text=["ok"]))]) as srv:
        events = await _collect(_client(srv))
    assert events[-1].response.text == "ok"
    assert len(srv.requests) == 2
    assert all(verify_sigv4(r, SECRET, region="us-east-1", service="bedrock") for r in srv.requests)


@pytest.mark.parametrize(
    ("status", "kind", "message", "error_type", "words"),
    [
        (
            403,
            "AccessDeniedException",
            "You don't have access to the model with the specified model ID.",
            AuthenticationError,
            "enabled in the Bedrock console",
        ),
        (
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
            AuthenticationError,
            "does not recognise the credentials",
        ),
        (
            400,
            "ValidationException",
            "Input is too long for requested model.",
            ContextOverflowError,
            "too long for",
        ),
        (
            400,
            "ValidationException",
            "The model returned the following errors: messages.0: blank text",
            InvalidRequestError,
            "refused the request (HTTP 400, ValidationException)",
        ),
        (
            404,
            "ResourceNotFoundException",
            "Model not found.",
            InvalidRequestError,
            "does not know this model",
        ),
        (429, "ServiceQuotaExceededException", "Quota exceeded.", RateLimitError, "quota"),
        (
            503,
            "ServiceUnavailableException",
            "Service unavailable.",
            OverloadedError,
            "unavailable",
        ),
    ],
)
async def test_http_errors_map_by_their_aws_error_type(
    keys, status, kind, message, error_type, words
) -> None:
    reply = Reply.error(
        status, {"message": message}, {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/"}
    )
    with ScriptedChatServer([reply]) as srv:
        client = _client(srv)
        client._max_retries = 0
        events = await _collect(client)
    error = events[-1].error
    assert isinstance(error, error_type), error
    assert words in str(error)
    assert error.status_code == status


async def test_a_damaged_message_fails_in_words(keys) -> None:
    good = bedrock_events(text=["Hi"], end=False)
    broken = bytearray(
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "X"}})
    )
    broken[-6] ^= 0xFF  # a payload byte: the message CRC no longer matches
    with ScriptedChatServer([Reply.bedrock_stream([*good, bytes(broken)])]) as srv:
        events = await _collect(_client(srv))
    error = events[-1].error
    assert isinstance(error, ModelResponseFailed)
    assert str(error).startswith("Amazon Bedrock sent a damaged event-stream message")
    assert "Checksum mismatch" in str(error)
    assert _deltas(events, "text") == ["Hi"]


async def test_a_damaged_prelude_fails_in_words(keys) -> None:
    broken = bytearray(bedrock_event("messageStart", {"role": "assistant"}))
    broken[9] ^= 0x01  # the prelude's CRC
    with ScriptedChatServer([Reply.bedrock_stream([bytes(broken)])]) as srv:
        events = await _collect(_client(srv))
    assert "damaged event-stream message" in str(events[-1].error)


async def test_a_body_ending_inside_a_message_fails_in_words(keys) -> None:
    cut = [
        *bedrock_events(text=["Hi"])[:-1],
        bedrock_event("messageStop", {"stopReason": "end_turn"})[:20],
    ]
    with ScriptedChatServer([Reply.bedrock_stream(cut)]) as srv:
        events = await _collect(_client(srv))
    assert "in the middle of an event-stream message" in str(events[-1].error)


async def test_a_dropped_connection_keeps_the_partial_reply(keys) -> None:
    body = bedrock_events(text=["Hello", " wor"], end=False)
    with ScriptedChatServer([Reply.bedrock_stream(body, drop=True)]) as srv:
        events = await _collect(_client(srv))
    assert isinstance(events[-1].error, ProviderConnectionError)
    assert _deltas(events, "text") == ["Hello", " wor"]


async def test_a_drop_after_message_stop_still_completes(keys) -> None:
    body = bedrock_events(text=["Done"])[:-1]  # no metadata
    with ScriptedChatServer([Reply.bedrock_stream(body, drop=True)]) as srv:
        events = await _collect(_client(srv))
    assert events[-1].kind == "response.completed"
    assert events[-1].response.text == "Done"


async def test_an_unknown_stop_reason_is_a_failure_not_a_guess(keys) -> None:
    with ScriptedChatServer(
        [Reply.bedrock_stream(bedrock_events(text=["x"], stop_reason="moon"))]
    ) as srv:
        events = await _collect(_client(srv))
    assert "unknown reason 'moon'" in str(events[-1].error)


async def test_complete_reads_a_whole_converse_reply(keys) -> None:
    whole = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Easy.", "signature": "sig"}}},
                    {"text": "It is noon."},
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_1",
                            "name": "clock",
                            "input": {"zone": "UTC"},
                        }
                    },
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {
            "inputTokens": 30,
            "outputTokens": 10,
            "totalTokens": 40,
            "cacheReadInputTokens": 20,
        },
        "metrics": {"latencyMs": 100},
    }
    with ScriptedChatServer([Reply.json(whole)]) as srv:
        response = await _client(srv).complete(_request(stream=False, tools=[CLOCK]))
    assert srv.requests[0].path.endswith("/converse")
    assert verify_sigv4(srv.requests[0], SECRET, region="us-east-1", service="bedrock")
    assert response.text == "It is noon." and response.reasoning == "Easy."
    assert response.content[0].signature == "sig"
    assert response.tool_calls[0].input == {"zone": "UTC"}
    assert (response.usage.input, response.usage.cache_read) == (30, 20)


async def test_secrets_never_reach_errors_logs_or_reprs(keys, monkeypatch, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    # AWS puts the canonical request (with the token) into a signature error's message.
    message = (
        "The request signature we calculated does not match the signature you provided. "
        "The Canonical String for this request should have been "
        f"'POST\n/\n\nx-amz-security-token:{TOKEN}\n'"
    )
    reply = Reply.error(
        403, {"message": message}, {"x-amzn-ErrorType": "InvalidSignatureException"}
    )
    with ScriptedChatServer([reply]) as srv:
        client = _client(srv)
        events = await _collect(client)
    error = events[-1].error
    assert isinstance(error, AuthenticationError)
    for text in (str(error), repr(error), caplog.text, repr(events), repr(client)):
        assert "sessiontoken0123" not in text and "bPxRfiCY" not in text


def test_the_request_body_is_json_with_the_model_in_the_url_only(keys) -> None:
    from app.llm.wire.bedrock import to_wire

    body = to_wire(_request(), model=MODEL)
    assert "model" not in body
    json.dumps(body)

"""Anthropic models over HTTP: recorded streams and scripted scenarios on a loopback
server that speaks the Messages API, through `create_provider_client`."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path

import pytest

from app.llm import (
    AuthenticationError,
    ContextOverflowError,
    LLMRequest,
    ModelResponseFailed,
    Msg,
    OverloadedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    create_provider_client,
    is_context_overflow,
)
from tests.llm_servers import (
    WIRE_FIXTURES,
    Reply,
    ScriptedChatServer,
    anthropic_events,
    anthropic_sse,
    assert_well_formed,
)
from tests.test_llm_openai_chat_wire import summarize

SECRET = "sk-" + "ant-api03-SECRETSECRETSECRET-1234"
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
ANTHROPIC_FIXTURES = sorted((WIRE_FIXTURES / "anthropic").glob("*.expected.json"))


def _client(server: ScriptedChatServer, **options):
    options.setdefault("api_key", SECRET)
    client = create_provider_client(
        "anthropic/claude-sonnet-4-5", base_url=server.base_url, **options
    )
    client._retry_base_delay = 0.01  # keep retries quick
    return client


def _request(**options) -> LLMRequest:
    options.setdefault("stream", True)
    return LLMRequest(
        model="anthropic/claude-sonnet-4-5",
        messages=[Msg.system("Be brief."), Msg.user("hello")],
        **options,
    )


async def _collect(client, request: LLMRequest | None = None) -> list:
    events = [event async for event in client.stream(request or _request())]
    assert_well_formed(events)
    return events


def _text_deltas(events: list) -> list:
    return [e for e in events if e.kind == "block.delta" and e.channel == "text"]


@pytest.mark.skipif(not ANTHROPIC_FIXTURES, reason="shared wire fixtures not found")
@pytest.mark.parametrize("expected_path", ANTHROPIC_FIXTURES, ids=lambda p: p.name.split(".")[0])
async def test_recorded_streams_over_http_match_the_oracle(expected_path: Path) -> None:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in expected_path.parent.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    expected = json.loads(expected_path.read_text())
    with ScriptedChatServer([Reply.fixture(body)]) as server:
        events = await _collect(_client(server))
    assert events[-1].kind == "response.completed", getattr(events[-1], "error", None)
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key


async def test_request_reaches_the_messages_endpoint_with_anthropic_headers() -> None:
    with ScriptedChatServer([Reply.anthropic_stream(["Hi"])]) as server:
        events = await _collect(_client(server, headers={"anthropic-beta": "x"}))
    (received,) = server.requests
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == SECRET
    assert received.headers["anthropic-version"] == "2023-06-01"
    assert received.headers["anthropic-beta"] == "x"
    assert "authorization" not in received.headers
    body = received.json()
    assert body["model"] == "claude-sonnet-4-5"
    assert body["stream"] is True
    assert body["system"][0]["text"] == "Be brief."
    assert events[-1].response.text == "Hi"
    assert events[-1].response.usage.output == 7


async def test_overloaded_529_then_success_is_retried() -> None:
    with ScriptedChatServer(
        [Reply.error(529, OVERLOADED), Reply.anthropic_stream(["fine"])]
    ) as server:
        events = await _collect(_client(server))
    assert events[-1].kind == "response.completed"
    assert events[-1].response.text == "fine"
    assert len(server.requests) == 2
    assert events[0].scope.attempt == 2


async def test_rate_limit_waits_as_long_as_retry_after_says(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    limited = Reply.error(429, body, {"retry-after": "0.3"})
    with caplog.at_level(logging.INFO), ScriptedChatServer(
        [limited, Reply.anthropic_stream(["ok"])]
    ) as server:
        events = await _collect(_client(server))
    assert events[-1].kind == "response.completed"
    # The wait the client chose (and slept) is the server's retry-after, plus jitter.
    (waited,) = [
        float(m.group(1))
        for r in caplog.records
        if (m := re.search(r"Trying again in ([\d.]+) s", r.getMessage()))
    ]
    assert 0.3 <= waited <= 0.5
    assert len(server.requests) == 2


async def test_a_retry_after_too_long_to_wait_is_reported_not_slept() -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    with ScriptedChatServer([Reply.error(429, body, {"retry-after": "60"})]) as server:
        events = await _collect(_client(server))
    error = events[-1].error
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 60.0
    assert "(HTTP 429): Slow down." in str(error)
    assert len(server.requests) == 1


async def test_rejected_key_fails_in_words_and_never_shows_the_key(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": f"invalid x-api-key {SECRET}"},
    }
    with ScriptedChatServer([Reply.error(401, body)]) as server:
        client = _client(server)
        events = await _collect(client)
        with pytest.raises(AuthenticationError) as raised:
            await client.complete(_request(stream=False))
    error = events[-1].error
    assert isinstance(error, AuthenticationError)
    assert str(error).startswith("Anthropic rejected the API key (HTTP 401): invalid x-api-key")
    assert error.code == "authentication_error"
    for text in (
        str(error),
        repr(error),
        str(raised.value),
        caplog.text,
        repr(events),
        repr(client),
    ):
        assert "SECRETSECRET" not in text
    assert len(server.requests) == 2  # never retried


async def test_a_mid_stream_error_event_fails_without_retrying() -> None:
    body = b"".join(anthropic_events(["Once upon"], end=False)) + anthropic_sse(OVERLOADED)
    with ScriptedChatServer([Reply.body(body)]) as server:
        events = await _collect(_client(server))
    failed = events[-1]
    assert isinstance(failed.error, OverloadedError)
    assert failed.semantic_output_emitted
    assert _text_deltas(events)[-1].snapshot == "Once upon"
    assert len(server.requests) == 1


async def test_a_dropped_connection_fails_keeping_the_partial_reply() -> None:
    body = b"".join(anthropic_events(["Hello", " wor"], end=False))
    with ScriptedChatServer([Reply.body(body, drop=True)]) as server:
        events = await _collect(_client(server))
    failed = events[-1]
    assert isinstance(failed.error, ProviderConnectionError)
    assert "closed before the reply finished" in str(failed.error)
    assert _text_deltas(events)[-1].snapshot == "Hello wor"
    assert len(server.requests) == 1


async def test_cancel_during_the_stream_ends_with_cancelled_and_hangs_up() -> None:
    reply = Reply.anthropic_stream([f"w{i} " for i in range(200)], delay=0.005)
    with ScriptedChatServer([reply]) as server:
        client = _client(server)
        events = []
        async for event in client.stream(_request()):
            events.append(event)
            if len(_text_deltas(events)) == 3:
                client.cancel()
        assert server.client_closed.wait(2)
        sent = server.chunks_sent
    assert_well_formed(events)
    assert events[-1].kind == "response.cancelled"
    assert events[-1].semantic_output_emitted
    assert sent < 100


async def test_cancel_while_waiting_on_a_silent_server_ends_at_once() -> None:
    reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=anthropic_events(["thinking about it"], end=False),
        hang=True,
    )
    with ScriptedChatServer([reply]) as server:
        client = _client(server, timeout=30)
        events: list = []

        async def consume() -> None:
            async for event in client.stream(_request()):
                events.append(event)

        task = asyncio.create_task(consume())
        while not _text_deltas(events):
            await asyncio.sleep(0.01)
        client.cancel()
        # The server never ends the stream and the timeout is 30 s: only the
        # cancellation can end it within the guard.
        await asyncio.wait_for(task, 15)
        assert server.client_closed.wait(5)
    assert_well_formed(events)
    assert events[-1].kind == "response.cancelled"
    assert not task.cancelled()


async def test_an_html_error_page_from_a_proxy_is_reported_by_its_title() -> None:
    page = (
        "<html><head><title>502 Bad Gateway</title></head>"
        "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
    )
    reply = Reply(status=502, headers={"content-type": "text/html"}, chunks=[page.encode()])
    reply.streamed = False
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server))
    error = events[-1].error
    assert isinstance(error, OverloadedError)
    assert (
        str(error)
        == "Anthropic is overloaded or unavailable (HTTP 502): an HTML page (502 Bad Gateway)."
    )
    assert len(server.requests) == 3  # retried twice, then reported


async def test_a_200_with_an_empty_body_fails_in_words() -> None:
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=[])
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server))
    assert isinstance(events[-1].error, ModelResponseFailed)
    assert str(events[-1].error) == "Anthropic sent an empty reply."


async def test_a_reply_of_the_wrong_content_type_fails_in_words() -> None:
    reply = Reply(headers={"content-type": "text/plain"}, chunks=[b"hello from a captive portal"])
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server))
    assert str(events[-1].error) == "Anthropic did not answer with an event stream (text/plain)."


async def test_a_stream_that_never_ends_times_out_within_the_timeout() -> None:
    reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=anthropic_events(["Hel"], end=False),
        hang=True,
    )
    with ScriptedChatServer([reply]) as server:
        # The server hangs for ever: only the client's own timeout can end this.
        events = await asyncio.wait_for(_collect(_client(server, timeout=0.3)), 30)
        assert server.client_closed.wait(5)
    assert isinstance(events[-1].error, ProviderTimeoutError)
    assert "stopped answering: nothing came for 0.3 seconds" in str(events[-1].error)


async def test_complete_sends_a_plain_request_and_reads_the_json_message() -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "Four."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 14, "output_tokens": 3},
    }
    with ScriptedChatServer([Reply.json(message)]) as server:
        response = await _client(server).complete(_request(stream=False))
    assert "stream" not in server.requests[0].json()
    assert server.requests[0].headers["accept"] == "application/json"
    assert response.text == "Four."
    assert response.model == "claude-sonnet-4-5-20250929"
    assert (response.usage.input, response.usage.output) == (14, 3)


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 208310 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 197779 + 21333 > 200000, "
        "decrease input length or `max_tokens` and try again",
    ],
)
async def test_both_context_overflow_wordings_raise_context_overflow(message: str) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    overflow = pytest.raises(ContextOverflowError)
    with ScriptedChatServer([Reply.error(400, body)]) as server, overflow as raised:
        await _client(server).complete(_request(stream=False))
    assert is_context_overflow(raised.value)
    assert is_context_overflow(message)
    assert len(server.requests) == 1

"""The HTTP provider client against a real scripted server on loopback."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path

import pytest

from app.llm import (
    AuthenticationError,
    InvalidRequestError,
    LLMRequest,
    ModelResponseFailed,
    Msg,
    ProviderConnectionError,
    RateLimitError,
    ValidationError,
    create_provider_client,
    parse_model_route,
)
from app.llm.http_client import WIRE_MODULES, HttpWireClient, load_wire
from app.llm.routing import resolve_api_key
from tests.llm_servers import (
    WIRE_FIXTURES,
    Reply,
    ScriptedChatServer,
    assert_well_formed,
    chat_chunk,
    sse,
)
from tests.test_llm_openai_chat_wire import summarize

SECRET = "sk-" + "test-SECRETSECRETSECRET1234"


def _request(**options) -> LLMRequest:
    return LLMRequest(model="x", messages=[Msg.user("hello")], stream=True, **options)


async def _collect(client, request: LLMRequest | None = None) -> list:
    return [event async for event in client.stream(request or _request())]


def _client(server: ScriptedChatServer, **options):
    return create_provider_client(
        "openai-compatible/x", base_url=server.base_url, api_style="chat", **options
    )


CHAT_FIXTURES = sorted((WIRE_FIXTURES / "openai_chat").glob("*.expected.json"))


@pytest.mark.skipif(not CHAT_FIXTURES, reason="shared wire fixtures not found")
@pytest.mark.parametrize("expected_path", CHAT_FIXTURES, ids=lambda p: p.name.split(".")[0])
async def test_recorded_streams_over_http_match_the_oracle(expected_path: Path) -> None:
    stem = expected_path.name.removesuffix(".expected.json")
    (body,) = [p for p in expected_path.parent.glob(stem + ".*") if p.suffix in (".sse", ".jsonl")]
    expected = json.loads(expected_path.read_text())
    with ScriptedChatServer([Reply.fixture(body)]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    assert events[-1].kind == "response.completed", getattr(events[-1], "error", None)
    got = summarize(events)
    for key in ("final_text", "thinking_text", "tool_calls", "finish", "usage"):
        assert got[key] == expected[key], key


async def test_request_body_and_headers_reach_the_server() -> None:
    with ScriptedChatServer([Reply.text_stream(["Hi", " there"])]) as server:
        client = _client(server, api_key="local-key", headers={"X-Trace": "t1"})
        events = await _collect(client)
        await client.aclose()
    (received,) = server.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == "Bearer local-key"
    assert received.headers["x-trace"] == "t1"
    body = received.json()
    assert body["model"] == "x"
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert events[-1].response.text == "Hi there"


async def test_consumer_loop_reads_text_and_the_reply() -> None:
    """The loop AgentCore runs, written exactly as it will be."""
    with ScriptedChatServer([Reply.text_stream(["Hel", "lo"], delay=0.01)]) as server:
        spoken, thinking, final, failure = [], [], None, None
        async for ev in _client(server).stream(_request()):
            if ev.kind == "block.delta" and ev.channel == "text":
                spoken.append(ev.delta)
            elif ev.channel == "thinking":
                thinking.append(ev.delta)
            elif ev.kind == "response.completed":
                final = ev.response
            elif ev.kind == "response.failed":
                failure = str(ev.error)
    assert spoken == ["Hel", "lo"]
    assert thinking == [] and failure is None
    assert final is not None and final.finish_reason == "stop"
    assert final.usage.input == 10 and final.usage.cache_write is None


async def test_complete_returns_the_whole_reply() -> None:
    with ScriptedChatServer([Reply.text_stream(["4"])]) as server:
        request = LLMRequest(model="openai-compatible/x", messages=[Msg.user("2+2?")])
        response = await _client(server).complete(request)
    assert response.text == "4"
    assert server.requests[0].json()["model"] == "x"


async def test_stream_and_complete_insist_on_the_stream_flag() -> None:
    client = create_provider_client("ollama/llama3.2", api_style="chat")
    with pytest.raises(ValidationError):
        client.stream(_request().model_copy(update={"stream": False}))
    with pytest.raises(ValidationError):
        await client.complete(_request())


async def test_rejected_key_fails_in_words_and_never_shows_the_key(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    body = {
        "error": {
            "message": f"Incorrect API key provided: {SECRET}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    with ScriptedChatServer([Reply.error(401, body)]) as server:
        client = _client(server, api_key=SECRET)
        events = await _collect(client)
        with pytest.raises(AuthenticationError) as raised:
            await client.complete(_request().model_copy(update={"stream": False}))
    assert_well_formed(events)
    failed = events[-1]
    assert failed.kind == "response.failed"
    assert isinstance(failed.error, AuthenticationError)
    assert not failed.semantic_output_emitted
    message = str(failed.error)
    assert message.startswith(f"The server at {server.base_url} rejected the API key (HTTP 401)")
    assert "Incorrect API key provided" in message
    for text in (message, repr(failed.error), str(raised.value), caplog.text, repr(events)):
        assert SECRET not in text
        assert "SECRETSECRET" not in text
    assert len(server.requests) == 2  # never retried


async def test_openai_route_without_a_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = create_provider_client("openai/gpt-4o-mini", api_style="chat")
    events = await _collect(client)
    assert_well_formed(events)
    assert isinstance(events[-1].error, AuthenticationError)
    assert "OPENAI_API_KEY" in str(events[-1].error)


@pytest.mark.parametrize(
    ("model", "api_style", "wire", "base_url"),
    [
        ("openai/gpt-5", "responses", "openai_responses", "https://api.openai.com/v1"),
        ("openai/gpt-4o-mini", "chat", "openai_chat", "https://api.openai.com/v1"),
        ("openrouter/openai/gpt-4o", "responses", "openai_chat", "https://openrouter.ai/api/v1"),
        ("deepseek/deepseek-chat", "responses", "openai_chat", "https://api.deepseek.com/v1"),
        ("ollama/llama3.2", "responses", "openai_chat", "http://127.0.0.1:11434/v1"),
        ("anthropic/claude-sonnet-4-5", "chat", "anthropic", "https://api.anthropic.com/v1"),
        (
            "gemini/gemini-2.5-flash",
            "chat",
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta",
        ),
    ],
)
def test_each_route_speaks_its_wire_protocol(model, api_style, wire, base_url) -> None:
    client = create_provider_client(model, api_style=api_style)
    assert isinstance(client, HttpWireClient)
    assert wire == client.wire.NAME
    assert client.base_url == base_url
    assert wire in repr(client)


def test_an_unknown_or_missing_wire_protocol_is_refused_in_words(monkeypatch) -> None:
    with pytest.raises(ValidationError, match="no wire protocol called 'morse'"):
        load_wire("morse")
    monkeypatch.setitem(WIRE_MODULES, "future", "app.llm.wire.not_written_yet")
    with pytest.raises(ValidationError, match="future protocol is not available"):
        load_wire("future")


def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(ValueError, match="base_url"):
        create_provider_client("openai-compatible/x")


async def test_chat_style_for_openai_posts_to_chat_completions() -> None:
    with ScriptedChatServer([Reply.text_stream(["ok"])]) as server:
        client = create_provider_client(
            "openai/gpt-4o-mini", api_key="k", base_url=server.base_url, api_style="chat"
        )
        events = await _collect(client, _request(max_tokens=5))
    assert events[-1].kind == "response.completed"
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].json()["max_completion_tokens"] == 5


async def test_openrouter_names_the_app() -> None:
    with ScriptedChatServer([Reply.text_stream(["ok"])]) as server:
        client = create_provider_client("openrouter/x/y", api_key="k", base_url=server.base_url)
        await _collect(client, _request().model_copy(update={"model": "openrouter/x/y"}))
    assert server.requests[0].headers["x-title"] == "Companion"
    assert server.requests[0].json()["model"] == "x/y"


async def test_gemini_takes_its_key_from_google_api_key_too(monkeypatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    client = create_provider_client("gemini/gemini-2.5-flash")
    events = await _collect(client)
    assert isinstance(events[-1].error, AuthenticationError)
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in str(events[-1].error)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert resolve_api_key(parse_model_route("gemini/x"), None) == "google-key"


async def test_anthropic_key_comes_from_its_environment_variable(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-anthropic-key")
    with ScriptedChatServer([Reply.anthropic_stream(["ok"])]) as server:
        client = create_provider_client("anthropic/claude-haiku-4-5", base_url=server.base_url)
        await _collect(client)
    assert server.requests[0].headers["x-api-key"] == "env-anthropic-key"


async def test_complete_reads_a_whole_chat_completion() -> None:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "x-2025",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "clock", "arguments": '{"tz": "UTC"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    }
    with ScriptedChatServer([Reply.json(completion)]) as server:
        request = LLMRequest(model="x", messages=[Msg.user("time?")])
        response = await _client(server).complete(request)
    assert "stream" not in server.requests[0].json()
    assert response.finish_reason == "tool_use"
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("call_1", "clock", {"tz": "UTC"})
    ]
    assert (response.usage.input, response.usage.output, response.usage.total) == (9, 4, 13)
    assert response.model == "x-2025"


async def test_complete_raises_the_typed_error_for_a_broken_json_body() -> None:
    reply = Reply(headers={"content-type": "text/html"}, chunks=[b"<html>hi</html>"])
    reply.streamed = False
    request = LLMRequest(model="x", messages=[Msg.user("q")])
    broken = pytest.raises(ModelResponseFailed, match=r"did not answer with JSON \(text/html\)")
    with ScriptedChatServer([reply]) as server, broken:
        await _client(server).complete(request)


async def test_connection_refused_fails_with_a_sentence() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = create_provider_client(
        "openai-compatible/x", base_url=f"http://127.0.0.1:{port}/v1", api_style="chat"
    )
    client._retry_base_delay = 0.01  # keep the two retries quick
    events = await _collect(client)
    assert_well_formed(events)
    error = events[-1].error
    assert isinstance(error, ProviderConnectionError)
    assert str(error) == f"Could not reach http://127.0.0.1:{port}/v1: is the server running?"
    assert events[-1].scope.attempt == 3


async def test_garbage_data_line_fails_the_stream() -> None:
    body = (
        sse(chat_chunk({"content": "Hi"}))
        + b"data: <html>oops</html>\n\n"
        + sse(chat_chunk({"content": "more"}))
    )
    with ScriptedChatServer([Reply.body(body + b"data: [DONE]\n\n")]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    assert events[-1].kind == "response.failed"
    assert "not JSON" in str(events[-1].error)
    assert events[-1].semantic_output_emitted
    assert len(server.requests) == 1


async def test_dropped_connection_mid_stream_fails_without_raising() -> None:
    body = sse(chat_chunk({"content": "Hel"})) + sse(chat_chunk({"content": "lo"}))
    with ScriptedChatServer([Reply.body(body, drop=True)]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    failed = events[-1]
    assert failed.kind == "response.failed"
    assert isinstance(failed.error, ProviderConnectionError)
    assert "closed before the reply finished" in str(failed.error)
    assert failed.semantic_output_emitted
    assert len(server.requests) == 1  # output was emitted: never retried


async def test_overloaded_then_success_is_retried() -> None:
    busy = Reply.error(503, {"error": {"message": "overloaded"}}, {"retry-after-ms": "20"})
    with ScriptedChatServer([busy, Reply.text_stream(["fine"])]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    assert events[-1].kind == "response.completed"
    assert events[-1].response.text == "fine"
    assert len(server.requests) == 2
    assert events[0].scope.attempt == 2


async def test_insufficient_quota_is_not_retried() -> None:
    body = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    with ScriptedChatServer([Reply.error(429, body)]) as server:
        events = await _collect(_client(server))
    assert isinstance(events[-1].error, RateLimitError)
    assert "out of credit" in str(events[-1].error)
    assert len(server.requests) == 1


async def test_unknown_model_says_the_model_name() -> None:
    body = {"error": "model 'lama9' not found, try pulling it first"}
    with ScriptedChatServer([Reply.error(404, body)]) as server:
        client = create_provider_client("ollama/lama9", base_url=server.base_url)
        events = await _collect(client, _request().model_copy(update={"model": "ollama/lama9"}))
    error = events[-1].error
    assert isinstance(error, InvalidRequestError)
    assert "has no model named 'lama9' (HTTP 404): model 'lama9' not found" in str(error)
    assert server.requests[0].json()["model"] == "lama9"


async def test_breaking_out_early_closes_the_stream() -> None:
    pieces = [f"w{i} " for i in range(200)]
    with ScriptedChatServer([Reply.text_stream(pieces, delay=0.005)]) as server:
        stream = _client(server).stream(_request())
        async for ev in stream:
            if ev.kind == "block.delta":
                break
        await stream.aclose()
        await asyncio.sleep(0.3)
        sent = server.chunks_sent
    assert sent < 100  # the server stopped sending once the client hung up


async def test_cancel_ends_the_stream_with_cancelled() -> None:
    pieces = [f"w{i} " for i in range(100)]
    with ScriptedChatServer([Reply.text_stream(pieces, delay=0.005)]) as server:
        client = _client(server)
        events = []
        async for ev in client.stream(_request()):
            events.append(ev)
            if ev.kind == "block.delta" and len(events) > 5:
                client.cancel()
    assert_well_formed(events)
    assert events[-1].kind == "response.cancelled"
    assert events[-1].semantic_output_emitted


async def test_a_reply_that_is_not_an_event_stream_fails_in_words() -> None:
    reply = Reply(headers={"content-type": "text/html"}, chunks=[b"<html>login</html>"])
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    assert "did not answer with an event stream (text/html)" in str(events[-1].error)


async def test_a_stream_that_ends_without_a_finish_reason_fails() -> None:
    body = sse(chat_chunk({"content": "Hi"})) + b"data: [DONE]\n\n"
    with ScriptedChatServer([Reply.body(body)]) as server:
        events = await _collect(_client(server))
    assert_well_formed(events)
    assert "without saying why it stopped" in str(events[-1].error)

"""How long a hosted model may keep a reply waiting, against real servers on loopback:
keep-alives are not content, retries stay inside the wait, a whole reply has a
deadline, one huge event or body is refused, and the words say what happened."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from app.llm import (
    LLMRequest,
    ModelResponseFailed,
    Msg,
    ProviderTimeoutError,
    RateLimitError,
    create_provider_client,
)
from app.llm.http_client import HttpWireClient
from app.llm.waiting import when_to_retry
from tests.llm_servers import Reply, ScriptedChatServer, anthropic_sse, chat_chunk, sse


def _request() -> LLMRequest:
    return LLMRequest(model="x", messages=[Msg.user("hello")], stream=True)


def _client(base_url: str, **options: object) -> HttpWireClient:
    client = create_provider_client(
        "openai-compatible/x", base_url=base_url, api_style="chat", **options
    )
    assert isinstance(client, HttpWireClient)
    client._retry_base_delay = 0.01
    return client


async def _collect(client: HttpWireClient) -> list:
    # A guard for a hang, far above the limits under test.
    return await asyncio.wait_for(_events(client), 60)


async def _events(client: HttpWireClient) -> list:
    return [event async for event in client.stream(_request())]


def _text(events: list) -> str:
    return "".join(e.delta for e in events if e.kind == "block.delta")


def keep_alive(chunk: bytes, *, count: int = 400, delay: float = 0.05) -> Reply:
    return Reply(headers={"content-type": "text/event-stream"}, chunks=[chunk] * count, delay=delay)


OPENAI_START = sse(chat_chunk({"role": "assistant", "content": ""}))
KEEP_ALIVES = {
    "comment": b": ping\n\n",
    "empty choices": sse({"id": "c", "choices": []}),
    "empty delta": sse(chat_chunk({})),
    "empty content": sse(chat_chunk({"content": ""})),
    "retry field": b"retry: 1000\n\n",
}


@pytest.mark.parametrize("chunk", KEEP_ALIVES.values(), ids=KEEP_ALIVES.keys())
async def test_keep_alives_do_not_keep_a_silent_model_waiting(chunk: bytes) -> None:
    reply = keep_alive(chunk)
    reply.chunks = [OPENAI_START, *reply.chunks]
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server.base_url, timeout=0.6))
        assert server.client_closed.wait(5)  # the client hung up, the server did not end
    error = events[-1].error
    assert isinstance(error, ProviderTimeoutError)
    assert str(error) == f"The server at {server.base_url} did not answer within 0.6 seconds."
    assert server.chunks_sent < len(reply.chunks)


async def test_anthropic_ping_events_do_not_count_as_an_answer() -> None:
    start = anthropic_sse(
        {
            "type": "message_start",
            "message": {"id": "m", "model": "c", "usage": {"input_tokens": 3, "output_tokens": 0}},
        }
    )
    reply = keep_alive(anthropic_sse({"type": "ping"}))
    reply.chunks = [start, *reply.chunks]
    with ScriptedChatServer([reply]) as server:
        client = create_provider_client(
            "anthropic/claude-x", base_url=server.base_url, api_key="k-test", timeout=0.6
        )
        events = await asyncio.wait_for(_events(client), 60)  # type: ignore[arg-type]
    assert isinstance(events[-1].error, ProviderTimeoutError)
    assert "did not answer within 0.6 seconds" in str(events[-1].error)


async def test_a_model_that_goes_quiet_mid_reply_is_stopped_and_its_words_kept() -> None:
    reply = keep_alive(b": ping\n\n")
    reply.chunks = [OPENAI_START, sse(chat_chunk({"content": "Half a"})), *reply.chunks]
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server.base_url, timeout=0.6))
    assert _text(events) == "Half a"
    failed = events[-1]
    assert failed.semantic_output_emitted
    assert "stopped answering: nothing came for 0.6 seconds" in str(failed.error)
    assert len(server.requests) == 1  # words were shown: never tried again


async def test_a_reply_that_trickles_forever_ends_at_the_deadline() -> None:
    words = [sse(chat_chunk({"content": f"w{i} "})) for i in range(400)]
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=words, delay=0.05)
    with ScriptedChatServer([reply]) as server:
        client = _client(server.base_url, timeout=0.5)
        client._deadline = 1.0
        events_early = await _collect(client)
    failed = events_early[-1]
    assert failed.kind == "response.failed"
    assert str(failed.error).endswith("did not finish its reply within 1 second.")
    assert _text(events_early).startswith("w0 w1 ")


def _silent_listener() -> socket.socket:
    """A port that accepts connections (the kernel does) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


async def test_a_server_that_never_answers_is_not_retried_past_the_wait() -> None:
    with _silent_listener() as sock:
        port = sock.getsockname()[1]
        events = await _collect(_client(f"http://127.0.0.1:{port}/v1", timeout=0.8))
    failed = events[-1]
    assert isinstance(failed.error, ProviderTimeoutError)
    assert str(failed.error).endswith("did not answer within 0.8 seconds.")
    assert failed.scope.attempt == 1  # no second wait of the same length


async def test_the_message_counts_the_tries_and_the_time_they_took() -> None:
    busy = Reply.error(503, {"error": {"message": "busy"}})
    hang = Reply(headers={"content-type": "text/event-stream"}, chunks=[b": x\n\n"], hang=True)
    with ScriptedChatServer([busy, hang]) as server:
        events = await _collect(_client(server.base_url, timeout=1.5))
    failed = events[-1]
    assert isinstance(failed.error, ProviderTimeoutError)
    assert re.search(r"did not answer in 2 tries over 1\.\d+ seconds\.$", str(failed.error))
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"retry-after": "3600"}, r"Try again in about an hour \((tomorrow )?at \d"),
        ({"retry-after": "600"}, r"Try again in about 10 minutes \((tomorrow )?at \d"),
        ({"retry-after-ms": "45000"}, r"Try again in 45 seconds\."),
    ],
)
async def test_a_rate_limit_too_long_to_wait_says_when_to_try_again(
    headers: dict[str, str], words: str
) -> None:
    limited = Reply.error(429, {"error": {"message": "slow down"}}, headers)
    with ScriptedChatServer([limited]) as server:
        events = await _collect(_client(server.base_url, timeout=5))
    error = events[-1].error
    assert isinstance(error, RateLimitError)
    # the clock time is today's or, close to midnight, tomorrow's: either is right
    assert re.search(words, str(error))
    assert len(server.requests) == 1  # not slept through


def test_when_to_retry_in_words() -> None:
    now = datetime(2025, 3, 3, 22, 10).astimezone()
    assert when_to_retry(1, now) == "Try again in 1 second."
    assert when_to_retry(59.2, now) == "Try again in 60 seconds."
    assert when_to_retry(60, now) == "Try again in a minute (at 22:11)."
    assert when_to_retry(3600, now) == "Try again in about an hour (at 23:10)."
    assert when_to_retry(5 * 3600, now) == "Try again in about 5 hours (tomorrow at 03:10)."
    later = now + timedelta(days=3)
    assert (
        when_to_retry(3 * 86400, now)
        == f"Try again in about 72 hours (on {later:%a %d %b} at 22:10)."
    )


@pytest.fixture
def huge_line() -> Iterator[bytes]:
    # Two megabytes of one event, sent in pieces, never ending its line.
    piece = b"x" * 65536
    yield piece


async def test_one_huge_event_is_refused_without_reading_it_all(huge_line: bytes) -> None:
    chunks = [OPENAI_START, b'data: {"choices": [{"delta": {"content": "', *[huge_line] * 160]
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server.base_url, timeout=10))
    failed = events[-1]
    assert isinstance(failed.error, ModelResponseFailed)
    assert "sent more than the app reads at once" in str(failed.error)
    assert "1,048,576 characters" in str(failed.error)
    assert len(server.requests) == 1


async def test_an_event_of_many_small_lines_is_refused_too() -> None:
    lines = b"".join(b"data: " + b"y" * 1000 + b"\n" for _ in range(1200))  # 1.2 MB, no end
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=[OPENAI_START, lines])
    with ScriptedChatServer([reply]) as server:
        events = await _collect(_client(server.base_url, timeout=10))
    assert "sent more than the app reads at once" in str(events[-1].error)


async def test_a_json_body_over_the_limit_is_refused() -> None:
    payload = {"choices": [{"message": {"content": "z" * (17 * 1024 * 1024)}}]}
    with ScriptedChatServer([Reply.json(payload)]) as server:
        client = _client(server.base_url, timeout=10)
        with pytest.raises(ModelResponseFailed, match="sent more than the app reads at once"):
            await client.complete(LLMRequest(model="x", messages=[Msg.user("q")]))


async def test_a_huge_error_body_is_cut_not_read_whole() -> None:
    body = json.dumps({"error": {"message": "bad " * 2_000_000}})
    with ScriptedChatServer([Reply.error(400, body)]) as server:
        events = await _collect(_client(server.base_url, timeout=10))
    error = events[-1].error
    assert "refused the request (HTTP 400)" in str(error)
    assert len(str(error)) < 2000

"""However the bytes of a recorded provider stream are cut into network chunks, the
reply comes out the same: same events, text, tool calls, finish reason and usage.

Each recorded stream in `../shared/fixtures/wire/<protocol>/` (those with an
`.expected.json` oracle: the multi-response recording is not one reply) is cut at
arbitrary byte positions, through the wire's framing in memory and over loopback HTTP,
and compared with the same stream read whole. A protocol is tested once its wire module
exists in `app/llm/wire/`. Mistral and Bedrock, with no public recordings, are tested on
streams built in their documented shapes (Bedrock's in AWS's binary event-stream
framing, whose prelude and checksums a cut can fall inside).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.llm import LLMRequest, Msg, create_provider_client
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.http_client import HttpWireClient, load_wire
from tests.llm_servers import (
    WIRE_FIXTURES,
    Reply,
    ScriptedChatServer,
    assert_well_formed,
    bedrock_events,
    fixture_body,
    mistral_events,
)

LABEL = "The recording"
WIRE_DIR = Path(__file__).resolve().parents[1] / "app" / "llm" / "wire"

# How each protocol is reached: the route and api_style that select its wire module.
ROUTES: dict[str, tuple[str, Literal["responses", "chat"]]] = {
    "openai_chat": ("openai-compatible/recorded-model", "chat"),
    "openai_responses": ("openai/recorded-model", "responses"),
    "anthropic": ("anthropic/recorded-model", "responses"),
    "gemini": ("gemini/recorded-model", "responses"),
    "mistral": ("mistral/mistral-small-latest", "chat"),
    "bedrock": ("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", "responses"),
}
CONTENT_TYPES = {"bedrock": "application/vnd.amazon.eventstream"}


@dataclass(frozen=True)
class Scripted:
    """A stream built in a provider's documented shape, standing in for a recording."""

    name: str
    body: bytes

    @property
    def stem(self) -> str:
        return self.name


SCRIPTED = {
    "mistral": [
        Scripted(
            "mistral-thinking-text-tools",
            b"".join(
                mistral_events(
                    thinking=["Weighing ", "the time zones… ", "ok"],
                    text=["Il est ", "midi à Paris — ", "je vérifie."],
                    calls=[("D681PevKs", "clock", '{"zone": "CET"}'), ("a1B2c3D4e", "clock", "{}")],
                    finish_reason="tool_calls",
                )
            ),
        )
    ],
    "bedrock": [
        Scripted(
            "bedrock-thinking-text-tools",
            b"".join(
                bedrock_events(
                    thinking=["Weighing ", "the zones… ", "ok"],
                    signature="EqQBCkYIBxgCKkA+sig/=",
                    text=["It is ", "noon in Paris — ", "checking."],
                    calls=[("tooluse_kZJMlvQm", "clock", ['{"zo', 'ne": "C', 'ET"}'])],
                    stop_reason="tool_use",
                    usage={
                        "inputTokens": 40,
                        "outputTokens": 20,
                        "totalTokens": 60,
                        "cacheReadInputTokens": 30,
                    },
                )
            ),
        ),
        Scripted("bedrock-text", b"".join(bedrock_events(text=["Bonjour, ", "ça va ?"]))),
    ],
}


def _recordings() -> list[Any]:
    cases = []
    for wire in ROUTES:
        if not (WIRE_DIR / f"{wire}.py").is_file():
            continue  # that protocol is not written yet
        for path in sorted((WIRE_FIXTURES / wire).glob("*")):
            oracle = path.with_name(path.name.removesuffix(path.suffix) + ".expected.json")
            if path.suffix in (".sse", ".jsonl") and oracle.is_file():
                cases.append(pytest.param(wire, path, id=f"{wire}/{path.stem}"))
        for scripted in SCRIPTED.get(wire, ()):
            cases.append(pytest.param(wire, scripted, id=f"{wire}/{scripted.name}"))
    return cases


def _body(source: Path | Scripted) -> bytes:
    return source.body if isinstance(source, Scripted) else fixture_body(source)


RECORDINGS = _recordings()
EXAMPLES = settings(
    max_examples=30,
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _cuts(body_length: int, max_cuts: int) -> st.SearchStrategy[list[int]]:
    """Where to cut the body: anywhere, including inside a UTF-8 character or a CRLF."""
    if body_length < 2:
        return st.just([])
    return st.lists(st.integers(1, body_length - 1), unique=True, max_size=max_cuts).map(sorted)


def _split(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    edges = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


class _ByteChunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


async def _parse_in_memory(wire_name: str, chunks: list[bytes]) -> list[ModelStreamEvent]:
    """The chunks as an HTTP body through the client's SSE framing and the wire's
    parser, driven the way `HttpWireClient` drives them."""
    wire = load_wire(wire_name)
    route = ROUTES[wire_name][0]
    provider, _, model = route.partition("/")
    parser = wire.new_parser(EventEmitter(provider, model), label=LABEL, secrets=())
    content_type = CONTENT_TYPES.get(wire_name, "text/event-stream")
    response = httpx.Response(
        200, headers={"content-type": content_type}, stream=_ByteChunks(chunks)
    )
    events: list[ModelStreamEvent] = []
    async for name, data in wire.FRAMING.events(response):
        if not parser.terminated:
            events += parser.feed_sse(name, data)
    events += parser.finish(done=True)
    return events


class _Loopback(ScriptedChatServer):
    """The scripted server answering every request with whatever `reply` is now, and
    one event loop with one client per protocol, kept for all examples (an httpx
    client is slow to make)."""

    reply = Reply()

    def __init__(self) -> None:
        super().__init__()
        self.runner = asyncio.Runner()
        self.clients: dict[str, HttpWireClient] = {}

    def _next_reply(self) -> Reply:
        return self.reply

    def client(self, wire_name: str) -> HttpWireClient:
        if wire_name not in self.clients:
            route, api_style = ROUTES[wire_name]
            client = create_provider_client(
                route, base_url=self.base_url, api_key="test-key", api_style=api_style
            )
            assert isinstance(client, HttpWireClient)
            self.clients[wire_name] = client
        return self.clients[wire_name]

    def close(self) -> None:
        for client in self.clients.values():
            self.runner.run(client.aclose())
        self.runner.close()
        self.stop()


@pytest.fixture(scope="module")
def loopback() -> Iterator[_Loopback]:
    server = _Loopback()
    server.start()
    try:
        yield server
    finally:
        server.close()


def _stream_over_http(
    loopback: _Loopback, wire_name: str, chunks: list[bytes]
) -> tuple[list[ModelStreamEvent], str]:
    """The chunks served on loopback and read by the real client; also its label."""
    content_type = CONTENT_TYPES.get(wire_name, "text/event-stream")
    loopback.reply = Reply(headers={"content-type": content_type}, chunks=chunks)
    client = loopback.client(wire_name)
    route = ROUTES[wire_name][0]
    request = LLMRequest(model=route, messages=[Msg.user("Hello")], stream=True)

    async def collect() -> list[ModelStreamEvent]:
        return [event async for event in client.stream(request)]

    return loopback.runner.run(collect()), client.label


def _events(events: list[ModelStreamEvent]) -> list[tuple[Any, ...]]:
    """What a consumer sees, without the ids and times that differ between runs."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        block = e.block
        usage = e.usage.model_dump() if e.usage is not None else None
        out.append(
            (
                e.kind,
                block.kind if block else None,
                block.tool_name if block else None,
                e.channel,
                e.delta,
                e.snapshot,
                usage,
                e.complete,
            )
        )
    return out


def _outcome(events: list[ModelStreamEvent], label: str = LABEL) -> tuple[Any, ...]:
    """The final reply: content (tool-call ids aside), finish reason, usage, reasoning;
    or the kind and wording of the failure (which names the server by `label`)."""
    last = events[-1]
    if last.kind != "response.completed":
        wording = str(last.error).replace(label, "<server>")
        return (last.kind, type(last.error).__name__, wording)
    response = last.response
    content = [
        block.model_dump(exclude={"id"}) if block.kind == "tool_use" else block.model_dump()
        for block in response.content
    ]
    return (
        last.kind,
        content,
        response.finish_reason,
        response.usage.model_dump(),
        response.reasoning,
    )


@functools.cache
def _whole(
    wire_name: str, path: Path | Scripted
) -> tuple[bytes, list[tuple[Any, ...]], tuple[Any, ...]]:
    body = _body(path)
    events = asyncio.run(_parse_in_memory(wire_name, [body]))
    assert_well_formed(events)
    return body, _events(events), _outcome(events)


def test_there_are_recordings_to_chunk() -> None:
    assert any(param.values[0] == "openai_chat" for param in RECORDINGS)


@pytest.mark.parametrize(("wire", "path"), RECORDINGS)
def test_byte_at_a_time_gives_the_same_reply(wire: str, path: Path | Scripted) -> None:
    body, events, outcome = _whole(wire, path)
    chunked = asyncio.run(_parse_in_memory(wire, [body[i : i + 1] for i in range(len(body))]))
    assert_well_formed(chunked)
    assert _outcome(chunked) == outcome
    assert _events(chunked) == events


@pytest.mark.parametrize(("wire", "path"), RECORDINGS)
@EXAMPLES
@given(data=st.data())
def test_any_chunking_through_the_sse_framing_gives_the_same_reply(
    wire: str, path: Path | Scripted, data: st.DataObject
) -> None:
    body, events, outcome = _whole(wire, path)
    cuts = data.draw(_cuts(len(body), max_cuts=200), label="cuts")
    chunked = asyncio.run(_parse_in_memory(wire, _split(body, cuts)))
    assert_well_formed(chunked)
    assert _outcome(chunked) == outcome
    assert _events(chunked) == events


@pytest.mark.parametrize(("wire", "path"), RECORDINGS)
@settings(EXAMPLES, max_examples=20)
@given(data=st.data())
def test_any_chunking_over_loopback_http_gives_the_same_reply(
    loopback: _Loopback, wire: str, path: Path | Scripted, data: st.DataObject
) -> None:
    body, events, outcome = _whole(wire, path)
    cuts = data.draw(_cuts(len(body), max_cuts=40), label="cuts")
    streamed, label = _stream_over_http(loopback, wire, _split(body, cuts))
    assert_well_formed(streamed)
    assert _outcome(streamed, label) == outcome
    assert _events(streamed) == events


@pytest.mark.parametrize(
    ("wire", "path"), [p for p in RECORDINGS if isinstance(p.values[1], Scripted)]
)
def test_the_built_streams_are_whole_replies(wire: str, path: Scripted) -> None:
    outcome = _whole(wire, path)[2]
    assert outcome[0] == "response.completed", outcome

"""Stream parsing speed and the client's added latency, for every wire protocol present.

    python bench/bench_parsers.py [--seconds 0.5] [--runs 300]

1. Throughput: each recorded stream in `../shared/fixtures/wire/<protocol>/` is replayed
   many times through a fresh `new_parser(...).feed_sse` (and, for the embedded model,
   the chat parser fed chunk dicts), on one core. Figures: SSE events in and stream
   events out per second (budget: at least 50,000 per core), and the same with the SSE
   framing of the raw bytes included.
2. Latency: a loopback server in the same process and event loop sends a recorded
   stream, pausing before the event that carries the first content; the gap from the
   server writing that event to `create_provider_client(...).stream` yielding the first
   `block.delta` is timed with one clock (p50/p95). The same gap for a bare socket read
   is the loopback floor; the difference is what the client adds (budget: well under
   1 ms).

It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.llm import LLMRequest, Msg, create_provider_client
from app.llm.errors import ValidationError
from app.llm.events import EventEmitter
from app.llm.http_client import load_wire
from app.llm.wire.base import Wire
from app.llm.wire.openai_chat import ChatStreamParser
from app.llm.wire.sse import iter_sse
from tests.llm_servers import WIRE_FIXTURES, fixture_body, split_events

ROUTES: dict[str, tuple[str, Any]] = {
    "openai_chat": ("openai-compatible/bench-model", "chat"),
    "openai_responses": ("openai/bench-model", "responses"),
    "anthropic": ("anthropic/bench-model", "responses"),
    "gemini": ("gemini/bench-model", "responses"),
}
BUDGET_EVENTS_PER_SECOND = 50_000
PAUSE = 0.005  # seconds the server waits before the first content event: the client idles


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def recordings(wire: str) -> list[Path]:
    """Single-reply recordings (those with an `.expected.json` oracle)."""
    paths = []
    for path in sorted((WIRE_FIXTURES / wire).glob("*")):
        oracle = path.with_name(path.name.removesuffix(path.suffix) + ".expected.json")
        if path.suffix in (".sse", ".jsonl") and oracle.is_file():
            paths.append(path)
    return paths


class _Body(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def _response(chunks: list[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Body(chunks))


async def sse_events(body: bytes) -> list[tuple[str, str]]:
    return [(sse.event, sse.data) async for sse in iter_sse(_response([body]))]


def _new_parser(wire: Wire, name: str) -> Any:
    provider, _, model = ROUTES[name][0].partition("/")
    return wire.new_parser(EventEmitter(provider, model), label="The recording", secrets=())


def replay(wire: Wire, name: str, events: list[tuple[str, str]]) -> int:
    parser = _new_parser(wire, name)
    out = 0
    for event, data in events:
        out += len(parser.feed_sse(event, data))
        if parser.terminated:
            break
    return out + len(parser.finish(done=True))


async def replay_bytes(wire: Wire, name: str, body: bytes) -> int:
    parser = _new_parser(wire, name)
    out = 0
    async for sse in iter_sse(_response([body])):
        if not parser.terminated:
            out += len(parser.feed_sse(sse.event, sse.data))
    return out + len(parser.finish(done=True))


def replay_chunks(chunks: list[dict[str, Any]]) -> int:
    """The embedded model's path: chunk dicts straight into the chat parser."""
    parser = ChatStreamParser(EventEmitter("local", "smollm2"), label="x", model_from_chunks=False)
    out = 0
    for chunk in chunks:
        out += len(parser.feed(chunk))
    return out + len(parser.finish(done=True))


def timed(run: Any, seconds: float) -> tuple[int, float]:
    """How many times `run()` ran in about `seconds`, and the time it took."""
    count, start = 0, time.perf_counter()
    while True:
        run()
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count, elapsed


def throughput(seconds: float) -> None:
    print(f"parser throughput, one core (budget ≥ {BUDGET_EVENTS_PER_SECOND:,} events/s)")
    print(f"  {'wire':<18}{'SSE in/s':>12}{'events out/s':>14}{'out/s w/ framing':>17}  recordings")
    for name in ROUTES:
        try:
            wire = load_wire(name)
        except ValidationError as exc:
            print(f"  {name:<18}(not available: {exc})")
            continue
        paths = recordings(name)
        sse_in = out = 0
        elapsed = 0.0
        framed_out, framed_elapsed = 0, 0.0
        for path in paths:
            body = fixture_body(path)
            events = asyncio.run(sse_events(body))
            per_run = replay(wire, name, events)
            runs, took = timed(lambda w=wire, n=name, e=events: replay(w, n, e), seconds)
            sse_in += runs * len(events)
            out += runs * per_run
            elapsed += took

            async def framed(w: Wire = wire, n: str = name, b: bytes = body) -> tuple[int, float]:
                count, start = 0, time.perf_counter()
                while time.perf_counter() - start < seconds:
                    await replay_bytes(w, n, b)
                    count += 1
                return count, time.perf_counter() - start

            runs, took = asyncio.run(framed())
            framed_out += runs * per_run
            framed_elapsed += took
        print(
            f"  {name:<18}{sse_in / elapsed:>12,.0f}{out / elapsed:>14,.0f}"
            f"{framed_out / framed_elapsed:>17,.0f}  {len(paths)}"
        )
    # The embedded model hands the chat parser dicts, with no HTTP or SSE in between.
    chunk_lists = []
    for path in recordings("openai_chat"):
        events = asyncio.run(sse_events(fixture_body(path)))
        chunk_lists.append([json.loads(data) for _, data in events if data != "[DONE]"])
    out, elapsed = 0, 0.0
    for chunks in chunk_lists:
        per_run = replay_chunks(chunks)
        runs, took = timed(lambda c=chunks: replay_chunks(c), seconds)
        out += runs * per_run
        elapsed += took
    total_in = sum(len(c) for c in chunk_lists)
    per_in = total_in / sum(replay_chunks(c) for c in chunk_lists)
    print(
        f"  {'local (dicts)':<18}{out * per_in / elapsed:>12,.0f}{out / elapsed:>14,.0f}"
        f"{'-':>17}  {len(chunk_lists)}"
    )


class LatencyServer:
    """A loopback HTTP server on the caller's event loop. Each request gets `prefix`,
    then after a pause `first` (timestamped just before it is written), then `rest`."""

    def __init__(self, prefix: list[bytes], first: bytes, rest: list[bytes]) -> None:
        self.prefix, self.first, self.rest = prefix, first, rest
        self.sent_at: list[float] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @staticmethod
    def _chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            writer.write(b"".join(self._chunk(c) for c in self.prefix))
            await writer.drain()
            await asyncio.sleep(PAUSE)
            self.sent_at.append(time.perf_counter())
            writer.write(self._chunk(self.first))
            await writer.drain()
            await asyncio.sleep(PAUSE)
            writer.write(b"".join(self._chunk(c) for c in self.rest) + b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _first_delta_split(
    wire: Wire, name: str, body: bytes
) -> tuple[list[bytes], bytes, list[bytes]]:
    """The body's SSE events, cut before the first one that gives a `block.delta`."""
    pieces = split_events(body)
    parser = _new_parser(wire, name)
    for index, piece in enumerate(pieces):
        for event, data in await sse_events(piece):
            if any(e.kind == "block.delta" for e in parser.feed_sse(event, data)):
                return pieces[:index], piece, pieces[index + 1 :]
    raise ValueError("no content in this recording")


async def floor_gaps(runs: int) -> list[float]:
    """The same measurement with a bare socket read: loopback plus the loop's wake-up."""
    got = asyncio.Event()
    gaps: list[float] = []
    sent_at = 0.0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent_at
        for _ in range(runs):
            got.clear()
            await asyncio.sleep(PAUSE)
            sent_at = time.perf_counter()
            writer.write(b"data: {}\n\n")
            await writer.drain()
            await got.wait()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
    for _ in range(runs):
        await reader.read(65536)
        gaps.append(time.perf_counter() - sent_at)
        got.set()
    writer.close()
    server.close()
    await server.wait_closed()
    return gaps


async def client_gaps(name: str, path: Path, runs: int) -> list[float]:
    wire = load_wire(name)
    prefix, first, rest = await _first_delta_split(wire, name, fixture_body(path))
    server = LatencyServer(prefix, first, rest)
    await server.start()
    route, api_style = ROUTES[name]
    client = create_provider_client(
        route, base_url=f"http://127.0.0.1:{server.port}/v1", api_key="bench", api_style=api_style
    )
    request = LLMRequest(model=route, messages=[Msg.user("Hello")], stream=True)
    gaps: list[float] = []
    try:
        for _ in range(runs + 5):  # the first few warm up
            received = None
            async for event in client.stream(request):
                if received is None and event.kind == "block.delta":
                    received = time.perf_counter()
            assert received is not None
            gaps.append(received - server.sent_at[-1])
    finally:
        await client.aclose()
        await server.stop()
    return gaps[5:]


def latency(runs: int) -> None:
    floor = asyncio.run(floor_gaps(runs))
    floor_p50 = statistics.median(floor)
    print(f"\nfirst content byte written → first block.delta yielded ({runs} runs, loopback)")
    print(
        f"  {'bare socket read (floor)':<44}p50 {floor_p50 * 1e6:7.0f} µs   "
        f"p95 {pct(floor, 0.95) * 1e6:7.0f} µs"
    )
    for name in ROUTES:
        try:
            load_wire(name)
        except ValidationError:
            continue
        paths = recordings(name)
        if not paths:
            continue
        path = max(paths, key=lambda p: p.stat().st_size)  # the longest reply of the wire
        gaps = asyncio.run(client_gaps(name, path, runs))
        p50, p95 = statistics.median(gaps), pct(gaps, 0.95)
        label = f"{name} ({path.stem[:24]})"
        print(
            f"  {label:<44}p50 {p50 * 1e6:7.0f} µs   p95 {p95 * 1e6:7.0f} µs   "
            f"added by the client: p50 {(p50 - floor_p50) * 1e6:5.0f} µs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="per recording")
    parser.add_argument("--runs", type=int, default=300, help="latency runs per wire")
    args = parser.parse_args()
    throughput(args.seconds)
    latency(args.runs)


if __name__ == "__main__":
    main()

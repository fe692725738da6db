"""A scripted model server on loopback, for tests of the provider layer.

It speaks real HTTP/1.1 on 127.0.0.1 from its own thread, so any test (sync or async,
any event loop) can point a client at `server.base_url`. Each request takes the next
scripted `Reply` (the last one repeats), whatever its path, so it serves every wire
protocol. It records every request's headers and body, and notices when a client
hangs up (`client_closed`).

    with ScriptedChatServer([Reply.error(503, {...}), Reply.text_stream(["Hi", "!"])]) as srv:
        client = create_provider_client("openai-compatible/x", base_url=srv.base_url,
                                        api_style="chat")
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import struct
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from app.llm.events import TERMINAL_KINDS

WIRE_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "wire"


def fixture_body(path: Path) -> bytes:
    """The HTTP body of a recorded stream: `.sse` as stored; `.jsonl` framed the way
    vercel/ai replays it (`data: <line>` events, then `data: [DONE]`)."""
    raw = path.read_bytes()
    if path.suffix == ".jsonl":
        lines = [line for line in raw.decode("utf-8").split("\n") if line.strip()]
        return "".join(f"data: {line}\n\n" for line in lines).encode() + b"data: [DONE]\n\n"
    return raw


def split_events(body: bytes) -> list[bytes]:
    """A body cut after each blank line, so each SSE event goes out in its own chunk."""
    sep = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
    parts = body.split(sep)
    pieces = [part + sep for part in parts[:-1]]
    if parts[-1]:
        pieces.append(parts[-1])
    return pieces


def chat_chunk(
    delta: dict[str, Any],
    *,
    finish_reason: str | None = None,
    model: str = "scripted-model",
    chunk_id: str = "chatcmpl-scripted",
) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def sse(payload: Any) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def anthropic_sse(payload: dict[str, Any]) -> bytes:
    """One Messages API event, framed as Anthropic sends it (`event:` then `data:`)."""
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def anthropic_events(
    pieces: Iterable[str],
    *,
    stop_reason: str | None = "end_turn",
    usage: dict[str, int] | None = None,
    model: str = "claude-scripted",
    end: bool = True,
) -> list[bytes]:
    """A text reply as Anthropic streams it; without `end` it stops after the deltas."""
    usage = usage or {"input_tokens": 12, "output_tokens": 1}
    message = {"id": "msg_scripted", "type": "message", "role": "assistant", "content": []}
    events = [
        anthropic_sse(
            {"type": "message_start", "message": {**message, "model": model, "usage": usage}}
        ),
        anthropic_sse(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
        anthropic_sse({"type": "ping"}),
    ]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        events.append(anthropic_sse({"type": "content_block_delta", "index": 0, "delta": delta}))
    if end:
        events.append(anthropic_sse({"type": "content_block_stop", "index": 0}))
        delta = {"stop_reason": stop_reason, "stop_sequence": None}
        events.append(
            anthropic_sse({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 7}})
        )
        events.append(anthropic_sse({"type": "message_stop"}))
    return events


# ------------------------------------------------------ Mistral's chunks ----


def mistral_sse(delta: dict[str, Any], **options: Any) -> bytes:
    """One Mistral chat-completion chunk (its ids are 32 hex digits, its model named)."""
    options.setdefault("chunk_id", "0c6d2b0e5f4a4f0b9a0e6f4f1c2d3e4f")
    options.setdefault("model", "mistral-small-latest")
    return sse(chat_chunk(delta, **options))


def mistral_events(
    *,
    text: Iterable[str] = (),
    thinking: Iterable[str] = (),
    calls: Iterable[tuple[str, str, str]] = (),
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
) -> list[bytes]:
    """A reply as Mistral streams it: thinking as `thinking` content parts, then text,
    then each tool call whole in one chunk (`(id, name, arguments)`), and the last
    chunk with the finish reason and the usage together."""
    events = [mistral_sse({"role": "assistant", "content": ""})]
    for piece in thinking:
        part = {"type": "thinking", "thinking": [{"type": "text", "text": piece}]}
        events.append(mistral_sse({"content": [part]}))
    events += [mistral_sse({"content": piece}) for piece in text]
    for index, (call_id, name, arguments) in enumerate(calls):
        call = {"id": call_id, "function": {"name": name, "arguments": arguments}, "index": index}
        events.append(mistral_sse({"tool_calls": [call]}))
    usage = usage or {"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}
    last = chat_chunk(
        {"content": ""},
        finish_reason=finish_reason,
        model="mistral-small-latest",
        chunk_id="0c6d2b0e5f4a4f0b9a0e6f4f1c2d3e4f",
    )
    events.append(sse({**last, "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events


# ------------------------------------------- AWS's event-stream framing ----
# Built from AWS's documented format: a prelude of the total length and the headers'
# length (big-endian uint32 each) and their CRC32, the headers (name length as one
# byte, name, value type 7 for a string, value length as uint16, value), the payload,
# and a CRC32 of everything before it.


def eventstream_message(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b""
    for name, value in headers.items():
        raw = value.encode()
        encoded += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_event(kind: str, payload: dict[str, Any]) -> bytes:
    """One ConverseStream event; AWS pads each payload with a `p` field of random length."""
    body = json.dumps({**payload, "p": "abcdefghijklmnopqrstuvwxyzABCDEF"[: 5 + len(kind) % 20]})
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return eventstream_message(headers, body.encode())


def bedrock_exception(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return eventstream_message(headers, json.dumps({"message": message}).encode())


def bedrock_events(
    *,
    text: Iterable[str] = (),
    thinking: Iterable[str] = (),
    signature: str | None = None,
    calls: Iterable[tuple[str, str, Iterable[str]]] = (),
    stop_reason: str | None = "end_turn",
    usage: dict[str, int] | None = None,
    end: bool = True,
) -> list[bytes]:
    """A reply as ConverseStream sends it: reasoning (its signature last), text, and tool
    calls (`(id, name, input JSON pieces)`), each block by its index; then `messageStop`
    and `metadata`. Without `end` it stops after the blocks."""
    events = [bedrock_event("messageStart", {"role": "assistant"})]
    index = 0
    thinking = list(thinking)
    if thinking or signature:
        for piece in thinking:
            delta = {"reasoningContent": {"text": piece}}
            events.append(
                bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            )
        if signature:
            delta = {"reasoningContent": {"signature": signature}}
            events.append(
                bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    text = list(text)
    if text:
        for piece in text:
            delta = {"text": piece}
            events.append(
                bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for call_id, name, pieces in calls:
        start = {"toolUse": {"toolUseId": call_id, "name": name}}
        events.append(
            bedrock_event("contentBlockStart", {"contentBlockIndex": index, "start": start})
        )
        for piece in pieces:
            delta = {"toolUse": {"input": piece}}
            events.append(
                bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    if end:
        events.append(bedrock_event("messageStop", {"stopReason": stop_reason}))
        usage = usage or {"inputTokens": 25, "outputTokens": 12, "totalTokens": 37}
        events.append(bedrock_event("metadata", {"usage": usage, "metrics": {"latencyMs": 321}}))
    return events


def verify_sigv4(request: RecordedRequest, secret_key: str, *, region: str, service: str) -> bool:
    """Whether the request's SigV4 signature is right for what arrived, checked the way
    AWS documents it (the canonical request, the string to sign, the derived key); for
    every service but S3 the path is encoded once more in the canonical request."""
    authorization = request.headers.get("authorization", "")
    if not authorization.startswith("AWS4-HMAC-SHA256 "):
        return False
    fields = dict(part.strip().split("=", 1) for part in authorization[17:].split(","))
    signed = fields["SignedHeaders"].split(";")
    path, _, query = request.path.partition("?")
    pairs = sorted(
        tuple(quote(x, safe="-_.~") for x in pair.split("=", 1))
        for pair in query.split("&")
        if pair
    )
    canonical = "\n".join(
        [
            request.method,
            quote(path, safe="/~"),
            "&".join("=".join(pair) for pair in pairs),
            "".join(f"{name}:{' '.join(request.headers[name].split())}\n" for name in signed),
            ";".join(signed),
            hashlib.sha256(request.body).hexdigest(),
        ]
    )
    stamp = request.headers["x-amz-date"]
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{secret_key}".encode()
    for part in (stamp[:8], region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return fields["Credential"].endswith(scope) and hmac.compare_digest(
        expected, fields["Signature"]
    )


@dataclass
class Reply:
    """One scripted answer. `chunks` go out one by one, `delay` seconds apart; with
    `drop` the connection is cut after them instead of ending the body properly; with
    `hang` the server sends nothing more and waits until the client hangs up."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    drop: bool = False
    streamed: bool = True
    hang: bool = False

    @classmethod
    def body(
        cls, body: bytes, *, delay: float = 0.0, drop: bool = False, hang: bool = False
    ) -> Reply:
        """Replay a raw event-stream body, one event per chunk."""
        return cls(
            headers={"content-type": "text/event-stream"},
            chunks=split_events(body),
            delay=delay,
            drop=drop,
            hang=hang,
        )

    @classmethod
    def anthropic_stream(
        cls, pieces: Iterable[str], *, delay: float = 0.0, **options: Any
    ) -> Reply:
        """A streamed Messages API text reply (see `anthropic_events`)."""
        return cls(
            headers={"content-type": "text/event-stream; charset=utf-8"},
            chunks=anthropic_events(pieces, **options),
            delay=delay,
        )

    @classmethod
    def bedrock_stream(
        cls, events: list[bytes], *, delay: float = 0.0, drop: bool = False
    ) -> Reply:
        """A ConverseStream reply: the event-stream messages, one per chunk."""
        return cls(
            headers={"content-type": "application/vnd.amazon.eventstream"},
            chunks=events,
            delay=delay,
            drop=drop,
        )

    @classmethod
    def mistral_stream(cls, events: list[bytes], *, delay: float = 0.0) -> Reply:
        return cls(headers={"content-type": "text/event-stream"}, chunks=events, delay=delay)

    @classmethod
    def json(cls, payload: Any, *, status: int = 200) -> Reply:
        """A whole JSON reply (a non-streamed request)."""
        return cls(
            status=status,
            headers={"content-type": "application/json"},
            chunks=[json.dumps(payload).encode()],
            streamed=False,
        )

    @classmethod
    def fixture(cls, path: Path, **options: Any) -> Reply:
        return cls.body(fixture_body(path), **options)

    @classmethod
    def text_stream(
        cls,
        pieces: Iterable[str],
        *,
        delay: float = 0.0,
        finish_reason: str = "stop",
        usage: dict[str, int] | None = None,
        model: str = "scripted-model",
    ) -> Reply:
        """A normal streamed answer made of `pieces`, then usage and `[DONE]`."""
        events = [sse(chat_chunk({"role": "assistant", "content": ""}, model=model))]
        events += [sse(chat_chunk({"content": piece}, model=model)) for piece in pieces]
        events.append(sse(chat_chunk({}, finish_reason=finish_reason, model=model)))
        usage = usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        events.append(sse({"id": "chatcmpl-scripted", "choices": [], "usage": usage}))
        events.append(b"data: [DONE]\n\n")
        return cls(headers={"content-type": "text/event-stream"}, chunks=events, delay=delay)

    @classmethod
    def error(
        cls, status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None
    ) -> Reply:
        text = body if isinstance(body, str) else json.dumps(body)
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        return cls(
            status=status,
            headers={"content-type": content_type, **(headers or {})},
            chunks=[text.encode()],
            streamed=False,
        )


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


class ScriptedChatServer:
    """The scripted server; use as a context manager (or `start()`/`stop()`)."""

    def __init__(self, replies: Iterable[Reply] = ()) -> None:
        self._replies = list(replies)
        self.requests: list[RecordedRequest] = []
        self.port = 0
        self.chunks_sent = 0
        self.client_closed = threading.Event()  # a client hung up before the reply ended
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> ScriptedChatServer:
        self._thread.start()

        async def serve() -> asyncio.AbstractServer:
            return await asyncio.start_server(self._handle, "127.0.0.1", 0)

        self._server = asyncio.run_coroutine_threadsafe(serve(), self._loop).result(5)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self) -> Reply:
        with self._lock:
            if not self._replies:
                return Reply.error(500, {"error": {"message": "no reply scripted"}})
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            with self._lock:
                self.requests.append(RecordedRequest(method, path, headers, body))
            await self._send(writer, self._next_reply(), reader)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.client_closed.set()
        finally:
            writer.close()

    async def _send(
        self, writer: asyncio.StreamWriter, reply: Reply, reader: asyncio.StreamReader
    ) -> None:
        reason = _REASONS.get(reply.status, "Scripted")
        head = [f"HTTP/1.1 {reply.status} {reason}", "Connection: close"]
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        if not reply.streamed:
            payload = b"".join(reply.chunks)
            head.append(f"Content-Length: {len(payload)}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            await writer.drain()
            return
        head.append("Transfer-Encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for chunk in reply.chunks:
            if reply.delay:
                await asyncio.sleep(reply.delay)
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
            self.chunks_sent += 1
        if reply.drop:
            await asyncio.sleep(0.01)
            writer.transport.abort()  # no terminating chunk: the body is cut short
            return
        if reply.hang:
            await reader.read()  # returns at EOF: the client closed the connection
            self.client_closed.set()
            return
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def assert_well_formed(events: list[Any]) -> None:
    """The stream rules: sequence 1..n without gaps, one scope, exactly one terminal event
    and it comes last."""
    assert events, "the stream yielded nothing"
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert len({e.scope.model_stream_id for e in events}) == 1
    terminal = [e for e in events if e.kind in TERMINAL_KINDS]
    assert len(terminal) == 1, [e.kind for e in events]
    assert events[-1] is terminal[0]

"""Loopback speech services that follow the public protocol documentation, for adapter tests.

- `DoubaoServer`: Volcengine streaming ASR (binary frames, v3 `sauc/bigmodel` flow).
- `DashScopeServer`: DashScope real-time recognition (run-task / task-started /
  binary audio / finish-task / result-generated / task-finished / task-failed).
- `TranscriptionServer`: OpenAI-compatible `POST /v1/audio/transcriptions` (multipart).

Each "recognizer" reveals its scripted transcript word by word as audio arrives, so
partial results grow the way a real service's do. Each server checks what the
client sends as strictly as its documentation says, answering a wrong request with
the protocol's own error; `fail` scripts the failures (an error frame, a socket
closed mid-stream, a malformed frame) after `fail_after` audio packets.

    async with DoubaoServer("hello there", fail="close") as server:
        config = SpeechConfig(enabled=True, adapter="doubao_asr", endpoint=server.url, ...)
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import io
import json
import threading
import time
import wave
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from app.speech.adapters.doubao_frames import (
    Compression,
    Flags,
    FrameError,
    MessageType,
    Serialization,
    decode,
    encode,
)


def words_heard(transcript: str, heard_bytes: int, total_bytes: int) -> str:
    """The first words of `transcript`, in proportion to the audio heard so far."""
    words = transcript.split()
    if total_bytes <= 0:
        return transcript
    count = min(len(words), (len(words) * heard_bytes) // total_bytes)
    return " ".join(words[:count])


def _reject(status: int, body: str) -> Response:
    return Response(status, "Unauthorized" if status == 401 else "Error", Headers(), body.encode())


class _WebSocketService:
    """A websockets server on 127.0.0.1 in the running event loop."""

    path = "/"

    def __init__(self) -> None:
        self._server: Server | None = None
        self.url = ""
        self.connections = 0
        self.handshake_headers: list[Headers] = []
        self.errors: list[str] = []  # protocol violations the server saw from the client

    async def __aenter__(self) -> Self:
        self._server = await serve(
            self._handle, "127.0.0.1", 0, process_request=self._process_request
        )
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}{self.path}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self.connections += 1
        self.handshake_headers.append(request.headers)
        return self.check_handshake(request)

    def check_handshake(self, request: Request) -> Response | None:
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        try:
            await self.session(ws)
        except Exception as exc:  # a test server never crashes the loop
            self.errors.append(f"server: {exc!r}")

    async def session(self, ws: ServerConnection) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------- Volcengine (Doubao)


class DoubaoServer(_WebSocketService):
    """Volcengine's streaming ASR: one full server response per audio packet, the last
    one flagged; an error message frame (type 0b1111) for anything wrong."""

    path = "/api/v3/sauc/bigmodel"

    def __init__(
        self,
        transcript: str = "hello there how are you",
        *,
        app_id: str = "app-123",
        access_key: str = "volc-token-123",
        expected_bytes: int = 32_000,
        fail: str | None = None,
        fail_after: int = 2,
        error_code: int = 45000081,
        error_message: str = "wait for next packet timeout",
    ) -> None:
        super().__init__()
        self.transcript = transcript
        self.app_id = app_id
        self.access_key = access_key
        self.expected_bytes = expected_bytes
        self.fail = fail
        self.fail_after = fail_after
        self.error_code = error_code
        self.error_message = error_message
        self.requests: list[dict[str, Any]] = []
        self.raw_frames: list[bytes] = []
        self.audio = bytearray()
        self.packets = 0
        self.finished = False

    def check_handshake(self, request: Request) -> Response | None:
        headers = request.headers
        if (
            headers.get("X-Api-App-Key") != self.app_id
            or headers.get("X-Api-Access-Key") != self.access_key
        ):
            return _reject(401, '{"error": "invalid X-Api-App-Key or X-Api-Access-Key"}')
        if not headers.get("X-Api-Resource-Id") or not headers.get("X-Api-Connect-Id"):
            return _reject(400, '{"error": "missing X-Api-Resource-Id or X-Api-Connect-Id"}')
        return None

    async def _error(self, ws: ServerConnection, code: int, message: str) -> None:
        await ws.send(
            encode(
                MessageType.SERVER_ERROR,
                message.encode(),
                serialization=Serialization.NONE,
                compression=Compression.NONE,
                error_code=code,
            )
        )
        await ws.close()

    def _response(self, sequence: int, *, last: bool) -> bytes:
        heard = words_heard(self.transcript, len(self.audio), self.expected_bytes)
        text = self.transcript if last else heard
        duration_ms = len(self.audio) * 1000 // 32_000
        body = {
            "audio_info": {"duration": duration_ms},
            "result": {
                "text": text,
                "utterances": [
                    {"definite": last, "start_time": 0, "end_time": duration_ms, "text": text}
                ]
                if text
                else [],
            },
        }
        return encode(
            MessageType.FULL_SERVER_RESPONSE,
            json.dumps(body).encode(),
            flags=Flags.LAST_WITH_SEQUENCE if last else Flags.POSITIVE_SEQUENCE,
            sequence=-abs(sequence) if last else sequence,
        )

    async def session(self, ws: ServerConnection) -> None:
        expected_sequence = 1
        async for message in ws:
            if isinstance(message, str):
                self.errors.append("text frame")
                await self._error(ws, 45000001, "binary frames only")
                return
            self.raw_frames.append(message)
            try:
                frame = decode(message)
            except FrameError as exc:
                self.errors.append(str(exc))
                await self._error(ws, 45000001, f"bad frame: {exc}")
                return
            if frame.sequence is not None and abs(frame.sequence) != expected_sequence:
                self.errors.append(f"sequence {frame.sequence}, expected {expected_sequence}")
                await self._error(ws, 45000001, "bad sequence")
                return
            expected_sequence += 1
            if frame.message_type == MessageType.FULL_CLIENT_REQUEST:
                request = frame.json()
                self.requests.append(request)
                audio = request.get("audio", {})
                if (
                    audio.get("format") != "pcm"
                    or audio.get("rate") != 16000
                    or audio.get("bits") != 16
                    or audio.get("channel") != 1
                    or not request.get("request", {}).get("model_name")
                ):
                    self.errors.append(f"bad request {request}")
                    await self._error(ws, 45000151, "unsupported audio format")
                    return
                continue
            if frame.message_type != MessageType.AUDIO_ONLY_REQUEST or not self.requests:
                self.errors.append("audio before the full client request")
                await self._error(ws, 45000001, "full client request first")
                return
            self.audio += frame.payload
            self.packets += 1
            if self.fail and self.packets >= self.fail_after:
                await self._fail(ws)
                return
            if frame.is_last:
                if not self.audio:
                    await self._error(ws, 45000002, "empty audio")
                    return
                self.finished = True
                await ws.send(self._response(frame.sequence or 0, last=True))
                await ws.close()
                return
            await ws.send(self._response(frame.sequence or 0, last=False))

    async def _fail(self, ws: ServerConnection) -> None:
        if self.fail == "error":
            await self._error(ws, self.error_code, self.error_message)
        elif self.fail == "close":
            await ws.close(1011, "internal error")
        elif self.fail == "drop":
            ws.transport.abort()  # no close frame at all
        elif self.fail == "malformed":
            await ws.send(b"\x11\x90")  # a header cut short
            await ws.wait_closed()
        elif self.fail == "bad_size":
            good = self._response(self.packets + 1, last=False)
            await ws.send(good[:-3])  # the payload size promises more than follows
            await ws.wait_closed()
        elif self.fail == "bad_json":
            await ws.send(
                encode(
                    MessageType.FULL_SERVER_RESPONSE,
                    b"{not json",
                    flags=Flags.POSITIVE_SEQUENCE,
                    sequence=self.packets + 1,
                )
            )
            await ws.wait_closed()
        elif self.fail == "text":
            await ws.send('{"result": {"text": "a text frame"}}')
            await ws.wait_closed()
        elif self.fail == "silent":
            await ws.wait_closed()


# ---------------------------------------------------------------- DashScope


class DashScopeServer(_WebSocketService):
    """DashScope real-time recognition: JSON events in text frames, audio in binary."""

    path = "/api-ws/v1/inference"

    def __init__(
        self,
        sentences: tuple[str, ...] = ("Hello there.", "How are you?"),
        *,
        api_key: str = "sk-" + "dashscope-test-123456",
        expected_bytes: int = 32_000,
        fail: str | None = None,
        fail_after: int = 3,
        error_code: str = "ResponseTimeout",
        error_message: str = "request timeout after 23 seconds.",
        heartbeats: bool = False,
    ) -> None:
        super().__init__()
        self.sentences = sentences
        self.api_key = api_key
        self.expected_bytes = expected_bytes
        self.fail = fail
        self.fail_after = fail_after
        self.error_code = error_code
        self.error_message = error_message
        self.heartbeats = heartbeats
        self.run_tasks: list[dict[str, Any]] = []
        self.actions: list[str] = []
        self.audio = bytearray()
        self.frames = 0
        self.finished = False
        self._ended = 0  # sentences already announced as ended

    def check_handshake(self, request: Request) -> Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _reject(401, '{"code": "InvalidApiKey", "message": "Invalid API-key."}')
        return None

    def _event(self, task_id: str, event: str, payload: dict[str, Any] | None = None) -> str:
        return json.dumps(
            {
                "header": {"task_id": task_id, "event": event, "attributes": {}},
                "payload": payload if payload is not None else {},
            }
        )

    def _failed(self, task_id: str, code: str, message: str) -> str:
        header = {
            "task_id": task_id,
            "event": "task-failed",
            "error_code": code,
            "error_message": message,
            "attributes": {},
        }
        return json.dumps({"header": header, "payload": {}})

    def _sentence(self, task_id: str, number: int, text: str, ended: bool) -> str:
        sentence: dict[str, Any] = {
            "begin_time": 0,
            "end_time": 1000 * number if ended else None,
            "text": text,
            "heartbeat": False,
            "sentence_end": ended,
            "words": [],
        }
        return self._event(
            task_id, "result-generated", {"output": {"sentence": sentence}, "usage": None}
        )

    def _sentence_events(self, task_id: str, *, final: bool) -> list[str]:
        """Result events for what has been heard since the last ones: each finished
        sentence ends once (sentence_end true), then the open one shows its words."""
        total = " ".join(self.sentences)
        heard = total if final else words_heard(total, len(self.audio), self.expected_bytes)
        heard_count = len(heard.split())
        events, start = [], 0
        for number, sentence in enumerate(self.sentences, start=1):
            count = len(sentence.split())
            if number <= self._ended:
                start += count
                continue
            taken = min(count, max(0, heard_count - start))
            if taken == 0:
                break
            ended = taken == count and (final or heard_count > start + count)
            text = " ".join(sentence.split()[:taken])
            events.append(self._sentence(task_id, number, text, ended))
            if not ended:
                break
            self._ended = number
            start += count
        return events

    async def session(self, ws: ServerConnection) -> None:
        task_id = ""
        started = False
        async for message in ws:
            if isinstance(message, bytes):
                if not started:
                    self.errors.append("audio before task-started")
                    await ws.send(self._failed(task_id, "InvalidParameter", "task not started"))
                    await ws.close()
                    return
                self.audio += message
                self.frames += 1
                if self.fail and self.frames >= self.fail_after:
                    await self._fail(ws, task_id)
                    return
                if self.heartbeats:
                    heartbeat = {"output": {"sentence": {"text": "", "heartbeat": True}}}
                    await ws.send(self._event(task_id, "result-generated", heartbeat))
                for event in self._sentence_events(task_id, final=False):
                    await ws.send(event)
                continue
            body = json.loads(message)
            header, payload = body.get("header", {}), body.get("payload", {})
            action = header.get("action")
            self.actions.append(str(action))
            if action == "run-task":
                task_id = header.get("task_id", "")
                self.run_tasks.append(body)
                params = payload.get("parameters", {})
                if (
                    header.get("streaming") != "duplex"
                    or not task_id
                    or payload.get("task_group") != "audio"
                    or payload.get("task") != "asr"
                    or payload.get("function") != "recognition"
                    or not payload.get("model")
                    or params.get("format") != "pcm"
                    or params.get("sample_rate") != 16000
                    or "input" not in payload
                ):
                    self.errors.append(f"bad run-task {body}")
                    await ws.send(self._failed(task_id, "InvalidParameter", "bad run-task"))
                    await ws.close()
                    return
                if self.fail == "run_failed":
                    await self._fail_task(ws, task_id)
                    return
                await asyncio.sleep(0.05)  # audio sent before task-started would show now
                started = True
                await ws.send(self._event(task_id, "task-started"))
            elif action == "finish-task":
                if header.get("task_id") != task_id:
                    self.errors.append("finish-task for another task")
                for event in self._sentence_events(task_id, final=True):
                    await ws.send(event)
                self.finished = True
                await ws.send(self._event(task_id, "task-finished", {"output": {}}))
                await ws.close()
                return
            else:
                self.errors.append(f"unknown action {action}")
                await ws.send(self._failed(task_id, "InvalidParameter", f"action {action}"))
                await ws.close()
                return

    async def _fail_task(self, ws: ServerConnection, task_id: str) -> None:
        await ws.send(self._failed(task_id, self.error_code, self.error_message))
        await ws.close()

    async def _fail(self, ws: ServerConnection, task_id: str) -> None:
        if self.fail == "failed":
            await self._fail_task(ws, task_id)
        elif self.fail == "close":
            await ws.close(1011, "internal error")
        elif self.fail == "drop":
            ws.transport.abort()
        elif self.fail == "malformed":
            await ws.send('{"header": {"task_id": "' + task_id + '", "event": "result-gen')
            await ws.wait_closed()
        elif self.fail == "no_event":
            await ws.send(json.dumps({"payload": {"output": {}}}))
            await ws.wait_closed()
        elif self.fail == "binary":
            await ws.send(b"\x00\x01")
            await ws.wait_closed()
        elif self.fail == "bad_sentence":
            await ws.send(self._event(task_id, "result-generated", {"output": {"sentence": 5}}))
            await ws.wait_closed()


# ---------------------------------------------------------------- OpenAI-compatible HTTP


@dataclass
class TranscriptionRequest:
    headers: dict[str, str]
    fields: dict[str, str]
    wav: bytes
    filename: str | None
    content_type: str | None

    def pcm(self) -> tuple[bytes, int, int, int]:
        """The WAV's frames, rate, channels and sample width."""
        with wave.open(io.BytesIO(self.wav), "rb") as wav:
            return (
                wav.readframes(wav.getnframes()),
                wav.getframerate(),
                wav.getnchannels(),
                wav.getsampwidth(),
            )


@dataclass
class TranscriptionServer:
    """`POST /v1/audio/transcriptions` on a loopback thread.

    `reply` is one of: "ok", "unauthorized" (the message echoes a masked key the
    way OpenAI's does), "rate_limited", "server_error", "bad_request", "not_json",
    "no_text", "drop" (the connection closes without an answer), "slow".
    """

    transcript: str = "hello there"
    api_key: str = "sk-" + "test-openai-1234567890"
    reply: str = "ok"
    requests: list[TranscriptionRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None
        self.base_url = ""

    def __enter__(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                server._handle(self, body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the timeout tests)

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        if handler.path != "/v1/audio/transcriptions":
            self._send(handler, 404, b'{"error": {"message": "not found"}}')
            return
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            b"Content-Type: "
            + handler.headers.get("Content-Type", "").encode()
            + b"\r\n\r\n"
            + body
        )
        fields: dict[str, str] = {}
        wav, filename, content_type = b"", None, None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            if name == "file":
                wav, filename, content_type = data, part.get_filename(), part.get_content_type()
            elif isinstance(name, str):
                fields[name] = data.decode()
        self.requests.append(
            TranscriptionRequest(dict(handler.headers), fields, wav, filename, content_type)
        )
        masked = self.api_key[:5] + "*" * 10 + self.api_key[-4:]
        if handler.headers.get("Authorization") != f"Bearer {self.api_key}" or (
            self.reply == "unauthorized"
        ):
            error = {
                "message": f"Incorrect API key provided: {masked}. You can find your API key "
                "at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
            self._send(handler, 401, json.dumps({"error": error}).encode())
        elif not wav or fields.get("model") is None:
            self._send(handler, 400, b'{"error": {"message": "file and model are required"}}')
        elif self.reply == "rate_limited":
            error = {"message": "Rate limit reached for whisper-1", "code": "rate_limit_exceeded"}
            self._send(handler, 429, json.dumps({"error": error}).encode(), {"retry-after": "7"})
        elif self.reply == "server_error":
            self._send(handler, 500, b'{"error": {"message": "The server had an error"}}')
        elif self.reply == "bad_request":
            error = {"message": f"Invalid file format. (key {self.api_key})"}
            self._send(handler, 400, json.dumps({"error": error}).encode())
        elif self.reply == "not_json":
            self._send(handler, 200, b"<html>a proxy page</html>")
        elif self.reply == "no_text":
            self._send(handler, 200, b'{"segments": []}')
        elif self.reply == "slow":
            time.sleep(1.5)
            self._send(handler, 200, json.dumps({"text": self.transcript}).encode())
        elif self.reply == "drop":
            handler.close_connection = True
            handler.connection.close()
        else:
            self._send(handler, 200, json.dumps({"text": self.transcript}).encode())


# ---------------------------------------------------------------- audio sources


class AudioSource:
    """PCM chunks from memory, optionally paced like a microphone, recording what
    happened to it: how many chunks were read and whether it was closed."""

    def __init__(self, chunks: list[bytes], *, delay: float = 0.0) -> None:
        self._chunks = chunks
        self.delay = delay
        self.read = 0
        self.exhausted = False
        self._finally_ran = False
        self._generator: AsyncGenerator[bytes, None] | None = None

    @classmethod
    def from_pcm(cls, pcm: bytes, *, chunk: int = 3200, delay: float = 0.0) -> AudioSource:
        return cls([pcm[i : i + chunk] for i in range(0, len(pcm), chunk)], delay=delay)

    def chunks(self) -> AsyncGenerator[bytes, None]:
        self._generator = self._run()
        return self._generator

    @property
    def closed(self) -> bool:
        """Closed by its reader: ran its `finally`, or was closed before it started."""
        frame = getattr(self._generator, "ag_frame", "never created")
        never_started_but_closed = frame is None
        return self._finally_ran or never_started_but_closed

    async def _run(self) -> AsyncGenerator[bytes, None]:
        try:
            for chunk in self._chunks:
                if self.delay:
                    await asyncio.sleep(self.delay)
                self.read += 1
                yield chunk
            self.exhausted = True
        finally:
            self._finally_ran = True


def tone(seconds: float, *, freq: float = 220.0, level: float = 0.3) -> bytes:
    """A sine tone as 16 kHz s16le PCM: audio for services whose transcript is scripted."""
    import numpy as np

    t = np.arange(int(seconds * 16_000)) / 16_000
    return (np.sin(2 * np.pi * freq * t) * level * 32767).astype("<i2").tobytes()

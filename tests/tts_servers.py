"""An OpenAI-compatible speech server on loopback, for tests of the `openai_speech` engine.

It follows `POST /v1/audio/speech` as OpenAI documents it: a bearer key, a JSON body
(`model`, `input`, `voice`, `response_format` defaulting to mp3, `speed` 0.25-4.0,
`input` at most 4096 characters), OpenAI-shaped error bodies, and audio streamed with
chunked transfer encoding: `pcm` is 24 kHz s16le mono, `wav` is a streaming WAV whose
sizes are unknown (0xFFFFFFFF). The "audio" is a tone whose length follows the text
and the speed, so a test can tell sentences and speeds apart. With `list_voices` it
also answers `GET /v1/audio/voices` the way self-hosted servers (Kokoro-FastAPI) do.

Faults for the next request(s): `fail_next("drop" | "wrong_content_type" |
"server_error" | "silent")`.

    with SpeechServer(api_key="sk-test") as srv:
        engine = OpenAISpeechEngine(endpoint=srv.base_url, api_key="sk-test")
"""

from __future__ import annotations

import asyncio
import json
import struct
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

SAMPLE_RATE = 24_000
SECONDS_PER_CHARACTER = 0.05
OPENAI_VOICES = (
    "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
)  # fmt: skip
MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
CONTENT_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/opus",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 500: "Error"}


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def tone(text: str, voice: str, speed: float) -> np.ndarray:
    """The server's "speech": a tone per voice, as long as the text takes to say."""
    seconds = max(0.2, len(text) * SECONDS_PER_CHARACTER / speed)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    pitch = 180 + 20 * (sum(voice.encode()) % 10)
    return (0.5 * np.sin(2 * np.pi * pitch * t) * 32767).astype("<i2")


def streaming_wav_header(sample_rate: int = SAMPLE_RATE) -> bytes:
    """A mono s16le WAV header with unknown sizes, as a server that streams writes it."""
    fmt = struct.pack("<HHIIHH", 1, 1, sample_rate, sample_rate * 2, 2, 16)
    return (
        b"RIFF" + struct.pack("<I", 0xFFFFFFFF) + b"WAVE"
        + b"fmt " + struct.pack("<I", len(fmt)) + fmt
        + b"data" + struct.pack("<I", 0xFFFFFFFF)
    )  # fmt: skip


def openai_error(message: str, *, kind: str, param: str | None, code: str | None) -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": kind, "param": param, "code": code}}
    ).encode()


class SpeechServer:
    """The server; a context manager (or `start()`/`stop()`).

    `api_key`: the bearer key it wants (None: any or none). `chunk_ms` of audio go out
    per chunk, `chunk_delay` seconds apart. `echo_key` makes the 401 message quote the
    key it got in full, as some self-hosted servers do.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        chunk_ms: int = 100,
        chunk_delay: float = 0.0,
        list_voices: list[Any] | None = None,
        echo_key: bool = False,
    ) -> None:
        self.api_key = api_key
        self.chunk_ms = chunk_ms
        self.chunk_delay = chunk_delay
        self.list_voices = list_voices
        self.echo_key = echo_key
        self.requests: list[RecordedRequest] = []
        self.chunks_sent = 0
        self.port = 0
        self._faults: list[str] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fail_next(self, *faults: str) -> None:
        with self._lock:
            self._faults.extend(faults)

    def start(self) -> SpeechServer:
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

    def __enter__(self) -> SpeechServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

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
            request = RecordedRequest(method, path, headers, body)
            with self._lock:
                self.requests.append(request)
                fault = self._faults.pop(0) if self._faults else None
            await self._answer(writer, request, fault)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _answer(
        self, writer: asyncio.StreamWriter, request: RecordedRequest, fault: str | None
    ) -> None:
        if fault == "silent":
            await asyncio.sleep(3600)  # never answers; the client's timeout ends it
        if self.api_key is not None:
            got = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if got != self.api_key:
                shown = got if self.echo_key else (got[:3] + "*" * 5 + got[-4:] if got else "")
                message = (
                    f"Incorrect API key provided: {shown}."
                    if got
                    else "You didn't provide an API key."
                )
                body = openai_error(
                    message, kind="invalid_request_error", param=None, code="invalid_api_key"
                )
                await self._send(writer, 401, "application/json", [body])
                return
        if request.method == "GET" and request.path == "/v1/audio/voices":
            if self.list_voices is None:
                await self._not_found(writer, request)
                return
            body = json.dumps({"voices": self.list_voices}).encode()
            await self._send(writer, 200, "application/json", [body])
            return
        if request.method != "POST" or request.path != "/v1/audio/speech":
            await self._not_found(writer, request)
            return
        if fault == "server_error":
            message = "The server had an error while processing your request. Sorry about that!"
            body = openai_error(message, kind="server_error", param=None, code=None)
            await self._send(writer, 500, "application/json", [body])
            return
        if fault == "wrong_content_type":
            await self._send(writer, 200, "text/html", [b"<html><body>Bad gateway</body></html>"])
            return
        problem = self._invalid(request)
        if problem is not None:
            status, body = problem
            await self._send(writer, status, "application/json", [body])
            return
        params = request.json()
        fmt = params.get("response_format", "mp3")
        speed = float(params.get("speed", 1.0))
        pcm = tone(params["input"], params["voice"], speed).tobytes()
        step = SAMPLE_RATE * 2 * self.chunk_ms // 1000
        pieces = [pcm[i : i + step] for i in range(0, len(pcm), step)]
        if fmt == "wav":
            pieces.insert(0, streaming_wav_header())
        elif fmt != "pcm":
            pieces = [b"\xff\xfb\x90\x00" + bytes(413)]  # an MP3 frame header and silence
        if fault == "drop":
            pieces = pieces[: max(1, len(pieces) // 2)]
        await self._send(writer, 200, CONTENT_TYPES[fmt], pieces, drop=fault == "drop")

    def _invalid(self, request: RecordedRequest) -> tuple[int, bytes] | None:
        try:
            params = request.json()
        except ValueError:
            return 400, openai_error(
                "We could not parse the JSON body of your request.",
                kind="invalid_request_error", param=None, code=None,
            )  # fmt: skip
        for name in ("model", "input", "voice"):
            if not isinstance(params.get(name), str) or not params[name]:
                return 400, openai_error(
                    f"Missing required parameter: '{name}'.",
                    kind="invalid_request_error", param=name, code="missing_required_parameter",
                )  # fmt: skip
        if params["model"] not in MODELS:
            return 404, openai_error(
                f"The model `{params['model']}` does not exist or you do not have access to it.",
                kind="invalid_request_error", param=None, code="model_not_found",
            )  # fmt: skip
        if len(params["input"]) > 4096:
            return 400, openai_error(
                "Invalid 'input': string too long. Expected a string with maximum length 4096.",
                kind="invalid_request_error", param="input", code="string_above_max_length",
            )  # fmt: skip
        if params["voice"] not in OPENAI_VOICES:
            supported = ", ".join(f"'{v}'" for v in OPENAI_VOICES)
            return 400, openai_error(
                f"Invalid value: '{params['voice']}'. Supported values are: {supported}.",
                kind="invalid_request_error", param="voice", code="invalid_value",
            )  # fmt: skip
        if params.get("response_format", "mp3") not in CONTENT_TYPES:
            return 400, openai_error(
                f"Invalid value: '{params['response_format']}'.",
                kind="invalid_request_error", param="response_format", code="invalid_value",
            )  # fmt: skip
        speed = params.get("speed", 1.0)
        if not isinstance(speed, int | float) or not 0.25 <= speed <= 4.0:
            return 400, openai_error(
                f"Invalid 'speed': {speed}. Expected a value between 0.25 and 4.0.",
                kind="invalid_request_error", param="speed", code="invalid_value",
            )  # fmt: skip
        return None

    async def _not_found(self, writer: asyncio.StreamWriter, request: RecordedRequest) -> None:
        message = f"Invalid URL ({request.method} {request.path})"
        body = openai_error(message, kind="invalid_request_error", param=None, code=None)
        await self._send(writer, 404, "application/json", [body])

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        content_type: str,
        pieces: list[bytes],
        *,
        drop: bool = False,
    ) -> None:
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "Connection: close",
            f"Content-Type: {content_type}",
            "Transfer-Encoding: chunked",
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for piece in pieces:
            if self.chunk_delay and status == 200:
                await asyncio.sleep(self.chunk_delay)
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
            self.chunks_sent += 1
        if drop:
            await asyncio.sleep(0.01)
            writer.transport.abort()  # no terminating chunk: the body is cut short
            return
        writer.write(b"0\r\n\r\n")
        await writer.drain()

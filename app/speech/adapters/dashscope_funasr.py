"""DashScope real-time speech recognition (Paraformer / Fun-ASR) over its WebSocket protocol.

The session, as DashScope documents it: connect with `Authorization: Bearer <key>`;
send a `run-task` JSON text frame (task group `audio`, task `asr`, function
`recognition`, model and audio parameters); wait for `task-started`; send the
audio as binary frames of 100 ms; send `finish-task`; read `result-generated`
events (`payload.output.sentence` with `text` and `sentence_end`; heartbeats
skipped) until `task-finished`. `task-failed` carries `error_code` and
`error_message`. Audio goes in binary frames: the ASR task has no
`continue-task` (that event carries text input for synthesis tasks).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from websockets.asyncio.client import ClientConnection

from app.audio.format import BYTES_PER_SECOND, SAMPLE_RATE
from app.redaction import redact
from app.speech.adapters._ws import next_message, open_socket, send, stop_sender
from app.speech.contract import SpeechConfig, TranscriptionEvent, language_code, require_key
from app.speech.errors import (
    SpeechAuthError,
    SpeechError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
)
from app.speech.pcm import Packetizer

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "wss://dashscope.aliyuncs.com/api-ws/v1/inference"
DEFAULT_MODEL = "paraformer-realtime-v2"
SERVICE = "DashScope speech recognition"
PACKET_BYTES = BYTES_PER_SECOND // 10  # 100 ms, as the documentation recommends

_AUTH_CODES = ("invalidapikey", "unauthorized", "accessdenied", "invalidtoken")
_RATE_CODES = ("throttling", "ratelimit", "toomanyrequests")


def task_failed_error(header: dict[str, Any], secrets: list[str | None]) -> SpeechError:
    """The typed error for a `task-failed` event."""
    code = str(header.get("error_code") or "unknown")
    message = redact(str(header.get("error_message") or ""), secrets)
    detail = f"{code}: {message}" if message else code
    flat = code.lower().replace("_", "").replace(".", "")
    if any(word in flat for word in _AUTH_CODES):
        return SpeechAuthError(f"{SERVICE} refused the API key ({detail}); check speech.api_key")
    if any(word in flat for word in _RATE_CODES):
        return SpeechRateLimitError(f"{SERVICE} is rate limiting requests ({detail})")
    return SpeechServiceError(f"{SERVICE} failed the task ({detail})", code=code)


def join_sentences(parts: list[str]) -> str:
    """Sentences as one text: a space between Latin-script sentences, none between CJK ones."""
    text = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if text and text[-1].isascii() and part[0].isascii():
            text += " "
        text += part
    return text


class Transcript:
    """The whole text so far from `result-generated` sentences, each revised until it ends."""

    def __init__(self) -> None:
        self._sentences: dict[int, str] = {}
        self._current = 1  # the open sentence's number when the service gives no sentence_id

    def update(self, sentence: dict[str, Any]) -> None:
        text = sentence.get("text")
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise SpeechProtocolError(f"{SERVICE} sent a sentence whose text is not text")
        number = sentence.get("sentence_id")
        if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
            number = self._current
            if sentence.get("sentence_end"):
                self._current += 1
        self._sentences[number] = text

    @property
    def text(self) -> str:
        return join_sentences([self._sentences[n] for n in sorted(self._sentences)])


class DashScopeFunASRAdapter:
    """One WebSocket task per utterance; the adapter connects nothing until `stream()`."""

    name = "dashscope_funasr"

    def __init__(self, config: SpeechConfig, *, api_key: str | None) -> None:
        self._config = config
        self._key = api_key
        self.endpoint = config.endpoint or DEFAULT_ENDPOINT
        self.model = config.model or DEFAULT_MODEL

    def run_task(self, task_id: str) -> dict[str, Any]:
        parameters: dict[str, Any] = {"format": "pcm", "sample_rate": SAMPLE_RATE}
        language = language_code(self._config.language)
        if language:
            parameters["language_hints"] = [language]
        return {
            "header": {"action": "run-task", "task_id": task_id, "streaming": "duplex"},
            "payload": {
                "task_group": "audio",
                "task": "asr",
                "function": "recognition",
                "model": self.model,
                "parameters": parameters,
                "input": {},
            },
        }

    async def stream(self, audio: AsyncIterator[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        secrets: list[str | None] = [self._key]
        key = require_key(self._key, "dashscope_funasr", SERVICE)
        ws = await open_socket(
            self.endpoint,
            {"Authorization": f"Bearer {key}"},
            service=SERVICE,
            secrets=secrets,
            timeout=self._config.timeout_s,
        )
        sender: asyncio.Task[None] | None = None
        text = ""
        try:
            task_id = uuid.uuid4().hex
            run_task = json.dumps(self.run_task(task_id))
            await send(ws, run_task, service=SERVICE, secrets=secrets)
            # Audio may only follow task-started: until then nothing is sent.
            event, _ = await self._next_event(ws, None, task_id, secrets)
            if event != "task-started":
                raise SpeechProtocolError(
                    f"{SERVICE} answered run-task with {event!r}, not task-started"
                )
            sender = asyncio.create_task(_send_audio(ws, audio, task_id))
            transcript = Transcript()
            shown = ""
            while True:
                event, payload = await self._next_event(ws, sender, task_id, secrets)
                if event == "task-finished":
                    text = transcript.text
                    break
                if event != "result-generated":
                    log.info("%s sent an event this adapter ignores: %s", SERVICE, event)
                    continue
                sentence = _sentence(payload)
                if sentence is None or sentence.get("heartbeat") is True:
                    continue
                transcript.update(sentence)
                if transcript.text != shown:
                    shown = transcript.text
                    yield TranscriptionEvent(text=shown, is_final=False)
        finally:
            await stop_sender(sender)
            await ws.close()
        yield TranscriptionEvent(text=text, is_final=True)

    async def _next_event(
        self,
        ws: ClientConnection,
        sender: asyncio.Task[None] | None,
        task_id: str,
        secrets: list[str | None],
    ) -> tuple[str, dict[str, Any]]:
        message = await next_message(
            ws, sender, service=SERVICE, timeout=self._config.timeout_s, secrets=secrets
        )
        if isinstance(message, bytes):
            raise SpeechProtocolError(f"{SERVICE} sent a binary frame; its events are JSON text")
        try:
            body = json.loads(message)
        except json.JSONDecodeError as exc:
            raise SpeechProtocolError(f"{SERVICE} sent a malformed event: {exc}") from exc
        header = body.get("header") if isinstance(body, dict) else None
        if not isinstance(header, dict) or not isinstance(header.get("event"), str):
            raise SpeechProtocolError(f"{SERVICE} sent an event without header.event")
        if header.get("task_id") not in (None, task_id):
            raise SpeechProtocolError(f"{SERVICE} sent an event for another task")
        if header["event"] == "task-failed":
            raise task_failed_error(header, secrets)
        payload = body.get("payload")
        return header["event"], payload if isinstance(payload, dict) else {}


def _sentence(payload: dict[str, Any]) -> dict[str, Any] | None:
    output = payload.get("output")
    if output is None:
        return None
    sentence = output.get("sentence") if isinstance(output, dict) else None
    if sentence is None:
        return None
    if not isinstance(sentence, dict):
        raise SpeechProtocolError(f"{SERVICE} sent a result whose sentence is not an object")
    return sentence


async def _send_audio(ws: ClientConnection, chunks: AsyncIterator[bytes], task_id: str) -> None:
    """Binary audio frames of 100 ms, then `finish-task`."""
    packets = Packetizer(PACKET_BYTES)
    async for chunk in chunks:
        for packet in packets.feed(chunk):
            await ws.send(packet)
    rest = packets.rest()
    if rest:
        await ws.send(rest)
    finish = {
        "header": {"action": "finish-task", "task_id": task_id, "streaming": "duplex"},
        "payload": {"input": {}},
    }
    await ws.send(json.dumps(finish))

"""Volcengine (Doubao) streaming speech recognition over its binary WebSocket protocol.

The session: connect with the `X-Api-*` headers; send a full client request
(gzip JSON: user, audio format, request options); send the audio as audio-only
requests of 200 ms with rising sequence numbers, the last one flagged with a
negative sequence; read full server responses whose `result.text` is the whole
text so far, until the one flagged last. An error message frame carries the
service's error code. Framing lives in `doubao_frames`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from websockets.asyncio.client import ClientConnection

from app.audio.format import BYTES_PER_SECOND, SAMPLE_RATE
from app.redaction import redact
from app.speech.adapters._ws import next_message, open_socket, send, stop_sender
from app.speech.adapters.doubao_frames import (
    Flags,
    Frame,
    FrameError,
    MessageType,
    decode,
    encode,
)
from app.speech.contract import SpeechConfig, TranscriptionEvent, require_key
from app.speech.errors import (
    SpeechAuthError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
)
from app.speech.pcm import Packetizer

DEFAULT_ENDPOINT = "wss://openspeech.bytedance.com/api/v3/sauc/bigmodel"
DEFAULT_RESOURCE_ID = "volc.bigasr.sauc.duration"
DEFAULT_MODEL = "bigmodel"
SERVICE = "Volcengine speech recognition"
# The service wants 100–200 ms per audio packet.
PACKET_BYTES = BYTES_PER_SECOND // 5

SUCCESS_CODES = (0, 1000, 20000000)
ERROR_CODES = {
    45000001: "the request parameters are invalid",
    45000002: "the audio is empty",
    45000081: "it waited too long for the next audio packet",
    45000151: "the audio format is not one it accepts",
    55000031: "the server is busy",
}
# Languages the service names explicitly; without one it hears Chinese and English.
LANGUAGES = {
    "en": "en-US",
    "ja": "ja-JP",
    "id": "id-ID",
    "es": "es-MX",
    "pt": "pt-BR",
    "de": "de-DE",
    "fr": "fr-FR",
    "ko": "ko-KR",
    "fil": "fil-PH",
    "ms": "ms-MY",
    "th": "th-TH",
    "ar": "ar-SA",
}


def service_error(code: int, message: str, secrets: list[str | None]) -> Exception:
    """The typed error for an error frame's code and message."""
    words = ERROR_CODES.get(code) or (
        "the server failed internally" if 55000000 <= code < 56000000 else "it refused the request"
    )
    detail = redact(message, secrets)
    text = f"{SERVICE} stopped: {words} (code {code}" + (f": {detail})" if detail else ")")
    if code == 55000031:
        return SpeechRateLimitError(text)
    return SpeechServiceError(text, code=code)


class DoubaoASRAdapter:
    """One WebSocket session per utterance; the adapter connects nothing until `stream()`."""

    name = "doubao_asr"

    def __init__(self, config: SpeechConfig, *, api_key: str | None) -> None:
        self._config = config
        self._key = api_key
        self.endpoint = config.endpoint or DEFAULT_ENDPOINT
        self.model = config.model or DEFAULT_MODEL

    def request_payload(self) -> dict[str, Any]:
        """The full client request's JSON: who asks, the audio format, the options."""
        audio: dict[str, Any] = {
            "format": "pcm",
            "codec": "raw",
            "rate": SAMPLE_RATE,
            "bits": 16,
            "channel": 1,
        }
        language = (self._config.language or "").replace("_", "-")
        base = language.split("-")[0].lower()
        if base and base not in ("zh", "en"):
            audio["language"] = language if "-" in language else LANGUAGES.get(base, language)
        return {
            "user": {"uid": "companion"},
            "audio": audio,
            "request": {
                "model_name": self.model,
                "enable_itn": True,
                "enable_punc": True,
                "show_utterances": True,
                "result_type": "full",
            },
        }

    def _headers(self, key: str, app_id: str) -> dict[str, str]:
        return {
            "X-Api-App-Key": app_id,
            "X-Api-Access-Key": key,
            "X-Api-Resource-Id": self._config.resource_id or DEFAULT_RESOURCE_ID,
            "X-Api-Connect-Id": str(uuid.uuid4()),
        }

    async def stream(self, audio: AsyncIterator[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        secrets: list[str | None] = [self._key]
        key = require_key(self._key, "doubao_asr", SERVICE)
        if not self._config.app_id:
            raise SpeechAuthError(
                f"{SERVICE} needs speech.app_id (the APP ID from the Volcengine "
                "console) as well as the access token in speech.api_key"
            )
        ws = await open_socket(
            self.endpoint,
            self._headers(key, self._config.app_id),
            service=SERVICE,
            secrets=secrets,
            timeout=self._config.timeout_s,
        )
        sender: asyncio.Task[None] | None = None
        text = ""
        try:
            request = json.dumps(self.request_payload()).encode()
            first_request = encode(
                MessageType.FULL_CLIENT_REQUEST,
                request,
                flags=Flags.POSITIVE_SEQUENCE,
                sequence=1,
            )
            await send(ws, first_request, service=SERVICE, secrets=secrets)
            sender = asyncio.create_task(_send_audio(ws, audio))
            shown = ""
            while True:
                message = await next_message(
                    ws, sender, service=SERVICE, timeout=self._config.timeout_s, secrets=secrets
                )
                frame = _parse(message, secrets)
                if frame.message_type == MessageType.SERVER_ACK:
                    continue
                current = _result_text(frame, secrets)
                if frame.is_last:
                    text = current
                    break
                if current != shown:
                    shown = current
                    yield TranscriptionEvent(text=shown, is_final=False)
        finally:
            await stop_sender(sender)
            await ws.close()
        yield TranscriptionEvent(text=text, is_final=True)


async def _send_audio(ws: ClientConnection, chunks: AsyncIterator[bytes]) -> None:
    """Audio-only requests of `PACKET_BYTES`; one packet is held back to go out flagged last."""
    packets = Packetizer(PACKET_BYTES)
    sequence = 1  # the full client request was 1
    pending: bytes | None = None

    async for chunk in chunks:
        for packet in packets.feed(chunk):
            if pending is not None:
                sequence += 1
                await ws.send(
                    encode(
                        MessageType.AUDIO_ONLY_REQUEST,
                        pending,
                        flags=Flags.POSITIVE_SEQUENCE,
                        sequence=sequence,
                    )
                )
            pending = packet
    rest = packets.rest()
    if rest:
        if pending is not None:
            sequence += 1
            await ws.send(
                encode(
                    MessageType.AUDIO_ONLY_REQUEST,
                    pending,
                    flags=Flags.POSITIVE_SEQUENCE,
                    sequence=sequence,
                )
            )
        pending = rest
    sequence += 1
    await ws.send(
        encode(
            MessageType.AUDIO_ONLY_REQUEST,
            pending or b"",
            flags=Flags.LAST_WITH_SEQUENCE,
            sequence=-sequence,
        )
    )


def _parse(message: str | bytes, secrets: list[str | None]) -> Frame:
    if isinstance(message, str):
        raise SpeechProtocolError(f"{SERVICE} sent a text frame; its protocol is binary only")
    try:
        frame = decode(message)
    except FrameError as exc:
        raise SpeechProtocolError(f"{SERVICE} sent a malformed frame: {exc}") from exc
    if frame.message_type == MessageType.SERVER_ERROR:
        raise service_error(frame.error_code or 0, frame.error_message, secrets)
    if frame.message_type not in (MessageType.FULL_SERVER_RESPONSE, MessageType.SERVER_ACK):
        raise SpeechProtocolError(
            f"{SERVICE} sent a client message type ({frame.message_type.name})"
        )
    return frame


def _result_text(frame: Frame, secrets: list[str | None]) -> str:
    """The whole text so far from a full server response (`result.text`)."""
    try:
        body = frame.json()
    except FrameError as exc:
        raise SpeechProtocolError(f"{SERVICE} sent a malformed response: {exc}") from exc
    if not isinstance(body, dict):
        raise SpeechProtocolError(f"{SERVICE} sent a response that is not a JSON object")
    code = body.get("code")
    if isinstance(code, int) and code not in SUCCESS_CODES:
        raise service_error(code, str(body.get("message", "")), secrets)
    result = body.get("result")
    if result is None:
        return ""
    # The v2 protocol sends a list of results; v3 one object.
    if isinstance(result, list):
        result = result[0] if result else {}
    if not isinstance(result, dict):
        raise SpeechProtocolError(f"{SERVICE} sent a response whose result is not an object")
    text = result.get("text", "")
    if not isinstance(text, str):
        raise SpeechProtocolError(f"{SERVICE} sent a response whose result.text is not text")
    return text.strip()

"""OpenAI-compatible `POST {endpoint}/audio/transcriptions`: OpenAI, Groq, self-hosted whisper.

The utterance is collected, wrapped in a WAV file and sent as one multipart
request (`file`, `model`, `language`, `response_format=json`); the answer's
`text` is the one final event. The endpoint includes the API version path,
e.g. `https://api.openai.com/v1` or `https://api.groq.com/openai/v1`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.http_bodies import BodyTooLarge, read_body
from app.redaction import redact
from app.speech.contract import SpeechConfig, TranscriptionEvent, language_code, require_key
from app.speech.errors import (
    SpeechAuthError,
    SpeechConnectionError,
    SpeechError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
)
from app.speech.pcm import pcm_to_wav

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
DEFAULT_MODEL = "whisper-1"
# A transcript of any utterance is far smaller; a server sending more is not one.
MAX_BODY_BYTES = 1024 * 1024
_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _server_message(response: httpx.Response) -> str:
    """The error text the server gave (`{"error": {"message"}}` or similar), else the body."""
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text[:300].strip()
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(error.get(key), str):
                    return str(error[key])
        if isinstance(error, str):
            return error
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return json.dumps(body)[:300]


def _retry_after(response: httpx.Response) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = response.headers.get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue
    return None


def error_for_response(response: httpx.Response, host: str, key: str) -> SpeechError:
    """The typed error for a non-2xx answer, in words and without the key."""
    status = response.status_code
    if status in (401, 403):
        # Providers echo (part of) the key in this message: leave it out entirely.
        return SpeechAuthError(
            f"The speech service at {host} refused the API key (HTTP {status}); "
            "check speech.api_key"
        )
    detail = redact(_server_message(response), [key])
    if status == 429:
        return SpeechRateLimitError(
            f"The speech service at {host} is rate limiting requests (HTTP 429): {detail}",
            retry_after=_retry_after(response),
        )
    if status >= 500:
        return SpeechServiceError(
            f"The speech service at {host} failed (HTTP {status}): {detail}", code=status
        )
    return SpeechServiceError(
        f"The speech service at {host} refused the request (HTTP {status}): {detail}",
        code=status,
    )


class OpenAITranscribeAdapter:
    """One HTTP request per utterance; the adapter connects nothing until `stream()`."""

    name = "openai_transcribe"

    def __init__(
        self,
        config: SpeechConfig,
        *,
        api_key: str | None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._config = config
        self._key = api_key
        self._transport = transport
        self.endpoint = (config.endpoint or DEFAULT_ENDPOINT).rstrip("/")
        self.model = config.model or DEFAULT_MODEL
        self._host = urlsplit(self.endpoint).netloc or self.endpoint

    async def stream(self, audio: AsyncIterator[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        key = require_key(self._key, "openai_transcribe", f"the speech service {self._host}")
        pcm = b"".join([chunk async for chunk in audio])
        text = await self._transcribe(pcm, key) if pcm else ""
        yield TranscriptionEvent(text=text, is_final=True)

    async def _transcribe(self, pcm: bytes, key: str) -> str:
        data = {"model": self.model, "response_format": "json"}
        language = language_code(self._config.language)
        if language:
            data["language"] = language
        files = {"file": ("speech.wav", pcm_to_wav(pcm), "audio/wav")}
        url = f"{self.endpoint}/audio/transcriptions"
        try:
            headers = {"Authorization": f"Bearer {key}"}
            timeout = self._config.timeout_s
            async with (
                httpx.AsyncClient(timeout=timeout, transport=self._transport) as http,
                http.stream("POST", url, data=data, files=files, headers=headers) as streamed,
            ):
                failed = streamed.status_code >= 400
                raw = await read_body(streamed, MAX_BODY_BYTES, cut=failed)
            # The body read (decoded already) as a whole response, for the error mapping.
            kept = {k: v for k, v in streamed.headers.items() if k.lower() not in _FRAMING}
            response = httpx.Response(streamed.status_code, headers=kept, content=raw)
        except BodyTooLarge as exc:
            raise SpeechProtocolError(
                f"The speech service at {self._host} sent more than a transcript ({exc})"
            ) from exc
        except httpx.TimeoutException as exc:
            raise SpeechConnectionError(
                f"The speech service at {self._host} did not answer within "
                f"{self._config.timeout_s:g} s"
            ) from exc
        except httpx.HTTPError as exc:
            raise SpeechConnectionError(
                f"Could not reach the speech service at {self._host}: "
                f"{redact(str(exc) or type(exc).__name__, [key])}"
            ) from exc
        if response.status_code >= 400:
            raise error_for_response(response, self._host, key)
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SpeechProtocolError(
                f"The speech service at {self._host} answered with something that is not "
                "JSON; is speech.endpoint an OpenAI-compatible /v1 address?"
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise SpeechProtocolError(
                f"The speech service at {self._host} answered without a transcript text"
            )
        return str(body["text"]).strip()

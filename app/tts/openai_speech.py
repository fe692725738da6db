"""Speech from any OpenAI-compatible `POST {endpoint}/audio/speech` server.

That covers OpenAI itself and self-hosted servers (Kokoro-FastAPI, openedai-speech,
LocalAI, ...). Audio is asked for as raw `pcm` (24 kHz s16le mono) or `wav` and read
in chunks as it arrives, so the first words can play before the sentence is done.
Errors are in words and never carry the API key.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from app.http_bodies import BodyTooLarge, read_body
from app.tts.audio_files import WavStreamReader
from app.tts.engine import (
    SynthesizedAudio,
    TTSError,
    TTSUnavailableError,
    Voice,
    join_chunks,
    speed_for_rate,
)

OPENAI_ENDPOINT = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini-tts"
DEFAULT_VOICE = "alloy"
PCM_SAMPLE_RATE = 24_000  # what `response_format: "pcm"` means in the API
OPENAI_VOICES = (
    "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
)  # fmt: skip
# Kokoro-style voice names start with a language letter ("af_heart", "bm_george").
_KOKORO_LANGUAGES = {
    "a": "en-us", "b": "en-gb", "e": "es", "f": "fr", "h": "hi", "i": "it", "j": "ja",
    "p": "pt-br", "z": "zh",
}  # fmt: skip
_PCM_TYPES = {"audio/pcm", "audio/l16", "audio/raw", "application/octet-stream", ""}
_WAV_TYPES = {"audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"}
_MIN_CHUNK_BYTES = 2 * PCM_SAMPLE_RATE // 50  # 20 ms: do not hand out slivers
# What is read of one answer: no sentence lasts ten minutes (at 48 kHz), no error
# message or voice list is a megabyte.
MAX_SENTENCE_AUDIO_BYTES = 10 * 60 * 48_000 * 2
MAX_TEXT_BYTES = 1024 * 1024


def is_openai(endpoint: str) -> bool:
    return urlsplit(endpoint).hostname == "api.openai.com"


class OpenAISpeechEngine:
    """`TTSEngine` (streaming) over `POST {endpoint}/audio/speech`.

    `endpoint` is the API base (".../v1"); `audio_format` is what the server is asked
    for. `transport` lets tests plug in an httpx transport.
    """

    def __init__(
        self,
        *,
        endpoint: str = OPENAI_ENDPOINT,
        api_key: str | None = None,
        model: str | None = None,
        voice: str | None = None,
        rate: int | None = None,
        audio_format: Literal["pcm", "wav"] = "pcm",
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base = endpoint.rstrip("/")
        base = base.removesuffix("/audio/speech")
        self.endpoint = base
        self._key = api_key or None
        self._model = model or DEFAULT_MODEL
        self._default_voice = voice or DEFAULT_VOICE
        self._default_rate = rate
        self._format = audio_format
        self._timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._closed = False

    def _http(self) -> httpx.AsyncClient:
        if self._closed:
            raise TTSError("the speech engine is closed")
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport)
        return self._client

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def _clean(self, text: str) -> str:
        """Text for the user: never the key, even when a server echoes it."""
        if self._key:
            text = text.replace(self._key, "****")
        return text

    async def load(self) -> None:
        """Nothing to load: the server does the work."""

    async def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]:
        if not text.strip():
            raise TTSError("nothing to say")
        if not self._key and is_openai(self.endpoint):
            raise TTSUnavailableError(
                "OpenAI speech needs an API key: set tts.api_key or OPENAI_API_KEY"
            )
        payload = {
            "model": self._model,
            "input": text,
            "voice": voice or self._default_voice,
            "response_format": self._format,
            "speed": speed_for_rate(rate or self._default_rate, low=0.25, high=4.0),
        }
        url = f"{self.endpoint}/audio/speech"
        got_audio = False
        try:
            async with self._http().stream(
                "POST", url, json=payload, headers=self._headers()
            ) as response:
                if response.status_code >= 400:
                    raise await self._error_for(response)
                async for chunk in self._audio_chunks(response):
                    got_audio = True
                    yield chunk
        except httpx.TimeoutException:
            raise TTSError(f"the speech server at {self.endpoint} did not answer in time") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            if got_audio or isinstance(exc, httpx.RemoteProtocolError):
                raise TTSError(
                    "the speech server closed the connection before the sentence was complete"
                ) from None
            raise TTSError(self._clean(f"the speech server connection failed ({exc})")) from None
        except httpx.TransportError as exc:
            raise TTSError(
                self._clean(f"could not reach the speech server at {self.endpoint} ({exc})")
            ) from None
        if not got_audio:
            raise TTSError("the speech server sent no audio")

    async def _audio_chunks(self, response: httpx.Response) -> AsyncIterator[SynthesizedAudio]:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type.startswith(("application/json", "text/")):
            body = await read_body(response, MAX_TEXT_BYTES, cut=True)
            raise TTSError(
                self._clean(
                    f"the speech server answered with {content_type}, not audio"
                    + (f": {_message(body)}" if _message(body) else "")
                )
            )
        if content_type not in _PCM_TYPES | _WAV_TYPES:
            raise TTSError(
                f"the speech server sent {content_type} audio; Companion asked for "
                f"{self._format} and plays only wav or raw pcm"
            )
        wav: WavStreamReader | None = None
        decided = False
        head = b""
        pending = b""
        sample_rate = PCM_SAMPLE_RATE
        received = 0
        async for data in response.aiter_bytes():
            received += len(data)
            if received > MAX_SENTENCE_AUDIO_BYTES:
                raise TTSError(
                    "the speech server sent more than ten minutes of audio for one sentence; "
                    "it was stopped"
                )
            if not decided:
                head += data
                if len(head) < 4:
                    continue
                decided = True
                # Go by the bytes, not the label: some servers send WAV when asked for pcm.
                if head[:4] == b"RIFF":
                    wav = WavStreamReader()
                elif content_type in _WAV_TYPES or self._format == "wav":
                    raise TTSError("the speech server sent something that is not WAV audio")
                data, head = head, b""
            if wav is not None:
                data = wav.feed(data)
                if wav.format is not None:
                    sample_rate = wav.format.sample_rate
            pending += data
            if len(pending) >= _MIN_CHUNK_BYTES:
                usable = len(pending) - len(pending) % 2
                yield SynthesizedAudio(pending[:usable], sample_rate)
                pending = pending[usable:]
        if head:
            raise TTSError("the speech server sent too little data to be audio")
        if len(pending) >= 2:
            yield SynthesizedAudio(pending[: len(pending) - len(pending) % 2], sample_rate)

    async def _error_for(self, response: httpx.Response) -> TTSError:
        body = await read_body(response, MAX_TEXT_BYTES, cut=True)
        status = response.status_code
        detail = _message(body)
        said = f": {detail}" if detail else ""
        if status in (401, 403):
            return TTSUnavailableError(
                self._clean(f"the speech server refused the API key (HTTP {status}){said}")
            )
        if status == 404:
            return TTSUnavailableError(
                self._clean(
                    f"the speech server has no such model or address (HTTP 404){said}; check "
                    "tts.endpoint (it ends in /v1) and tts.model"
                )
            )
        if status == 429:
            return TTSError(self._clean(f"the speech server is busy or out of quota (429){said}"))
        if status >= 500:
            return TTSError(self._clean(f"the speech server failed (HTTP {status}){said}"))
        return TTSError(self._clean(f"the speech server refused the sentence ({status}){said}"))

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        return join_chunks([chunk async for chunk in self.stream(text, voice, rate)])

    async def voices(self) -> list[Voice]:
        """A self-hosted server's own list (`GET /audio/voices`) where it has one, else
        OpenAI's voices."""
        if not is_openai(self.endpoint):
            try:
                async with self._http().stream(
                    "GET", f"{self.endpoint}/audio/voices", headers=self._headers()
                ) as response:
                    ok = response.status_code == 200
                    body = await read_body(response, MAX_TEXT_BYTES) if ok else b""
                listed = _parse_voices(json.loads(body)) if ok else []
                if listed:
                    return listed
            except (httpx.HTTPError, ValueError, BodyTooLarge):
                pass
        return [Voice(id=v, name=v.capitalize(), languages=("en",)) for v in OPENAI_VOICES]

    async def aclose(self) -> None:
        self._closed = True
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _message(body: bytes) -> str:
    """The human part of an error body: OpenAI's `{"error": {"message"}}`, FastAPI's
    `{"detail": ...}`, or the start of plain text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    found: Any = data
    if isinstance(data, dict):
        found = data.get("error", data.get("detail", data.get("message", data)))
        if isinstance(found, dict):
            found = found.get("message", found.get("detail", found))
        if isinstance(found, list) and found and isinstance(found[0], dict):
            found = found[0].get("msg", found[0])
    return " ".join(str(found).split())[:200]


def _parse_voices(data: Any) -> list[Voice]:
    items = data.get("voices", data.get("data", [])) if isinstance(data, dict) else data
    found = []
    for item in items if isinstance(items, list) else []:
        langs: tuple[str, ...]
        if isinstance(item, str):
            vid, name, langs = item, item, ()
        elif isinstance(item, dict) and (item.get("id") or item.get("name")):
            vid = str(item.get("id") or item.get("name"))
            name = str(item.get("name") or vid)
            raw = item.get("languages") or item.get("language") or ()
            langs = tuple(str(x).lower() for x in ([raw] if isinstance(raw, str) else raw))
        else:
            continue
        if not langs and len(vid) > 2 and vid[2] == "_" and vid[0] in _KOKORO_LANGUAGES:
            langs = (_KOKORO_LANGUAGES[vid[0]],)
        found.append(Voice(id=vid, name=name, languages=langs))
    return found

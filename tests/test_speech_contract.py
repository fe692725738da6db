"""Every rule of the speech contract (DESIGN.md, speech), for every adapter.

The cloud adapters talk to loopback servers that follow each service's documented
protocol (`tests/speech_servers.py`); whisper_local runs the real tiny.en model.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from app.audio.wav import read_wav_16k
from app.speech import (
    SpeechAuthError,
    SpeechClient,
    SpeechConfig,
    SpeechError,
    SpeechInputError,
    TranscriptionEvent,
    create_speech_client,
)
from app.speech.pcm import pcm_to_wav
from tests.speech_servers import (
    AudioSource,
    DashScopeServer,
    DoubaoServer,
    TranscriptionServer,
    tone,
)

CLOUD = ["openai_transcribe", "doubao_asr", "dashscope_funasr"]
ALL = ["whisper_local", *CLOUD]
TRANSCRIPT = "hello there how are you"


@dataclass
class Service:
    adapter: str
    config: SpeechConfig
    key: str | None
    server: Any  # the loopback server, None for whisper_local
    audio: bytes  # audio that this service transcribes as `expected`
    expected: str

    def client(self, **changes: Any) -> SpeechClient:
        config = self.config.model_copy(update=changes)
        client = create_speech_client(config, api_key=self.key)
        assert client is not None
        return client

    def connections(self) -> int:
        if isinstance(self.server, TranscriptionServer):
            return len(self.server.requests)
        return int(self.server.connections) if self.server is not None else 0


@contextlib.asynccontextmanager
async def started(adapter: str, question_pcm: bytes, **fail: Any) -> AsyncIterator[Service]:
    """The service for `adapter`, running on loopback for the length of the block."""
    audio = tone(1.0)
    if adapter == "whisper_local":
        config = SpeechConfig(enabled=True, partial_interval_s=0.3)
        yield Service(adapter, config, None, None, question_pcm, "weather")
    elif adapter == "openai_transcribe":
        with TranscriptionServer(TRANSCRIPT, **fail) as http:
            config = SpeechConfig(enabled=True, adapter=adapter, endpoint=http.base_url)
            yield Service(adapter, config, http.api_key, http, audio, TRANSCRIPT)
    elif adapter == "doubao_asr":
        async with DoubaoServer(TRANSCRIPT, **fail) as doubao:
            config = SpeechConfig(
                enabled=True, adapter=adapter, endpoint=doubao.url, app_id=doubao.app_id
            )
            yield Service(adapter, config, doubao.access_key, doubao, audio, TRANSCRIPT)
    else:
        async with DashScopeServer(("Hello there.", "How are you?"), **fail) as dash:
            config = SpeechConfig(enabled=True, adapter=adapter, endpoint=dash.url)
            yield Service(adapter, config, dash.api_key, dash, audio, "Hello there. How are you?")


@pytest.fixture(scope="module")
def question_pcm(question_wav: Path) -> bytes:
    return read_wav_16k(question_wav)


async def collect(client: SpeechClient, source: AudioSource) -> list[TranscriptionEvent]:
    return [event async for event in client.stream(source.chunks())]


# ----------------------------------------------------------------- success


@pytest.mark.parametrize("adapter", ALL)
async def test_a_successful_utterance_ends_with_exactly_one_final(
    adapter: str, question_pcm: bytes
) -> None:
    async with started(adapter, question_pcm) as service:
        source = AudioSource.from_pcm(service.audio)
        events = await collect(service.client(), source)
    assert [e.is_final for e in events].count(True) == 1
    assert events[-1].is_final
    assert service.expected.lower() in events[-1].text.lower()
    assert source.closed


@pytest.mark.parametrize("adapter", CLOUD[1:])
async def test_text_is_the_whole_current_text_not_a_delta(adapter: str) -> None:
    async with started(adapter, b"") as service:
        source = AudioSource.from_pcm(service.audio, chunk=1600)
        events = await collect(service.client(), source)
    partials = [e.text for e in events if not e.is_final]
    assert len(partials) >= 2
    final_words = events[-1].text.split()
    for earlier, later in itertools.pairwise(partials):
        assert len(later.split()) >= len(earlier.split())  # grows, never a fragment
    for text in partials:
        assert final_words[: len(text.split())] == text.split()


@pytest.mark.parametrize("adapter", ALL)
async def test_no_audio_at_all_is_one_empty_final_and_no_connection(adapter: str) -> None:
    async with started(adapter, b"") as service:
        events = await collect(service.client(), AudioSource([]))
        assert service.connections() == 0
    assert events == [TranscriptionEvent(text="", is_final=True)]


# ----------------------------------------------------------------- bad input

BAD_CHUNKS = {
    "odd byte count": b"\x00\x01\x02",
    "empty chunk": b"",
    "wav header": pcm_to_wav(b"\x00\x00" * 800),
}


@pytest.mark.parametrize("adapter", ALL)
@pytest.mark.parametrize("bad", BAD_CHUNKS, ids=list(BAD_CHUNKS))
async def test_bad_pcm_is_refused_without_a_final_and_the_audio_is_closed(
    adapter: str, bad: str, question_pcm: bytes
) -> None:
    async with started(adapter, question_pcm) as service:
        source = AudioSource([tone(0.5), BAD_CHUNKS[bad], tone(0.5)])
        events: list[TranscriptionEvent] = []
        with pytest.raises(SpeechInputError):
            async for event in service.client().stream(source.chunks()):
                events.append(event)
    assert not any(e.is_final for e in events)
    assert source.closed and not source.exhausted


def test_a_wav_header_is_named_in_the_error() -> None:
    from app.speech.pcm import check_chunk

    with pytest.raises(SpeechInputError, match="WAV header"):
        check_chunk(pcm_to_wav(b"\x00\x00" * 10))
    assert check_chunk(b"RIFF" + b"\x00" * 10) == b"RIFF" + b"\x00" * 10  # just samples


# ----------------------------------------------------------------- stopping early


@pytest.mark.parametrize("adapter", ["whisper_local", "doubao_asr", "dashscope_funasr"])
async def test_a_consumer_that_stops_early_closes_the_audio(
    adapter: str, question_pcm: bytes
) -> None:
    async with started(adapter, question_pcm) as service:
        long_audio = service.audio * 8
        source = AudioSource.from_pcm(long_audio, chunk=1600, delay=0.05)
        first: TranscriptionEvent | None = None
        async with contextlib.aclosing(service.client().stream(source.chunks())) as events:
            async for event in events:
                first = event
                break
        assert source.closed
    assert first is not None and not first.is_final
    assert not source.exhausted


@pytest.mark.parametrize("adapter", ALL)
async def test_cancellation_is_never_reported_as_final(adapter: str, question_pcm: bytes) -> None:
    async with started(adapter, question_pcm) as service:
        source = AudioSource.from_pcm(service.audio * 4, chunk=1600, delay=0.02)
        events: list[TranscriptionEvent] = []

        async def listen() -> None:
            async for event in service.client().stream(source.chunks()):
                events.append(event)

        task = asyncio.create_task(listen())
        await asyncio.sleep(0.4)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert not any(e.is_final for e in events)
    assert source.closed


FAILURES = {
    "openai_transcribe": {"reply": "server_error"},
    "doubao_asr": {"fail": "error"},
    "dashscope_funasr": {"fail": "failed"},
}


@pytest.mark.parametrize("adapter", ALL)
async def test_a_failure_is_an_error_never_a_final(
    adapter: str, question_pcm: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with started(adapter, question_pcm, **FAILURES.get(adapter, {})) as service:
        changes = {"model_path": tmp_path / "missing"} if adapter == "whisper_local" else {}
        source = AudioSource.from_pcm(service.audio)
        events: list[TranscriptionEvent] = []
        with pytest.raises(SpeechError):
            async for event in service.client(**changes).stream(source.chunks()):
                events.append(event)
    assert not any(e.is_final for e in events)
    assert source.closed
    if service.key:
        assert "failed" in caplog.text and service.key not in caplog.text


# ----------------------------------------------------------------- keys and connecting


@pytest.mark.parametrize("adapter", ALL)
async def test_construction_and_load_connect_nothing(adapter: str, question_pcm: bytes) -> None:
    async with started(adapter, question_pcm) as service:
        client = service.client()
        if adapter != "whisper_local":
            await client.load()
        assert service.connections() == 0


def test_construction_needs_no_reachable_server() -> None:
    for adapter in CLOUD:
        config = SpeechConfig(enabled=True, adapter=adapter, endpoint="ws://127.0.0.1:9")
        assert isinstance(create_speech_client(config), SpeechClient)


@pytest.mark.parametrize("adapter", CLOUD)
async def test_the_key_comes_from_provider_api_keys_of_this_adapter(adapter: str) -> None:
    async with started(adapter, b"") as service:
        keys = {adapter: SecretStr(service.key or "")}
        config = service.config.model_copy(update={"provider_api_keys": keys})
        client = create_speech_client(config)
        assert client is not None
        events = [e async for e in client.stream(AudioSource.from_pcm(service.audio).chunks())]
    assert events[-1].is_final and events[-1].text == service.expected


@pytest.mark.parametrize("adapter", CLOUD)
async def test_an_explicit_key_wins_over_the_configured_one(adapter: str) -> None:
    async with started(adapter, b"") as service:
        keys = {adapter: SecretStr("sk-stale-key-000000")}
        config = service.config.model_copy(update={"provider_api_keys": keys})
        client = create_speech_client(config, api_key=service.key)
        assert client is not None
        events = [e async for e in client.stream(AudioSource.from_pcm(service.audio).chunks())]
    assert events[-1].text == service.expected


@pytest.mark.parametrize("adapter", CLOUD)
async def test_the_chat_models_key_is_never_used(
    adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with started(adapter, b"") as service:
        assert service.key is not None
        # the chat model's key, wherever the app keeps it, must not leak into speech
        monkeypatch.setenv("OPENAI_API_KEY", service.key)
        monkeypatch.setenv("DASHSCOPE_API_KEY", service.key)
        monkeypatch.setenv("COMPANION_CHAT__API_KEY", service.key)
        other = "openai_transcribe" if adapter != "openai_transcribe" else "doubao_asr"
        config = service.config.model_copy(
            update={"provider_api_keys": {other: SecretStr(service.key)}}
        )
        client = create_speech_client(config)
        assert client is not None
        source = AudioSource.from_pcm(service.audio)
        with pytest.raises(SpeechAuthError, match="No API key"):
            async for _ in client.stream(source.chunks()):
                pass
        assert service.connections() == 0
        assert source.closed


def test_disabled_speech_gives_no_client_for_any_adapter() -> None:
    for adapter in ALL:
        assert create_speech_client(SpeechConfig(enabled=False, adapter=adapter)) is None

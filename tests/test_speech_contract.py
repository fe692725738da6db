"""Every rule of the speech contract (DESIGN.md, speech), for every adapter.

The cloud adapters talk to loopback servers that follow each service's documented
protocol (`tests/speech_servers.py`); whisper_local runs the real tiny.en model;
`custom` is a recognizer of our own that checks nothing itself, behind
`SpeechClient(adapter)`: the rules hold for it because the client enforces them.
The last part runs adapters that break the rules on purpose: the client catches each.
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
from app.config import SpeechSettings
from app.speech import (
    SpeechAdapterError,
    SpeechAuthError,
    SpeechClient,
    SpeechConfig,
    SpeechError,
    SpeechInputError,
    SpeechServiceError,
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
BUILT_IN = ["whisper_local", *CLOUD]
ALL = [*BUILT_IN, "custom"]
TRANSCRIPT = "hello there how are you"


class PlainAdapter:
    """A custom recognizer that checks, closes and guards nothing: it reveals one word of
    its transcript per 0.2 s of audio and gives the whole transcript as the final.
    With `fail`, it raises a service error after 0.4 s of audio."""

    name = "plain"

    def __init__(self, transcript: str = TRANSCRIPT, *, fail: bool = False) -> None:
        self.words = transcript.split()
        self.fail = fail
        self.loaded = False

    async def load(self) -> None:
        self.loaded = True

    async def stream(self, audio: AsyncIterator[bytes]) -> AsyncIterator[TranscriptionEvent]:
        heard = 0
        async for chunk in audio:
            heard += len(chunk)
            if self.fail and heard >= 12_800:
                raise SpeechServiceError("the plain recognizer failed (scripted)")
            count = min(len(self.words), heard // 6_400)
            if count:
                yield TranscriptionEvent(text=" ".join(self.words[:count]), is_final=False)
        yield TranscriptionEvent(text=" ".join(self.words) if heard else "", is_final=True)


@dataclass
class Service:
    adapter: str
    config: SpeechConfig
    key: str | None
    server: Any  # the loopback server, None for whisper_local
    audio: bytes  # audio that this service transcribes as `expected`
    expected: str

    def client(self, **changes: Any) -> SpeechClient:
        if self.adapter == "custom":
            return SpeechClient(PlainAdapter(**changes))
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
    elif adapter == "custom":
        yield Service(adapter, SpeechConfig(enabled=True), None, None, audio, TRANSCRIPT)
    else:
        async with DashScopeServer(("Hello there.", "How are you?"), **fail) as dash:
            config = SpeechConfig(enabled=True, adapter=adapter, endpoint=dash.url)
            yield Service(adapter, config, dash.api_key, dash, audio, "Hello there. How are you?")


@pytest.fixture(scope="module")
def question_pcm(question_wav: Path) -> bytes:
    return read_wav_16k(question_wav)


async def collect(client: SpeechClient, source: AudioSource) -> list[TranscriptionEvent]:
    return [event async for event in client.stream(source.chunks())]


async def cancelled_after(
    seconds: float, client: SpeechClient, source: AudioSource
) -> list[TranscriptionEvent]:
    """What the consumer got before its task was cancelled `seconds` into the stream."""
    events: list[TranscriptionEvent] = []

    async def listen() -> None:
        async for event in client.stream(source.chunks()):
            events.append(event)

    task = asyncio.create_task(listen())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return events


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


@pytest.mark.parametrize("adapter", [*CLOUD[1:], "custom"])
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


@pytest.mark.parametrize("adapter", ["whisper_local", "doubao_asr", "dashscope_funasr", "custom"])
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
        events = await cancelled_after(0.4, service.client(), source)
    assert not any(e.is_final for e in events)
    assert source.closed


FAILURES = {
    "openai_transcribe": {"reply": "server_error"},
    "doubao_asr": {"fail": "error"},
    "dashscope_funasr": {"fail": "failed"},
    "custom": {"fail": True},
}


@pytest.mark.parametrize("adapter", ALL)
async def test_a_failure_is_an_error_never_a_final(
    adapter: str, question_pcm: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with started(adapter, question_pcm, **FAILURES.get(adapter, {})) as service:
        changes: dict[str, Any] = FAILURES["custom"] if adapter == "custom" else {}
        if adapter == "whisper_local":
            changes = {"model_path": tmp_path / "missing"}
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
        await client.aclose()


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
    for adapter in BUILT_IN:
        assert create_speech_client(SpeechConfig(enabled=False, adapter=adapter)) is None


@pytest.mark.parametrize("adapter", CLOUD)
async def test_the_users_speech_settings_build_the_client_with_their_key(adapter: str) -> None:
    async with started(adapter, b"") as service:
        fields = service.config.model_dump(include=set(SpeechSettings.model_fields))
        settings = SpeechSettings(**fields, api_key=SecretStr(service.key or ""))
        client = create_speech_client(settings)
        events = [e async for e in client.stream(AudioSource.from_pcm(service.audio).chunks())]
    assert events[-1].is_final and events[-1].text == service.expected


def test_every_speech_setting_reaches_the_config() -> None:
    settings = SpeechSettings(
        adapter="doubao_asr",
        model="bigmodel",
        model_path=Path("/models/whisper"),
        language="zh",
        threads=3,
        endpoint="wss://example.test/asr",
        api_key=SecretStr("volc-token"),
        app_id="app-1",
        resource_id="volc.res",
        partial_interval_s=0.5,
        timeout_s=12.0,
    )
    config = SpeechConfig.from_settings(settings)
    assert config.enabled
    assert {k: v.get_secret_value() for k, v in config.provider_api_keys.items()} == {
        "doubao_asr": "volc-token"
    }
    for name in SpeechSettings.model_fields.keys() - {"api_key"}:
        assert getattr(config, name) == getattr(settings, name), name
    assert SpeechConfig.from_settings(SpeechSettings()).provider_api_keys == {}


# ----------------------------------------------------------------- adapters that break the rules


def final(text: str) -> TranscriptionEvent:
    return TranscriptionEvent(text=text, is_final=True)


def partial(text: str) -> TranscriptionEvent:
    return TranscriptionEvent(text=text, is_final=False)


class Misbehaving:
    """A custom adapter that breaks one rule of the contract on purpose (`how`)."""

    name = "misbehaving"

    def __init__(self, how: str) -> None:
        self.how = how
        self.closed = False

    def stream(self, audio: AsyncIterator[bytes]) -> Any:
        if self.how == "returns a list":
            return [final("hello")]
        return self._events(audio)

    async def _events(self, audio: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        how = self.how
        try:
            if how == "final before the audio ended":
                await anext(audio)
                yield final("hello")
                return
            if how == "holds the audio and hangs":
                await anext(audio)
                await asyncio.Event().wait()
            if how == "raises mid-stream":
                await anext(audio)
                yield partial("hello")
                raise KeyError("result")
            if how == "swallows every error":
                with contextlib.suppress(Exception):
                    async for _ in audio:
                        pass
                yield final("hello there")
                return
            if how == "swallows cancellation":
                try:
                    async for _ in audio:
                        pass
                except asyncio.CancelledError:
                    pass
                yield final("hello there")
                return
            async for _ in audio:
                pass
            if how == "two finals":
                yield final("hello there")
                yield final("hello there")
            elif how == "a partial after the final":
                yield final("hello there")
                yield partial("hello there")
            elif how == "pieces instead of the whole text":
                for piece in ("hello", " there", " how", " are you"):
                    yield partial(piece)
                yield final("")
            elif how == "no final":
                yield partial("hello there")
            elif how == "not an event":
                yield "hello there"
            elif how == "never ends":
                yield partial("hello there")
                await asyncio.Event().wait()
        finally:
            self.closed = True


BROKEN = {
    "two finals": "a second final",
    "a partial after the final": "an event after its final",
    "pieces instead of the whole text": "pieces of text",
    "final before the audio ended": "before the audio ended",
    "no final": "without a final",
    "not an event": "not a TranscriptionEvent",
    "returns a list": "not an async iterator",
    "raises mid-stream": "failed unexpectedly \\(KeyError",
    "never ends": "stopped responding",
    "holds the audio and hangs": "stopped responding",
}


@pytest.mark.parametrize("how", BROKEN, ids=list(BROKEN))
async def test_an_adapter_that_breaks_the_contract_is_caught_by_the_client(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = Misbehaving(how)
    client = SpeechClient(adapter, stall_timeout_s=0.3)
    source = AudioSource.from_pcm(tone(1.0))
    events: list[TranscriptionEvent] = []
    with pytest.raises(SpeechAdapterError, match=BROKEN[how]) as caught:
        async for event in client.stream(source.chunks()):
            events.append(event)
    assert not any(e.is_final for e in events)
    assert source.closed
    assert adapter.closed or how == "returns a list"
    assert "misbehaving" in str(caught.value) and "failed" in caplog.text


@pytest.mark.parametrize("bad", BAD_CHUNKS, ids=list(BAD_CHUNKS))
async def test_a_final_after_bad_input_is_never_passed_on(bad: str) -> None:
    # The adapter swallows the input error and gives a final anyway: the consumer gets
    # the input error, and the adapter could not read on past the bad chunk.
    source = AudioSource([tone(0.2), BAD_CHUNKS[bad], tone(0.2)])
    client = SpeechClient(Misbehaving("swallows every error"))
    with pytest.raises(SpeechInputError):
        async for event in client.stream(source.chunks()):
            assert not event.is_final
    assert source.closed and source.read == 2


async def test_a_final_after_the_audio_source_failed_is_never_passed_on() -> None:
    class MicrophoneGone(OSError):
        pass

    async def microphone() -> AsyncIterator[bytes]:
        yield tone(0.2)
        raise MicrophoneGone("the microphone was unplugged")

    client = SpeechClient(Misbehaving("swallows every error"))
    with pytest.raises(MicrophoneGone):
        async for event in client.stream(microphone()):
            assert not event.is_final


async def test_a_final_after_cancellation_is_never_passed_on() -> None:
    source = AudioSource.from_pcm(tone(2.0), chunk=1600, delay=0.02)
    events = await cancelled_after(0.2, SpeechClient(Misbehaving("swallows cancellation")), source)
    assert events == [] and source.closed and not source.exhausted


async def test_a_quiet_microphone_is_not_a_stalled_recognizer() -> None:
    # The watch runs only while the adapter holds the audio: waiting for slow audio is fine.
    source = AudioSource.from_pcm(tone(1.0), chunk=6_400, delay=0.25)
    events = [
        e async for e in SpeechClient(PlainAdapter(), stall_timeout_s=0.1).stream(source.chunks())
    ]
    assert events[-1] == final(TRANSCRIPT) and source.exhausted


async def test_each_text_is_passed_on_once_and_stripped() -> None:
    class Repeats:
        async def stream(self, audio: AsyncIterator[bytes]) -> AsyncIterator[TranscriptionEvent]:
            async for _ in audio:
                yield partial(" hello ")
                yield partial("hello")
            yield final(" hello there \n")

    events = [
        e async for e in SpeechClient(Repeats()).stream(AudioSource([tone(0.1)] * 3).chunks())
    ]
    assert events == [partial("hello"), final("hello there")]


@pytest.mark.parametrize(
    "texts",
    [
        ["you", "What is", "What is the weather", "What is the weather like today?"],
        ["Thank you.", "", "Hello there", "Hello there, how are you?"],
        ["Bye.", "Thanks for watching.", "What is the", "What is the weather like?"],
        ["你好", "你好，今天", "你好，今天天气怎么样？"],
        ["I scream", "ice cream", "ice cream for everyone"],
    ],
    ids=[
        "a guess from noise, then words",
        "taken back",
        "two guesses from noise",
        "Chinese",
        "one revised word",
    ],
)
async def test_real_revisions_of_the_whole_text_are_not_mistaken_for_pieces(
    texts: list[str],
) -> None:
    class Revising:
        async def stream(self, audio: AsyncIterator[bytes]) -> AsyncIterator[TranscriptionEvent]:
            async for _ in audio:
                pass
            for text in texts[:-1]:
                yield partial(text)
            yield final(texts[-1])

    events = [e async for e in SpeechClient(Revising()).stream(AudioSource([tone(0.1)]).chunks())]
    assert events[-1] == final(texts[-1])


def test_the_client_needs_an_adapter_with_a_stream_method() -> None:
    with pytest.raises(TypeError, match="stream"):
        SpeechClient(object())  # type: ignore[arg-type]


async def test_no_audio_at_all_never_reaches_the_adapter() -> None:
    # The empty utterance is answered by the client, so no adapter can get it wrong.
    adapter = Misbehaving("two finals")
    source = AudioSource([])
    events = [e async for e in SpeechClient(adapter).stream(source.chunks())]
    assert events == [final("")] and source.closed and not adapter.closed

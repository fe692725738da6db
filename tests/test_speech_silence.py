"""Silence and noise are never the user's words: a recording with no speech is not
transcribed, and what Whisper makes up on silence ("you", "Thank you.", "[Music]",
a loop) is left out, while the same words really spoken are kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import read_wav_16k
from app.config import Settings
from app.session import trim_to_speech
from app.speech import SpeechConfig, create_speech_client
from app.speech.adapters.whisper_hallucinations import WhisperSegment, spoken_text
from app.speech.adapters.whisper_local import WhisperLocalAdapter
from tests.conftest import speak_to_wav


def noise(seconds: float, dbfs: float, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    level = 10 ** (dbfs / 20) * 32768
    samples = rng.standard_normal(int(16_000 * seconds)) * level
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


@pytest.mark.parametrize(
    "pcm",
    [bytes(16_000 * 2 * 600), noise(20, -60), noise(20, -35), noise(5, -20)],
    ids=["10 min digital silence", "quiet room", "fan noise", "loud hiss"],
)
def test_a_recording_without_speech_trims_to_nothing(pcm: bytes) -> None:
    assert trim_to_speech(pcm, Settings()) == b""


def test_speech_in_silence_trims_to_the_speech(question_wav: Path) -> None:
    speech = read_wav_16k(question_wav)
    padded = bytes(16_000 * 2 * 5) + speech + bytes(16_000 * 2 * 5)
    trimmed = trim_to_speech(padded, Settings())
    assert 0.8 * len(speech) < len(trimmed) < len(speech) + 16_000 * 2 * 2


def segment(text: str, no_speech: float = 0.1, compression: float = 1.0) -> WhisperSegment:
    return WhisperSegment(text, no_speech, -0.3, compression)


@pytest.mark.parametrize(
    "segments",
    [
        [segment(" you", 0.95)],
        [segment(" you", 0.93), segment(" you", 0.95)],
        [segment(" Thank you.", 0.8)],
        [segment(" Thanks for watching!", 0.7)],
        [segment(" [Music]")],
        [segment(" (applause)")],
        [segment(" ♪ ♪")],
        [segment(" …")],
        [segment(" ...")],
        [segment(" you you you you you you you you you you you you")],
        [segment(" The the the the the the the the the the the the the")],
        [segment(" I'm going to go. I'm going to go. I'm going to go.", compression=2.9)],
        [segment(" Thank you. Thank you. Thank you. Thank you.", 0.3)],
    ],
    ids=lambda s: s[0].text.strip()[:24],
)
def test_whisper_on_silence_is_not_words(segments: list[WhisperSegment]) -> None:
    assert spoken_text(segments) == ""


@pytest.mark.parametrize(
    ("segments", "kept"),
    [
        ([segment(" Thank you.", 0.15)], "Thank you."),
        ([segment(" You.", 0.2)], "You."),
        ([segment(" No, no, no, no, no, no, no.", 0.74)], "No, no, no, no, no, no, no."),
        ([segment(" What is the weather like today?")], "What is the weather like today?"),
        ([segment(" Hello there.", 0.2), segment(" you", 0.95)], "Hello there."),
        ([segment(" [Music]"), segment(" Play it again.", 0.2)], "Play it again."),
    ],
)
def test_real_words_are_kept(segments: list[WhisperSegment], kept: str) -> None:
    assert spoken_text(segments) == kept


@pytest.fixture(scope="module")
def whisper() -> WhisperLocalAdapter:
    client = create_speech_client(SpeechConfig(enabled=True, adapter="whisper_local"))
    assert client is not None
    adapter = client.adapter
    assert isinstance(adapter, WhisperLocalAdapter)
    adapter._load_sync()
    return adapter


@pytest.mark.slow
def test_whisper_itself_hears_you_in_silence_and_the_filter_drops_it(
    whisper: WhisperLocalAdapter,
) -> None:
    model = whisper._load_sync()
    raw, _ = model.transcribe(  # as the adapter calls it
        np.zeros(16_000 * 10, np.float32),
        language="en",
        beam_size=1,
        condition_on_previous_text=False,
        without_timestamps=True,
    )
    segments = [
        WhisperSegment(s.text, s.no_speech_prob, s.avg_logprob, s.compression_ratio) for s in raw
    ]
    assert "you" in " ".join(s.text for s in segments).lower()  # what tiny.en does
    assert spoken_text(segments) == ""
    assert whisper.transcribe_sync(bytes(16_000 * 2 * 60)) == ""


@pytest.mark.slow
@pytest.mark.parametrize("said", ["Thank you.", "Thanks for watching!", "Bye."])
def test_stock_phrases_really_spoken_are_heard(
    whisper: WhisperLocalAdapter, tmp_path: Path, said: str
) -> None:
    pcm = read_wav_16k(speak_to_wav(said, tmp_path / "said.wav"))
    heard = whisper.transcribe_sync(bytes(8000) + pcm + bytes(8000))
    assert heard.lower().strip(".!") == said.lower().strip(".!")

"""WAV input: any PCM WAV becomes 16 kHz mono; bad files fail with a one-line reason."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import AudioFileError, read_wav_16k, write_wav
from tests.conftest import speak_to_wav


def test_16k_mono_speech_is_read_unchanged_in_length(question_wav: Path) -> None:
    with wave.open(str(question_wav)) as w:
        frames = w.getnframes()
    pcm = read_wav_16k(question_wav)
    assert len(pcm) == frames * 2
    assert np.abs(np.frombuffer(pcm, "<i2")).max() > 1000


def test_other_rates_and_stereo_are_converted(tmp_path: Path) -> None:
    wav = speak_to_wav("hello there", tmp_path / "s.wav", rate=44_100, channels=2)
    with wave.open(str(wav)) as w:
        seconds = w.getnframes() / w.getframerate()
    pcm = read_wav_16k(wav)
    assert abs(len(pcm) / 2 / 16_000 - seconds) < 0.01


def test_float_wav_is_read(tmp_path: Path) -> None:
    src = speak_to_wav("hello", tmp_path / "s.wav")
    out = tmp_path / "f.wav"
    import subprocess

    subprocess.run(["sox", str(src), "-e", "floating-point", "-b", "32", str(out)], check=True)
    pcm = read_wav_16k(out)
    assert abs(len(pcm) - len(read_wav_16k(src))) <= 4


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "no such file"), (b"", "empty"), (b"ID3\x03hello mp3 data", "not a WAV")],
)
def test_bad_files_name_the_problem(tmp_path: Path, content: bytes | None, reason: str) -> None:
    path = tmp_path / "bad.wav"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(AudioFileError, match=reason):
        read_wav_16k(path)


def test_truncated_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.wav"
    path.write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt ")
    with pytest.raises(AudioFileError, match=str(path)):
        read_wav_16k(path)


def test_write_wav_round_trips(tmp_path: Path) -> None:
    pcm = (np.sin(np.arange(16_000) / 10) * 8000).astype("<i2").tobytes()
    write_wav(tmp_path / "o.wav", pcm, 16_000)
    assert read_wav_16k(tmp_path / "o.wav") == pcm
    assert not list(tmp_path.glob("*.part"))

"""What engines write (WAV, macOS's AIFF whatever the name, streamed WAV) becomes mono s16le."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from app.tts import TTSError
from app.tts.audio_files import WavStreamReader, decode_audio
from app.tts.pyttsx3_engine import _read_audio_file
from tests.conftest import speak_to_wav
from tests.tts_servers import streaming_wav_header


def pcm_of(path: Path) -> np.ndarray:
    """The reference: sox's own reading of the file as mono s16le."""
    raw = subprocess.run(
        ["sox", str(path), "-t", "raw", "-e", "signed", "-b", "16", "-L", "-c", "1", "-"],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, "<i2")


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("aiff")
    return speak_to_wav("Hello from the other side.", folder / "speech.wav", rate=22050)


def aifc_module() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pytest.importorskip("aifc")  # gone in Python 3.13; our reader is not


def test_an_aiff_named_wav_is_read_as_aiff(speech_wav: Path, tmp_path: Path) -> None:
    """macOS's NSSS writes AIFF even when asked for a .wav file."""
    misnamed = tmp_path / "sentence.wav"
    subprocess.run(["sox", str(speech_wav), "-t", "aiff", str(misnamed)], check=True)
    assert misnamed.read_bytes()[:4] == b"FORM"
    audio = _read_audio_file(misnamed)
    assert audio.sample_rate == 22050
    assert np.array_equal(np.frombuffer(audio.pcm, "<i2"), pcm_of(speech_wav))


def test_stereo_and_24_bit_aiff_from_sox_become_mono_16_bit(tmp_path: Path) -> None:
    for bits, channels in ((16, 2), (24, 1), (8, 1)):
        path = tmp_path / f"tone{bits}-{channels}.aiff"
        make = ["sox", "-n", "-r", "16000", "-c", str(channels), "-b", str(bits), str(path)]
        subprocess.run([*make, "synth", "0.25", "sine", "440", "vol", "0.5"], check=True)
        audio = _read_audio_file(path)
        samples = np.frombuffer(audio.pcm, "<i2")
        assert audio.sample_rate == 16000 and len(samples) == 4000
        reference = pcm_of(path)
        assert np.abs(samples.astype(int) - reference.astype(int)).max() <= 4  # rounding only


def test_aiff_and_aifc_written_by_the_aifc_module(speech_wav: Path, tmp_path: Path) -> None:
    aifc: object = aifc_module()
    source = pcm_of(speech_wav)
    big_endian = source.astype(">i2").tobytes()
    stereo = np.repeat(source, 2).astype(">i2").tobytes()  # the module byte-swaps for sowt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, comptype, channels, frames in (
            ("plain.aiff", b"NONE", 1, big_endian),
            ("little.aifc", b"sowt", 2, stereo),
        ):
            with aifc.open(str(tmp_path / name), "wb") as out:  # type: ignore[attr-defined]
                if comptype != b"NONE":
                    out.aifc()
                    out.setcomptype(comptype, b"little endian")
                else:
                    out.aiff()
                out.setnchannels(channels)
                out.setsampwidth(2)
                out.setframerate(22050)
                out.writeframes(frames)
    for name in ("plain.aiff", "little.aifc"):
        audio = _read_audio_file(tmp_path / name)
        assert audio.sample_rate == 22050, name
        assert np.array_equal(np.frombuffer(audio.pcm, "<i2"), source), name


def test_float_wav_is_converted(tmp_path: Path) -> None:
    path = tmp_path / "float.wav"
    make = ["sox", "-n", "-r", "16000", "-c", "1", "-e", "floating-point", "-b", "32", str(path)]
    subprocess.run([*make, "synth", "0.1", "sine", "440", "vol", "0.5"], check=True)
    audio = _read_audio_file(path)
    samples = np.frombuffer(audio.pcm, "<i2")
    assert len(samples) == 1600 and 15000 < np.abs(samples).max() < 17000


def test_empty_or_unknown_files_are_errors_in_words(tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(TTSError, match="no audio"):
        _read_audio_file(empty)
    with pytest.raises(TTSError, match="format"):
        decode_audio(b"ID3\x04" + bytes(100))
    with pytest.raises(TTSError):
        decode_audio(b"FORM\x00\x00\x00\x10AIFFCOMM\x00\x00")


def test_a_streamed_wav_is_read_in_any_split(speech_wav: Path) -> None:
    source = pcm_of(speech_wav)
    blob = streaming_wav_header(22050) + source.tobytes()
    for step in (1, 7, 44, 1000):
        reader = WavStreamReader()
        out = b"".join(reader.feed(blob[i : i + step]) for i in range(0, len(blob), step))
        assert reader.format is not None and reader.format.sample_rate == 22050
        assert np.array_equal(np.frombuffer(out, "<i2"), source), step

"""Reading and writing WAV files, converting any PCM WAV to 16 kHz mono s16le."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000


class AudioFileError(Exception):
    """A WAV file cannot be used; the message names the file and the problem."""


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Resample float32 mono audio; a box low-pass first when going down keeps aliasing out."""
    if from_rate == to_rate or samples.size == 0:
        return samples.astype(np.float32, copy=False)
    if to_rate < from_rate:
        width = max(1, round(from_rate / to_rate))
        if width > 1:
            kernel = np.ones(width, dtype=np.float32) / width
            samples = np.convolve(samples, kernel, mode="same")
    duration = samples.size / from_rate
    count = max(1, round(duration * to_rate))
    src_t = np.arange(samples.size, dtype=np.float64) / from_rate
    dst_t = np.arange(count, dtype=np.float64) / to_rate
    return np.interp(dst_t, src_t, samples).astype(np.float32)


def _decode_pcm(raw: bytes, width: int, channels: int) -> np.ndarray:
    if width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints & 0x800000, ints - 0x1000000, ints)
        data = ints.astype(np.float32) / 8388608.0
    elif width == 4:
        data = np.frombuffer(raw, dtype="<i4").astype(np.float32) / 2147483648.0
    else:
        raise ValueError(f"{width * 8}-bit samples")
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1)
    return data


def _read_float_wav(blob: bytes) -> tuple[np.ndarray, int]:
    """IEEE-float WAVs (format 3), which the `wave` module refuses."""
    pos, rate, channels, bits, fmt = 12, 0, 0, 0, 0
    while pos + 8 <= len(blob):
        cid, size = blob[pos : pos + 4], int.from_bytes(blob[pos + 4 : pos + 8], "little")
        body = blob[pos + 8 : pos + 8 + size]
        if cid == b"fmt ":
            fmt = int.from_bytes(body[0:2], "little")
            channels = int.from_bytes(body[2:4], "little")
            rate = int.from_bytes(body[4:8], "little")
            bits = int.from_bytes(body[14:16], "little")
            if fmt == 0xFFFE and len(body) >= 26:  # WAVE_FORMAT_EXTENSIBLE: subformat GUID
                fmt = int.from_bytes(body[24:26], "little")
        elif cid == b"data":
            if fmt != 3 or bits not in (32, 64) or channels < 1 or rate <= 0:
                break
            dtype = "<f4" if bits == 32 else "<f8"
            data = np.frombuffer(body[: len(body) - len(body) % (bits // 8)], dtype=dtype)
            data = data[: data.size - data.size % channels].reshape(-1, channels).mean(axis=1)
            return np.clip(data, -1.0, 1.0).astype(np.float32), rate
        pos += 8 + size + (size & 1)
    raise AudioFileError("unsupported WAV encoding")


def read_wav_16k(path: Path | str) -> bytes:
    """Read a WAV file as 16 kHz mono s16le PCM; other rates and stereo are converted.

    Raises `AudioFileError` with a one-line reason for a missing, empty,
    non-WAV or undecodable file.
    """
    path = Path(path)
    if not path.exists():
        raise AudioFileError(f"{path}: no such file")
    if path.is_dir():
        raise AudioFileError(f"{path}: is a folder, not a WAV file")
    blob = path.read_bytes()
    if not blob:
        raise AudioFileError(f"{path}: the file is empty")
    if blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        raise AudioFileError(f"{path}: not a WAV file (expected a RIFF/WAVE header)")
    try:
        with wave.open(io.BytesIO(blob)) as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            raw = wav.readframes(wav.getnframes())
        if rate <= 0 or channels <= 0:
            raise AudioFileError(f"{path}: the WAV header is damaged (rate {rate})")
        samples = _decode_pcm(raw[: len(raw) - len(raw) % (width * channels)], width, channels)
    except AudioFileError:
        raise
    except wave.Error as exc:
        if "unknown format: 3" in str(exc) or "unknown format: 65534" in str(exc):
            try:
                samples, rate = _read_float_wav(blob)
            except AudioFileError as inner:
                raise AudioFileError(f"{path}: {inner}") from exc
        else:
            raise AudioFileError(f"{path}: unreadable WAV ({exc})") from exc
    except (EOFError, ValueError) as exc:
        raise AudioFileError(f"{path}: unreadable WAV ({exc})") from exc
    if samples.size == 0:
        raise AudioFileError(f"{path}: the WAV holds no audio")
    pcm = resample(samples, rate, SAMPLE_RATE)
    return float_to_pcm16(pcm)


def float_to_pcm16(samples: np.ndarray) -> bytes:
    return np.clip(np.rint(samples * 32768.0), -32768, 32767).astype("<i2").tobytes()


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def write_wav(path: Path | str, pcm: bytes, sample_rate: int) -> None:
    """Write mono s16le PCM as a WAV file (atomically: a crash never leaves half a file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    with wave.open(str(tmp), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
    tmp.replace(path)

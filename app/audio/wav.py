"""Reading and writing WAV files, converting any PCM WAV to 16 kHz mono s16le."""

from __future__ import annotations

import io
import math
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


class PolyphaseResampler:
    """Streaming rational-ratio resampler (float32 mono in, float32 mono out).

    A Kaiser-windowed sinc low-pass at the lower of the two Nyquist rates, applied in
    polyphase form: each output sample is one dot product of `taps_per_phase` input
    samples, so 48 kHz → 16 kHz costs 97 multiply-adds an output sample and 44.1 kHz →
    16 kHz 89. Chunks may have any size, with no seams between them; the output lags
    the input by half the filter (about 1 ms). `push()` allocates only what it returns.
    """

    def __init__(
        self,
        from_rate: int,
        to_rate: int = SAMPLE_RATE,
        *,
        zero_crossings: int = 16,
        cutoff: float = 0.95,
        beta: float = 8.0,
    ) -> None:
        if from_rate <= 0 or to_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {from_rate} → {to_rate}")
        g = math.gcd(int(from_rate), int(to_rate))
        self.from_rate, self.to_rate = int(from_rate), int(to_rate)
        self.up, self.down = self.to_rate // g, self.from_rate // g
        up, down = self.up, self.down
        self._passthrough = up == down
        # The prototype filter runs at `up * from_rate`; its cutoff is the lower Nyquist.
        half = zero_crossings * max(up, down)
        n = np.arange(-half, half + 1, dtype=np.float64)
        fc = cutoff / (2 * max(up, down))  # cycles per upsampled sample
        h = 2 * fc * np.sinc(2 * fc * n) * np.kaiser(n.size, beta)
        h *= up / h.sum()  # unity gain at DC after zero-stuffing
        taps = -(-h.size // up)
        h = np.concatenate([h, np.zeros(taps * up - h.size)])
        # bank[p, k] multiplies x[base - k] for an output whose phase is p.
        self._bank = np.ascontiguousarray(h.reshape(taps, up).T, dtype=np.float32)
        self._reversed = np.ascontiguousarray(self._bank[0, ::-1])  # for up == 1
        self._offsets = np.arange(taps)[None, :]
        self._by_output = np.zeros((0, taps), dtype=np.float32)
        self.taps_per_phase = taps
        self._history = np.zeros(taps - 1, dtype=np.float32)
        self._next = 0  # index (from the stream's start) of the next output sample
        self._consumed = 0  # input samples seen; `_history` holds the last taps - 1

    def _phases(self, first: int, count: int) -> np.ndarray:
        """The filter rows for `count` consecutive outputs from output `first` (mod up):
        a view into the bank in output order, repeated as often as needed."""
        if self._by_output.shape[0] < first + count:
            order = (np.arange(self.up) * self.down) % self.up
            reps = -(-(self.up + count) // self.up)
            self._by_output = np.tile(self._bank[order], (reps, 1))
        return self._by_output[first : first + count]

    def push(self, samples: np.ndarray) -> np.ndarray:
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        if self._passthrough:
            return x.copy()
        up, down, taps = self.up, self.down, self.taps_per_phase
        buf = np.concatenate([self._history, x])
        # Input sample i (counted from the stream's start) is buf[i - start].
        start = self._consumed - (taps - 1)
        total = self._consumed + x.size
        # Output n uses up-position n*down: base input index (n*down)//up ≤ total - 1.
        end = (total * up - 1) // down + 1 if total > 0 else 0
        count = max(0, end - self._next)
        if count:
            if up == 1:  # plain decimation: a strided view of the input, one filter
                first = self._next * down - start - (taps - 1)
                rows = np.lib.stride_tricks.as_strided(
                    buf[first:],
                    shape=(count, taps),
                    strides=(down * buf.strides[0], buf.strides[0]),
                    writeable=False,
                )
                out = rows @ self._reversed
            else:
                positions = (self._next + np.arange(count, dtype=np.int64)) * down
                index = (positions // up - start)[:, None] - self._offsets
                out = np.einsum("ij,ij->i", buf[index], self._phases(self._next % up, count))
            self._next = end
        else:
            out = np.zeros(0, dtype=np.float32)
        self._consumed = total
        self._history = buf[buf.size - (taps - 1) :].copy() if taps > 1 else buf[:0]
        return out.astype(np.float32, copy=False)

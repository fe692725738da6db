"""WAV and AIFF bytes to mono s16le PCM, whole or streamed.

Engines hand back whatever their platform writes: SAPI5 a WAV, macOS's NSSS an AIFF
whatever the file is called, HTTP servers a WAV whose sizes are unknown while it
streams. The parsers are ours (the standard library's `aifc` is gone in Python 3.13,
and `wave` refuses float and extensible WAVs).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from app.tts.engine import SynthesizedAudio, TTSError

_UNKNOWN_SIZES = {0, 0xFFFFFFFF}


@dataclass(slots=True, frozen=True)
class SampleFormat:
    """How the samples in a file are laid out."""

    sample_rate: int
    channels: int
    width: int  # bytes per sample
    big_endian: bool = False
    is_float: bool = False
    unsigned_8bit: bool = False  # WAV's 8-bit samples are unsigned, AIFF's are signed

    @property
    def frame_bytes(self) -> int:
        return self.width * self.channels


def to_mono_pcm(raw: bytes, fmt: SampleFormat) -> bytes:
    """Whole frames of `raw` as mono s16le (channels averaged); a trailing part frame is dropped."""
    usable = len(raw) - len(raw) % fmt.frame_bytes
    raw = raw[:usable]
    if not raw:
        return b""
    order = ">" if fmt.big_endian else "<"
    data: np.ndarray
    if fmt.is_float:
        floats = np.frombuffer(raw, dtype=f"{order}f{fmt.width}").astype(np.float64)
        data = np.clip(floats, -1.0, 1.0) * 32767.0
    elif fmt.width == 1:
        small = np.frombuffer(raw, dtype=np.uint8 if fmt.unsigned_8bit else np.int8)
        data = (small.astype(np.int32) - (128 if fmt.unsigned_8bit else 0)) * 256
    elif fmt.width == 2:
        data = np.frombuffer(raw, dtype=f"{order}i2")
    elif fmt.width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        hi, lo = (b[:, 0], b[:, 2]) if fmt.big_endian else (b[:, 2], b[:, 0])
        value = (hi << 16) | (b[:, 1] << 8) | lo
        data = np.where(value >= 1 << 23, value - (1 << 24), value) >> 8
    elif fmt.width == 4:
        data = np.frombuffer(raw, dtype=f"{order}i4") >> 16
    else:
        raise TTSError(f"the speech engine wrote {fmt.width * 8}-bit audio, which is not supported")
    if fmt.channels > 1:
        data = data.reshape(-1, fmt.channels).mean(axis=1)
    return np.asarray(data).astype("<i2").tobytes()


def _chunks(blob: bytes, start: int, *, big_endian: bool) -> dict[bytes, tuple[int, int]]:
    """IFF/RIFF chunks from `start`: id -> (offset of the data, declared size)."""
    found: dict[bytes, tuple[int, int]] = {}
    pos = start
    size_fmt = ">I" if big_endian else "<I"
    while pos + 8 <= len(blob):
        chunk_id = blob[pos : pos + 4]
        (size,) = struct.unpack(size_fmt, blob[pos + 4 : pos + 8])
        found.setdefault(chunk_id, (pos + 8, size))
        if chunk_id in (b"data", b"SSND") and size in _UNKNOWN_SIZES:
            break  # a streamed file: the data runs to the end
        pos += 8 + size + (size & 1)
    return found


def _extended_to_float(ten: bytes) -> float:
    """AIFF's 80-bit IEEE extended sample rate."""
    (exp_sign,) = struct.unpack(">H", ten[:2])
    (mantissa,) = struct.unpack(">Q", ten[2:10])
    sign = -1.0 if exp_sign & 0x8000 else 1.0
    exponent = exp_sign & 0x7FFF
    if exponent == 0 and mantissa == 0:
        return 0.0
    return sign * mantissa * 2.0 ** (exponent - 16383 - 63)


def wav_format(blob: bytes) -> tuple[SampleFormat, int, int] | None:
    """A WAV's sample format, the offset of its samples and their byte count (-1 when the
    size is unknown); None until the header has fully arrived."""
    if len(blob) < 12:
        return None
    if blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        raise TTSError("the audio is not a WAV file")
    chunks = _chunks(blob, 12, big_endian=False)
    if b"fmt " not in chunks or b"data" not in chunks:
        return None
    at, size = chunks[b"fmt "]
    if len(blob) < at + 16:
        return None
    tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", blob[at : at + 16])
    if tag == 0xFFFE and size >= 26 and len(blob) >= at + 26:
        (tag,) = struct.unpack("<H", blob[at + 24 : at + 26])  # the extensible sub-format
    if tag not in (1, 3) or channels < 1 or rate < 1:
        raise TTSError(f"the WAV audio is in a format Companion cannot read (format tag {tag})")
    fmt = SampleFormat(rate, channels, bits // 8, is_float=tag == 3, unsigned_8bit=bits == 8)
    data_at, data_size = chunks[b"data"]
    return fmt, data_at, (-1 if data_size in _UNKNOWN_SIZES else data_size)


def _aiff_audio(blob: bytes) -> SynthesizedAudio:
    kind = blob[8:12]
    chunks = _chunks(blob, 12, big_endian=True)
    if b"COMM" not in chunks or b"SSND" not in chunks:
        raise TTSError("the speech engine wrote an AIFF file without sound data")
    at, _ = chunks[b"COMM"]
    channels, _frames, bits = struct.unpack(">hIh", blob[at : at + 8])
    rate = round(_extended_to_float(blob[at + 8 : at + 18]))
    compression = blob[at + 18 : at + 22] if kind == b"AIFC" else b"NONE"
    big_endian, is_float = True, False
    if compression == b"sowt":
        big_endian = False
    elif compression in (b"fl32", b"FL32"):
        is_float, bits = True, 32
    elif compression not in (b"NONE", b"twos"):
        name = compression.decode("latin-1", "replace")
        raise TTSError(f"the speech engine wrote compressed AIFF audio ({name}), not supported")
    fmt = SampleFormat(rate, channels, (bits + 7) // 8, big_endian=big_endian, is_float=is_float)
    data_at, size = chunks[b"SSND"]
    (offset,) = struct.unpack(">I", blob[data_at : data_at + 4])
    start = data_at + 8 + offset
    end = len(blob) if size in _UNKNOWN_SIZES else min(len(blob), data_at + size)
    return SynthesizedAudio(to_mono_pcm(blob[start:end], fmt), rate)


def decode_audio(blob: bytes) -> SynthesizedAudio:
    """A whole WAV, AIFF or AIFF-C file as mono s16le, recognised by content, not by name."""
    if not blob:
        raise TTSError("the speech engine wrote no audio")
    try:
        if blob[:4] == b"FORM" and blob[8:12] in (b"AIFF", b"AIFC"):
            return _aiff_audio(blob)
        if blob[:4] == b"RIFF":
            header = wav_format(blob)
            if header is None:
                raise TTSError("the speech engine wrote a WAV file that ends in its header")
            fmt, at, size = header
            end = len(blob) if size < 0 else min(len(blob), at + size)
            return SynthesizedAudio(to_mono_pcm(blob[at:end], fmt), fmt.sample_rate)
    except struct.error:
        raise TTSError("the speech engine wrote a damaged audio file") from None
    raise TTSError("the speech engine wrote audio in a format Companion cannot read")


class WavStreamReader:
    """A WAV arriving in pieces: `feed` returns the mono s16le ready so far."""

    def __init__(self) -> None:
        self._head = b""
        self._pending = b""
        self.format: SampleFormat | None = None
        self._remaining = -1  # bytes of sample data still expected; -1 = until the end

    def feed(self, data: bytes) -> bytes:
        if self.format is None:
            self._head += data
            header = wav_format(self._head)
            if header is None:
                if len(self._head) > 1 << 16:
                    raise TTSError("the WAV audio's header never ended")
                return b""
            self.format, at, self._remaining = header
            data, self._head = self._head[at:], b""
        if self._remaining >= 0:
            data = data[: self._remaining]
            self._remaining -= len(data)
        raw = self._pending + data
        usable = len(raw) - len(raw) % self.format.frame_bytes
        self._pending = raw[usable:]
        return to_mono_pcm(raw[:usable], self.format)

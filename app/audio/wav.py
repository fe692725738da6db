"""Reading and writing WAV files, converting any PCM or float WAV to 16 kHz mono s16le.

A WAV file comes from anywhere (a recorder, a script, a damaged download), so every
field of its header is checked before anything is allocated: the sample rate must be
one audio hardware produces, the channel count and sample size sane, the audio at most
an hour long. Only regular files are read (a named pipe or a device such as /dev/zero
would block or never end), in blocks, so memory is bounded by the 16 kHz result.
Every problem is an `AudioFileError` whose message is one line naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import struct
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from app.audio.format import SAMPLE_RATE, SAMPLE_WIDTH
from app.audio.resample import StreamResampler

__all__ = [
    "MAX_RATE",
    "MAX_SECONDS",
    "MIN_RATE",
    "AudioFileError",
    "check_wav_target",
    "float_to_pcm16",
    "pcm16_to_float",
    "read_wav_16k",
    "write_wav",
]

# What sound cards and recorders produce: telephone audio (8 kHz) up to 384 kHz
# studio converters. A header outside this is damaged, or not audio at all (a 1 Hz
# header would make a small file into hours of audio at 16 kHz).
MIN_RATE = 8_000
MAX_RATE = 384_000
MAX_CHANNELS = 32
MAX_SECONDS = 3600  # an hour of audio at most: 115 MB once at 16 kHz
_MAX_FMT_BYTES = 1024  # a format chunk is 16, 18 or 40 bytes
_MAX_CHUNKS = 1024  # chunks before the audio (LIST, fact, cue, ...)
_BLOCK_BYTES = 1 << 22  # read and converted 4 MiB at a time
MIN_FREE_BYTES = 1 << 20  # a reply of a few sentences needs about this much room
_STREAMED = (0, 0xFFFFFFFF)  # data sizes a writer that could not seek back leaves
_ENCODINGS = {  # format tags people meet, to name what is not supported
    0x0002: "Microsoft ADPCM",
    0x0006: "A-law",
    0x0007: "µ-law",
    0x0011: "IMA ADPCM",
    0x0031: "GSM 6.10",
    0x0050: "MPEG audio",
    0x0055: "MP3",
    0x00FF: "AAC",
}


class AudioFileError(Exception):
    """A WAV file cannot be used; the message names the file and the problem (one line)."""


@dataclass(frozen=True, slots=True)
class _Format:
    is_float: bool
    channels: int
    rate: int
    width: int  # bytes per sample
    data_bytes: int | None  # None: the audio runs to the end of the file

    @property
    def frame_bytes(self) -> int:
        return self.width * self.channels


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


@contextlib.contextmanager
def _open_regular(path: Path) -> Iterator[tuple[BinaryIO, int]]:
    """The file and its size (0 when the system does not know it, as for /proc files);
    anything but a regular file is refused without reading from it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # non-blocking: opening a FIFO must not wait for a writer
    except FileNotFoundError:
        raise AudioFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AudioFileError(f"{path}: is a folder, not a WAV file") from None
    except PermissionError:
        raise AudioFileError(f"{path}: permission denied (you may not read this file)") from None
    except OSError as exc:
        raise AudioFileError(f"{path}: cannot be opened ({_reason(exc)})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise AudioFileError(f"{path}: is a folder, not a WAV file")
        if not stat.S_ISREG(info.st_mode):
            kind = next((what for test, what in _KINDS if test(info.st_mode)), "not a file")
            raise AudioFileError(f"{path}: is {kind}, not a WAV file; give a regular file")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as file:
        yield file, info.st_size


def _read(file: BinaryIO, size: int, path: Path) -> bytes:
    try:
        return file.read(size)
    except OSError as exc:
        raise AudioFileError(f"{path}: could not be read ({_reason(exc)})") from None


def _parse_fmt(body: bytes, path: Path) -> tuple[bool, int, int, int]:
    """(is_float, channels, rate, bytes per sample) from a format chunk, every field checked."""
    tag, channels, rate, _byte_rate, block_align, bits = struct.unpack_from("<HHIIHH", body)
    if tag == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: the real format is the subformat GUID's start
        if len(body) < 26:
            raise AudioFileError(f"{path}: the WAV header is damaged (a cut extensible format)")
        tag = int.from_bytes(body[24:26], "little")
    if tag not in (1, 3):
        name = _ENCODINGS.get(tag, f"format {tag}")
        raise AudioFileError(
            f"{path}: the audio is compressed ({name}); convert it to PCM first, "
            "e.g. `sox IN.wav -b 16 OUT.wav`"
        )
    if not 1 <= channels <= MAX_CHANNELS:
        raise AudioFileError(
            f"{path}: the WAV header is damaged ({channels} channels; 1 to {MAX_CHANNELS} work)"
        )
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFileError(
            f"{path}: the WAV header says {rate:,} Hz, outside what audio hardware records "
            f"({MIN_RATE:,}-{MAX_RATE:,} Hz): the header is damaged or this is not a recording"
        )
    is_float = tag == 3
    if is_float and bits not in (32, 64):
        raise AudioFileError(f"{path}: {bits}-bit float samples are not supported (32 or 64 are)")
    if not is_float and not 1 <= bits <= 32:
        raise AudioFileError(f"{path}: {bits}-bit samples are not supported (8 to 32 are)")
    width = (bits + 7) // 8
    # A sample may sit in a wider container (24 bits in 4 bytes): the block size says so.
    container = block_align // channels if block_align % channels == 0 else 0
    if not is_float and width <= container <= 4:
        width = container
    return is_float, channels, rate, width


def _read_format(file: BinaryIO, path: Path) -> _Format:
    """Walks the chunks up to the audio; the file is then positioned at its first byte."""
    head = _read(file, 12, path)
    if not head:
        raise AudioFileError(f"{path}: the file is empty")
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise AudioFileError(f"{path}: not a WAV file (expected a RIFF/WAVE header)")
    found: tuple[bool, int, int, int] | None = None
    for _ in range(_MAX_CHUNKS):
        chunk = _read(file, 8, path)
        if len(chunk) < 8:
            what = "no audio" if found else "no format chunk"
            raise AudioFileError(f"{path}: the WAV file is cut short or damaged ({what} found)")
        kind, size = chunk[:4], int.from_bytes(chunk[4:], "little")
        if kind == b"data":
            if found is None:
                raise AudioFileError(f"{path}: the WAV header is damaged (audio before its format)")
            return _Format(*found, data_bytes=None if size in _STREAMED else size)
        if kind == b"fmt ":
            if not 16 <= size <= _MAX_FMT_BYTES:
                raise AudioFileError(
                    f"{path}: the WAV header is damaged (a format chunk of {size:,} bytes)"
                )
            body = _read(file, size + (size & 1), path)
            if len(body) < size:
                raise AudioFileError(f"{path}: the WAV file is cut short in its header")
            found = _parse_fmt(body, path)
            continue
        try:
            file.seek(size + (size & 1), os.SEEK_CUR)  # a chunk we do not need
        except OSError as exc:
            raise AudioFileError(f"{path}: could not be read ({_reason(exc)})") from None
    raise AudioFileError(f"{path}: the WAV header is damaged (too many chunks before the audio)")


def _to_mono(raw: bytes, fmt: _Format) -> np.ndarray:
    """Whole frames of `raw` as float32 mono in [-1, 1]; NaN and infinities become silence
    and full scale, without numpy warnings."""
    width, channels = fmt.width, fmt.channels
    if fmt.is_float:
        data = np.frombuffer(raw, dtype="<f4" if width == 4 else "<f8")
        data = np.clip(np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
        data = data.astype(np.float32)
    elif width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints & 0x800000, ints - 0x1000000, ints)
        data = ints.astype(np.float32) / 8388608.0
    else:
        data = (np.frombuffer(raw, dtype="<i4").astype(np.float64) / 2147483648.0).astype(
            np.float32
        )
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1, dtype=np.float32)
    return data


def read_wav_16k(path: Path | str) -> bytes:
    """Read a WAV file as 16 kHz mono s16le PCM; other rates and stereo are converted.

    Raises `AudioFileError` with a one-line reason for a missing, empty, non-WAV,
    damaged, over-long or unreadable file, and for anything that is not a regular file.
    """
    path = Path(path)
    with _open_regular(path) as (file, file_size):
        fmt = _read_format(file, path)
        available = file_size - file.tell() if file_size else None
        data_bytes = fmt.data_bytes
        if data_bytes is not None and available is not None:
            data_bytes = min(data_bytes, max(available, 0))  # a cut file holds less
        max_bytes = MAX_SECONDS * fmt.rate * fmt.frame_bytes
        if data_bytes is not None and data_bytes > max_bytes:
            minutes = data_bytes / fmt.frame_bytes / fmt.rate / 60
            raise AudioFileError(
                f"{path}: {minutes:,.0f} minutes of audio; at most {MAX_SECONDS // 60} are read"
            )
        left = max_bytes + 1 if data_bytes is None else data_bytes
        block = max(fmt.frame_bytes, _BLOCK_BYTES - _BLOCK_BYTES % fmt.frame_bytes)
        resampler = StreamResampler(fmt.rate, SAMPLE_RATE)
        pieces: list[bytes] = []
        carry = b""
        frames = 0
        while left > 0:
            raw = _read(file, min(block, left), path)
            if not raw:
                break
            left -= len(raw)
            raw = carry + raw
            whole = len(raw) - len(raw) % fmt.frame_bytes
            carry = raw[whole:]
            if whole:
                frames += whole // fmt.frame_bytes
                pieces.append(float_to_pcm16(resampler.push(_to_mono(raw[:whole], fmt))))
        if data_bytes is None and left <= 0:
            raise AudioFileError(
                f"{path}: more than {MAX_SECONDS // 60} minutes of audio; at most that is read"
            )
    if not frames:
        raise AudioFileError(f"{path}: the WAV holds no audio")
    pieces.append(float_to_pcm16(resampler.flush()))
    return b"".join(pieces)


def float_to_pcm16(samples: np.ndarray) -> bytes:
    return np.clip(np.rint(samples * 32768.0), -32768, 32767).astype("<i2").tobytes()


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def check_wav_target(path: Path | str) -> None:
    """Raise `AudioFileError` in words when a WAV cannot be written at `path`: meant to be
    called before the work that makes the audio, so nothing is done for nothing."""
    path = Path(path)
    if path.is_dir():
        raise AudioFileError(f"{path}: is a folder; give a file name, e.g. {path / 'reply.wav'}")
    if not path.parent.is_dir():
        raise AudioFileError(f"{path.parent}: no such folder")
    if path.exists() and not path.is_file():
        raise AudioFileError(f"{path}: is not a regular file; give a file name to write")
    probe = _part(path)
    try:
        with open(probe, "wb"):
            pass
        free = shutil.disk_usage(path.parent).free
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            free = 0
        else:
            raise AudioFileError(f"{path}: cannot be written there ({_reason(exc)})") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    if free < MIN_FREE_BYTES:
        raise AudioFileError(
            f"{path}: the disk is full ({free // 1024:,} KB free); make room or choose "
            "another place"
        )


def write_wav(path: Path | str, pcm: bytes, sample_rate: int) -> None:
    """Write mono s16le PCM as a WAV file, atomically: a crash never leaves half a file,
    and a failed write (a full disk) leaves nothing behind. Raises `AudioFileError`."""
    path = Path(path)
    tmp = _part(path)
    try:
        with open(tmp, "wb") as file:
            with wave.open(file, "wb") as wav:
                wav.setnchannels(1)
                wav.setsampwidth(SAMPLE_WIDTH)
                wav.setframerate(sample_rate)
                wav.writeframes(pcm)
            file.flush()
            os.fsync(file.fileno())
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise AudioFileError(f"{path}: could not be written ({_reason(exc)})") from None

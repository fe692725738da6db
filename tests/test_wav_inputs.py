"""Hostile WAV input and output paths: every header field out of range, files that are not
files, damaged samples, and places a reply cannot be written. Each is refused in one
line naming the file, before anything large is allocated; nothing is left behind."""

from __future__ import annotations

import os
import struct
import tempfile
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.audio.wav import (
    MAX_RATE,
    MAX_SECONDS,
    MIN_RATE,
    AudioFileError,
    check_wav_target,
    read_wav_16k,
    write_wav,
)

# Nothing read from a small file may need more than this (the 1 Hz header once asked
# for 4.7 GiB).
MAX_PEAK_BYTES = 32 * 1024 * 1024


def wav_bytes(
    *,
    tag: int = 1,
    channels: int = 1,
    rate: int = 16_000,
    bits: int = 16,
    block_align: int | None = None,
    byte_rate: int | None = None,
    fmt_size: int | None = None,
    data: bytes = b"\0\1" * 800,
    data_size: int | None = None,
    extra: bytes = b"",
) -> bytes:
    align = block_align if block_align is not None else channels * ((bits + 7) // 8)
    rate_field = byte_rate if byte_rate is not None else (rate * align) & 0xFFFFFFFF
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate_field, align & 0xFFFF, bits)
    if tag == 0xFFFE:
        fmt += struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", 1) + b"\0" * 14
    size = len(fmt) if fmt_size is None else fmt_size
    body = b"WAVE" + extra + b"fmt " + struct.pack("<I", size) + fmt
    body += b"data" + struct.pack("<I", len(data) if data_size is None else data_size) + data
    return b"RIFF" + struct.pack("<I", len(body) & 0xFFFFFFFF) + body


def read_checked(path: Path) -> bytes | str:
    """The PCM read from `path`, or the one-line reason it was refused; asserts that no
    other exception, no warning and no large allocation happened on the way."""
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                result: bytes | str = read_wav_16k(path)
            except AudioFileError as exc:
                result = str(exc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK_BYTES, f"{peak / 1e6:.0f} MB allocated for a small file"
    if isinstance(result, str):
        assert "\n" not in result
        assert str(path) in result
    else:
        assert len(result) % 2 == 0
        assert len(result) <= MAX_SECONDS * 32_000
    return result


@pytest.mark.parametrize("rate", [1, 100, MIN_RATE - 1, MAX_RATE + 1, 2**32 - 1])
def test_a_rate_no_audio_hardware_records_is_refused_in_one_line(tmp_path: Path, rate: int) -> None:
    path = tmp_path / "rate.wav"
    path.write_bytes(wav_bytes(rate=rate, data=b"\1\0" * 40_000))
    reason = read_checked(path)
    assert isinstance(reason, str)
    assert f"{rate:,} Hz" in reason


@pytest.mark.parametrize("rate", [MIN_RATE, 22_050, 48_000, MAX_RATE])
def test_every_real_rate_is_read(tmp_path: Path, rate: int) -> None:
    path = tmp_path / "ok.wav"
    seconds = 0.5
    tone = (np.sin(np.arange(int(rate * seconds)) / 7) * 8000).astype("<i2").tobytes()
    path.write_bytes(wav_bytes(rate=rate, data=tone))
    pcm = read_checked(path)
    assert isinstance(pcm, bytes)
    assert abs(len(pcm) / 2 / 16_000 - seconds) < 0.01


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"channels": 0}, "0 channels"),
        ({"channels": 65535}, "65535 channels"),
        ({"bits": 0}, "0-bit"),
        ({"bits": 48}, "48-bit"),
        ({"tag": 3, "bits": 16}, "16-bit float"),
        ({"tag": 0x55}, "MP3"),
        ({"tag": 7}, "µ-law"),
        ({"tag": 0xFFFE, "bits": 16, "fmt_size": 20}, "extensible"),
        ({"fmt_size": 2**31}, "format chunk"),
        ({"fmt_size": 8}, "format chunk"),
    ],
)
def test_damaged_header_fields_are_named(tmp_path: Path, fields: dict, words: str) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(wav_bytes(**fields))
    reason = read_checked(path)
    assert isinstance(reason, str)
    assert words in reason


def test_a_header_claiming_more_than_an_hour_is_refused_before_reading(tmp_path: Path) -> None:
    # A streamed-size header over a file that really is long: stopped at the limit.
    path = tmp_path / "long.wav"
    with open(path, "wb") as f:
        f.write(wav_bytes(rate=MIN_RATE, data=b"", data_size=0xFFFFFFFF))
        f.truncate(f.tell() + MAX_SECONDS * MIN_RATE * 2 + 4096)  # sparse: no disk used
    with pytest.raises(AudioFileError, match="minutes of audio"):
        read_wav_16k(path)


def test_a_size_field_larger_than_the_file_reads_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "cut.wav"
    path.write_bytes(wav_bytes(data=b"\0\x10" * 1600, data_size=2**31))
    assert len(read_wav_16k(path)) == 3200


def test_nan_and_infinite_float_samples_read_without_warnings(tmp_path: Path) -> None:
    samples = np.array([np.nan, np.inf, -np.inf, 0.5, 1e300, -1e300] * 500)
    for bits, dtype in ((32, "<f4"), (64, "<f8")):
        path = tmp_path / f"nan{bits}.wav"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # making the file: casting 1e300 to f4
            data = samples.astype(dtype).tobytes()
        path.write_bytes(wav_bytes(tag=3, bits=bits, channels=2, data=data))
        pcm = read_checked(path)
        assert isinstance(pcm, bytes)
        values = np.frombuffer(pcm, "<i2")
        assert values.size == samples.size // 2


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.wav"
    os.mkfifo(fifo)
    with pytest.raises(AudioFileError, match="named pipe"):
        read_wav_16k(fifo)  # would block forever waiting for a writer if it were opened


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_refused(device: str) -> None:
    with pytest.raises(AudioFileError, match="is a device"):
        read_wav_16k(device)


def test_unreadable_files_are_refused_in_words(tmp_path: Path) -> None:
    assert "could not be read (Input/output error)" in str(read_checked(Path("/proc/self/mem")))
    if os.geteuid() != 0:
        locked = tmp_path / "locked.wav"
        locked.write_bytes(wav_bytes())
        locked.chmod(0)
        assert "permission denied" in str(read_checked(locked))
    else:  # root may read any file, but not another process's memory
        assert "permission denied" in str(read_checked(Path("/proc/1/mem")))
    assert "is a folder" in str(read_checked(tmp_path))


fmt_fields = st.fixed_dictionaries(
    {
        "tag": st.sampled_from([0, 1, 2, 3, 6, 7, 0x55, 0xFFFE]) | st.integers(0, 0xFFFF),
        "channels": st.integers(0, 0xFFFF),
        "rate": st.sampled_from([0, 1, MIN_RATE, 44_100, MAX_RATE]) | st.integers(0, 2**32 - 1),
        "bits": st.sampled_from([0, 8, 16, 24, 32, 64]) | st.integers(0, 0xFFFF),
        "block_align": st.none() | st.integers(0, 0xFFFF),
        "byte_rate": st.none() | st.integers(0, 2**32 - 1),
        "fmt_size": st.none() | st.integers(0, 2**32 - 1),
        "data": st.binary(max_size=4096),
        "data_size": st.none() | st.sampled_from([0, 0xFFFFFFFF]) | st.integers(0, 2**32 - 1),
        "extra": st.sampled_from([b"", b"LIST\x04\x00\x00\x00INFO", b"junk\xff\xff\xff\x7f"]),
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=fmt_fields, cut=st.none() | st.integers(0, 200))
def test_any_header_is_read_or_refused_in_one_line(fields: dict, cut: int | None) -> None:
    blob = wav_bytes(**fields)
    if cut is not None:
        blob = blob[:cut]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.wav"
        path.write_bytes(blob)
        read_checked(path)


@settings(max_examples=100, deadline=None)
@given(blob=st.binary(max_size=300))
def test_any_bytes_after_a_riff_header_are_read_or_refused(blob: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "junk.wav"
        path.write_bytes(b"RIFF\xff\xff\xff\xffWAVE" + blob)
        read_checked(path)


# ----------------------------------------------------------------- where a reply is written


def test_a_folder_as_the_target_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="is a folder; give a file name"):
        check_wav_target(tmp_path)


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="no such folder"):
        check_wav_target(tmp_path / "nowhere" / "reply.wav")


def test_a_place_no_file_can_be_written_is_refused() -> None:
    with pytest.raises(AudioFileError, match="cannot be written there") as info:
        check_wav_target(Path("/proc/reply.wav"))
    assert "\n" not in str(info.value)


def test_what_is_not_a_regular_file_is_never_written_over(tmp_path: Path) -> None:
    # A named pipe stands for any special file (a device such as /dev/null, which a
    # rename over it would replace for the whole system).
    pipe = tmp_path / "pipe.wav"
    os.mkfifo(pipe)
    with pytest.raises(AudioFileError, match="is not a regular file"):
        check_wav_target(pipe)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.wav"]


def test_a_writable_target_passes_and_leaves_nothing(tmp_path: Path) -> None:
    check_wav_target(tmp_path / "reply.wav")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_no_part_file(tmp_path: Path) -> None:
    # /dev/full fails every write with ENOSPC, like a full disk.
    target = tmp_path / "reply.wav"
    os.symlink("/dev/full", target.with_name("reply.wav.part"))
    with pytest.raises(AudioFileError, match="No space left on device"):
        write_wav(target, b"\0\0" * 16_000, 16_000)
    assert not target.exists()
    assert not target.with_name("reply.wav.part").exists()

"""`companion turn` given what is not a usable WAV, or an `--out` it cannot write: one
line that says why, the right exit status, no traceback, and the model not asked
anything that would be thrown away. A full disk loses the reply audio in words and
leaves no partial file."""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.llm_servers import Reply, ScriptedChatServer

TURN = [sys.executable, "-m", "app", "turn"]


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(["It is sunny today."])]) as srv:
        yield srv


def run_turn(
    server: ScriptedChatServer, *args: str, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    model = ["--model", "openai-compatible/scripted", "--base-url", server.base_url]
    return subprocess.run(
        [*TURN, *model, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def wav_header(rate: int, data: bytes, *, tag: int = 1, bits: int = 16) -> bytes:
    align = bits // 8
    fmt = struct.pack("<HHIIHH", tag, 1, rate, rate * align, align, bits)
    body = b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def special_wav(kind: str, tmp_path: Path) -> Path:
    if kind == "fifo":
        path = tmp_path / "pipe.wav"
        os.mkfifo(path)
        return path
    if kind == "folder":
        return tmp_path
    if kind == "one hertz":
        path = tmp_path / "onehz.wav"
        path.write_bytes(wav_header(1, b"\1\0" * 40_000))  # 79 KB said to be 11 hours
        return path
    return Path(kind)


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("/proc/1/mem", "permission denied"),
        ("/proc/self/mem", "could not be read"),
        ("/dev/zero", "is a device"),
        ("fifo", "is a named pipe"),
        ("folder", "is a folder"),
        ("one hertz", "outside what audio hardware records"),
    ],
)
def test_a_wav_that_cannot_be_used_is_one_line_and_status_2(
    server: ScriptedChatServer, tmp_path: Path, kind: str, words: str
) -> None:
    path = special_wav(kind, tmp_path)
    done = run_turn(server, "--wav", str(path), timeout=60)
    assert done.returncode == 2
    line = one_line(done)
    assert words in line and str(path) in line
    assert server.requests == []


def test_nan_float_samples_are_read_without_a_warning(
    server: ScriptedChatServer, tmp_path: Path
) -> None:
    path = tmp_path / "nan.wav"
    samples = np.full(16_000, np.nan, dtype="<f4")
    samples[::3] = np.inf
    path.write_bytes(wav_header(16_000, samples.tobytes(), tag=3, bits=32))
    done = run_turn(server, "--wav", str(path))
    assert "RuntimeWarning" not in done.stderr
    # What is left of it (silence and full-scale clicks) holds no speech.
    assert done.returncode == 1
    assert "no speech was found" in one_line(done)


def test_ten_minutes_of_silence_is_not_a_turn(server: ScriptedChatServer, tmp_path: Path) -> None:
    path = tmp_path / "silence.wav"
    path.write_bytes(wav_header(16_000, bytes(16_000 * 2 * 600)))
    done = run_turn(server, "--wav", str(path))
    assert done.returncode == 1
    assert one_line(done) == (
        "companion: no speech was found in the WAV file (only silence or noise)"
    )
    assert "heard:" not in done.stdout
    assert server.requests == []  # nothing was sent as the user's words


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("folder", "is a folder; give a file name"),
        ("/proc/reply.wav", "cannot be written there"),
        ("missing/reply.wav", "no such folder"),
        ("pipe", "is not a regular file"),  # a special file, as /dev/null is
    ],
)
def test_an_out_that_cannot_be_written_is_refused_before_the_model_is_asked(
    server: ScriptedChatServer, question_wav: Path, tmp_path: Path, target: str, words: str
) -> None:
    out = tmp_path if target == "folder" else Path(target)
    if target.startswith("missing"):
        out = tmp_path / target
    if target == "pipe":  # never the real /dev/null: a broken check would replace it
        out = tmp_path / "reply.wav"
        os.mkfifo(out)
    done = run_turn(server, "--wav", str(question_wav), "--out", str(out), timeout=60)
    assert done.returncode == 2
    assert words in one_line(done)
    assert server.requests == []  # no reply was made to be thrown away
    assert not Path(str(out) + ".part").exists()


@contextlib.contextmanager
def small_disk(tmp_path: Path, size_kb: int) -> Iterator[Path]:
    """A tmpfs of `size_kb` mounted under `tmp_path` (root only, as in CI)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(where)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"tmpfs could not be mounted: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path, leave_kb: int) -> None:
    with open(folder / "filler", "wb") as f, contextlib.suppress(OSError):
        while shutil.disk_usage(folder).free > leave_kb * 1024:
            f.write(b"\0" * 4096)
            f.flush()


def test_a_full_disk_is_refused_before_the_model_is_asked(
    server: ScriptedChatServer, question_wav: Path, tmp_path: Path
) -> None:
    with small_disk(tmp_path, 256) as disk:
        fill(disk, 0)
        out = disk / "reply.wav"
        done = run_turn(server, "--wav", str(question_wav), "--out", str(out))
        assert done.returncode == 2
        assert "disk" in one_line(done) and "full" in one_line(done)
        assert server.requests == []
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_a_disk_that_fills_while_writing_keeps_the_reply_and_no_part_file(
    question_wav: Path, tmp_path: Path
) -> None:
    long_reply = " ".join(  # a minute of speech, in sentences that never repeat
        [
            "It is sunny today, with a light wind from the west and a few thin clouds.",
            "By noon the temperature should reach twenty two degrees in the city centre.",
            "Farther north, the hills may see a passing shower around three o'clock.",
            "Tomorrow morning starts cool and misty, so a jacket would be a good idea.",
            "The mist lifts by ten, and the afternoon turns bright and pleasantly warm.",
            "On Thursday a band of rain arrives from the coast, heavy for a few hours.",
            "Friday looks calmer again, although the breeze stays fresh along the shore.",
            "The weekend promises long dry spells, ideal for a walk or a picnic outside.",
            "Pollen counts remain moderate, and the air quality is rated as good.",
            "Sunset tonight is at eight fourteen, with a clear view of the crescent moon.",
        ]
    )
    with (
        ScriptedChatServer([Reply.text_stream([long_reply])]) as server,
        small_disk(tmp_path, 2560) as disk,
    ):
        fill(disk, 1100)  # room enough to start, not for a minute of speech (1.9 MB)
        out = disk / "reply.wav"
        done = run_turn(
            server,
            "--wav",
            str(question_wav),
            "--out",
            str(out),
            COMPANION_PERSONA__MAX_SENTENCES="0",  # the whole minute is spoken
        )
        assert done.returncode == 1
        line = one_line(done)
        assert "reply.wav" in line and "No space left on device" in line
        assert "It is sunny today" in done.stdout  # the reply itself is not lost
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]


@pytest.mark.parametrize("command", [["config", "show"], ["turn", "--wav", "q.wav"]])
def test_a_config_file_that_is_a_folder_is_named_in_words(
    tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "config" / "config.toml"  # where COMPANION_CONFIG points in tests
    folder.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "app", *command], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert one_line(done) == (
        f"companion: {folder} is a folder, not a config file: remove it or rename it"
    )

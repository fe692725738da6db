"""Writing files so that a crash or a full disk never leaves half of one: appends that
are whole or not there at all, new files that exist only once fully written and
synced, and directory syncs so a rename survives a power cut."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["append_whole", "free_backup_name", "fsync_dir", "write_new"]


def free_backup_name(path: Path) -> Path:
    """`<name>.bad`, or `<name>.N.bad` with the first N not taken."""
    backup = path.with_name(path.name + ".bad")
    number = 1
    while backup.exists():
        number += 1
        backup = path.with_name(f"{path.name}.{number}.bad")
    return backup


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append_whole(path: Path, data: bytes) -> None:
    """Append `data` whole and fsync it, or leave the file as it was: a full disk cuts a
    write short, and what did get written is cut off again. A torn last line (an
    earlier crash) gets a newline first so it cannot swallow `data`. The file is
    created if needed, even for empty `data`."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        size = os.fstat(fd).st_size
        if not data:
            return
        if size > 0:
            os.lseek(fd, size - 1, os.SEEK_SET)
            if os.read(fd, 1) != b"\n":
                data = b"\n" + data
        try:
            _write_all(fd, data)  # one append per call: a crash cuts at most this last line
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def write_new(path: Path, data: bytes) -> None:
    """`path` holding exactly `data`, synced; nothing of it is left if that fails."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    os.close(fd)


def replace_whole(path: Path, text: str) -> None:
    """`path` replaced by `text` at once: written to a temporary file of its own beside
    it (two writers never share one; 0600), synced, renamed over it; a crash leaves the
    old file or the new one, and a failure leaves no temporary behind."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` survive a power cut (POSIX only)."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""A real, tiny filesystem for full-disk tests: a 256 KiB tmpfs mounted in the test's
folder, filled to the last page on demand and emptied again.

Mounting needs root (or CAP_SYS_ADMIN); CI runs the tests as root, so they run there.
Where mounting is impossible the tests that use it are skipped, saying why.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = "256k"


class SmallDisk:
    """A mounted tmpfs at `path`; `fill()` uses up every free byte, `free()` gives the
    room back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / ".filler"

    def fill(self) -> None:
        """Write until the disk refuses (the last page included)."""
        with self._filler.open("ab", buffering=0) as fh:
            for size in (64 * 1024, 4096, 512, 64, 8, 1):
                while True:
                    try:
                        fh.write(b"\0" * size)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
        assert os.statvfs(self.path).f_bavail == 0

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)


def _mount(path: Path) -> str | None:
    """Mount a tmpfs at `path`; None, or why it cannot be done here."""
    if not hasattr(os, "geteuid"):
        return "mounting a tmpfs needs Linux"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return (
            f"a {SIZE} tmpfs cannot be mounted here ({done.stderr.strip() or done.returncode}):"
            " the full-disk tests need root, as in CI"
        )
    return None


def mounted_small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A fixture's body: a `SmallDisk` in `tmp_path`, unmounted afterwards (skips the
    test, saying why, where mounting is impossible)."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    problem = _mount(folder)
    if problem is not None:
        pytest.skip(problem)
    try:
        yield SmallDisk(folder)
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)

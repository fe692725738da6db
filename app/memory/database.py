"""Opening the memory's SQLite file: WAL mode, checked, migrated; or, when it cannot be
used, moved aside for a fresh one (damaged or not a database: only a failed check counts
as damage), or the memories kept in RAM (no room, no permission, a newer Companion's
file, another program holding it locked past `OPEN_WAIT_S`: a backup tool or a second
copy of the app; the file is left as it is). Each such decision is told in words
through `notices`."""

from __future__ import annotations

import errno
import logging
import shutil
import sqlite3
import time
from pathlib import Path

from app.memory.schema import SCHEMA_VERSION, NewerSchema, migrate, schema_version

log = logging.getLogger(__name__)

OPEN_WAIT_S = 15.0  # a lock at start is waited for this long (opening is off the turn's path)


def connect(
    path: Path | None, busy_timeout_s: float, notices: list[str], *, wait_s: float | None = None
) -> tuple[sqlite3.Connection, bool]:
    """A connection to the memory file at `path` (None: RAM), and whether it is in RAM.
    A lock is waited for `wait_s` (default `busy_timeout_s`: opened on a turn's path,
    it must not hold the turn up; `MemoryStore.open`, off it, waits `OPEN_WAIT_S`)."""
    if path is None:
        return _ram(), True
    wait = busy_timeout_s if wait_s is None else max(busy_timeout_s, wait_s)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = _file(path, wait)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        return conn, False
    except NewerSchema as exc:
        notices.append(
            f"The memory file {path} was written by a newer Companion ({exc}); it is "
            "left as it is, and nothing is remembered until you update Companion."
        )
    except (sqlite3.DatabaseError, OSError) as exc:
        why = _unusable(exc)
        if _locked(exc):
            notices.append(
                f"The memory file {path} is in use by another program (it kept it locked "
                f"for {wait:g} seconds): it is left as it is, and memories are kept "
                "only until Companion closes. Close that program and start Companion again."
            )
        elif why is None:
            full = _is_full(exc, path.parent)
            notices.append(
                f"The memory file {path} cannot be used "
                f"({'the disk is full' if full else describe(exc)}): memories are kept "
                "only until Companion closes."
            )
        else:
            return _replace(path, why, busy_timeout_s, notices)
    return _ram(), True


def _file(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
    )
    try:
        found = schema_version(conn)  # before any write: a newer file stays as it is
        if found > SCHEMA_VERSION:
            raise NewerSchema(found)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")  # a forgotten memory's text is erased
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed ({check})")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _replace(
    path: Path, why: str, busy_timeout_s: float, notices: list[str]
) -> tuple[sqlite3.Connection, bool]:
    """Move an unusable file (and its WAL files) aside and start a fresh one."""
    aside = path.with_name(f"{path.name}.unusable-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists():
                part.replace(aside.with_name(aside.name + suffix))
        conn = _file(path, busy_timeout_s)
    except (sqlite3.DatabaseError, OSError) as exc:
        notices.append(
            f"The memory file {path} cannot be used ({why}) and could not be replaced "
            f"({describe(exc, path.parent)}): memories are kept only until Companion closes."
        )
        return _ram(), True
    # Info, not a warning: the notice below is what the user reads (once).
    log.info("memory file %s unusable (%s): moved aside to %s", path, why, aside)
    notices.append(
        f"The memory file could not be used ({why}): it was moved aside to {aside} and "
        "a new, empty memory was started."
    )
    return conn, False


def _ram() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(conn)
    return conn


def describe(exc: BaseException, folder: Path | None = None) -> str:
    """A SQLite failure in the user's words (`folder`: where the file is, to tell a full
    disk behind a plain "disk I/O error")."""
    text = str(exc)
    if _is_full(exc, folder):
        return "the disk is full; free some space and the memories after that are saved again"
    if _locked(exc):
        return "the memory file is in use by another program; close it and try again"
    if "readonly" in text or "read-only" in text:
        return "the memory file cannot be written (it is read-only)"
    return text


ALMOST_FULL_BYTES = 256 * 1024  # less free than this: an I/O error there is a full disk


def _is_full(exc: BaseException, folder: Path | None = None) -> bool:
    if "full" in str(exc) or getattr(exc, "errno", None) == errno.ENOSPC:
        return True
    # SQLite says "disk I/O error" when it cannot grow its WAL files on a full disk.
    if folder is None or "i/o error" not in str(exc).lower():
        return False
    try:
        return shutil.disk_usage(folder).free < ALMOST_FULL_BYTES
    except OSError:
        return False


def _locked(exc: BaseException) -> bool:
    """Another program holds the file (waited for; never damage)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _unusable(exc: BaseException) -> str | None:
    """Why a file cannot be used at all (damaged, not a database), or None."""
    text = str(exc).lower()
    for sign, why in (
        ("not a database", "it is not a database"),
        ("malformed", "it is damaged"),
        ("corrupt", "it is damaged"),
        ("unsupported file format", "it is damaged"),
    ):
        if sign in text:
            return why
    return None

"""Conversation history: a protocol, an in-memory store and an append-only file store.

The file store keeps one conversation per file and writes one JSON record per
line, fsyncing each append, so a crash mid-write can at worst leave one torn last
line, which loading skips: earlier turns are never corrupted. Amendments (what the
user actually heard of an interrupted reply) and titles are appended records too,
never rewrites. Images are stored as file references, never as base64.

Every line is checked against its schema (`history_records`); a file with lines
that do not fit is repaired: a complete new file is written and synced, the old one
kept as `<name>.bad`, and only then renamed over; if that cannot be done (a full
disk) the file stays as it was. A write that fails (a full disk) is kept in memory
and written, in order, by the next write or `retry_unsaved()`; it raises
`HistoryNotSaved` so the turn can say so. Problems are told once each, in words
(`drain_notices`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from app.agent.durable import append_whole, free_backup_name, fsync_dir, write_new
from app.agent.held_words import fold_held, held_path
from app.agent.history_records import TITLE_CHARS, Replay, check_id, is_app_id, replay_line
from app.llm import Msg
from app.text_input import readable

log = logging.getLogger(__name__)

__all__ = [
    "TITLE_CHARS",
    "ConversationInfo",
    "ConversationStorage",
    "FileStorage",
    "HistoryNotSaved",
    "InMemoryStorage",
    "check_id",
    "write_problem_words",
]


@dataclass(slots=True, frozen=True)
class ConversationInfo:
    """A conversation as a list shows it: its id, title and size."""

    uid: str
    title: str
    message_count: int


def write_problem_words(exc: OSError) -> str:
    """Why a write failed, in the user's words, with the system's words after them."""
    reasons = {
        errno.ENOSPC: "the disk is full",
        getattr(errno, "EDQUOT", errno.ENOSPC): "the disk quota is used up",
        errno.EROFS: "the disk is read-only",
        errno.EACCES: "the history folder may not be written to",
        errno.EPERM: "the history folder may not be written to",
        errno.EIO: "the disk reported an error",
    }
    detail = exc.strerror or str(exc) or type(exc).__name__
    reason = reasons.get(exc.errno or 0)
    return f"{reason} ({detail})" if reason else detail


class HistoryNotSaved(OSError):
    """A write to history failed (a full disk, a read-only folder). What it held is kept
    in memory and written, in order, by the next write or `retry_unsaved()`;
    `unsaved` is how many messages and changes wait."""

    def __init__(self, reason: OSError, unsaved: int) -> None:
        super().__init__(reason.errno, reason.strerror or str(reason))
        self.unsaved = unsaved


@runtime_checkable
class ConversationStorage(Protocol):
    """Conversations by id (`check_id` is the rule for ids). Renaming, amending or
    deleting a conversation that does not exist is a `ValueError`."""

    def create_history(self, conf_uid: str) -> str: ...

    def list_histories(self, conf_uid: str) -> list[str]:
        """The ids, oldest first: the last one is the newest the app made."""
        ...

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]: ...

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None: ...

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        """Replace the last message (an interrupted reply becomes what was heard)."""
        ...

    def amend(self, conf_uid: str, history_uid: str, index: int, message: Msg) -> None:
        """Replace message `index` (negative counts from the end, as in Python)."""
        ...

    def rename_history(self, conf_uid: str, history_uid: str, title: str) -> None: ...

    def list_conversations(self, conf_uid: str) -> list[ConversationInfo]: ...

    def delete_history(self, conf_uid: str, history_uid: str) -> None: ...

    def drain_notices(self) -> list[str]:
        """Problems found while loading (a damaged file), once each, in words."""
        ...

    def unsaved(self) -> int:
        """How many messages and changes could not be written yet (0: all saved)."""
        ...

    def retry_unsaved(self) -> int:
        """Try to write what could not be written; how many still wait."""
        ...

    @property
    def write_problem(self) -> OSError | None:
        """Why the last write failed, while something waits to be written."""
        ...


_uid_lock = threading.Lock()
_last_uid_us = 0


def _new_uid() -> str:
    """A new conversation id that sorts after every id made before it (newest last,
    even within one second): local time to the microsecond, then a random tail."""
    global _last_uid_us
    with _uid_lock:
        now_us = max(time.time_ns() // 1000, _last_uid_us + 1)
        _last_uid_us = now_us
    seconds, micros = divmod(now_us, 1_000_000)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(seconds))
    return f"{stamp}{micros:06d}-{uuid.uuid4().hex[:6]}"


def _creation_order(uid: str) -> tuple[bool, str]:
    """Ids the app made sort by when they were made, after any other (hand-made) name."""
    return is_app_id(uid), uid


def _default_title(messages: Sequence[Msg]) -> str:
    for msg in messages:
        if msg.role == "user" and msg.text.strip():
            text = " ".join(msg.text.split())
            return text if len(text) <= 60 else text[:59] + "…"
    return "New conversation"


# Base64 never belongs in history: images are file references. A data URL that slipped
# into some text (a provider's native block, a tool's output) is cut out on the way in.
_DATA_URL = re.compile(r"data:([\w.+/-]+);base64,[A-Za-z0-9+/=\s]{16,}")


def _scrub(text: str) -> str:
    return _DATA_URL.sub(r"data:\1;base64,[removed]", text) if "base64," in text else text


class InMemoryStorage:
    def __init__(self) -> None:
        self._data: dict[tuple[str, str], list[Msg]] = {}
        self._titles: dict[tuple[str, str], str] = {}

    def _known(self, conf_uid: str, history_uid: str) -> list[Msg]:
        key = (check_id(conf_uid, "configuration"), check_id(history_uid))
        if key not in self._data:
            raise ValueError(f"there is no conversation {history_uid!r}")
        return self._data[key]

    def create_history(self, conf_uid: str) -> str:
        uid = _new_uid()
        self._data[(check_id(conf_uid, "configuration"), uid)] = []
        return uid

    def list_histories(self, conf_uid: str) -> list[str]:
        check_id(conf_uid, "configuration")
        return sorted((h for c, h in self._data if c == conf_uid), key=_creation_order)

    def list_conversations(self, conf_uid: str) -> list[ConversationInfo]:
        return [
            ConversationInfo(
                uid,
                self._titles.get((conf_uid, uid)) or _default_title(self._data[(conf_uid, uid)]),
                len(self._data[(conf_uid, uid)]),
            )
            for uid in self.list_histories(conf_uid)
        ]

    def rename_history(self, conf_uid: str, history_uid: str, title: str) -> None:
        self._known(conf_uid, history_uid)
        self._titles[(conf_uid, history_uid)] = " ".join(title.split())[:TITLE_CHARS]

    def amend(self, conf_uid: str, history_uid: str, index: int, message: Msg) -> None:
        msgs = self._known(conf_uid, history_uid)
        if -len(msgs) <= index < len(msgs):
            msgs[index] = message.model_copy(deep=True)

    def drain_notices(self) -> list[str]:
        return []

    def unsaved(self) -> int:
        return 0

    def retry_unsaved(self) -> int:
        return 0

    @property
    def write_problem(self) -> OSError | None:
        return None

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]:
        key = (check_id(conf_uid, "configuration"), check_id(history_uid))
        return [m.model_copy(deep=True) for m in self._data.get(key, [])]

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None:
        key = (check_id(conf_uid, "configuration"), check_id(history_uid))
        self._data.setdefault(key, []).extend(m.model_copy(deep=True) for m in messages)

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        self.amend(conf_uid, history_uid, -1, message)

    def delete_history(self, conf_uid: str, history_uid: str) -> None:
        self._known(conf_uid, history_uid)
        self._data.pop((conf_uid, history_uid), None)
        self._titles.pop((conf_uid, history_uid), None)


@dataclass(slots=True)
class _Chunk:
    """Bytes one write call meant to append, and how many messages/changes they hold."""

    data: bytes
    records: int


class FileStorage:
    """`<root>/<conf_uid>/<history_uid>.jsonl`, one conversation per file, append-only
    with fsync (see the module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.RLock()
        self._notices: list[str] = []
        self._told: set[str] = set()
        self._pending: dict[Path, list[_Chunk]] = {}  # what could not be written, in order
        self._write_problem: OSError | None = None

    def _path(self, conf_uid: str, history_uid: str) -> Path:
        check_id(conf_uid, "configuration")
        return self.root / conf_uid / f"{check_id(history_uid)}.jsonl"

    def _exists(self, path: Path) -> bool:
        return path in self._pending or path.is_file()

    def _require(self, conf_uid: str, history_uid: str) -> Path:
        path = self._path(conf_uid, history_uid)
        if not self._exists(path):
            raise ValueError(f"there is no conversation {history_uid!r}")
        return path

    def _tell(self, notice: str) -> None:
        """`notice` for the user, once per storage (a list is read again and again)."""
        if notice in self._told:
            return
        self._told.add(notice)
        log.warning("%s", notice)
        self._notices.append(notice)

    def drain_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    # ----- listing ----------------------------------------------------------------------
    def create_history(self, conf_uid: str) -> str:
        uid = _new_uid()
        path = self._path(conf_uid, uid)
        with self._lock:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                append_whole(path, b"")
                fsync_dir(path.parent)
            except OSError as exc:
                # Made when there is room again: the conversation exists from now on.
                self._pending.setdefault(path, []).append(_Chunk(b"", 1))
                self._write_problem = exc
                log.error("could not create the conversation %s (%s)", uid, exc)
        return uid

    def list_histories(self, conf_uid: str) -> list[str]:
        folder = self.root / check_id(conf_uid, "configuration")
        uids: set[str] = set()
        with self._lock:
            try:
                entries = list(folder.iterdir())
            except FileNotFoundError:
                entries = []
            except OSError as exc:
                self._tell(f"The saved conversations in {folder} cannot be listed ({exc}).")
                entries = []
            for entry in entries:
                if entry.name.endswith(".jsonl.tmp"):
                    with contextlib.suppress(OSError):
                        entry.unlink()  # a repair cut short by a crash: the original is whole
                elif entry.suffix == ".jsonl" and _valid(entry.stem) and entry.is_file():
                    uids.add(entry.stem)
            uids.update(p.stem for p in self._pending if p.parent == folder)
        return sorted(uids, key=_creation_order)

    def list_conversations(self, conf_uid: str) -> list[ConversationInfo]:
        out = []
        for uid in self.list_histories(conf_uid):
            replay = self._read(conf_uid, uid)
            if replay is None:
                continue  # unreadable: told once, and not shown as an empty conversation
            title = replay.title or _default_title(replay.messages)
            out.append(ConversationInfo(uid, title, len(replay.messages)))
        return out

    # ----- reading ----------------------------------------------------------------------
    def load(self, conf_uid: str, history_uid: str) -> list[Msg]:
        fold_held(self, conf_uid, history_uid, self._path(conf_uid, history_uid))
        return self.load_written(conf_uid, history_uid)

    def load_written(self, conf_uid: str, history_uid: str) -> list[Msg]:
        """The conversation as written (a message a crash left held not added yet)."""
        replay = self._read(conf_uid, history_uid)
        return [] if replay is None else replay.messages

    def _read(self, conf_uid: str, history_uid: str) -> Replay | None:
        """The conversation as written plus what waits to be written; a damaged file is
        repaired (see the module doc). None when the file cannot be read at all."""
        path = self._path(conf_uid, history_uid)
        with self._lock:
            try:
                raw = path.read_bytes() if path.is_file() else b""
            except OSError as exc:
                self._tell(
                    f"The saved conversation {history_uid} cannot be read ({exc}); it is "
                    "left as it is."
                )
                return None
            waiting = b"".join(chunk.data for chunk in self._pending.get(path, []))
        lines = raw.split(b"\n")
        replay = Replay()
        for number, line in enumerate(lines, 1):
            torn = number == len(lines)  # no newline after it: a write cut short by a crash
            problem = replay_line(replay, line)
            if problem is None:
                if line.strip():
                    replay.good.append(line)
            elif torn:
                log.info("%s ends in a write cut short by a crash; it was skipped", path)
            else:
                log.warning("%s line %d is left out: %s", path, number, problem)
                replay.damaged.append(problem)
        for line in waiting.split(b"\n"):
            replay_line(replay, line)
        if replay.damaged:
            self._repair(path, raw, replay)
        return replay

    def _repair(self, path: Path, raw: bytes, replay: Replay) -> None:
        """A new file of the good lines, synced, renamed over the old one only after the
        old one is kept as `.bad`; on any failure the file stays exactly as it was."""
        name = f'"{replay.title or _default_title(replay.messages)}" ({path.stem})'
        count = len(replay.damaged)
        with self._lock:
            try:
                if path.stat().st_size != len(raw):
                    return  # written to meanwhile: the next read repairs it
            except OSError:
                return
            backup = free_backup_name(path)
            tmp = path.with_name(path.name + ".tmp")
            made_backup = False
            try:
                write_new(tmp, b"".join(line + b"\n" for line in replay.good))
                try:
                    os.link(path, backup)  # no room needed, where the system has links
                except OSError:
                    write_new(backup, raw)
                made_backup = True
                os.replace(tmp, path)
                fsync_dir(path.parent)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
                if made_backup:
                    with contextlib.suppress(OSError):
                        backup.unlink(missing_ok=True)
                log.error("could not repair %s: %s", path, exc)
                self._tell(
                    f"The saved conversation {name} has {count} unreadable record(s), left "
                    f"out when it is read. It could not be repaired ({exc}), so the file is "
                    "left as it was."
                )
                return
        self._tell(
            f"The saved conversation {name} had {count} unreadable record(s) "
            f"({replay.damaged[0]}); they were left out. The damaged file is kept as {backup}."
        )

    # ----- writing ----------------------------------------------------------------------
    def unsaved(self) -> int:
        with self._lock:
            return sum(chunk.records for queue in self._pending.values() for chunk in queue)

    @property
    def write_problem(self) -> OSError | None:
        """Why the last write failed, while something waits to be written."""
        return self._write_problem if self.unsaved() else None

    def retry_unsaved(self) -> int:
        with self._lock:
            for path in list(self._pending):
                try:
                    self._flush(path)
                except OSError as exc:
                    self._write_problem = exc
            return self.unsaved()

    def _flush(self, path: Path) -> None:
        """Write what waits for `path`, oldest first; each chunk leaves the queue only
        once it is on disk, so nothing is written twice or out of order."""
        queue = self._pending.get(path, [])
        if queue:
            path.parent.mkdir(parents=True, exist_ok=True)
        while queue:
            append_whole(path, queue[0].data)
            queue.pop(0)
        self._pending.pop(path, None)

    def _write(self, path: Path, records: list[dict[str, object]]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        # A lone surrogate (from a broken stream) cannot be UTF-8: it becomes U+FFFD.
        data = readable(_scrub(text)).encode("utf-8")
        with self._lock:
            self._pending.setdefault(path, []).append(_Chunk(data, len(records)))
            try:
                self._flush(path)
            except OSError as exc:
                self._write_problem = exc
                # Info: the user is told in words (the window's notice, a command's line).
                log.info("could not save the conversation %s (%s); kept to retry", path, exc)
                raise HistoryNotSaved(exc, self.unsaved()) from exc

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None:
        records: list[dict[str, object]] = [
            {"op": "add", "msg": m.model_dump(mode="json")} for m in messages
        ]
        if records:
            self._write(self._path(conf_uid, history_uid), records)

    def amend(self, conf_uid: str, history_uid: str, index: int, message: Msg) -> None:
        self._write(
            self._require(conf_uid, history_uid),
            [{"op": "amend", "index": index, "msg": message.model_dump(mode="json")}],
        )

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        self.amend(conf_uid, history_uid, -1, message)

    def rename_history(self, conf_uid: str, history_uid: str, title: str) -> None:
        title = " ".join(title.split())[:TITLE_CHARS]
        self._write(self._require(conf_uid, history_uid), [{"op": "meta", "title": title}])

    def delete_history(self, conf_uid: str, history_uid: str) -> None:
        path = self._require(conf_uid, history_uid)
        with self._lock:
            self._pending.pop(path, None)  # deleted for good: nothing of it is written later
            path.unlink(missing_ok=True)
            held_path(path).unlink(missing_ok=True)


def _valid(uid: str) -> bool:
    try:
        check_id(uid)
    except ValueError:
        return False
    return True

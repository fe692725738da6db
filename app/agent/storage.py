"""Conversation history: a protocol, an in-memory store and an append-only file store.

The file store keeps one conversation per file and writes one JSON record per
line, fsyncing each append, so a crash mid-write can at worst leave one torn last
line, which loading skips: earlier turns are never corrupted. Amendments (what the
user actually heard of an interrupted reply) and titles are appended records too,
never rewrites. Images are stored as file references, never as base64. A file
damaged some other way is backed up as `<name>.bad`, its readable records are
kept, and a notice says so (`drain_notices`).
"""

from __future__ import annotations

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

from app.llm import Msg

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class ConversationInfo:
    """A conversation as a list shows it: its id, title and size."""

    uid: str
    title: str
    message_count: int


@runtime_checkable
class ConversationStorage(Protocol):
    def create_history(self, conf_uid: str) -> str: ...

    def list_histories(self, conf_uid: str) -> list[str]: ...

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

    def create_history(self, conf_uid: str) -> str:
        uid = _new_uid()
        self._data[(conf_uid, uid)] = []
        return uid

    def list_histories(self, conf_uid: str) -> list[str]:
        return sorted(h for c, h in self._data if c == conf_uid)

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
        self._data.setdefault((conf_uid, history_uid), [])
        self._titles[(conf_uid, history_uid)] = title.strip()

    def amend(self, conf_uid: str, history_uid: str, index: int, message: Msg) -> None:
        msgs = self._data.get((conf_uid, history_uid))
        if msgs and -len(msgs) <= index < len(msgs):
            msgs[index] = message.model_copy(deep=True)

    def drain_notices(self) -> list[str]:
        return []

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]:
        return [m.model_copy(deep=True) for m in self._data.get((conf_uid, history_uid), [])]

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None:
        self._data.setdefault((conf_uid, history_uid), []).extend(
            m.model_copy(deep=True) for m in messages
        )

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        msgs = self._data.get((conf_uid, history_uid))
        if msgs:
            msgs[-1] = message.model_copy(deep=True)

    def delete_history(self, conf_uid: str, history_uid: str) -> None:
        self._data.pop((conf_uid, history_uid), None)
        self._titles.pop((conf_uid, history_uid), None)


_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class FileStorage:
    """`<root>/<conf_uid>/<history_uid>.jsonl`, one conversation per file, append-only
    with fsync."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._notices: list[str] = []

    def _path(self, conf_uid: str, history_uid: str) -> Path:
        for part in (conf_uid, history_uid):
            if not _SAFE.match(part):
                raise ValueError(f"invalid history id {part!r}")
        return self.root / conf_uid / f"{history_uid}.jsonl"

    def create_history(self, conf_uid: str) -> str:
        uid = _new_uid()
        path = self._path(conf_uid, uid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        return uid

    def list_histories(self, conf_uid: str) -> list[str]:
        folder = self.root / conf_uid
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.jsonl"))

    def drain_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def _read(self, conf_uid: str, history_uid: str) -> tuple[list[Msg], str | None]:
        """The messages and the title; a damaged file is repaired (see the module doc)."""
        path = self._path(conf_uid, history_uid)
        if not path.is_file():
            return [], None
        raw_lines = path.read_bytes().split(b"\n")
        torn_tail = raw_lines[-1]  # no newline after it: a write cut short by a crash
        messages: list[Msg] = []
        title: str | None = None
        good: list[bytes] = []
        damaged = 0
        for number, raw in enumerate(raw_lines, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                op = record.get("op", "add")
                if op == "meta":
                    title = str(record.get("title", "")) or None
                    good.append(raw)
                    continue
                msg = Msg.model_validate(record["msg"])
            except (ValueError, KeyError, TypeError, AttributeError):
                if raw is torn_tail:
                    log.info("%s ends in a write cut short by a crash; it was skipped", path)
                else:
                    log.warning("%s line %d is damaged", path, number)
                    damaged += 1
                continue
            good.append(raw)
            if op == "amend":
                index = int(record.get("index", -1))
                if -len(messages) <= index < len(messages):
                    messages[index] = msg
            else:
                messages.append(msg)
        if damaged:
            self._repair(path, good, damaged)
        return messages, title

    def _repair(self, path: Path, good: list[bytes], damaged: int) -> None:
        backup = path.with_name(path.name + ".bad")
        number = 1
        while backup.exists():
            number += 1
            backup = path.with_name(f"{path.name}.{number}.bad")
        with self._lock:
            try:
                os.replace(path, backup)
                tmp = path.with_name(path.name + ".tmp")
                with tmp.open("wb") as fh:
                    fh.write(b"".join(line + b"\n" for line in good))
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except OSError as exc:
                log.error("could not repair %s: %s", path, exc)
        notice = (
            f"The saved conversation {path.stem} was damaged: {damaged} unreadable "
            f"record(s) were left out. The damaged file is kept as {backup}."
        )
        log.warning(notice)
        self._notices.append(notice)

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]:
        return self._read(conf_uid, history_uid)[0]

    def list_conversations(self, conf_uid: str) -> list[ConversationInfo]:
        out = []
        for uid in self.list_histories(conf_uid):
            messages, title = self._read(conf_uid, uid)
            out.append(ConversationInfo(uid, title or _default_title(messages), len(messages)))
        return out

    def _write(self, path: Path, records: list[dict[str, object]]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        data = _scrub(text).encode()
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("ab") as fh:
                # A torn line from an earlier crash must not swallow this record.
                if fh.tell() > 0:
                    with path.open("rb") as check:
                        check.seek(-1, os.SEEK_END)
                        if check.read(1) != b"\n":
                            data = b"\n" + data
                # One write call per append: a crash cuts at most this last line.
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None:
        records: list[dict[str, object]] = [
            {"op": "add", "msg": m.model_dump(mode="json")} for m in messages
        ]
        if records:
            self._write(self._path(conf_uid, history_uid), records)

    def amend(self, conf_uid: str, history_uid: str, index: int, message: Msg) -> None:
        self._write(
            self._path(conf_uid, history_uid),
            [{"op": "amend", "index": index, "msg": message.model_dump(mode="json")}],
        )

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        self.amend(conf_uid, history_uid, -1, message)

    def rename_history(self, conf_uid: str, history_uid: str, title: str) -> None:
        self._write(self._path(conf_uid, history_uid), [{"op": "meta", "title": title.strip()}])

    def delete_history(self, conf_uid: str, history_uid: str) -> None:
        self._path(conf_uid, history_uid).unlink(missing_ok=True)

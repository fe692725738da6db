"""Conversation history: a protocol, an in-memory store and an append-only file store.

The file store writes one JSON record per line and fsyncs each append, so a
crash mid-write can at worst leave one torn last line, which loading skips:
earlier turns are never corrupted. Amendments (what the user actually heard of
an interrupted reply) are appended records too, never rewrites.
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
from pathlib import Path
from typing import Protocol, runtime_checkable

from app.llm import Msg

log = logging.getLogger(__name__)


@runtime_checkable
class ConversationStorage(Protocol):
    def create_history(self, conf_uid: str) -> str: ...

    def list_histories(self, conf_uid: str) -> list[str]: ...

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]: ...

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None: ...

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        """Replace the last message (an interrupted reply becomes what was heard)."""
        ...

    def delete_history(self, conf_uid: str, history_uid: str) -> None: ...


def _new_uid() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:8]


class InMemoryStorage:
    def __init__(self) -> None:
        self._data: dict[tuple[str, str], list[Msg]] = {}

    def create_history(self, conf_uid: str) -> str:
        uid = _new_uid()
        self._data[(conf_uid, uid)] = []
        return uid

    def list_histories(self, conf_uid: str) -> list[str]:
        return sorted(h for c, h in self._data if c == conf_uid)

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


_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class FileStorage:
    """`<root>/<conf_uid>/<history_uid>.jsonl`, append-only with fsync."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

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

    def load(self, conf_uid: str, history_uid: str) -> list[Msg]:
        path = self._path(conf_uid, history_uid)
        if not path.is_file():
            return []
        messages: list[Msg] = []
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                    msg = Msg.model_validate(record["msg"])
                except (ValueError, KeyError, TypeError):
                    log.warning("%s line %d is damaged and was skipped", path, number)
                    continue
                if record.get("op") == "amend" and messages:
                    messages[-1] = msg
                else:
                    messages.append(msg)
        return messages

    def _write(self, path: Path, records: list[dict[str, object]]) -> None:
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("ab") as fh:
                # A torn line from an earlier crash must not swallow this record.
                if fh.tell() > 0:
                    with path.open("rb") as check:
                        check.seek(-1, os.SEEK_END)
                        if check.read(1) != b"\n":
                            data = b"\n" + data
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None:
        records: list[dict[str, object]] = [
            {"op": "add", "msg": m.model_dump(mode="json")} for m in messages
        ]
        if records:
            self._write(self._path(conf_uid, history_uid), records)

    def amend_last(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        self._write(
            self._path(conf_uid, history_uid),
            [{"op": "amend", "msg": message.model_dump(mode="json")}],
        )

    def delete_history(self, conf_uid: str, history_uid: str) -> None:
        self._path(conf_uid, history_uid).unlink(missing_ok=True)

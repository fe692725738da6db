"""Memories as a JSON file the user can keep, read, edit and bring back:

    {"format": "companion-memories", "version": 1, "character": "Mika",
     "exported_at": "2025-05-01T10:00:00+00:00",
     "memories": [{"text": "...", "kind": "fact", "importance": 0.5, "source": "explicit",
                   "conversation": "...", "turn": 3, "created_at": "...",
                   "updated_at": "...", "recalled_count": 2}]}

Only `text` is needed in an entry; times are ISO 8601. Reading checks the whole file
before anything is stored, and says what is wrong (the entry's number and field).
The file is written whole to a temporary name, synced, then renamed over the target.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.agent.durable import replace_whole
from app.memory.store import KINDS, MAX_TEXT, MemoryDraft, MemoryItem

FORMAT = "companion-memories"
VERSION = 1
MAX_FILE_BYTES = 50 * 1024 * 1024


class ExchangeError(Exception):
    """A memory file could not be written or read; the message says why, in words."""


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=MAX_TEXT * 4)
    kind: str = "fact"
    importance: float = Field(0.5, ge=0.0, le=1.0)
    source: str = "imported"
    conversation: str = ""
    turn: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    recalled_count: int = Field(0, ge=0)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        return value if value in KINDS else "fact"


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: str
    version: int = Field(ge=1)
    character: str = ""
    memories: list[_Entry]


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _stamp(when: datetime | None) -> float | None:
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def to_document(character: str, items: Sequence[MemoryItem]) -> dict[str, object]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "character": character,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "memories": [
            {
                "text": item.text,
                "kind": item.kind,
                "importance": round(item.importance, 3),
                "source": item.source,
                "conversation": item.conversation,
                "turn": item.turn,
                "created_at": _iso(item.created_at),
                "updated_at": _iso(item.updated_at),
                "recalled_count": item.recalled_count,
            }
            for item in sorted(items, key=lambda i: i.id)
        ],
    }


def write_file(path: Path, character: str, items: Sequence[MemoryItem]) -> None:
    """Write the memories to `path` whole (a crash leaves the old file or the new one)."""
    data = json.dumps(to_document(character, items), ensure_ascii=False, indent=2) + "\n"
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_whole(path, data)
    except OSError as exc:
        why = "the disk is full" if exc.errno == 28 else (exc.strerror or str(exc))
        raise ExchangeError(f"Could not write {path}: {why}.") from exc


def read_file(path: Path) -> list[MemoryDraft]:
    """The memories in a file `write_file` wrote (or one written by hand in its shape)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ExchangeError(f"{path} is too large for a memory file (over 50 MB).")
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ExchangeError(f"{path} is not a text file (UTF-8 JSON is expected).") from exc
    except OSError as exc:
        raise ExchangeError(f"Could not read {path}: {exc.strerror or exc}.") from exc
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise ExchangeError(f"{path} is not valid JSON ({exc}).") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ExchangeError(
            f"{path} is not a Companion memory file (it needs \"format\": \"{FORMAT}\")."
        )
    try:
        parsed = _File.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ExchangeError(f"{path} has a problem at {where}: {first['msg']}.") from exc
    if parsed.version > VERSION:
        raise ExchangeError(
            f"{path} was written by a newer Companion (version {parsed.version}); update "
            "Companion to read it."
        )
    return [
        MemoryDraft(
            text=entry.text,
            kind=entry.kind,
            importance=entry.importance,
            source="imported",
            conversation=entry.conversation,
            turn=entry.turn,
            created_at=_stamp(entry.created_at),
            updated_at=_stamp(entry.updated_at),
            recalled_count=entry.recalled_count,
        )
        for entry in parsed.memories
    ]

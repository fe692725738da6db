"""The long-term memory store: one SQLite file in the data folder (WAL, full-text index).

Every change is one transaction, so a process killed in the middle of a write loses
at most that change; synchronous=NORMAL in WAL mode keeps committed changes through a
crash of the app (only a power cut can take the last few back).

A file that cannot be used is never left in the way: a damaged file (or one another
program keeps locked) is moved aside, its name told in `drain_notices()`, and a fresh
file is started; when not even that can be made (no room, no permission) the store
keeps its memories in RAM until the app closes, and says so. A write that fails
(a full disk) raises `MemoryStoreError` in words; nothing is half written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.llm.request import estimate_text_tokens
from app.memory.database import OPEN_WAIT_S, connect, describe
from app.memory.terms import index_terms, match_query, query_terms, quoted

log = logging.getLogger(__name__)

KINDS = ("fact", "preference", "person", "event", "plan", "other")
SOURCES = ("extracted", "explicit", "edited", "imported")
BUSY_TIMEOUT_S = 2.0  # how long a write waits for another connection before "locked"
MAX_TEXT = 500  # characters of one memory: a note, not a document
# A search term in more than this share of the memories (and in more than the floor)
# is left out of the search: it tells no memory apart.
COMMON_SHARE, COMMON_FLOOR = 0.05, 100

_COLUMNS = (
    "id, character, text, kind, importance, source, conversation, turn, created_at, "
    "updated_at, recalled_count, last_recalled_at, tokens"
)
_M_COLUMNS = ", ".join("m." + name.strip() for name in _COLUMNS.split(","))
# What an insert writes: the columns of a memory, with `terms` after its text.
_INSERTED = _COLUMNS.replace("text,", "text, terms,")
_SLOTS = ", ".join("?" for _ in _INSERTED.split(","))


class MemoryStoreError(Exception):
    """A memory could not be read or saved; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One stored memory."""

    id: int
    character: str
    text: str
    kind: str = "fact"
    importance: float = 0.5
    source: str = "extracted"
    conversation: str = ""
    turn: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    recalled_count: int = 0
    last_recalled_at: float | None = None
    tokens: int = 0  # about how many tokens its text is (counted once, when written)


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """A memory about to be stored (the store gives it its id and times)."""

    text: str
    kind: str = "fact"
    importance: float = 0.5
    source: str = "extracted"
    conversation: str = ""
    turn: int | None = None
    created_at: float | None = None
    updated_at: float | None = None
    recalled_count: int = 0


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """A turn waiting to be looked at for memories."""

    conversation: str
    turn: int  # the index of the user's message in the conversation's history
    said: str  # the user's message
    context: tuple[str, ...] = ()  # the user's messages before it (oldest first)


def clean_text(text: str) -> str:
    """One line, trimmed, at most `MAX_TEXT` characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rstrip() + "…"


def _kind(kind: str) -> str:
    kind = kind.strip().lower()
    return kind if kind in KINDS else "fact"


def _importance(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _item(row: Sequence[object]) -> MemoryItem:
    return MemoryItem(*row)  # type: ignore[arg-type]  # the columns of _COLUMNS, in order


_CHANGE = (
    "UPDATE memories SET text = ?, terms = ?, kind = ?, importance = ?, source = ?, "
    "updated_at = ?, tokens = ? WHERE id = ?"
)


def _changed(item: MemoryItem) -> tuple[object, ...]:
    """`item`'s values for `_CHANGE`, before the id."""
    return (
        item.text,
        index_terms(item.text),
        item.kind,
        item.importance,
        item.source,
        item.updated_at,
        item.tokens,
    )


def _values(item: MemoryItem) -> tuple[object, ...]:
    """`item`'s values for the columns of `_INSERTED` after the id."""
    return (
        item.character,
        item.text,
        index_terms(item.text),
        item.kind,
        item.importance,
        item.source,
        item.conversation,
        item.turn,
        item.created_at,
        item.updated_at,
        item.recalled_count,
        item.last_recalled_at,
        item.tokens,
    )


class MemoryStore:
    """The memories of every character, in one SQLite file (`path`; None: in RAM only).

    The file is opened at the first use (or by `open()`); all calls may come from any
    thread, one at a time.
    """

    def __init__(self, path: Path | None, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._notices: list[str] = []
        self.in_ram = path is None  # True too when the file could not be used
        self._folder = path.parent if path is not None else None

    # ----- opening ---------------------------------------------------------------------
    def open(self) -> None:
        """Open (and if needed create, migrate or replace) the file now, off the turns'
        path (at start, in a thread): a lock another program holds is waited for
        `OPEN_WAIT_S` here, and only `busy_timeout_s` when the first use opens it."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect(OPEN_WAIT_S)

    def drain_notices(self) -> list[str]:
        """What the user should read about the file (moved aside, kept in RAM), once."""
        with self._lock:
            notices, self._notices = self._notices, []
            return notices

    def _connect(self, wait_s: float | None = None) -> sqlite3.Connection:
        conn, self.in_ram = connect(self.path, self.busy_timeout_s, self._notices, wait_s=wait_s)
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    # ----- plumbing --------------------------------------------------------------------
    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise MemoryStoreError(
                    f"Could not read the memories: {describe(exc, self._folder)}."
                ) from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One transaction: all of it is stored, or none of it."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                # Info: the error's words reach the user as a notice, once.
                log.info("a memory could not be saved: %s", exc)
                raise MemoryStoreError(
                    f"Could not save the memory: {describe(exc, self._folder)}."
                ) from exc

    # ----- reading ---------------------------------------------------------------------
    def get(self, memory_id: int) -> MemoryItem | None:
        with self._reading() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
            found = row.fetchone()
        return _item(found) if found else None

    def all(self, character: str, *, limit: int = -1) -> list[MemoryItem]:
        """Every memory of `character` (or the `limit` newest), the most recently
        changed first."""
        return self._listed(character, "updated_at DESC, id DESC", limit)

    def _listed(self, character: str, order: str, limit: int) -> list[MemoryItem]:
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE character = ? ORDER BY {order} LIMIT ?",
                (character, limit),
            ).fetchall()
        return [_item(row) for row in rows]

    def count(self, character: str, *, up_to: int = -1) -> int:
        """How many memories `character` has (counting stops at `up_to`, when given)."""
        with self._reading() as conn:
            row = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories WHERE character = ? LIMIT ?)",
                (character, up_to),
            )
            return int(row.fetchone()[0])

    def characters(self) -> list[str]:
        with self._reading() as conn:
            rows = conn.execute("SELECT DISTINCT character FROM memories ORDER BY character")
            return [str(row[0]) for row in rows]

    def search(self, character: str, text: str, *, limit: int) -> list[tuple[MemoryItem, float]]:
        """The memories of `character` that share words with `text`, best first, each
        with its BM25 score (higher is better)."""
        with self._reading() as conn:
            query = self._selective_query(conn, text)
            if not query:
                return []
            rows = conn.execute(
                f"SELECT {_M_COLUMNS}, "
                "bm25(memories_fts) AS score FROM memories_fts "
                "JOIN memories AS m ON m.id = memories_fts.rowid "
                "WHERE memories_fts MATCH ? AND m.character = ? ORDER BY score LIMIT ?",
                (query, character, limit),
            ).fetchall()
        return [(_item(row[:-1]), -float(row[-1])) for row in rows]

    @staticmethod
    def _selective_query(conn: sqlite3.Connection, text: str) -> str:
        """The MATCH expression for `text` without the terms that are in so many memories
        that they tell none apart (BM25 would weigh them near zero, and ranking every
        memory holding them is what makes a search slow); the rarest term stays."""
        terms = query_terms(text)
        if len(terms) <= 1:
            return match_query(text)
        # About how many memories there are (ids only grow): without counting them all.
        newest = conn.execute("SELECT max(id) FROM memories").fetchone()
        documents = int(newest[0] or 0) if newest else 0
        if documents < COMMON_FLOOR:
            return match_query(text)
        counted = [
            (
                int(
                    conn.execute(
                        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                        (quoted(term),),
                    ).fetchone()[0]
                ),
                term,
            )
            for term in terms
        ]
        cap = max(COMMON_FLOOR, documents * COMMON_SHARE)
        kept = [term for found, term in counted if found <= cap] or [min(counted)[1]]
        return " OR ".join(quoted(term) for term in kept)

    def top(self, character: str, *, limit: int) -> list[MemoryItem]:
        """The most important memories of `character` (the newest first among equals)."""
        return self._listed(character, "importance DESC, updated_at DESC", limit)

    # ----- writing ---------------------------------------------------------------------
    def add(self, character: str, draft: MemoryDraft) -> MemoryItem:
        items = self.add_many(character, [draft])
        if not items:
            raise MemoryStoreError("A memory needs some text.")
        return items[0]

    def update(
        self,
        memory_id: int,
        *,
        text: str | None = None,
        kind: str | None = None,
        importance: float | None = None,
        source: str | None = None,
    ) -> MemoryItem:
        """Change a memory; `MemoryStoreError` if it is gone."""
        old = self.get(memory_id)
        if old is None:
            raise MemoryStoreError("That memory is gone (it was deleted meanwhile).")
        new_text = clean_text(text) if text is not None else old.text
        if not new_text:
            raise MemoryStoreError("A memory needs some text: delete it instead.")
        new = replace(
            old,
            text=new_text,
            kind=_kind(kind) if kind is not None else old.kind,
            importance=_importance(importance) if importance is not None else old.importance,
            source=source or old.source,
            updated_at=time.time(),
            tokens=estimate_text_tokens(new_text),
        )
        with self._writing() as conn:
            conn.execute(
                _CHANGE,
                (*_changed(new), memory_id),
            )
        return new

    def restore(self, item: MemoryItem) -> MemoryItem:
        """Put a memory back as it was (an undo): with its own id when that is free."""
        with self._writing() as conn:
            taken = conn.execute("SELECT 1 FROM memories WHERE id = ?", (item.id,)).fetchone()
            cursor = conn.execute(
                f"INSERT INTO memories ({_INSERTED}) VALUES ({_SLOTS})",
                (None if taken else item.id, *_values(item)),
            )
            return replace(item, id=int(cursor.lastrowid or item.id))

    def put_back(self, item: MemoryItem) -> None:
        """Overwrite a memory with an earlier state of itself (undoing an update)."""
        with self._writing() as conn:
            conn.execute(
                _CHANGE,
                (*_changed(item), item.id),
            )

    def delete(self, memory_id: int) -> MemoryItem | None:
        """Remove a memory; returns it as it was (None if it was already gone)."""
        old = self.get(memory_id)
        if old is None:
            return None
        with self._writing() as conn:
            conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
        return old

    def clear(self, character: str) -> int:
        """Remove every memory of `character`; returns how many there were."""
        with self._writing() as conn:
            cursor = conn.execute("DELETE FROM memories WHERE character = ?", (character,))
            removed = cursor.rowcount
        self._vacuum_later()
        return removed

    def add_many(self, character: str, drafts: Iterable[MemoryDraft]) -> list[MemoryItem]:
        """Memories in one transaction (an import is all or nothing); empty texts are
        left out."""
        items: list[MemoryItem] = []
        now = time.time()
        with self._writing() as conn:
            for draft in drafts:
                text = clean_text(draft.text)
                if not text:
                    continue
                created = draft.created_at if draft.created_at is not None else now
                item = MemoryItem(
                    0,
                    character,
                    text,
                    _kind(draft.kind),
                    _importance(draft.importance),
                    draft.source,
                    draft.conversation,
                    draft.turn,
                    created,
                    draft.updated_at if draft.updated_at is not None else created,
                    draft.recalled_count,
                    tokens=estimate_text_tokens(text),
                )
                cursor = conn.execute(
                    f"INSERT INTO memories ({_INSERTED}) VALUES ({_SLOTS})",
                    (None, *_values(item)),
                )
                items.append(replace(item, id=int(cursor.lastrowid or 0)))
        return items

    def mark_recalled(self, memory_ids: Iterable[int], when: float | None = None) -> None:
        """Count a recall of each memory (written after the turn, off the voice path)."""
        ids = [(when or time.time(), memory_id) for memory_id in memory_ids]
        if not ids:
            return
        with self._writing() as conn:
            conn.executemany(
                "UPDATE memories SET recalled_count = recalled_count + 1, "
                "last_recalled_at = ? WHERE id = ?",
                ids,
            )

    # ----- turns waiting for extraction --------------------------------------------------
    def save_pending(self, character: str, turns: Iterable[TurnRecord]) -> None:
        """Keep turns not yet looked at for memories until the next start."""
        rows = [
            (character, t.conversation, t.turn, t.said, json.dumps(list(t.context)), time.time())
            for t in turns
        ]
        if not rows:
            return
        with self._writing() as conn:
            conn.executemany(
                "INSERT INTO pending_turns (character, conversation, turn, said, context, "
                "queued_at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def take_pending(self, character: str) -> list[TurnRecord]:
        """The turns `save_pending` kept, oldest first; they leave the file."""
        with self._writing() as conn:
            rows = conn.execute(
                "SELECT conversation, turn, said, context FROM pending_turns "
                "WHERE character = ? ORDER BY id",
                (character,),
            ).fetchall()
            conn.execute("DELETE FROM pending_turns WHERE character = ?", (character,))
        turns = []
        for conversation, turn, said, context in rows:
            try:
                earlier = tuple(str(t) for t in json.loads(context))
            except (ValueError, TypeError):
                earlier = ()
            turns.append(TurnRecord(str(conversation), int(turn), str(said), earlier))
        return turns

    def _vacuum_later(self) -> None:
        # After "forget everything" the erased text must not linger in free pages.
        with self._lock, contextlib.suppress(sqlite3.Error):
            if self._conn is not None:
                self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.execute("VACUUM")

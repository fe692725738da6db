"""The memory database's schema, as numbered migrations.

`PRAGMA user_version` is the number of migrations a file has had. Opening a file runs
the ones it has not had yet, each in its own transaction, so a file is always at one
version or the next, never between. A migration is only ever added, never changed: a
file written by a release must open in every later one.
"""

from __future__ import annotations

import sqlite3

# One entry per version: the statements that take a file from the version before to it.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # A memory: what it says, what kind of thing it is, how much it matters (0..1),
        # where it came from (extracted, explicit, edited, imported), the conversation
        # and the user's message it came from, when, and how often it was recalled.
        # `terms` is `text` as the full-text index reads it (app.memory.terms).
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            character TEXT NOT NULL,
            text TEXT NOT NULL,
            terms TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'fact',
            importance REAL NOT NULL DEFAULT 0.5,
            source TEXT NOT NULL DEFAULT 'extracted',
            conversation TEXT NOT NULL DEFAULT '',
            turn INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            recalled_count INTEGER NOT NULL DEFAULT 0,
            last_recalled_at REAL,
            tokens INTEGER NOT NULL DEFAULT 0
        )
        """,
        "CREATE INDEX memories_by_character ON memories (character, updated_at)",
        "CREATE INDEX memories_by_importance ON memories (character, importance, updated_at)",
        # The index holds no copy of the text: it reads `terms` from the table.
        """
        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            terms, content='memories', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """,
        # Kept in step by triggers, inside the transaction that changes the memory.
        """
        CREATE TRIGGER memories_added AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms);
        END
        """,
        """
        CREATE TRIGGER memories_removed AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, terms)
            VALUES ('delete', old.id, old.terms);
        END
        """,
        """
        CREATE TRIGGER memories_changed AFTER UPDATE OF terms ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, terms)
            VALUES ('delete', old.id, old.terms);
            INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms);
        END
        """,
        # Turns not yet looked at for memories when the app closed: looked at next time.
        """
        CREATE TABLE pending_turns (
            id INTEGER PRIMARY KEY,
            character TEXT NOT NULL,
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            said TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '[]',
            queued_at REAL NOT NULL
        )
        """,
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


class NewerSchema(Exception):
    """The file was written by a newer release (a schema this one does not know)."""

    def __init__(self, found: int) -> None:
        super().__init__(f"schema version {found}, this Companion knows {SCHEMA_VERSION}")
        self.found = found


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the file up to `SCHEMA_VERSION`; returns the version it had."""
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise NewerSchema(found)
    for version in range(found + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return found

"""Long-term memory: what the companion remembers about the user across conversations.

One SQLite file in the data folder (`store`), per character; extraction after a turn
through the configured chat model, off the voice path (`extraction`, `writer`);
explicit commands in English and Chinese (`commands`); recall into the prompt within a
token budget (`recall`); the list, edits, undo, export and import the Memory page uses
(`book.LongTermMemory`).
"""

from __future__ import annotations

from app.config import Settings, data_dir
from app.memory.book import Ask, LongTermMemory
from app.memory.exchange import ExchangeError
from app.memory.extraction import response_format_for
from app.memory.store import MemoryDraft, MemoryItem, MemoryStore, MemoryStoreError

MEMORY_FILE = "memory.sqlite3"

__all__ = [
    "MEMORY_FILE",
    "Ask",
    "ExchangeError",
    "LongTermMemory",
    "MemoryDraft",
    "MemoryItem",
    "MemoryStore",
    "MemoryStoreError",
    "build_memory",
]


def build_memory(
    settings: Settings, *, character: str, ask: Ask | None, provider: str
) -> LongTermMemory:
    """The memory of `character` for `settings`, asking the chat model through `ask`
    (`provider` is its route's provider: the embedded model answers one request at a
    time and takes a grammar). Opens nothing yet."""
    return LongTermMemory(
        MemoryStore(data_dir() / MEMORY_FILE),
        character=character,
        settings=lambda: settings.memory,  # the live settings: a change holds at once
        ask=ask,
        response_format=response_format_for(provider),
        yields_to_turns=provider == "local",
    )

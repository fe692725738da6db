"""What the memory changed, kept a while so each change can be taken back, and told to
whoever listens (the session turns it into `MemoryChanged` events)."""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from dataclasses import dataclass

from app.events import MemoryChanged, Notice
from app.memory.store import MemoryItem, MemoryStore, MemoryStoreError

log = logging.getLogger(__name__)

KEPT = 100  # changes that can still be undone

MemoryEvent = MemoryChanged | Notice
Listener = Callable[[MemoryEvent], None]


@dataclass(frozen=True, slots=True)
class Change:
    """One change: the memories as they were before and as they are after (an added
    memory has no before, a forgotten one no after)."""

    change_id: int
    action: str
    before: tuple[MemoryItem, ...]
    after: tuple[MemoryItem, ...]


class ChangeLog:
    """The recent changes, their undo, and the listeners told of each."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._changes: collections.OrderedDict[int, Change] = collections.OrderedDict()
        self._next = 0
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def tell(self, event: MemoryEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a presenter's bug must not stop the memory
                log.exception("a memory listener failed")

    def record(
        self, action: str, before: tuple[MemoryItem, ...], after: tuple[MemoryItem, ...],
        *, undoable: bool = True,
    ) -> Change:
        self._next += 1
        change = Change(self._next, action, before, after)
        if undoable:
            self._changes[change.change_id] = change
            while len(self._changes) > KEPT:
                self._changes.popitem(last=False)
        shown = after if action != "forgot" else before
        self.tell(MemoryChanged(change.change_id, action, tuple(i.text for i in shown), undoable))
        return change

    def undo(self, change_id: int) -> None:
        """Take a change back: an added memory goes, a forgotten one comes back, an
        updated one reads as before. `MemoryStoreError` when it cannot be."""
        change = self._changes.pop(change_id, None)
        if change is None:
            raise MemoryStoreError("That change can no longer be undone.")
        try:
            if change.action in ("remembered", "imported"):
                for item in change.after:
                    self.store.delete(item.id)
            elif change.action == "forgot":
                for item in change.before:
                    self.store.restore(item)
            else:  # updated, edited
                for item in change.before:
                    if self.store.get(item.id) is None:
                        self.store.restore(item)
                    else:
                        self.store.put_back(item)
        except MemoryStoreError:
            self._changes[change_id] = change  # still there to try again
            raise
        texts = change.after if change.action in ("remembered", "imported") else change.before
        self._next += 1
        self.tell(MemoryChanged(self._next, "undone", tuple(i.text for i in texts), False))

"""The conversation list the window shows: start, switch, rename and delete saved
conversations, and the current one's messages. The conductor interrupts a turn in
flight before it switches; this module only keeps the list and the agent's memory.

`SavingWatch` tells the user when history cannot be written (a full disk) and when
it is written again, and retries on a timer (`Conversations.keep_saving`): what could
not be written waits in the storage, in order, and goes out with the next write.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging

from app.agent import MemoryAgent
from app.agent.building import CONF_UID
from app.agent.storage import (
    TITLE_CHARS,
    ConversationInfo,
    ConversationStorage,
    HistoryNotSaved,
    check_id,
    write_problem_words,
)
from app.events import ConversationChanged, EventHub, Notice, SessionEvent, TurnFinished
from app.llm import Msg

log = logging.getLogger(__name__)

RETRY_S = 5.0  # how often history that could not be written is tried again

_NOT_ALLOWED = (errno.EROFS, errno.EACCES, errno.EPERM)


def write_fix_words(exc: OSError | None) -> str:
    """What the user can do about a failed write: room for a full disk; for a folder that
    may not be written, its permissions (or a disk mounted read-only)."""
    if exc is not None and exc.errno in _NOT_ALLOWED:
        return (
            "let Companion write to its data folder (its permissions, or a disk mounted "
            "read-only)"
        )
    return "make some room"


def unsaved_words(unsaved: int, problem: OSError | None) -> str:
    """The notice for `unsaved` messages and changes that wait to be written."""
    why = write_problem_words(problem) if problem is not None else "the disk refused it"
    # Counted are messages and changes to them (a title, what was heard of a reply).
    what = "The last message waits" if unsaved == 1 else f"The last {unsaved} messages wait"
    return (
        f"The conversation is not saved: {why}. {what} in memory and will be saved as soon "
        f"as it can be; {write_fix_words(problem)} and keep Companion open."
    )


class SavingWatch:
    """Says when history stops being written and when it is written again, once each."""

    def __init__(self, storage: ConversationStorage, events: EventHub) -> None:
        self._storage = storage
        self._events = events
        self._told = 0  # how many unsaved the user was last told of

    def check(self) -> None:
        unsaved = self._storage.unsaved()
        if unsaved > self._told:
            self._events.emit(Notice(unsaved_words(unsaved, self._storage.write_problem), True))
        elif unsaved == 0 and self._told:
            self._events.emit(Notice("The conversation is saved again: nothing waits any more."))
        self._told = unsaved

    def retry(self) -> None:
        if self._storage.unsaved():
            self._storage.retry_unsaved()
        self.check()

    def on_event(self, event: SessionEvent) -> None:
        if isinstance(event, TurnFinished):
            # After the turn's own events have reached every presenter.
            with contextlib.suppress(RuntimeError):  # no loop: checked on the next tick
                asyncio.get_running_loop().call_soon(self.check)


class Conversations:
    def __init__(self, storage: ConversationStorage, agent: MemoryAgent, events: EventHub):
        self._storage = storage
        self._agent = agent
        self._events = events
        self.saving = SavingWatch(storage, events)
        events.subscribe(self.saving.on_event)

    async def keep_saving(self, every_s: float = RETRY_S) -> None:
        """Retry what could not be written, every `every_s`, and once more at the end."""
        self.saving.check()  # a conversation made at start on a full disk
        try:
            while True:
                await asyncio.sleep(every_s)
                self.saving.retry()
        finally:
            left = self._storage.retry_unsaved()
            if left:
                log.error("%s", unsaved_words(left, self._storage.write_problem))

    @property
    def current(self) -> str:
        return self._agent.core.history_uid

    def all(self) -> list[ConversationInfo]:
        """Every saved conversation, oldest first (the last one is resumed at start)."""
        conversations = self._storage.list_conversations(CONF_UID)
        self._tell_notices()  # a damaged file found while listing: which one, in words
        return conversations

    def messages(self) -> list[Msg]:
        """The current conversation's messages."""
        return list(self._agent.history)

    def _tell_notices(self) -> None:
        for notice in self._storage.drain_notices():
            self._events.emit(Notice(notice, error=True))

    def create(self) -> str:
        uid = self._storage.create_history(CONF_UID)
        self.saving.check()  # made in memory only, when the disk is full
        return uid

    def require(self, uid: str) -> None:
        check_id(uid)
        if uid not in self._storage.list_histories(CONF_UID):
            raise ValueError(f"there is no conversation {uid!r}")

    def switch(self, uid: str) -> None:
        """The agent remembers conversation `uid` from now on (no turn may be in flight)."""
        self.require(uid)
        self._agent.set_memory_from_history(CONF_UID, uid)
        self._tell_notices()
        self._events.emit(ConversationChanged(uid))

    def rename(self, uid: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise ValueError("a conversation needs a title")
        # On a full disk the new title waits with the rest (and is listed already).
        with contextlib.suppress(HistoryNotSaved):
            self._storage.rename_history(CONF_UID, uid, title[:TITLE_CHARS])
        self.saving.check()

    def delete(self, uid: str) -> str | None:
        """Delete `uid` for good. When it was the current one: the conversation to switch
        to (the newest left, or a new empty one); else None."""
        current = uid == self.current
        self._storage.delete_history(CONF_UID, uid)
        if not current:
            return None
        remaining = self._storage.list_histories(CONF_UID)
        return remaining[-1] if remaining else self.create()

"""LongTermMemory: one character's memory of the user, as the agent, the session and
the Memory page use it.

For the agent, each turn: `before_turn` carries out a memory command in the user's
words (remember, forget, what do you remember) and gives the note of memories the
model reads before answering; `after_turn` queues the turn for extraction, which the
writer runs when the session is quiet. For the user: the list, search, edit, delete,
forget everything, export and import, and undo of any recent change. Every change is
told to the listeners (`subscribe`) as a `MemoryChanged`; problems as a `Notice`.

Nothing here reaches a network: the only model it asks is the one given as `ask`,
which is the configured chat model's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.config import MemorySettings
from app.events import Notice
from app.llm import Msg
from app.memory.changes import ChangeLog, Listener
from app.memory.commands import MemoryCommand, about_user, parse_command, said_in_chinese
from app.memory.exchange import read_file, write_file
from app.memory.extraction import (
    MAX_TOKENS,
    Proposal,
    TurnRecord,
    build_prompt,
    parse_reply,
    stem,
)
from app.memory.heard import own_recent_words, users_earlier_words, users_part
from app.memory.person import as_stored, in_my_words, mentions_user, to_the_user
from app.memory.recall import Recall, render_note
from app.memory.store import MemoryDraft, MemoryItem, MemoryStore, MemoryStoreError
from app.memory.terms import content_words, normalize, similarity
from app.memory.writer import CLOSE_WAIT_S, IDLE_S, MemoryWriter

log = logging.getLogger(__name__)

# The side request: (messages, response format, max tokens) -> the model's reply text.
Ask = Callable[[list[Msg], dict[str, Any] | None, int], Awaitable[str]]

SAME = 0.9  # this alike (content words) is the same memory said again
NEAR = 0.75  # this alike is the same memory, refined
CONTEXT_MESSAGES = 3  # the user's earlier messages extraction reads with the newest
EXPLICIT_IMPORTANCE = 0.75  # "remember that ..." matters more than a passing mention
# Said in the later turns of a conversation in which something was forgotten: the
# conversation's own history still holds it (without repeating what it was).
FORGOTTEN_HERE = (
    "Earlier in this conversation I asked you to forget something about me. You no "
    "longer know it: do not bring it up again, even though it was said earlier here."
)
# After what a command did, when the user gave it in Chinese: the lines above are in
# English, and the embedded model answered a spoken "别忘了我的猫叫小白" in English.
ANSWER_IN_CHINESE = "I spoke Chinese: answer me in Chinese (简体中文)."


class LongTermMemory:
    """The memories of `character`, in `store`."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        character: str,
        settings: MemorySettings | Callable[[], MemorySettings] | None = None,
        ask: Ask | None = None,
        response_format: dict[str, Any] | None = None,
        yields_to_turns: bool = False,
        idle_s: float = IDLE_S,
    ) -> None:
        self.store = store
        self._character = character or "Companion"
        # Read at each use, so switching memory off in the settings holds from the next turn.
        fixed = settings if isinstance(settings, MemorySettings) else MemorySettings()
        self._settings = settings if callable(settings) else (lambda: fixed)
        self.recall = Recall(store)
        self._ask = ask
        self._format = response_format
        self.changes = ChangeLog(store)
        self.writer: MemoryWriter[TurnRecord] = MemoryWriter(
            self._look_at, yields_to_turns=yields_to_turns, idle_s=idle_s
        )
        self._recalled: set[int] = set()
        self._command_turn: tuple[str, int] | None = None  # (conversation, turn) of a command
        self._unsaved: list[tuple[TurnRecord, list[Proposal]]] = []
        self._forgot_in: set[str] = set()  # conversations in which the user had us forget
        self.last_extraction_s: float | None = None  # how long the last side request took

    # ----- what it is ------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether memories are recalled and written (off: the page still shows them)."""
        return self._settings().enabled

    @property
    def learn(self) -> bool:
        """Whether the chat model is asked what to remember after each turn."""
        return self._settings().learn

    @property
    def character(self) -> str:
        """Whose memories these are (each character has its own)."""
        return self._character

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self.changes.subscribe(listener)

    def open(self) -> None:
        """Open the file now (at start, off the first turn's path; any thread), and queue
        the turns the last run had no time to look at. Problems are told, never raised:
        the memory is a side part, and turns go on without it."""
        try:
            self.store.open()
        except Exception as exc:  # whatever it was, the turn must not be lost for it
            log.info("the memory file could not be opened", exc_info=True)  # the notice says it
            words = f"The long-term memory cannot be used: {exc}"
            self.changes.tell(Notice(words, error=True, side=True))
            return
        if self.enabled:
            try:
                for record in self.store.take_pending(self._character):
                    self.writer.submit(record)
            except MemoryStoreError as exc:
                log.info("could not read the turns kept for the memory: %s", exc)
        self._tell_store_notices()

    def resume(self) -> None:
        """On the loop, after `open()`: start on the turns it queued."""
        self.writer.kick()

    def _tell_store_notices(self) -> None:
        for notice in self.store.drain_notices():
            self.changes.tell(Notice(notice, error=True, side=True))

    def _failed(self, exc: MemoryStoreError) -> None:
        self._tell_store_notices()
        self.changes.tell(Notice(str(exc), error=True, side=True))

    # ----- the agent's turn ------------------------------------------------------------
    def before_turn(self, text: str, conversation: str, turn: int) -> str:
        """Carry out a memory command in `text`, and give the note for the model ("" when
        memory is off or has nothing to say)."""
        if not self.enabled:
            return ""
        budget = self._settings().recall_tokens
        self.writer.activity()
        try:
            command = parse_command(text)
            said: list[str] = []
            if command is not None:
                self._command_turn = (conversation, turn)
                said = self._carry_out(command, conversation, turn)
                if said_in_chinese(text):
                    said.append(ANSWER_IN_CHINESE)
                if command.action == "recall":
                    budget *= 2
            items = self.recall.choose(self._character, text, budget_tokens=budget)
            if conversation in self._forgot_in and (command is None or command.action != "forget"):
                said.append(FORGOTTEN_HERE)
        except MemoryStoreError as exc:
            self._failed(exc)
            return ""
        self._tell_store_notices()
        self._recalled.update(item.id for item in items)
        return render_note(items, said)

    def standing_note(self) -> str:
        """What the next turn's note starts with whatever the user says (unless it is a
        memory command): the memories chosen without their words, so the embedded model
        can read them ahead of the turn. "" when off or empty."""
        if not self.enabled:
            return ""
        budget = self._settings().recall_tokens
        try:
            return render_note(self.recall.standing(self._character, budget_tokens=budget))
        except MemoryStoreError:
            return ""  # told when the turn reads it

    def after_turn(
        self, history: Sequence[Msg], start: int, conversation: str, *, failed: bool = False
    ) -> None:
        """Queue the turn whose user message is `history[start]` for extraction. A
        `failed` turn (the model did not answer) leaves nothing to learn: not queued, so
        a command that failed ends at once instead of asking the same model again."""
        if not self.enabled or start >= len(history):
            return
        if failed:
            if self._command_turn == (conversation, start):
                self._command_turn = None
            return
        if self._command_turn == (conversation, start):
            self._command_turn = None
            self.writer.submit(TurnRecord(conversation, start, ""))  # counts recalls only
            return
        said = users_part(history[start].text, own_recent_words(history, start))
        if not said.strip():  # the companion's own voice, heard back: nothing about the user
            log.info("memory: turn %d was the companion's own voice heard back; skipped", start)
            self.writer.submit(TurnRecord(conversation, start, ""))  # counts recalls only
            return
        earlier = users_earlier_words(history, start, CONTEXT_MESSAGES)
        record = TurnRecord(conversation, start, said, tuple(earlier))
        self.writer.submit(record)

    def read_ahead(self, work: Callable[[str], Awaitable[None]]) -> None:
        """Have `work(note)` run as soon as no turn runs, and again after each look at
        a turn: `note` is what the next turn's note starts with (`standing_note`)."""
        self.writer.ahead(lambda: work(self.standing_note()))

    @contextmanager
    def hold(self) -> Iterator[None]:
        """While a turn runs (the model answering, the voice speaking)."""
        with self.writer.hold():
            yield

    def activity(self) -> None:
        """The user started speaking: no side request now."""
        self.writer.activity()

    async def aclose(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Look at the queued turns for at most `wait_s`; the rest are kept in the file
        and looked at after the next start (also when a signal stops the wait)."""
        try:
            left = await self.writer.aclose(wait_s)
        except asyncio.CancelledError:
            self._keep(self.writer.take_left())
            raise
        self._keep(left)

    def _keep(self, left: list[TurnRecord]) -> None:
        """Store what can be, keep the turns not looked at (and those whose facts met a
        lock) for after the next start, close."""
        self._flush_recalled()
        self._retry_unsaved()
        keep = [r for r in (*(rec for rec, _ in self._unsaved), *left) if r.said.strip()]
        try:
            self.store.save_pending(self._character, keep)
        except MemoryStoreError as exc:
            log.warning("%d turn(s) not looked at for memories are lost: %s", len(keep), exc)
        self.store.close()

    # ----- commands ----------------------------------------------------------------------
    def _carry_out(self, command: MemoryCommand, conversation: str, turn: int) -> list[str]:
        """Do what the user asked; returns what to tell the model about it."""
        if command.action == "remember":
            return self._remember(command.subject, conversation, turn)
        if command.action == "forget":
            return self._forget(command.subject, conversation)
        if command.action == "recall":
            if self.store.count(self._character):
                return [
                    "I ask what you remember about me: tell me what the notes above say, "
                    "briefly, in your own words."
                ]
            return [
                "I ask what you remember about me. You have no notes about me yet: say so, "
                "and that I can tell you things to remember."
            ]
        return [
            "I asked you to forget everything about me. You cannot do that from a "
            "conversation: tell me that \"Forget everything\" on the Memory page (the 💭 "
            "button in the window) erases every memory once I confirm."
        ]

    def _remember(self, subject: str, conversation: str, turn: int) -> list[str]:
        text = about_user(subject)
        same = self._closest(text, SAME)
        if same is not None:
            known = _q(in_my_words(same.text))
            return [f"As I asked, you already have this note: {known}. Say so."]
        try:
            item = self.store.add(
                self._character,
                MemoryDraft(text, "fact", EXPLICIT_IMPORTANCE, "explicit", conversation, turn),
            )
        except MemoryStoreError as exc:
            self._failed(exc)
            return [
                f"I asked you to remember {_q(in_my_words(text))}, but it could not be "
                f"written down ({exc}). Tell me."
            ]
        self.changes.record("remembered", (), (item,))
        return [
            f"Just now, as I asked, you wrote down this note: {_q(in_my_words(item.text))}. "
            "Tell me in a few words that you will remember it."
        ]

    def _forget(self, subject: str, conversation: str) -> list[str]:
        matches = self.matching(subject)
        if not matches:
            return [
                f"I asked you to forget {_q(subject)}, but you have no note about that. "
                "Tell me so, briefly."
            ]
        removed: list[MemoryItem] = []
        try:
            for item in matches:
                if self.store.delete(item.id) is not None:
                    removed.append(item)
        except MemoryStoreError as exc:
            self._failed(exc)
        if removed:
            self.changes.record("forgot", tuple(removed), ())
            self._forgot_in.add(conversation)
        gone = ", ".join(_q(in_my_words(item.text)) for item in removed) or "nothing"
        return [
            f"Just now, as I asked, you forgot these notes: {gone}. They are gone: do not "
            "mention what they said. Tell me briefly that you forgot it."
        ]

    def matching(self, subject: str) -> list[MemoryItem]:
        """The memories a "forget …" names: those holding at least half of its words."""
        wanted = content_words(subject)
        if not wanted:
            return []
        found = self.store.search(self._character, subject, limit=20)
        stems = {stem(w) for w in wanted}
        out = []
        for item, _score in found:
            have = {stem(w) for w in content_words(item.text)}
            if len(stems & have) * 2 >= len(stems):
                out.append(item)
        return out

    def _closest(self, text: str, threshold: float) -> MemoryItem | None:
        best: tuple[float, MemoryItem] | None = None
        for item, _score in self.store.search(self._character, text, limit=10):
            alike = similarity(item.text, text)
            if alike >= threshold and (best is None or alike > best[0]):
                best = (alike, item)
        return best[1] if best else None

    # ----- extraction (the writer runs it when the session is quiet) ---------------------
    async def _look_at(self, record: TurnRecord) -> None:
        self._flush_recalled()
        self._retry_unsaved()
        if not record.said.strip() or not self.learn or self._ask is None:
            return
        try:
            known = self._known_for(record)
        except MemoryStoreError as exc:
            self._failed(exc)
            return
        prompt = build_prompt(record, known)
        started = time.perf_counter()
        try:
            reply = await self._ask(prompt.messages, self._format, MAX_TOKENS)
        except Exception as exc:  # the model failed: this turn teaches nothing, said once
            log.info("memory extraction: the model did not answer (%s)", exc)
            return
        self.last_extraction_s = time.perf_counter() - started
        proposals = parse_reply(reply, record, prompt.shown)
        if proposals:
            self._apply(record, proposals)

    def _known_for(self, record: TurnRecord) -> list[MemoryItem]:
        """The notes extraction may correct: those sharing words with what was said, and
        the newest ones (a correction like "actually, she is called Nori" names nothing
        the old note says)."""
        known: dict[int, MemoryItem] = {}
        words = " ".join((*record.context, record.said))
        for item, _ in self.store.search(self._character, words, limit=6):
            known[item.id] = item
        for item in self.store.all(self._character, limit=4):
            known.setdefault(item.id, item)
        return sorted(known.values(), key=lambda i: i.id)

    def _apply(self, record: TurnRecord, proposals: list[Proposal]) -> None:
        for index, proposal in enumerate(proposals):
            try:
                self._apply_one(record, proposal)
            except MemoryStoreError as exc:
                self._failed(exc)
                self._unsaved.append((record, proposals[index:]))
                return

    def _apply_one(self, record: TurnRecord, proposal: Proposal) -> None:
        text = proposal.text if mentions_user(proposal.text) else about_user(proposal.text)
        target = self.store.get(proposal.replaces) if proposal.replaces is not None else None
        if target is not None and target.character != self._character:
            target = None
        if target is None:
            target = self._closest(text, NEAR)
        if target is None:
            item = self.store.add(
                self._character,
                MemoryDraft(
                    text, proposal.kind, proposal.importance, "extracted",
                    record.conversation, record.turn,
                ),
            )
            self.changes.record("remembered", (), (item,))
            return
        if normalize(target.text) == normalize(text) or similarity(target.text, text) >= 1.0:
            return  # known already, in the same words
        new = self.store.update(
            target.id, text=text, kind=proposal.kind,
            importance=max(target.importance, proposal.importance),
        )
        self.changes.record("updated", (target,), (new,))

    def _retry_unsaved(self) -> None:
        waiting, self._unsaved = self._unsaved, []
        for record, proposals in waiting:
            self._apply(record, proposals)

    def _flush_recalled(self) -> None:
        ids, self._recalled = self._recalled, set()
        try:
            self.store.mark_recalled(ids)
        except MemoryStoreError as exc:
            log.info("could not count the memories recalled: %s", exc)

    # ----- the Memory page ---------------------------------------------------------------
    def items(self, query: str = "") -> list[MemoryItem]:
        """The memories, the most recently changed first; with `query`, those whose text
        holds it, as stored or as the user reads it (case and width aside)."""
        everything = self.store.all(self._character)
        wanted = normalize(query)
        if not wanted:
            return everything
        return [
            item
            for item in everything
            if wanted in normalize(item.text) or wanted in normalize(to_the_user(item.text))
        ]

    def count(self) -> int:
        return self.store.count(self._character)

    def edit(self, memory_id: int, text: str) -> MemoryItem:
        before = self.store.get(memory_id)
        if before is None:
            raise MemoryStoreError("That memory is gone (it was deleted meanwhile).")
        # Typed as the page shows notes ("Your cat is Nori"): stored in the third person.
        after = self.store.update(memory_id, text=as_stored(text), source="edited")
        self.changes.record("edited", (before,), (after,))
        return after

    def delete(self, memory_id: int) -> None:
        removed = self.store.delete(memory_id)
        if removed is not None:
            self.changes.record("forgot", (removed,), ())

    def forget_everything(self) -> int:
        """Erase every memory of this character (no undo: that is what was asked)."""
        removed = self.store.clear(self._character)
        self.changes.record("cleared", (), (), undoable=False)
        return removed

    def undo(self, change_id: int) -> None:
        self.changes.undo(change_id)

    def export_json(self, path: Path) -> int:
        """Write every memory of this character to `path`; returns how many."""
        items = self.store.all(self._character)
        write_file(Path(path), self._character, items)
        return len(items)

    def import_json(self, path: Path) -> int:
        """Add the memories in `path` (those not already known); returns how many."""
        drafts = read_file(Path(path))
        known = {normalize(item.text) for item in self.store.all(self._character)}
        fresh: list[MemoryDraft] = []
        for draft in drafts:
            # A file written by hand may say "your": stored in the one person, as all are.
            draft = dataclasses.replace(draft, text=as_stored(draft.text))
            key = normalize(draft.text)
            if key and key not in known:
                known.add(key)
                fresh.append(draft)
        items = self.store.add_many(self._character, fresh)
        if items:
            self.changes.record("imported", (), tuple(items))
        return len(items)


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


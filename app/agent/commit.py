"""When a turn may be recorded, and may act: a turn is recorded once, when its run has
ended and nothing it waits for is missing.

A speculative reply (the model starts before it is sure the user has finished) must
leave no trace until the turn is confirmed: its `TurnCommit` starts held. The turn
waits for confirmation before any tool runs (a tool's effects, a screenshot, cannot be
taken back), hands its recording to the commit instead of storing it, and `confirm()`
lets both happen; `discard()` drops the recording for good, so a discarded reply never
reaches history or storage.

A spoken reply is recorded as far as the user heard it: its commit waits for the words
(`until_heard=True`) until `settle(heard)` says them: None when the whole reply reached
the user, the words when it was cut off. The first settling counts.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.agent.agent_turn import TurnOutcome


class CommitState(enum.Enum):
    HELD = "held"
    CONFIRMED = "confirmed"
    DISCARDED = "discarded"


Recording = Callable[[str | None], None]  # records the turn, given what was heard of it


class TurnCommit:
    """Whether a turn may be recorded and may act yet. `held` (a speculative reply)
    waits for `confirm()`; `until_heard` waits for `settle()`."""

    def __init__(self, *, held: bool = True, until_heard: bool = False) -> None:
        self.state = CommitState.HELD if held else CommitState.CONFIRMED
        self._confirmed = asyncio.Event()
        if not held:
            self._confirmed.set()
        self._settled = not until_heard
        self._heard: str | None = None
        self._record: Recording | None = None
        self._recorded = False
        self.outcome: TurnOutcome | None = None  # once the turn ran: what it cost
        self.on_confirm: Callable[[], None] | None = None  # told once, when confirmed

    @property
    def held(self) -> bool:
        return self.state is CommitState.HELD

    @property
    def stats(self) -> TurnOutcome | None:
        """The turn's outcome (`outcome`, by the name it had before)."""
        return self.outcome

    @property
    def settled(self) -> bool:
        """Whether what was heard of the turn is known (or not waited for)."""
        return self._settled

    def record(self, record: Recording, outcome: TurnOutcome | None = None) -> None:
        """The turn's run has ended (`outcome`): record it now if nothing is missing,
        when it is if the turn is held or waits for what was heard, never if it was
        discarded."""
        self.outcome = outcome
        if self.state is not CommitState.DISCARDED:
            self._record = record
            self._maybe_record()

    async def confirmed(self) -> None:
        """Until the turn is confirmed (a discarded turn is cancelled instead)."""
        await self._confirmed.wait()

    def confirm(self) -> None:
        if self.state is not CommitState.HELD:
            return
        self.state = CommitState.CONFIRMED
        self._confirmed.set()
        told, self.on_confirm = self.on_confirm, None
        if told is not None:
            told()
        self._maybe_record()

    def settle(self, heard: str | None) -> None:
        """What the user heard of the reply: None, all of it; else these words, and the
        reply was cut off there. Only the first settling counts."""
        if self._settled:
            return
        self._settled, self._heard = True, heard
        self._maybe_record()

    def discard(self) -> None:
        if self.state is CommitState.HELD:
            self.state = CommitState.DISCARDED
        self._record = None

    def withdraw(self) -> bool:
        """The turn is taken back whatever its state (the user went on with it, so it is
        answered as part of a longer one): nothing of it is recorded from now on. False
        when it was recorded already (too late to take back)."""
        if self._recorded:
            return False
        self.state = CommitState.DISCARDED
        self._record = None
        return True

    def _maybe_record(self) -> None:
        if self.state is not CommitState.CONFIRMED or not self._settled:
            return
        record, self._record = self._record, None
        if record is not None:
            self._recorded = True
            record(self._heard)

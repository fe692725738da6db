"""A held turn: a reply the model may start before it is sure the user has finished
(a speculative reply) must leave no trace until the turn is confirmed.

`TurnCommit` starts held. `AgentCore.run_turn` hands it the turn's recording instead of
storing it, and waits for confirmation before any tool runs (a tool's effects, a
screenshot, cannot be taken back). `confirm()` lets both happen; `discard()` drops the
recording for good, so a discarded reply never reaches history or storage.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from typing import Any


class CommitState(enum.Enum):
    HELD = "held"
    CONFIRMED = "confirmed"
    DISCARDED = "discarded"


class TurnCommit:
    """Whether a turn may be recorded and may act yet (one per speculative reply)."""

    def __init__(self) -> None:
        self.state = CommitState.HELD
        self._confirmed = asyncio.Event()
        self._record: Callable[[], None] | None = None
        self.stats: Any = None  # the turn's `TurnStats` once it runs (what it cost)

    @property
    def held(self) -> bool:
        return self.state is CommitState.HELD

    def record(self, record: Callable[[], None]) -> None:
        """Record the turn now if it is confirmed, when it is if it is held, never if
        it was discarded."""
        if self.state is CommitState.CONFIRMED:
            record()
        elif self.state is CommitState.HELD:
            self._record = record

    async def confirmed(self) -> None:
        """Until the turn is confirmed (a discarded turn is cancelled instead)."""
        await self._confirmed.wait()

    def confirm(self) -> None:
        if self.state is not CommitState.HELD:
            return
        self.state = CommitState.CONFIRMED
        self._confirmed.set()
        record, self._record = self._record, None
        if record is not None:
            record()

    def discard(self) -> None:
        if self.state is CommitState.HELD:
            self.state = CommitState.DISCARDED
        self._record = None

"""Where a conversation that no longer fits the context window starts, turn after turn.

Left to itself, trimming drops the oldest turn each time one more is added, so the
prompt's beginning changes on every turn once the window is full, and a local model
(llama.cpp keeps what it has read and reuses the unchanged beginning) reads the whole
conversation again each time. `StableStart` drops enough to leave half the room free
and then keeps that starting point while the rest still fits: the beginning changes
once every several turns instead of every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.llm import Msg

__all__ = ["StableStart", "first_fitting"]


def first_fitting(sizes: Sequence[int], budget: int) -> int:
    """The index of the oldest group from which the newest groups fit in `budget`."""
    total = sum(sizes)
    start = 0
    while start < len(sizes) and total > budget:
        total -= sizes[start]
        start += 1
    return start


@dataclass(slots=True)
class StableStart:
    """The start chosen last time, for the conversation it was chosen in."""

    first_kept: Msg | None = None  # the first message kept last time (identity)
    conversation: Msg | None = None  # the first message of that conversation

    def choose(self, groups: Sequence[Sequence[Msg]], sizes: Sequence[int], budget: int) -> int:
        """The first group to keep: the previous start while it still fits, else a new
        one that leaves half of `budget` free for the turns to come."""
        needed = first_fitting(sizes, budget)
        if needed == 0 and self.first_kept is None:
            return 0
        previous = self._previous(groups)
        if previous is not None and previous >= needed:
            return previous
        if needed == 0:
            return 0
        start = max(needed, first_fitting(sizes, budget // 2))
        start = min(start, len(groups) - 1) if groups else 0
        self.first_kept = groups[start][0] if groups else None
        self.conversation = groups[0][0] if groups else None
        return start

    def _previous(self, groups: Sequence[Sequence[Msg]]) -> int | None:
        if not groups or self.first_kept is None or groups[0][0] is not self.conversation:
            return None
        for index, group in enumerate(groups):
            if group[0] is self.first_kept:
                return index
        return None

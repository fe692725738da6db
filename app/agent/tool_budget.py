"""How many tool calls one turn may run: a reply may ask for any number, and the model's
words can be steered (by a web page, a screenshot, a file it read), so the app bounds
them, as pydantic-ai's `UsageLimits(tool_calls_limit=...)` does. Calls beyond a limit are
not run: each is answered with an error result that says why, which the model reads
before it answers. A call already refused (its arguments cut off or not JSON) costs
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.llm import ToolUseBlock

__all__ = ["ToolBudget"]


@dataclass(slots=True)
class ToolBudget:
    """`per_round` calls of one reply run, `per_turn` in the whole turn."""

    per_round: int
    per_turn: int
    used: int = 0  # calls run (or being run) this turn

    @property
    def spent(self) -> bool:
        """No call may run any more this turn: the model must answer."""
        return self.used >= self.per_turn

    def take(self, calls: Sequence[ToolUseBlock]) -> list[ToolUseBlock]:
        """`calls` as they are to be run, in order: those over a limit `refused`, with
        why in words the model reads."""
        taken: list[ToolUseBlock] = []
        ran = 0
        for call in calls:
            why = call.refused
            if why is None and ran >= self.per_round:
                why = (
                    f"This call to {call.name} was not run: at most {self.per_round} tool "
                    f"calls are run at once, and {len(calls)} were asked for. Use the "
                    "results you have, and ask again only for what you still need."
                )
            elif why is None and self.spent:
                why = (
                    f"This call to {call.name} was not run: this turn has used all "
                    f"{self.per_turn} of its tool calls. Answer with what you have."
                )
            if why is None:
                ran += 1
                self.used += 1
            elif call.refused is None:
                call = call.model_copy(update={"refused": why})
            taken.append(call)
        return taken

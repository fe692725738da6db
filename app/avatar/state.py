"""Expression state: sticky until the reply changes it, back to neutral when idle."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# The tags the model may use, in the order the system prompt lists them.
EXPRESSIONS: tuple[str, ...] = (
    "neutral",
    "joy",
    "sadness",
    "anger",
    "surprise",
    "fear",
    "smirk",
    "thinking",
)


@dataclass(slots=True)
class ExpressionState:
    """The current expression; `set` changes it, `tick` returns to neutral after `idle_s`."""

    idle_s: float = 20.0
    expressions: tuple[str, ...] = EXPRESSIONS  # the active avatar pack's names
    current: str = "neutral"
    intensity: float = 1.0
    changed_at: float = field(default_factory=time.monotonic)

    def set(self, expression: str, intensity: float = 1.0, now: float | None = None) -> bool:
        """Show `expression`; returns True when what shows changed. Unknown names are ignored."""
        if expression not in self.expressions:
            return False
        now = time.monotonic() if now is None else now
        changed = expression != self.current or intensity != self.intensity
        self.current, self.intensity, self.changed_at = expression, intensity, now
        return changed

    def tick(self, now: float | None = None) -> bool:
        """Return to neutral after `idle_s` without a change; True when it did."""
        now = time.monotonic() if now is None else now
        if self.current != "neutral" and now - self.changed_at >= self.idle_s:
            return self.set("neutral", 1.0, now)
        return False

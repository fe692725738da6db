"""What the microphone is doing, decided once: the button, the privacy pill and the
status line all show `MicState.shown`, so they never contradict each other.

The order of what wins mirrors the session's `MicGate.open`: a microphone that is gone,
then the user's own off switch, then a sound test (the conversation hears nothing while
one runs: its recording or play-back must not become a turn), then push-to-talk.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

MicShown = Literal["unavailable", "off", "paused", "push_to_talk", "on"]


@dataclass(frozen=True, slots=True)
class MicState:
    """Everything that decides what the microphone does for the conversation."""

    available: bool = True
    enabled: bool = False  # the user's switch (the session's `MicStateChanged.enabled`)
    mode: str = "always_on"  # always_on, push_to_talk or muted
    held: bool = False  # the push-to-talk key or button is down
    testing: bool = False  # a sound test runs (the guide's or the settings')
    detail: str = ""  # why it is unavailable, or the device's name
    # Whether the session (or the user) has said whether it is on: before that the
    # button shows a guess, and the status line keeps the session's own words.
    reported: bool = False

    @property
    def shown(self) -> MicShown:
        """The one answer everything shows."""
        if not self.available:
            return "unavailable"
        if not self.enabled or self.mode == "muted":
            return "off"
        if self.testing:
            return "paused"
        if self.mode == "push_to_talk":
            return "push_to_talk"
        return "on"

    @property
    def live(self) -> bool:
        """Whether the conversation hears the user right now (the privacy pill)."""
        shown = self.shown
        return shown == "on" or (shown == "push_to_talk" and self.held)

    def but(self, **changes: object) -> MicState:
        """This state with `changes` (a field's new value)."""
        return replace(self, **changes)  # type: ignore[arg-type]


__all__ = ["MicShown", "MicState"]

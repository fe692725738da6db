"""The floor: who is talking now. The turn writes when the companion's voice plays, the
conductor which turn is in flight and which sink plays it, and the listener reads it to
know when the microphone hears the companion rather than the user."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from app.audio.playback import AudioSink


@dataclass(slots=True)
class Floor:
    sink: AudioSink | None = None  # None: no sound output (replies are shown, not heard)
    speaking: bool = False  # the sink is playing the companion's voice now
    echo_until: float = 0.0  # perf_counter() until which its echo may still be heard
    turn: asyncio.Task[Any] | None = None  # the turn in flight, if any
    barge_pending: bool = False  # a barge-in paused the voice and waits for words

    @property
    def busy(self) -> bool:
        """A turn is in flight (thinking, speaking, or paused by a barge-in)."""
        return self.turn is not None and not self.turn.done()

    def over_voice(self, now: float) -> bool:
        """Whether the microphone may be hearing the companion (or its echo) at `now`."""
        return self.speaking or now < self.echo_until

    @property
    def has_far_end(self) -> bool:
        """The sink hands what it plays to the echo canceller (so barge-in can work)."""
        return self.sink is not None and getattr(self.sink, "far_end", None) is not None

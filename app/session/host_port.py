"""What a host other than the window uses of a session — `companion turn --live`, the
benchmarks, the tests that drive a session by voice — declared in one place, beside the
window's `app.ui.session_port`: `VoiceSession.host`. A host never sets a session's
attributes or reads its private ones; listening and typing are the session's own
`listen`, `listen_to_microphone` and `send_text`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.session.speculation import SpeculationStats

if TYPE_CHECKING:
    from app.session.barge_in import BargeIns
    from app.session.listen_events import UserStoppedSpeaking
    from app.session.listening import Listener
    from app.session.speaking import SpeakingView
    from app.session.turn_result import TurnResult
    from app.session.turn_runner import TurnRunner
    from app.session.user_turns import UserTurns

TURN_TASKS = frozenset({"barge-in", "voice-turn"})  # the session's tasks that end in a turn


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """What a session did so far, for a report or a benchmark."""

    turns: int  # turns started (typed, spoken, barge-in words)
    speculative_replies: bool  # whether replies may start before a turn is confirmed
    speculation: SpeculationStats = field(default_factory=SpeculationStats)
    barge_ins: int = 0  # barge-ins detected
    barge_in_resumes: int = 0  # ... of which the companion spoke on
    barge_in_echoes: int = 0  # ... of which its own voice was what was heard
    transcriptions: int = 0  # the last listening loop's transcriptions while speaking
    transcribing_s: float = 0.0  # ... and the time they took
    turn_model_calls: int = 0  # ... and the turn model's answers

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__}
        doc["speculation"] = self.speculation.to_json()
        return doc


class SessionHost:
    """A session as a host that is not the window drives and watches it
    (`VoiceSession.host`)."""

    def __init__(
        self,
        *,
        turns: TurnRunner,
        user_turns: UserTurns,
        barge: BargeIns,
        listener: Listener,
        tasks: set[asyncio.Task[Any]],
        busy: Callable[[], bool],
        view: SpeakingView,
    ) -> None:
        self._turns = turns
        self._user_turns = user_turns
        self._barge = barge
        self._listener = listener
        self._tasks = tasks
        self._busy = busy
        self._view = view

    def on_turn_result(self, told: Callable[[TurnResult], None]) -> Callable[[], None]:
        """Tell `told` each spoken turn's result once it is done; returns a function that
        stops it."""
        return self._user_turns.watch_results(told)

    def on_user_stopped(self, told: Callable[[UserStoppedSpeaking], None]) -> Callable[[], None]:
        """Tell `told` each end of the user's speech as the session gets it (before it acts
        on it); returns a function that stops it."""
        return self._user_turns.watch_ends(told)

    @property
    def working(self) -> bool:
        """Something is left that may start or finish a turn: a turn in flight, a spoken
        turn being transcribed or answered, a barge-in waiting for words."""
        return (
            self._busy()
            or self._user_turns.pending > 0
            or self._barge.pending
            or any(t.get_name() in TURN_TASKS and not t.done() for t in self._tasks)
        )

    async def until_idle(self, timeout_s: float = 120.0) -> None:
        """Wait while `working` (TimeoutError after `timeout_s`)."""
        async with asyncio.timeout(timeout_s):
            while self.working:
                await asyncio.sleep(0.05)

    def companion_audible(self, now: float) -> bool:
        """Whether the microphone may hear the companion's voice (or its echo) at `now`."""
        return self._view.over_voice(now)

    @property
    def in_user_turn(self) -> bool:
        """The user is in the middle of a turn, as far as the listening knows."""
        return self._listener.in_speech

    def figures(self) -> SessionFigures:
        taking = self._listener.taking
        hearing = taking.hearing if taking is not None else None
        return SessionFigures(
            turns=self._turns.turn_ids,
            speculative_replies=self._user_turns.speculate,
            speculation=replace(self._user_turns.stats),
            barge_ins=self._barge.count,
            barge_in_resumes=self._barge.resumes,
            barge_in_echoes=self._barge.echoes,
            transcriptions=hearing.calls if hearing is not None else 0,
            transcribing_s=hearing.busy_s if hearing is not None else 0.0,
            turn_model_calls=taking.questions if taking is not None else 0,
        )


__all__ = ["TURN_TASKS", "SessionFigures", "SessionHost"]

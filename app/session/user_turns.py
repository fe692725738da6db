"""The conductor's side of the user's spoken turns: their words shown as they speak,
a speculative reply started when the words of a pause look finished, and the turn run
when it ends (with the speculation, if it said the same words; without, otherwise).
A barge-in's words, and a turn heard without hearing ahead, are transcribed here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from app.audio.format import BYTES_PER_SECOND
from app.config import Settings
from app.events import EventHub, Notice, Status, StatusChanged, UserTranscript
from app.own_words import is_own_words
from app.session.barge_in import BargeIns
from app.session.interruption import Interruptions
from app.session.listen_events import (
    ListeningNote,
    PartialWords,
    SpeechResumed,
    UserStoppedSpeaking,
    WordsReady,
)
from app.session.speaking import Signals, SpeakingView
from app.session.speculation import Speculation, SpeculationStats, speculation_enabled
from app.session.turn import TurnResult, TurnRunner
from app.session.turn_desk import TurnMaker
from app.speech import SpeechError

log = logging.getLogger(__name__)

RunExclusive = Callable[[TurnMaker], Awaitable[TurnResult]]
# Speech that began this long after the companion's echo tail may still be its own voice
# (a Bluetooth speaker's delay, a sound system's buffers): its words decide.
OWN_VOICE_AFTER_S = 2.0
Spawn = Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any]]


class UserTurns:
    """Partial words, speculation and spoken turns, for one session."""

    def __init__(
        self,
        settings: Settings,
        *,
        turns: TurnRunner,
        signals: Signals,
        barge: BargeIns,
        events: EventHub,
        interruptions: Interruptions,
        run_exclusive: RunExclusive,
        spawn: Spawn,
    ) -> None:
        self.speculate = speculation_enabled(settings)
        self.stats = SpeculationStats()
        self._turns = turns
        self._view = SpeakingView(signals)
        self._barge = barge
        self._events = events
        self._interruptions = interruptions
        self._run_exclusive = run_exclusive
        self._spawn = spawn
        self._speculation: Speculation | None = None
        self._unhook: Callable[[], object] | None = None
        self._turn_id: int | None = None  # the number the partial words are shown under
        # Told each spoken turn's result once it is done (`SessionHost.on_turn_result`).
        self._result_watchers: list[Callable[[TurnResult], None]] = []
        self._end_watchers: list[Callable[[UserStoppedSpeaking], None]] = []
        self.pending = 0  # spoken turns being transcribed or answered
        self.own_voice = 0  # turns that were the companion's own voice heard back

    # ----- while the user speaks ----------------------------------------------------
    def words(self, event: PartialWords | WordsReady | SpeechResumed | ListeningNote) -> None:
        """What the user has said so far: shown, and a held reply started or dropped."""
        if isinstance(event, ListeningNote):
            self._events.emit(Notice(event.message, error=True))
        elif isinstance(event, PartialWords):
            if self._view.busy or self._view.barge_pending:
                return
            if self._turn_id is None:
                self._turn_id = self._turns.reserve_id()
            self._events.emit(UserTranscript(event.text, False, self._turn_id))
        elif isinstance(event, WordsReady):
            self._start_speculation(event.text)
        else:  # the user went on: a reply started on the words before is stale
            self.drop_speculation()

    def _start_speculation(self, text: str) -> None:
        self.drop_speculation()
        if not self.speculate or self._view.busy or self._view.barge_pending:
            return
        speculation = self._speculation = Speculation(self._turns.agent, text, self.stats)
        # Esc (or any interruption) while the reply is held throws it away.
        self._unhook = self._interruptions.scope().on_interrupt(self.drop_speculation)
        log.debug("speculative reply started on %r", speculation.text)

    def drop_speculation(self) -> None:
        """Throw a held speculative reply away (nothing of it was played or stored)."""
        speculation, self._speculation = self._speculation, None
        unhook, self._unhook = self._unhook, None
        if unhook is not None:
            unhook()
        if speculation is not None:
            speculation.discard()

    def _take_speculation(self) -> Speculation | None:
        speculation, self._speculation = self._speculation, None
        unhook, self._unhook = self._unhook, None
        if unhook is not None:
            unhook()
        return speculation

    # ----- the end of a turn -------------------------------------------------------------
    def ended(self, event: UserStoppedSpeaking) -> None:
        for told in list(self._end_watchers):
            told(event)
        turn_id, self._turn_id = self._turn_id, None
        if event.over_barge_in:
            self.drop_speculation()
            if self._barge.utterance_ended(event.pcm, event.speech_end):
                assert event.pcm is not None
                self._counted(self._barge_in_turn(event.pcm, event.speech_end), "barge-in")
        elif event.pcm is None or (self._view.busy and not event.push_to_talk):
            self.drop_speculation()
            if turn_id is not None:  # the partial words came to nothing
                self._events.emit(UserTranscript("", True, turn_id))
            if not self._view.busy:
                self._events.emit(StatusChanged(Status.LISTENING))
        else:
            speculation = self._take_speculation()
            self._counted(self._voice_turn(event, turn_id, speculation), "voice-turn")

    def _counted(self, turn: Coroutine[Any, Any, Any], name: str) -> None:
        self.pending += 1
        task = self._spawn(turn, name)
        task.add_done_callback(lambda _task: self._done())

    def _done(self) -> None:
        self.pending -= 1

    async def _voice_turn(
        self, event: UserStoppedSpeaking, turn_id: int | None, speculation: Speculation | None
    ) -> TurnResult | None:
        assert event.pcm is not None
        pcm, speech_end = event.pcm, event.speech_end
        details: dict[str, Any] = {
            "ended_by": str(event.reason) if event.reason else None,
            "speech_end_at": speech_end,  # perf_counter() stamps
            "ended_at": event.ended_at,
        }
        timings = {"endpoint_ms": (event.ended_at - speech_end) * 1000} if event.ended_at else {}
        text, ahead = event.text, event.text is not None
        if text is None and event.final_words is not None:
            self._events.emit(StatusChanged(Status.TRANSCRIBING))
            try:
                text, ahead = await event.final_words()
            except SpeechError as exc:
                if speculation is not None:
                    speculation.discard()
                self._events.emit(Notice(str(exc), error=True))
                if turn_id is not None:
                    self._events.emit(UserTranscript("", True, turn_id))
                return None
        if text is None:  # nothing heard it ahead: transcribed now, as a whole
            if speculation is not None:
                speculation.discard()
            result = await self._run_exclusive(
                lambda scope: self._turns.from_pcm(pcm, speech_end, scope)
            )
            result.endpointing.update(details, heard_while_speaking=False)
            self._report(result)
            return result
        transcript_ms = (time.perf_counter() - speech_end) * 1000
        details["heard_while_speaking"] = ahead
        if not text.strip():
            if speculation is not None:
                speculation.discard()
            if turn_id is not None:
                self._events.emit(UserTranscript("", True, turn_id))
            self._events.emit(StatusChanged(Status.LISTENING, "didn't catch that"))
            return None
        if self._own_voice(text, event):
            # Its own voice came back (late, past the canceller): not the user's turn.
            log.info("a turn was the companion's own voice heard back (%r): not a turn", text)
            self.own_voice += 1
            if speculation is not None:
                speculation.discard()
            if turn_id is not None:
                self._events.emit(UserTranscript("", True, turn_id))
            self._events.emit(StatusChanged(Status.LISTENING))
            return None
        used = speculation is not None and speculation.matches(text)
        if speculation is not None:
            if used:
                speculation.confirm()
            else:
                speculation.discard()
            details["speculation"] = "used" if used else "discarded"
        result = await self._run_exclusive(
            lambda scope: self._turns.from_transcript(
                text,
                speech_end,
                transcript_ms,
                scope,
                turn_id=turn_id,
                timings=timings,
                speculation=speculation if used else None,
                endpointing=details,
            )
        )
        self._report(result)
        return result

    def _own_voice(self, text: str, event: UserStoppedSpeaking) -> bool:
        """The words are the companion's own (what it just said) and began while it
        spoke or soon after: its voice heard back, not the user."""
        view = self._view
        began = event.speech_end - len(event.pcm or b"") / BYTES_PER_SECOND
        near = view.speaking or began <= view.echo_until + OWN_VOICE_AFTER_S
        return near and is_own_words(text, view.said)

    def watch_results(self, told: Callable[[TurnResult], None]) -> Callable[[], None]:
        """Tell `told` each spoken turn's result once it is done."""
        self._result_watchers.append(told)
        return lambda: self._result_watchers.remove(told)

    def watch_ends(self, told: Callable[[UserStoppedSpeaking], None]) -> Callable[[], None]:
        """Tell `told` each end of the user's speech, before it is acted on."""
        self._end_watchers.append(told)
        return lambda: self._end_watchers.remove(told)

    def _report(self, result: TurnResult) -> None:
        for told in list(self._result_watchers):
            told(result)

    async def _barge_in_turn(self, pcm: bytes, speech_end: float) -> None:
        """The words that interrupted: with words, they are the next turn."""
        words = await self._barge.words(pcm, speech_end)
        if words is not None:
            result = await self._run_exclusive(
                lambda scope: self._turns.from_transcript(
                    words.text,
                    words.speech_end,
                    words.transcript_ms,
                    scope,
                    endpointing={"over_barge_in": True},
                )
            )
            self._report(result)

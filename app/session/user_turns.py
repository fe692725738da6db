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
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.audio.format import BYTES_PER_SECOND
from app.config import Settings
from app.events import EventHub, HeardAside, Notice, Status, StatusChanged, UserTranscript
from app.own_words import is_own_words
from app.session.barge_in import BargeIns, Before
from app.session.going_on import join_words
from app.session.interruption import Interruptions, Scope
from app.session.listen_events import (
    ListeningNote,
    PartialWords,
    SpeechResumed,
    UserStoppedSpeaking,
    WordsReady,
)
from app.session.speaking import Signals, SpeakingView
from app.session.speculation import Speculation, SpeculationStats, speculation_enabled
from app.session.turn_desk import TurnMaker
from app.session.turn_result import TurnResult
from app.session.turn_runner import TurnRunner
from app.speech import SpeechError

log = logging.getLogger(__name__)


class RunExclusive(Protocol):
    """The conductor's one-turn-at-a-time runner (`spoken`: the turn answers speech)."""

    def __call__(self, make: TurnMaker, *, spoken: bool = ...) -> Awaitable[TurnResult]: ...


# Speech that began this long after the companion's echo tail may still be its own voice
# (a Bluetooth speaker's delay, a sound system's buffers): its words decide.
OWN_VOICE_AFTER_S = 2.0
Spawn = Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any]]


@dataclass(slots=True)
class _Spoken:
    """A spoken turn from its end on: its number, its words once heard (`heard` is set
    then, or when it turned out to have none), whether it ran as a turn (an empty
    transcript or the companion's own voice does not), and whether the user went on
    with it (`withdrawn`: it is answered as part of a longer turn, never on its own)."""

    turn_id: int
    shown: bool = False  # its words were shown while it was heard (they go if it is none)
    words: str | None = None
    ran: bool = False
    used_speculation: bool = False
    withdrawn: bool = False
    heard: asyncio.Event = field(default_factory=asyncio.Event)
    pcm: bytes = b""  # its audio (heard again with what the user goes on with)


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
        self.continued = 0  # turns the user went on with (their reply withdrawn)
        self._spoken: _Spoken | None = None  # the spoken turn in flight

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
            # Over a reply (a barge-in waits, or it ended while one is in flight): its
            # words decide whether the reply stops, and whether they join the turn.
            self.drop_speculation()
            if turn_id is not None:  # any words shown as it was heard come back whole
                self._events.emit(UserTranscript("", True, turn_id))
            continues = event.continues
            if self._barge.utterance_ended(event.pcm, event.speech_end, continues=continues):
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
        """The turn that ended: in flight from now on (its words are transcribed as part
        of it), so that whatever the user says next goes on with it or interrupts it,
        never races it."""
        shown = turn_id is not None
        spoken = _Spoken(self._turns.reserve_id() if turn_id is None else turn_id, shown)
        spoken.pcm = event.pcm or b""
        try:
            result = await self._answer(
                lambda scope: self._hear_and_answer(event, spoken, speculation, scope)
            )
        finally:
            if speculation is not None and not spoken.used_speculation:
                speculation.discard()  # (never started: the session closed meanwhile)
        if not spoken.ran:
            return None
        self._report(result)
        return result

    async def _hear_and_answer(
        self,
        event: UserStoppedSpeaking,
        spoken: _Spoken,
        speculation: Speculation | None,
        scope: Scope,
    ) -> TurnResult:
        self._spoken = spoken
        try:
            return await self._heard(event, spoken, speculation, scope)
        finally:
            spoken.heard.set()
            if self._spoken is spoken:
                self._spoken = None

    async def _heard(
        self,
        event: UserStoppedSpeaking,
        spoken: _Spoken,
        speculation: Speculation | None,
        scope: Scope,
    ) -> TurnResult:
        assert event.pcm is not None
        pcm, speech_end, turn_id = event.pcm, event.speech_end, spoken.turn_id
        if speculation is not None and event.text is None and event.final_words is None:
            speculation.discard()  # transcribed as a whole below: no words to match
        details: dict[str, Any] = {
            "ended_by": str(event.reason) if event.reason else None,
            "speech_end_at": speech_end,  # perf_counter() stamps
            "ended_at": event.ended_at,
        }
        timings = {"endpoint_ms": (event.ended_at - speech_end) * 1000} if event.ended_at else {}
        nothing = TurnResult(turn_id, "")
        text, ahead = event.text, event.text is not None
        if text is None and event.final_words is not None:
            self._events.emit(StatusChanged(Status.TRANSCRIBING))
            try:
                text, ahead = await event.final_words()
            except SpeechError as exc:
                if speculation is not None:
                    speculation.discard()
                self._events.emit(Notice(str(exc), error=True))
                self._unshow(spoken)
                nothing.error = str(exc)
                return nothing
        if text is None:  # nothing heard it ahead: transcribed now, as a whole
            if speculation is not None:
                speculation.discard()
            spoken.ran = True
            spoken.heard.set()  # its words are heard within the turn: none to go on with
            result = await self._turns.from_pcm(pcm, speech_end, scope, turn_id=turn_id)
            result.endpointing.update(details, heard_while_speaking=False)
            return result
        transcript_ms = (time.perf_counter() - speech_end) * 1000
        details["heard_while_speaking"] = ahead
        if not text.strip():
            if speculation is not None:
                speculation.discard()
            self._unshow(spoken)
            self._events.emit(StatusChanged(Status.LISTENING, "didn't catch that"))
            return nothing
        if self._own_voice(text, event):
            # Its own voice came back (late, past the canceller): not the user's turn.
            log.info("a turn was the companion's own voice heard back (%r): not a turn", text)
            self.own_voice += 1
            if speculation is not None:
                speculation.discard()
            self._unshow(spoken)
            self._events.emit(StatusChanged(Status.LISTENING))
            return nothing
        spoken.words = text
        spoken.heard.set()
        if spoken.withdrawn:  # the user went on before it could be answered
            if speculation is not None:
                speculation.discard()
            return TurnResult(turn_id, text, interrupted=True, withdrawn=True)
        used = speculation is not None and speculation.matches(text)
        if speculation is not None:
            if used:
                speculation.confirm()
                spoken.used_speculation = True
            else:
                speculation.discard()
            details["speculation"] = "used" if used else "discarded"
        spoken.ran = True
        return await self._turns.from_transcript(
            text,
            speech_end,
            transcript_ms,
            scope,
            turn_id=turn_id,
            timings=timings,
            speculation=speculation if used else None,
            endpointing=details,
        )

    def _unshow(self, spoken: _Spoken) -> None:
        """The words shown as it was heard came to nothing: they go."""
        if spoken.shown:
            self._events.emit(UserTranscript("", True, spoken.turn_id))

    async def _answer(self, make: TurnMaker) -> TurnResult:
        """Run a spoken turn (while it is in flight the user may go on with it)."""
        return await self._run_exclusive(make, spoken=True)

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

    async def _going_on_with(self, spoken: _Spoken | None) -> Before | None:
        """The turn the user is going on with, once its words are in (the going-on is
        heard again with it, as a whole); None when there is none, or it had no words."""
        if spoken is None or not spoken.pcm:
            return None
        await spoken.heard.wait()
        return Before(spoken.pcm, spoken.words) if spoken.words else None

    async def _barge_in_turn(self, pcm: bytes, speech_end: float) -> None:
        """The words said over a reply: with words, they are the next turn; when the
        user was going on with the turn being answered, its reply is withdrawn (nothing
        of it stored) and the words join it, answered as one turn."""
        heard_with = self._spoken if self._barge.going_on else None
        words = await self._barge.words(pcm, speech_end, await self._going_on_with(heard_with))
        if words is None:
            return
        if not words.detected and not words.continues:
            # Short, over its voice (too short to stop it: a cough may sound like words
            # to the recognizer): not a turn, but shown, never dropped unseen.
            log.info("heard over the reply, too short to stop it: %r", words.text)
            self._barge.decide(resume=True)
            self._events.emit(HeardAside(self._turns.redact(words.text)))
            return
        text, turn_id, pcm = words.text, self._turns.reserve_id(), words.pcm
        details: dict[str, Any] = {"over_barge_in": True}
        going_on = self._spoken if words.continues else None
        if going_on is not None:
            # It may still be being transcribed: whatever it holds is answered with
            # these words, so it is not answered alone, and its words are waited for.
            going_on.withdrawn = True
            await going_on.heard.wait()
        if (
            going_on is not None
            and going_on.words is not None
            and (not going_on.ran or self._turns.withdraw(going_on.turn_id))
        ):
            self.continued += 1
            # The whole is this turn's only if it was heard with this turn.
            whole = words.whole if going_on is heard_with else ""
            turn_id, text = going_on.turn_id, whole or join_words(going_on.words, words.text)
            pcm = going_on.pcm + pcm  # (a going-on after this one is heard with all of it)
            details = {"continued": True}
            log.info("the user went on with turn %d: %r", turn_id, text)
        spoken = _Spoken(turn_id, words=text, ran=True, pcm=pcm)
        spoken.heard.set()  # its words are these
        # Settled only now: a reply paused for these words is stopped after it was
        # withdrawn, so that it never stores what was heard of it.
        self._barge.decide(resume=False)

        async def answer(scope: Scope) -> TurnResult:
            self._spoken = spoken
            try:
                return await self._turns.from_transcript(
                    text,
                    words.speech_end,
                    words.transcript_ms,
                    scope,
                    turn_id=turn_id,
                    endpointing=details,
                )
            finally:
                if self._spoken is spoken:
                    self._spoken = None

        self._report(await self._answer(answer))

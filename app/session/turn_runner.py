"""Starting turns: `TurnRunner` holds what every turn uses (the agent, the recognizer,
the voice, the avatar, the signals), numbers the turns, knows the one in flight (so a
spoken one can be taken back when the user goes on with it), and learns how a barge-in
that paused a reply was settled. Each turn itself is a `Turn` (`app.session.turn`)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from app.agent import MemoryAgent
from app.avatar.state import ExpressionState
from app.config import Settings
from app.events import EventHub, ExpressionChanged, Notice, Status, StatusChanged, UserTranscript
from app.session.hearing import transcribe
from app.session.interruption import Scope
from app.session.speaking import (
    BargeInPaused,
    BargeInSettled,
    Signals,
    SpeakingSignal,
    SpeakingView,
)
from app.session.turn import Turn
from app.session.turn_result import TurnResult
from app.speech import SpeechClient, SpeechError
from app.tts import TTSEngine

if TYPE_CHECKING:
    from app.session.speculation import Speculation


class TurnRunner:
    """Starts turns: holds the parts every turn uses and numbers the turns."""

    def __init__(
        self,
        settings: Settings,
        *,
        agent: MemoryAgent,
        speech: SpeechClient,
        tts: TTSEngine,
        avatar: ExpressionState,
        signals: Signals,
        events: EventHub,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.speech = speech
        self.tts = tts
        self.avatar = avatar
        self.signals = signals
        self.view = SpeakingView(signals)  # the sink, and whether a barge-in waits
        self.events = events
        # A barge-in paused the voice: set when it is settled, `resumed` says how.
        self._barge_in_settled = asyncio.Event()
        self._barge_in_settled.set()
        self._resumed = True
        signals.watch(self._see)
        self.turn_ids = 0
        # Whatever comes in (the words heard or typed, an error's text) is masked of
        # the configured secrets before it is shown, sent or kept.
        self.redact = agent.core.redactor
        self._face_reset: asyncio.TimerHandle | None = None
        self.current: Turn | None = None  # the turn in flight

    def _see(self, signal: SpeakingSignal) -> None:
        if isinstance(signal, BargeInPaused):
            self._barge_in_settled.clear()
        elif isinstance(signal, BargeInSettled):
            self._resumed = signal.resumed
            self._barge_in_settled.set()

    async def barge_in_outcome(self) -> bool:
        """For a turn whose voice a barge-in paused: True to speak on, False when the
        interruption stands (the words' turn interrupts this one)."""
        await self._barge_in_settled.wait()
        return self._resumed

    def _next_id(self) -> int:
        self.turn_ids += 1
        return self.turn_ids

    def keep_face(self) -> None:
        """A turn starts: the last reply's face is not reset under it."""
        if self._face_reset is not None:
            self._face_reset.cancel()
            self._face_reset = None

    def neutral_face_after(self, delay_s: float) -> None:
        """The reply is over: back to the neutral face after `delay_s`."""
        self.keep_face()
        self._face_reset = asyncio.get_running_loop().call_later(delay_s, self._neutral_face)

    def _neutral_face(self) -> None:
        self._face_reset = None  # a turn that started meanwhile has cancelled this
        self.avatar.set("neutral")
        self.events.emit(ExpressionChanged("neutral"))

    def withdraw(self, turn_id: int) -> bool:
        """Take back spoken turn `turn_id` in flight (the user went on with it): nothing
        of it is stored, and once interrupted its reply leaves the transcript
        (`ReplyWithdrawn`). False when too late (not in flight, or stored)."""
        turn = self.current
        if turn is None or turn.result.turn_id != turn_id or not turn.spoken:
            return False
        return turn.withdraw()

    def reserve_id(self) -> int:
        """A number for a turn still being heard (its partial words show under it)."""
        return self._next_id()

    @property
    def model_name(self) -> str:
        model = self.settings.chat.model
        return "the local model" if model.startswith("local/") else model.split("/", 1)[-1]

    async def from_pcm(
        self, pcm: bytes, speech_end: float, scope: Scope, *, turn_id: int | None = None
    ) -> TurnResult:
        """A spoken turn whose speech ended at `speech_end`: transcribe, then answer."""
        turn_id = turn_id if turn_id is not None else self._next_id()
        self.events.emit(StatusChanged(Status.TRANSCRIBING))
        try:
            text = self.redact(await transcribe(self.speech, pcm))
        except SpeechError as exc:
            words = self.redact(str(exc))
            self.events.emit(Notice(words, error=True))
            return TurnResult(turn_id, "", error=words)
        timings = {"transcript_ms": (time.perf_counter() - speech_end) * 1000}
        if not text.strip():
            self.events.emit(StatusChanged(Status.LISTENING, "didn't catch that"))
            return TurnResult(turn_id, "", timings_ms=timings)
        self.events.emit(UserTranscript(text, True, turn_id))
        return await Turn(self, turn_id, text, speech_end, timings, scope, spoken=True).run()

    async def from_transcript(
        self,
        text: str,
        speech_end: float,
        transcript_ms: float,
        scope: Scope,
        *,
        turn_id: int | None = None,
        timings: dict[str, float] | None = None,
        speculation: Speculation | None = None,
        endpointing: dict[str, Any] | None = None,
    ) -> TurnResult:
        """A spoken turn already transcribed (heard while the user spoke, or the words
        of a barge-in); with `speculation`, its reply is the one already started."""
        turn_id = turn_id if turn_id is not None else self._next_id()
        text = self.redact(text)
        self.events.emit(UserTranscript(text, True, turn_id))
        timings = {**(timings or {}), "transcript_ms": transcript_ms}
        replies = speculation.reply() if speculation is not None else None
        turn = Turn(self, turn_id, text, speech_end, timings, scope, replies, spoken=True)
        turn.result.endpointing.update(endpointing or {})
        return await turn.run()

    async def from_text(self, text: str, started: float, scope: Scope) -> TurnResult:
        """A typed message: a turn without speech recognition."""
        turn_id = self._next_id()
        text = self.redact(text)
        self.events.emit(UserTranscript(text, True, turn_id))
        return await Turn(self, turn_id, text, started, {}, scope).run()

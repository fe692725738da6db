"""One turn: the user's words → the agent → sentences → speech with a TTS look-ahead →
playback (paused and resumed by a barge-in), with what the user actually heard, the
"still waiting" status and the stage timings. A turn's state lives in its `Turn`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.agent import AgentTurnError, BatchInput, MemoryAgent, SentenceOutput, ToolStatus
from app.audio.playback import Heard, PlaybackError, PlaybackReport
from app.avatar.state import ExpressionState
from app.config import Settings
from app.events import (
    AssistantSentence,
    EventHub,
    ExpressionChanged,
    MouthLevel,
    Notice,
    Status,
    StatusChanged,
    ToolUsed,
    TurnFinished,
    UserTranscript,
)
from app.session.barge_in import BargeIns
from app.session.floor import Floor
from app.session.hearing import transcribe
from app.session.interruption import Scope
from app.speech import SpeechClient, SpeechError
from app.tts import SynthesizedAudio, TTSEngine, TTSError

if TYPE_CHECKING:
    from app.session.speculation import Speculation

log = logging.getLogger(__name__)

STILL_WAITING_S = 4.0  # a hosted model this slow to start answering: "still waiting"
# Without sound, a reply is shown no faster than it is read: Latin-script words at
# 250 a minute, CJK characters at 300 (typical adult silent reading).
READING_WORDS_PER_S = 250 / 60
READING_CJK_PER_S = 300 / 60
NO_SOUND = "the reply is shown: no sound output"
# After a reply the face keeps its last expression this long, then is neutral again: a
# moment after the last word, longer when the reply was only read (no speaker, muted).
FACE_HOLD_HEARD_S = 1.5
FACE_HOLD_SHOWN_S = 4.0

_STAGES = (
    "endpoint_ms",
    "transcript_ms",
    "request_sent_ms",
    "first_token_ms",
    "first_sentence_ms",
    "first_audio_ms",
    "total_ms",
)


def _stage_order(key: str) -> int:
    return _STAGES.index(key) if key in _STAGES else len(_STAGES)


@dataclass(slots=True)
class TurnResult:
    turn_id: int
    heard: str
    sentences: list[SentenceOutput] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    interrupted: bool = False
    # Messages and changes not written to history when the turn ended (a full disk):
    # they wait in memory and are written when there is room; `save_problem` says why.
    unsaved: int = 0
    save_problem: str | None = None

    @property
    def saved(self) -> bool:
        """Whether the history holds everything so far, this turn included."""
        return self.unsaved == 0
    # How the turn was decided, for a spoken turn: why it ended, whether its words were
    # heard while the user spoke, whether a speculative reply was used.
    endpointing: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "heard": self.heard,
            "sentences": [
                {
                    "text": s.display_text,
                    "spoken": s.tts_text,
                    "expressions": list(s.actions.expressions),
                    "thinking": s.is_thinking,
                }
                for s in self.sentences
            ],
            "timings_ms": {
                k: round(v, 1)
                for k, v in sorted(self.timings_ms.items(), key=lambda kv: _stage_order(kv[0]))
            },
            "error": self.error,
            "interrupted": self.interrupted,
            "saved": self.saved,
        }
        if self.endpointing:
            doc["endpointing"] = dict(self.endpointing)
        return doc


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
        floor: Floor,
        barge_ins: BargeIns,
        events: EventHub,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.speech = speech
        self.tts = tts
        self.avatar = avatar
        self.floor = floor
        self.barge_ins = barge_ins
        self.events = events
        self.turn_ids = 0
        # Whatever comes in (the words heard or typed, an error's text) is masked of
        # the configured secrets before it is shown, sent or kept.
        self.redact = agent.core.redactor
        self._face_reset: asyncio.TimerHandle | None = None

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

    def reserve_id(self) -> int:
        """A number for a turn still being heard (its partial words show under it)."""
        return self._next_id()

    @property
    def model_name(self) -> str:
        model = self.settings.chat.model
        return "the local model" if model.startswith("local/") else model.split("/", 1)[-1]

    async def from_pcm(self, pcm: bytes, speech_end: float, scope: Scope) -> TurnResult:
        """A spoken turn whose speech ended at `speech_end`: transcribe, then answer."""
        turn_id = self._next_id()
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
        return await Turn(self, turn_id, text, speech_end, timings, scope).run()

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
        replies = speculation.replies() if speculation is not None else None
        turn = Turn(self, turn_id, text, speech_end, timings, scope, replies)
        turn.result.endpointing.update(endpointing or {})
        return await turn.run()

    async def from_text(self, text: str, started: float, scope: Scope) -> TurnResult:
        """A typed message: a turn without speech recognition."""
        turn_id = self._next_id()
        text = self.redact(text)
        self.events.emit(UserTranscript(text, True, turn_id))
        return await Turn(self, turn_id, text, started, {}, scope).run()


_Queue = asyncio.Queue[tuple[SentenceOutput, "asyncio.Task[SynthesizedAudio] | None"] | None]


class Turn:
    """One answer to `text`; stage timings are ms since `t0` (the end of the user's
    speech, or when they pressed send). `scope` ends when the turn is interrupted."""

    def __init__(
        self,
        runner: TurnRunner,
        turn_id: int,
        text: str,
        t0: float,
        timings: dict[str, float],
        scope: Scope,
        replies: AsyncIterator[SentenceOutput | ToolStatus] | None = None,
    ) -> None:
        self.runner = runner
        self._replies = replies
        self.events = runner.events
        self.floor = runner.floor
        self.scope = scope
        self.t0 = t0
        self.result = TurnResult(turn_id, text, timings_ms=timings)
        self.heard: list[str] = []  # the reply as far as the user heard it
        self._thinking_face = False
        self._answered = asyncio.Event()
        self._read_until = 0.0  # without sound: when the sentence shown has been read

    def _ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def _status(self, status: Status, detail: str = "") -> None:
        self.events.emit(StatusChanged(status, detail))

    async def run(self) -> TurnResult:
        result, timings = self.result, self.result.timings_ms
        queue: _Queue = asyncio.Queue(maxsize=self.runner.settings.tts.lookahead)
        self._status(Status.THINKING)
        self.runner.keep_face()
        self.events.emit(ExpressionChanged("thinking", 0.6))
        self._thinking_face = True
        speaker = asyncio.create_task(self._speak(queue))
        try:
            with self.scope.hooked(self._stop_sink):
                await self._produce(queue)
                await speaker
        except AgentTurnError as exc:
            result.error = str(exc)
            await asyncio.gather(speaker, return_exceptions=True)
            self.events.emit(Notice(str(exc), error=True))
            self._status(Status.ERROR, str(exc))
            self.runner.neutral_face_after(0.0)
        except asyncio.CancelledError:
            result.interrupted = True
            # The sink was told to stop: let the sentence in progress report how much
            # of it was heard (one chunk at most), then stop the speaker for good.
            self._stop_sink()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(speaker), 0.5)
            speaker.cancel()
            await asyncio.gather(speaker, return_exceptions=True)
            _cancel_synthesis(queue)
            self.runner.agent.handle_interrupt(" ".join(self.heard))
            self.events.emit(TurnFinished(result.turn_id, dict(timings), interrupted=True))
            self.floor.speaking = False
            self.runner.neutral_face_after(0.0)
            raise
        finally:
            self._face_back()
        timings["total_ms"] = self._ms()
        self.events.emit(TurnFinished(result.turn_id, dict(timings)))
        if result.error is None:
            heard = self.floor.sink is not None
            self.runner.neutral_face_after(FACE_HOLD_HEARD_S if heard else FACE_HOLD_SHOWN_S)
        return result

    def _face_back(self) -> None:
        """A turn that ends with no answer shown (an error, Esc while it thought) puts
        the thinking look away: the face goes back to its sticky expression."""
        if self._thinking_face:
            self._thinking_face = False
            avatar = self.runner.avatar
            self.events.emit(ExpressionChanged(avatar.current, avatar.intensity))

    def _stop_sink(self) -> None:
        if self.floor.sink is not None:
            self.floor.sink.stop()

    async def _still_waiting(self) -> None:
        # A slow model must not look like a hung app: say that it is still waited for.
        waited = STILL_WAITING_S
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._answered.wait(), STILL_WAITING_S)
        while not self._answered.is_set():
            detail = f"still waiting for {self.runner.model_name} ({int(waited)} s)"
            self._status(Status.THINKING, detail)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), 1.0)
            waited += 1.0

    async def _produce(self, queue: _Queue) -> None:
        """The agent's sentences into `queue`, each with its synthesis already started."""
        runner, result, timings = self.runner, self.result, self.result.timings_ms
        waiter = asyncio.create_task(self._still_waiting())
        replies = self._replies or runner.agent.chat(BatchInput([result.heard]))
        try:
            async for item in replies:
                self._answered.set()
                if isinstance(item, ToolStatus):
                    self._status(Status.THINKING, item.text)
                    if not item.done:
                        self.events.emit(ToolUsed(item.name, result.turn_id))
                    continue
                timings.setdefault("first_sentence_ms", self._ms())
                result.sentences.append(item)
                task = None
                heard = runner.floor.sink is not None  # no speaker: nothing to synthesize
                if heard and item.tts_text.strip() and not item.is_thinking:
                    task = asyncio.create_task(
                        runner.tts.synthesize(item.tts_text, rate=runner.settings.tts.rate)
                    )
                await queue.put((item, task))
        finally:
            self._answered.set()
            waiter.cancel()
            stats = runner.agent.core.last_stats
            if stats.request_sent:
                timings["request_sent_ms"] = (stats.request_sent - self.t0) * 1000
            if stats.first_token:
                timings["first_token_ms"] = (stats.first_token - self.t0) * 1000
            result.unsaved, result.save_problem = stats.unsaved, stats.save_problem
            await queue.put(None)

    async def _speak(self, queue: _Queue) -> None:
        timings = self.result.timings_ms
        while self.scope.live and (entry := await queue.get()) is not None:
            sentence, task = entry
            audio: SynthesizedAudio | None = None
            if task is not None:
                try:
                    audio = await task
                except TTSError as exc:
                    words = self.runner.redact(f"Could not speak a sentence: {exc}")
                    self.events.emit(Notice(words, error=True))
                if audio is not None:
                    timings.setdefault("first_audio_ms", self._ms())
            if not self.scope.live:
                break
            if self.floor.sink is None and not sentence.is_thinking:
                await self._read(sentence)  # shown at reading pace: what is read is "heard"
                continue
            self._show(sentence)
            if audio is not None and self.floor.sink is not None:
                await self._play(audio, sentence)
            elif not sentence.is_thinking:
                self.heard.append(sentence.display_text)

    async def _read(self, sentence: SentenceOutput) -> None:
        """A sentence with no sound output: shown now, and the next one no sooner than
        this one takes to read (Esc meanwhile stops the reply after what was shown)."""
        await asyncio.sleep(max(0.0, self._read_until - time.perf_counter()))
        self._status(Status.REPLYING, NO_SOUND)
        self._show(sentence)
        self.heard.append(sentence.display_text)
        self._read_until = time.perf_counter() + reading_s(sentence.display_text)

    def _show(self, sentence: SentenceOutput) -> None:
        """The sentence as it starts playing (or is shown, with nothing to play it): its
        expression reaches the avatar first; a sentence without one keeps the last."""
        avatar = self.runner.avatar
        if self._thinking_face and not sentence.is_thinking:
            # The reply has started: drop the thinking look for the reply's face so far.
            self._thinking_face = False
            if not sentence.actions.expressions:
                self.events.emit(ExpressionChanged(avatar.current, avatar.intensity))
        for name in sentence.actions.expressions:
            intensity = sentence.actions.intensities.get(name, 1.0)
            avatar.set(name, intensity)
            self.events.emit(ExpressionChanged(name, intensity))
        if sentence.display_text or sentence.tts_text:
            self.events.emit(
                AssistantSentence(
                    sentence.display_text,
                    sentence.tts_text,
                    tuple(sentence.actions.expressions),
                    self.result.turn_id,
                    sentence.is_thinking,
                )
            )

    async def _play(self, audio: SynthesizedAudio, sentence: SentenceOutput) -> None:
        floor, barge_ins = self.floor, self.runner.barge_ins
        if await barge_ins.outcome() is False:
            # A barge-in waited for the user's words and they came: the turn ends here
            # (its interrupt path stores what was heard), before another sentence plays.
            raise asyncio.CancelledError
        echo_tail_s = self.runner.settings.audio.echo_tail_ms / 1000
        played_s, rest = 0.0, audio
        while True:
            sink = floor.sink
            if sink is None:
                return
            floor.speaking = True
            self._status(Status.SPEAKING)
            try:
                report = await sink.play(
                    rest, on_level=lambda level: self.events.emit(MouthLevel(level))
                )
            except PlaybackError as exc:
                self.events.emit(Notice(str(exc), error=True))
                floor.sink = None  # replies are shown from now on, not heard
                self.heard.append(sentence.display_text)
                return
            finally:
                floor.speaking = False
                floor.echo_until = time.perf_counter() + echo_tail_s
            played_s += report.played_s
            if report.heard is Heard.FULL or not barge_ins.pending:
                break
            # A barge-in stopped the sentence: what was heard so far counts if the
            # interruption stands; with no words from the user, speak on from there.
            self.heard.append(_partly(sentence, played_s / audio.duration_s))
            if not await barge_ins.outcome():
                raise asyncio.CancelledError
            self.heard.pop()
            offset = min(len(audio.pcm), int(played_s * audio.sample_rate) * 2)
            rest = SynthesizedAudio(audio.pcm[offset:], audio.sample_rate)
            if not rest.pcm:
                report = PlaybackReport(Heard.FULL, audio.duration_s, audio.duration_s)
                break
        if report.heard is Heard.FULL:
            self.heard.append(sentence.display_text)
        elif played_s > 0:
            self.heard.append(_partly(sentence, played_s / audio.duration_s))


def reading_s(text: str) -> float:
    """About how long `text` takes to read."""
    cjk = sum(1 for c in text if "\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff")
    words = len(text.split()) if cjk < len(text) / 2 else 0
    return words / READING_WORDS_PER_S + cjk / READING_CJK_PER_S


def _partly(sentence: SentenceOutput, fraction: float) -> str:
    words = sentence.display_text.split()
    kept = max(1, round(len(words) * fraction))
    return " ".join(words[:kept]) + "…"


def _cancel_synthesis(queue: _Queue) -> None:
    while not queue.empty():
        entry = queue.get_nowait()
        if entry is not None and entry[1] is not None:
            entry[1].cancel()

"""One turn: the user's words → the agent → sentences → speech with a TTS look-ahead →
playback (paused and resumed by a barge-in), with what the user actually heard, the
"still waiting" status and the stage timings. A turn's state lives in its `Turn`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from app.agent import AgentTurnError, BatchInput, Reply, SentenceOutput, ToolStatus
from app.agent.commit import TurnCommit
from app.audio.playback import Heard, PlaybackError, PlaybackReport
from app.events import (
    AssistantSentence,
    ExpressionChanged,
    MouthLevel,
    Notice,
    ReplyWithdrawn,
    Status,
    StatusChanged,
    ToolUsed,
    TurnFinished,
)
from app.memory.heard import SPOKEN_OVER
from app.session.interruption import Scope
from app.session.speaking import (
    CompanionStartedSpeaking,
    CompanionStoppedSpeaking,
    OutputLost,
)
from app.session.turn_result import TurnResult
from app.tts import SynthesizedAudio, TTSError

if TYPE_CHECKING:
    from app.session.turn_runner import TurnRunner

log = logging.getLogger(__name__)

STILL_WAITING_S = 4.0  # a hosted model this slow to start answering: "still waiting"
# Without sound, a reply is shown no faster than it is read: Latin-script words at
# 250 a minute, CJK characters at 300 (typical adult silent reading).
READING_WORDS_PER_S = 250 / 60
READING_CJK_PER_S = 300 / 60
NO_SOUND = "the reply is shown: no sound output"
# A sentence's sound waits at most this long while the user speaks (a noise that does not
# stop): a going-on's bar, or a barge-in's, is reached well before.
USER_HOLD_S = 1.0
# After a reply the face keeps its last expression this long, then is neutral again: a
# moment after the last word, longer when the reply was only read (no speaker, muted).
FACE_HOLD_HEARD_S = 1.5
FACE_HOLD_SHOWN_S = 4.0

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
        replies: Reply | None = None,
        *,
        spoken: bool = False,
    ) -> None:
        self.runner = runner
        self.spoken = spoken  # an answer to what the user said aloud (typed: False)
        self.withdrawn = False  # taken back: the user went on with it
        self._replies = replies
        # Recorded once, as far as the user heard it (`_settle`).
        self._commit = (replies and replies.commit) or TurnCommit(held=False, until_heard=True)
        self.events = runner.events
        self.view = runner.view
        self.scope = scope
        self.t0 = t0
        self.result = TurnResult(turn_id, text, timings_ms=timings)
        self.heard_reply: list[str] = []  # the reply as far as the user heard it
        self._speaking = False  # its voice plays now (told by the speaking signals)
        self._thinking_face = False
        self._answered = asyncio.Event()
        self._read_until = 0.0  # without sound: when the sentence shown has been read

    def _ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def _status(self, status: Status, detail: str = "") -> None:
        self.events.emit(StatusChanged(status, detail))

    def withdraw(self) -> bool:
        """Take this turn back (`TurnRunner.withdraw`); False when it was stored."""
        if self.withdrawn or not self._commit.withdraw():
            return self.withdrawn
        self.withdrawn = self.result.withdrawn = True
        return True

    async def run(self) -> TurnResult:
        self.runner.current = self
        try:
            return await self._run()
        finally:
            if self.runner.current is self:
                self.runner.current = None

    async def _run(self) -> TurnResult:
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
            self._settle(" ".join(self.heard_reply))
            self.events.emit(TurnFinished(result.turn_id, dict(timings), interrupted=True))
            if self.withdrawn:  # what was shown of it goes: it is answered anew
                self.events.emit(ReplyWithdrawn(result.turn_id))
            self._stopped_speaking(0.0)
            self.runner.neutral_face_after(0.0)
            raise
        finally:
            self._settle(None)  # the whole reply (or an error): unless cut off above
            self._face_back()
        timings["total_ms"] = self._ms()
        self.events.emit(TurnFinished(result.turn_id, dict(timings)))
        if result.error is None:
            heard = self.view.sink is not None
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
        if self.view.sink is not None:
            self.view.sink.stop()

    def _started_speaking(self) -> None:
        if not self._speaking:
            self._speaking = True
            self.runner.signals.emit(CompanionStartedSpeaking(self.result.turn_id))

    def _stopped_speaking(self, echo_tail_s: float, sentence: str = "") -> None:
        """The voice stopped; `sentence` is the one that was playing (whole or cut)."""
        if self._speaking:
            self._speaking = False
            echo_until = time.perf_counter() + echo_tail_s
            said = " ".join([*self.heard_reply, sentence] if sentence else self.heard_reply)
            self.runner.signals.emit(
                CompanionStoppedSpeaking(self.result.turn_id, said, echo_until)
            )

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
        if self._replies is None:
            said = BatchInput([result.user_words])
            if result.endpointing.get("over_barge_in") and runner.view.said:
                # Heard over its voice: the memory leaves out what was its own words.
                said.metadata[SPOKEN_OVER] = runner.view.said
            self._replies = runner.agent.chat(said, commit=self._commit)
        replies = self._replies
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
                heard = runner.view.sink is not None  # no speaker: nothing to synthesize
                if heard and item.tts_text.strip() and not item.is_thinking:
                    task = asyncio.create_task(
                        runner.tts.synthesize(item.tts_text, rate=runner.settings.tts.rate)
                    )
                await queue.put((item, task))
        finally:
            self._answered.set()
            waiter.cancel()
            # Interrupted: the reply stops (its model and tools) wherever it waits.
            await replies.aclose()
            outcome = replies.outcome
            if outcome.request_sent:
                timings["request_sent_ms"] = (outcome.request_sent - self.t0) * 1000
            if outcome.first_token:
                timings["first_token_ms"] = (outcome.first_token - self.t0) * 1000
            await queue.put(None)

    def _settle(self, heard: str | None) -> None:
        """What the user heard of the reply (None: all of it): the turn is recorded so,
        once its run is over too; the first settling counts."""
        self._commit.settle(heard)
        if self._replies is not None:
            outcome = self._replies.outcome  # what the recording could not write yet
            self.result.unsaved, self.result.save_problem = outcome.unsaved, outcome.save_problem

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
            await self._unless_words_stand()
            if self.view.sink is None and not sentence.is_thinking:
                await self._read(sentence)  # shown at reading pace: what is read is "heard"
                continue
            self._show(sentence)
            if audio is not None and self.view.sink is not None:
                await self._play(audio, sentence)
            elif not sentence.is_thinking:
                self.heard_reply.append(sentence.display_text)

    async def _unless_words_stand(self) -> None:
        """No sentence starts sounding over the user: while they speak it waits (for
        `USER_HOLD_S` at most). A barge-in paused the reply: its words are waited for,
        and when they stand the turn ends here, before the next sentence is shown or
        played (its interrupt path stores what was heard)."""
        view, until = self.view, time.perf_counter() + USER_HOLD_S
        while view.sink is not None and view.user_speaking and not view.barge_pending:
            if not self.scope.live or time.perf_counter() >= until:
                break
            await asyncio.sleep(0.02)
        if view.barge_pending and not await self.runner.barge_in_outcome():
            raise asyncio.CancelledError

    async def _read(self, sentence: SentenceOutput) -> None:
        """A sentence with no sound output: shown now, and the next one no sooner than
        this one takes to read (Esc meanwhile stops the reply after what was shown)."""
        await asyncio.sleep(max(0.0, self._read_until - time.perf_counter()))
        await self._unless_words_stand()
        self._status(Status.REPLYING, NO_SOUND)
        self._show(sentence)
        self.heard_reply.append(sentence.display_text)
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
        view, runner = self.view, self.runner
        echo_tail_s = runner.settings.audio.echo_tail_ms / 1000
        played_s, rest = 0.0, audio
        while True:
            sink = view.sink
            if sink is None:
                return
            self._started_speaking()
            self._status(Status.SPEAKING)
            try:
                report = await sink.play(
                    rest, on_level=lambda level: self.events.emit(MouthLevel(level))
                )
            except PlaybackError as exc:
                self.events.emit(Notice(str(exc), error=True))
                # Replies are shown from now on, not heard: the conductor lets it go.
                runner.signals.emit(OutputLost(str(exc)))
                self.heard_reply.append(sentence.display_text)
                return
            finally:
                self._stopped_speaking(echo_tail_s, sentence.display_text)
            played_s += report.played_s
            if report.heard is Heard.FULL or not view.barge_pending:
                break
            # A barge-in stopped the sentence: what was heard so far counts if the
            # interruption stands; with no words from the user, speak on from there.
            self.heard_reply.append(_partly(sentence, played_s / audio.duration_s))
            if not await runner.barge_in_outcome():
                raise asyncio.CancelledError
            self.heard_reply.pop()
            offset = min(len(audio.pcm), int(played_s * audio.sample_rate) * 2)
            rest = SynthesizedAudio(audio.pcm[offset:], audio.sample_rate)
            if not rest.pcm:
                report = PlaybackReport(Heard.FULL, audio.duration_s, audio.duration_s)
                break
        if report.heard is Heard.FULL:
            self.heard_reply.append(sentence.display_text)
        elif played_s > 0:
            self.heard_reply.append(_partly(sentence, played_s / audio.duration_s))


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

"""The microphone side of a session: the gate (mode, push-to-talk), the level meter, the
echo canceller, VAD, the user's turn (`TurnTaking`: endpointing with the turn model,
and hearing the words while they are spoken), and barge-in detection.

`Listener.events(source)` yields typed events (`app.session.listen_events`: the user's
turn started, resumed, partial words, words ready, ended; barge-in; the level) and
decides nothing about turns: the conductor does. Whether the microphone is heard while
the companion speaks, and whether speech over it may interrupt, is the strategy in force
(`app.session.strategies`), which follows the speaking signals. `Listener.microphone(...)`
does the same for a microphone that may go away and come back (`MicLost`, `MicBack`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import numpy as np

from app.audio.capture import AudioSource, MicrophoneSource, MicrophoneUnavailable, heard_at
from app.audio.echo import EchoCanceller
from app.audio.format import BYTES_PER_SECOND, FRAME_BYTES, pcm_bytes
from app.audio.vad import BargeInDetector, Endpointer, EndpointerConfig, SileroVad, frames
from app.config import Settings
from app.events import MicLevel
from app.session.endpointing import EndReason, TurnEnd
from app.session.listen_events import (
    BargeInHeard,
    ListenEvent,
    ListeningNote,
    MicBack,
    MicLost,
    UserStartedSpeaking,
    UserStoppedSpeaking,
    WordsCannotCome,
)
from app.session.speaking import Signals, SpeakingView, UserSpeaking
from app.session.strategies import FloorRules
from app.session.turn_taking import Detected, TurnTaking
from app.speech import SpeechClient

if TYPE_CHECKING:
    from app.audio.turn_model import SmartTurn

LEVEL_BYTES = pcm_bytes(0.1)  # the level meter's window: 100 ms
MIC_MODES = ("always_on", "push_to_talk", "muted")


class MicGate:
    """Whether what the microphone hears counts: the user's switch, the mode
    (`always_on`, `push_to_talk`, `muted`) and the push-to-talk key."""

    def __init__(self, mode: str) -> None:
        self.enabled = True
        self.mode = mode
        self.held = False  # push-to-talk is held
        self._released = False  # ... and was let go: the utterance ends now
        self.paused = 0  # sound tests running: nothing heard counts

    @property
    def open(self) -> bool:
        if not self.enabled or self.mode == "muted" or self.paused:
            return False
        return self.mode != "push_to_talk" or self.held

    def set_mode(self, mode: str) -> None:
        if mode not in MIC_MODES:
            raise ValueError(f"unknown microphone mode {mode!r}")
        self.mode = mode
        self.held = False

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        if enabled and self.mode == "muted":
            self.mode = "always_on"

    def pause(self, paused: bool) -> bool:
        """One more (or one fewer) sound test; True when the last one ended."""
        was = self.paused
        self.paused = max(0, was + (1 if paused else -1))
        return bool(was) and not self.paused

    def hold(self, pressed: bool) -> bool:
        """Push-to-talk pressed or let go; True when that changed it."""
        if self.held and not pressed:
            self._released = True
        changed = pressed != self.held
        self.held = pressed
        return changed

    def take_release(self) -> bool:
        """Whether push-to-talk was let go since the last call."""
        released, self._released = self._released, False
        return released


class Listener:
    """Microphone chunks in, `ListenEvent`s out (one listener per `events()` call)."""

    def __init__(
        self,
        settings: Settings,
        gate: MicGate,
        view: SpeakingView,
        echo: EchoCanceller,
        speech: SpeechClient | None = None,
        signals: Signals | None = None,
    ) -> None:
        self._settings = settings
        self._signals = signals  # told when the user speaks (`UserSpeaking`)
        self._user_speaking = False
        self._began_clear = False  # the utterance in progress began with no voice about
        self._vad_settings = settings.vad
        self._audio = settings.audio
        self.gate = gate
        self._view = view
        self.rules = FloorRules(
            settings.audio, gate, echo, view, continue_within_s=settings.turn.continue_within_s
        )
        self._began_continuing = False  # the utterance in progress began as a going-on
        self.echo = echo
        self._speech = speech
        self._turn_model: SmartTurn | None = None
        self._turn_model_problem: str | None = None  # not told yet
        self._loading: asyncio.Future[None] | None = None
        self.taking: TurnTaking | None = None  # the current loop's turn-taking (figures)

    @property
    def in_speech(self) -> bool:
        """The user is in the middle of a turn (as far as the endpointing knows)."""
        return self.taking is not None and self.taking.in_turn

    @property
    def can_barge_in(self) -> bool:
        """Whether speech over the companion may interrupt it: barge-in is on, the mic is
        always on, and echo cancellation runs with the sink's audio as its reference
        (without one, the mic is ignored while the companion speaks: half-duplex)."""
        return self.rules.can_barge_in

    async def load(self) -> None:
        """Load the turn model once, when the settings ask for it. If it cannot be,
        listening ends turns after a fixed silence, and says so once."""
        if self._settings.turn.endpointing != "turn_model":
            return
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._load())
        await asyncio.shield(self._loading)

    async def _load(self) -> None:
        from app.audio.turn_model import SmartTurn, TurnModelMissing

        try:
            self._turn_model = await asyncio.to_thread(SmartTurn)
        except (TurnModelMissing, OSError, RuntimeError, ValueError) as exc:
            silence = self._vad_settings.end_silence_ms
            self._turn_model_problem = (
                f"{exc}. Your turn ends after {silence} ms of silence instead."
            )

    def _untold_problem(self) -> str | None:
        problem, self._turn_model_problem = self._turn_model_problem, None
        return problem

    async def events(self, source: AudioSource) -> AsyncIterator[ListenEvent]:
        v = self._vad_settings
        vad = await asyncio.to_thread(SileroVad)
        # Listening starts at once; a turn model not loaded yet joins when it is (until
        # then, or if it cannot be, turns end after the fixed silence).
        loading: asyncio.Future[None] | None = None
        if self._loading is None or not self._loading.done():
            loading = asyncio.ensure_future(self.load())
        problem = self._untold_problem()
        if problem is not None:
            yield ListeningNote(problem)
        taking = self.taking = TurnTaking(self._settings, self._speech, self._turn_model)
        barge = BargeInDetector(v.barge_in_ms, v.start_threshold, v.stop_threshold)
        view, gate, echo = self._view, self.gate, self.echo
        pending = bytearray()
        level_bytes, level_sum = 0, 0.0
        try:
            async for chunk in _paced(source, taking):
                if loading is not None and loading.done():
                    loading = None
                    taking.use_model(self._turn_model)
                    problem = self._untold_problem()
                    if problem is not None:
                        yield ListeningNote(problem)
                if chunk is None:  # answers came in between two chunks
                    for item in taking.answers():
                        yield self._event(item, taking, len(pending))
                    continue
                # The level meter: RMS about ten times a second, only while the mic is open.
                if gate.open and chunk:
                    samples = np.frombuffer(chunk, dtype="<i2").astype(np.float32)
                    level_sum += float(np.dot(samples, samples))
                    level_bytes += len(chunk)
                    if level_bytes >= LEVEL_BYTES:
                        rms = math.sqrt(level_sum / (level_bytes // 2)) / 32768.0
                        yield MicLevel(max(-90.0, 20 * math.log10(max(rms, 1e-9))))
                        level_bytes, level_sum = 0, 0.0
                if gate.take_release():
                    # Push-to-talk let go: the turn ends now, not after a silence.
                    pending.clear()
                    end = taking.flush(EndReason.PUSH_TO_TALK)
                    vad.reset()
                    if end is None:
                        yield UserStoppedSpeaking(None, time.perf_counter(), push_to_talk=True)
                    else:
                        yield self._event(end, taking, 0, push_to_talk=True)
                # The rules are asked about the moment the chunk was heard: a listener
                # that fell behind must not take the voice it heard while the companion
                # spoke for the user's, once the voice has stopped.
                rule, now = self.rules.current(), heard_at(source, time.perf_counter())
                # Through a turn the canceller processes the mic, so its filter keeps up
                # with the room; otherwise the mic is only counted, so the reference stays
                # lined up with it (and costs nothing while nobody speaks).
                chunk = echo.process(chunk) if rule.cancels_echo() else echo.advance(chunk)
                # Half-duplex: without echo cancellation the mic hears the companion speak.
                if not gate.open or rule.mutes(now):
                    if view.barge_pending:
                        yield WordsCannotCome()
                    if taking.in_turn or pending:
                        taking.reset()
                        vad.reset()
                        pending.clear()
                    barge.reset()
                    self._tell_user_speaking(False)
                    continue
                pending += chunk
                taking.detector.push_to_talk = gate.mode == "push_to_talk"
                while len(pending) >= FRAME_BYTES:
                    frame = bytes(pending[:FRAME_BYTES])
                    del pending[:FRAME_BYTES]
                    probability = vad.probability(frame)
                    if view.barge_pending and taking.in_turn:
                        taking.detector.unheard = True  # its words come from the raw mic
                    # The words of a turn spoken while the companion is busy are not heard
                    # ahead: they are dropped, or a barge-in transcribes them at the end.
                    hear = not view.busy and not view.barge_pending
                    items = taking.push(frame, probability, time.perf_counter(), hear=hear)
                    # Over the voice only once the canceller can be trusted (a user
                    # going on, at the surer bar before); while the reply is prepared or
                    # between its sentences there is no voice to cancel.
                    continues = self.rules.continues(now)
                    cold = view.over_voice(now) and not echo.ready
                    if rule.may_interrupt(now) and (continues or not cold):
                        # A user going on with their turn is heard sooner than one who
                        # interrupts a reply they have heard a while; over a cold
                        # canceller at the barge-in's bar (bench_barge_in: 160 ms then
                        # took its echo for a voice in 11 of 108 loud rooms, 500 in none).
                        soon = continues and not cold
                        turn = self._settings.turn
                        barge.min_speech_ms = turn.continue_speech_ms if soon else v.barge_in_ms
                        if barge.push(probability):
                            yield BargeInHeard(barge.speech_ms, continues=continues)
                    else:
                        barge.reset()
                    for item in items:
                        yield self._event(item, taking, len(pending))
                    clear = taking.in_turn and self._began_clear
                    self._tell_user_speaking(clear or barge.speech_ms > 0)
            # The input ended (a file, a closed stream): a turn in progress ends with it.
            end = taking.flush(EndReason.INPUT_ENDED)
            if end is not None:
                yield self._event(end, taking, 0)
        finally:
            if loading is not None:
                loading.cancel()
            taking.close()
            self._tell_user_speaking(False)

    def _tell_user_speaking(self, speaking: bool) -> None:
        """`UserSpeaking` when it changed: a reply holds its next sound while the user
        speaks (speech that began with no voice about, or that counts to a barge-in)."""
        if speaking != self._user_speaking:
            self._user_speaking = speaking
            if self._signals is not None:
                self._signals.emit(UserSpeaking(speaking))

    def _event(
        self, item: Detected, taking: TurnTaking, pending_bytes: int, *, push_to_talk: bool = False
    ) -> ListenEvent:
        """A listening event for what the turn-taking reported (an ended turn becomes a
        `UserStoppedSpeaking`)."""
        now = time.perf_counter()
        if isinstance(item, UserStartedSpeaking):
            self._began_continuing = self.rules.continues(now)
            self._began_clear = not self._view.over_voice(now)
        if not isinstance(item, TurnEnd):
            return item
        continues, self._began_continuing = self._began_continuing, False
        # Speech that ended while a reply is in flight is not heard ahead (the turn in
        # flight has the recognizer): its words come from the raw microphone, as a
        # barge-in's do, and decide whether it stops the reply or goes on with the turn.
        over_reply = self._view.barge_pending or (self._view.busy and not push_to_talk)
        if not over_reply:
            text, final_words = taking.words_of(item)
            return UserStoppedSpeaking(
                item.pcm,
                item.speech_end,
                push_to_talk=push_to_talk,
                text=text,
                final_words=final_words,
                ended_at=now,
                reason=item.reason,
            )
        # What was said once the voice had stopped is taken from the raw mic: the
        # canceller's output garbles it (double-talk suppression).
        pcm = None
        if item.pcm is not None:
            end = self.echo.output_samples - pending_bytes // 2
            tail_s = self._audio.echo_tail_ms / 1000
            pcm = self.echo.after_echo(item.pcm, end, tail_s)
        return UserStoppedSpeaking(
            pcm,
            item.speech_end,
            over_barge_in=True,
            ended_at=now,
            reason=item.reason,
            continues=continues,
        )

    async def microphone(
        self, source: AudioSource, device: str | int | None, *, retry_s: float = 3.0
    ) -> AsyncIterator[ListenEvent]:
        """`events(source)`; when the microphone goes away, `MicLost`, then a look for
        `device` every `retry_s` until it is back (`MicBack`) and listening goes on."""
        while True:
            try:
                async for event in self.events(source):
                    yield event
                return
            except MicrophoneUnavailable as exc:
                await source.aclose()
                yield MicLost(str(exc))
            while True:
                await asyncio.sleep(retry_s)
                try:
                    name = await asyncio.to_thread(MicrophoneSource.check_available, device)
                except MicrophoneUnavailable:
                    continue
                source = MicrophoneSource(device)
                yield MicBack(name, source)
                break


# How far ahead of real time the input may run before the loop waits for the answers a
# pause's end depends on: a microphone never gets ahead (it is captured in real time);
# a file or a simulated room read as fast as it goes does, and then waiting keeps its
# turns the same whatever the machine's speed.
_AHEAD_S = 0.3


async def _paced(source: AudioSource, taking: TurnTaking) -> AsyncIterator[bytes | None]:
    """The source's chunks, and None whenever answers came in between two of them."""
    chunks = source.chunks().__aiter__()
    upcoming: asyncio.Future[bytes] | None = None
    # Ahead of real time: more audio read than time went by (not counting the waits
    # for answers). A microphone never is; a file read as fast as it goes is.
    started, audio_s, waited = time.perf_counter(), 0.0, 0.0
    try:
        while True:
            if taking.wake.is_set():
                yield None
                continue
            if upcoming is None and not taking.expecting:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
            else:
                now = time.perf_counter()
                if audio_s - (now - started - waited) > _AHEAD_S and taking.waiting:
                    await taking.wake.wait()
                    waited += time.perf_counter() - now
                    continue
                if upcoming is None:
                    upcoming = asyncio.ensure_future(chunks.__anext__())
                woken = asyncio.ensure_future(taking.wake.wait())
                await asyncio.wait((upcoming, woken), return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if not upcoming.done():
                    continue
                done, upcoming = upcoming, None
                try:
                    chunk = done.result()
                except StopAsyncIteration:
                    return
            audio_s += len(chunk) / BYTES_PER_SECOND
            yield chunk
    finally:
        if upcoming is not None and not upcoming.done():
            upcoming.cancel()


def trim_to_speech(pcm: bytes, settings: Settings) -> bytes:
    """The speech parts of a recording (Silero VAD), joined; b"" when it holds none (or
    less than `vad.min_speech_ms` of it, as the microphone would ignore): silence and
    noise are never sent to be transcribed."""
    vad = SileroVad()
    endpointer = Endpointer(
        EndpointerConfig.from_settings(settings.vad, min_speech_ms=0, max_utterance_s=10_000)
    )
    pieces: list[bytes] = []
    speech_ms = 0.0
    for frame in frames(pcm):
        _, utterance = endpointer.push(frame, vad.probability(frame))
        if utterance is not None:
            pieces.append(utterance.pcm)
            speech_ms += utterance.speech_ms
    tail = endpointer.flush()
    if tail is not None:
        pieces.append(tail.pcm)
        speech_ms += tail.speech_ms
    return b"".join(pieces) if speech_ms >= settings.vad.min_speech_ms else b""

"""The user's side of turn-taking for one listening loop: VAD frames go to the
`TurnDetector`; its questions go to the turn model (on a worker thread) and its
snapshots to the `Hearing`; their answers come back to it. What comes out are the
listening events of the user's turn (`UserStartedSpeaking`, `SpeechResumed`,
`PartialWords`, `WordsReady`) and the detector's `TurnEnd`, which the listener turns
into an `UserStoppedSpeaking`.

`wake` is set whenever answers are waiting for `answers()`, so the listening loop can
act on them between two microphone chunks instead of at the next one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from app.session.endpointing import (
    Action,
    EndpointingConfig,
    EndReason,
    LikelyOver,
    Question,
    Snapshot,
    TurnBegan,
    TurnDetector,
    TurnEnd,
    TurnResumed,
)
from app.session.hearing import STREAMING_ADAPTERS, Hearing, hearing_for
from app.session.listen_events import (
    FinalWords,
    ListenEvent,
    PartialWords,
    SpeechResumed,
    UserStartedSpeaking,
    WordsReady,
)
from app.speech import SpeechClient

if TYPE_CHECKING:
    from app.audio.turn_model import SmartTurn
    from app.config import Settings

log = logging.getLogger(__name__)

# Recognizers billed per request: transcribed only at a pause long enough to ask the
# turn model about, never at an interval while the user speaks.
BILLED_PER_CALL = frozenset({"openai_transcribe"})

Detected = ListenEvent | TurnEnd  # what one push of audio brought


def endpointing_for(settings: Settings, *, words: bool, snapshots: bool) -> EndpointingConfig:
    """The detector's configuration for these settings and this recognizer."""
    config = EndpointingConfig.from_settings(settings, words=words, snapshots=snapshots)
    if settings.speech.adapter in BILLED_PER_CALL:
        config = replace(
            config,
            snapshot_interval_ms=0,
            pause_ms=max(config.pause_ms, config.first_check_ms),
        )
    return config


class TurnTaking:
    """Detector, turn model and hearing for one listening loop."""

    def __init__(
        self, settings: Settings, speech: SpeechClient | None, model: SmartTurn | None
    ) -> None:
        self.wake = asyncio.Event()
        adapter = settings.speech.adapter
        live = settings.turn.live_transcript and speech is not None
        self.hearing: Hearing | None = (
            hearing_for(speech, adapter, self.wake, interval_s=settings.speech.partial_interval_s)
            if live and speech is not None
            else None
        )
        words = self.hearing is not None
        snapshots = words and adapter not in STREAMING_ADAPTERS
        self.detector = TurnDetector(
            endpointing_for(settings, words=words, snapshots=snapshots),
            turn_model=model is not None,
        )
        self._latest = ""  # a live stream's latest words, this turn
        self._model = model
        self._verdicts: list[tuple[int, float]] = []
        self._asking = 0  # questions out
        self._hearing_turn = False  # the hearing follows the current turn
        self._shown = ""
        self.questions = 0
        self.turn_model_s = 0.0  # time the turn model took, in all

    def use_model(self, model: SmartTurn | None) -> None:
        """The turn model is loaded (or could not be: None)."""
        self._model = model
        self.detector.set_turn_model(model is not None)

    @property
    def in_turn(self) -> bool:
        return self.detector.in_turn

    @property
    def waiting(self) -> bool:
        """A pause whose end waits for an answer on its way."""
        return self.detector.waiting_for

    @property
    def expecting(self) -> bool:
        """Some answer is on its way (worth waking up for between chunks)."""
        hearing_busy = self.hearing is not None and self.hearing.busy
        return self._asking > 0 or (self._hearing_turn and hearing_busy)

    # ----- frames in ---------------------------------------------------------------
    def push(self, frame: bytes, probability: float, now: float, *, hear: bool) -> list[Detected]:
        """One VAD frame; `hear`: transcribe this turn while it is spoken (it is not
        while the companion is busy or a barge-in waits: those words come otherwise)."""
        was_in_turn = self.detector.in_turn
        out: list[Detected] = []
        for action in self.detector.push(frame, probability, now):
            out += self._act(action, hear=hear)
        if was_in_turn and self.detector.in_turn and self._hearing_turn:
            assert self.hearing is not None
            self.hearing.feed(frame)
            out += self._streamed_words()
        return out

    def _streamed_words(self) -> list[Detected]:
        """With a live stream, its latest words are the words of a pause (a stream
        says nothing of how much audio they cover: they are what it heard so far)."""
        detector = self.detector
        pausing = detector.silence_ms >= detector.config.pause_ms
        if not (self.hearing is not None and self.hearing.streams and pausing):
            return []
        if not self._latest or detector.words_known:
            return []
        out: list[Detected] = []
        for action in detector.words_came(detector.speech_bytes, self._latest):
            out += self._act(action)
        return out

    def _act(self, action: Action, *, hear: bool = True) -> list[Detected]:
        if isinstance(action, TurnBegan):
            self._shown = self._latest = ""
            self._hearing_turn = hear and self.hearing is not None
            if self._hearing_turn:
                assert self.hearing is not None
                self.hearing.begin()
                self.hearing.feed(self.detector.pcm)
            else:
                self.detector.expect_words = False
            return [UserStartedSpeaking()]
        if isinstance(action, TurnResumed):
            if self._hearing_turn:
                assert self.hearing is not None
                self.hearing.resumed()
            return [SpeechResumed()]
        if isinstance(action, Snapshot):
            if self._hearing_turn:
                assert self.hearing is not None
                if not self.hearing.offer(action):
                    # dropped: the pause after this speech must still be transcribed
                    self.detector.not_transcribed(action)
            return []
        if isinstance(action, Question):
            self._ask(action)
            return []
        if isinstance(action, LikelyOver):
            return [WordsReady(action.text)]
        if action.pcm is None and self._hearing_turn:  # too short to be a turn
            assert self.hearing is not None
            self.hearing.close()
            self._hearing_turn = False
        return [action]

    def _ask(self, question: Question) -> None:
        assert self._model is not None
        model = self._model
        self._asking += 1
        self.questions += 1
        started = time.perf_counter()
        task = asyncio.ensure_future(asyncio.to_thread(model.probability, question.pcm))

        def done(task: asyncio.Future[float]) -> None:
            self._asking -= 1
            self.turn_model_s += time.perf_counter() - started
            if task.cancelled():
                return
            if task.exception() is not None:
                log.warning("the turn model failed: %r", task.exception())
                probability = 0.0  # unsure: the silence decides
            else:
                probability = task.result()
            self._verdicts.append((question.speech_bytes, probability))
            self.wake.set()

        task.add_done_callback(done)

    # ----- answers in ---------------------------------------------------------------
    def answers(self) -> list[Detected]:
        """Act on the turn model's answers and the transcripts that came in."""
        self.wake.clear()
        out: list[Detected] = []
        verdicts, self._verdicts = self._verdicts, []
        for speech_bytes, probability in verdicts:
            log.debug(
                "turn model: %.2f for %d bytes of speech (now %d, %.0f ms of silence)",
                probability, speech_bytes, self.detector.speech_bytes, self.detector.silence_ms,
            )
            for action in self.detector.verdict(speech_bytes, probability):
                out += self._act(action)
        if self.hearing is None:
            return out
        for heard in self.hearing.take():
            if heard.turn != self.hearing.turn or not self._hearing_turn:
                continue  # about a turn that is over
            text = heard.text.strip()
            if text and text != self._shown and self.detector.in_turn:
                self._shown = text
                out.append(PartialWords(text))
            if heard.speech_bytes < 0:  # a live stream's words: for the pause, if one runs
                if heard.text != self._latest:
                    self._latest = heard.text
                    self.detector.forget_words()
                    out += self._streamed_words()
            else:
                log.debug(
                    "heard %r for %d bytes of speech (now %d, %.0f ms of silence)",
                    heard.text, heard.speech_bytes, self.detector.speech_bytes,
                    self.detector.silence_ms,
                )
                for action in self.detector.words_came(heard.speech_bytes, heard.text):
                    out += self._act(action)
        return out

    # ----- the end --------------------------------------------------------------------
    def words_of(self, end: TurnEnd) -> tuple[str | None, FinalWords | None]:
        """The transcript of a turn that ended, if it is in already, and otherwise how
        the conductor gets it from the hearing (neither when it did not follow the
        turn). A live stream's words at the end are only what it heard so far: its
        final words come when it is told the audio is over."""
        hearing = self.hearing
        if end.pcm is None or not self._hearing_turn or hearing is None:
            return end.text, None
        if hearing.streams or end.text is None:
            return None, hearing.final_for(end.pcm, end.speech_bytes)
        return end.text, None

    def flush(self, reason: EndReason) -> TurnEnd | None:
        return self.detector.flush(reason)

    def reset(self) -> None:
        """Forget the turn in progress (the microphone closed or hears the companion)."""
        self.detector.reset()
        if self._hearing_turn and self.hearing is not None:
            self.hearing.close()
        self._hearing_turn = False

    def close(self) -> None:
        if self.hearing is not None:
            self.hearing.close()

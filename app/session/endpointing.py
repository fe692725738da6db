"""When the user's turn is over: a pure state machine over VAD frames, the turn model's
answers and the transcripts of what was said.

`TurnDetector.push(frame, probability, now)` follows one turn from its first speech
frame, through its pauses, to its end, and returns what should happen: `TurnBegan`,
`Snapshot` (transcribe what was said so far: at a pause, and every so often while the
user speaks), `Question` (ask the turn model), `TurnResumed` (speech again after a
pause that was acted on), `LikelyOver` (the words are in and sound finished: a reply
may start on them) and `TurnEnd`. The answers come back through `verdict()` and
`heard()`, keyed by how much speech they covered, so a late answer about an older
pause changes nothing.

With `mode = "turn_model"` the turn ends when the turn model says it is complete and
the words do not say otherwise, when finished-sounding words are followed by
`settle_ms` of silence (`question_settle_ms` when they end on a question or a goodbye:
either hands the turn over), and after `fallback_ms` of silence whatever was said. With
`mode = "silence"` it ends after `end_silence_ms`, as a fixed endpointer does. Over a
barge-in (`unheard`), where the words cannot be transcribed until the turn is over,
the turn model alone decides, with `end_silence_ms` as the fallback.
"""

from __future__ import annotations

import collections
import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.audio.format import BYTES_PER_SECOND, FRAME_MS
from app.audio.vad import EndpointerConfig
from app.session.leave_taking import says_goodbye
from app.session.wording import sounds_asked, sounds_finished, sounds_like_an_opener

if TYPE_CHECKING:
    from app.config import Settings


class EndReason(enum.StrEnum):
    TURN_MODEL = "turn model"  # the turn model said complete (and the words agreed)
    SETTLED = "finished words, then silence"  # the words sound finished, the model was unsure
    SILENCE = "silence"  # the fixed end silence (silence mode, or over a barge-in)
    FALLBACK = "fallback silence"  # the longest silence, whatever was said
    PUSH_TO_TALK = "push-to-talk released"
    MAX_LENGTH = "longest turn"
    INPUT_ENDED = "input ended"


@dataclass(slots=True)
class EndpointingConfig:
    """The VAD's part (`vad`: thresholds, pad, shortest speech, longest turn, and the
    fixed end silence) and the turn-taking's."""

    vad: EndpointerConfig = field(default_factory=EndpointerConfig)
    mode: str = "turn_model"  # or "silence"
    pause_ms: int = 64  # a pause this long: transcribe what was said so far
    first_check_ms: int = 200
    recheck_ms: int = 200
    threshold: float = 0.5
    doubt_ms: int = 0  # more silence before the model's "complete", scaled by its doubt
    settle_ms: int = 1000
    question_settle_ms: int = 500  # ... after words that end on a finished question
    fallback_ms: int = 2500
    snapshot_interval_ms: int = 1000  # transcribe this often while the user speaks; 0: never
    words: bool = True  # transcripts come while the user speaks (their words count)
    snapshots: bool = True  # ... from snapshots of the turn (not a live stream)
    language: str | None = "en"

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> EndpointingConfig:
        turn = settings.turn
        config = cls(
            vad=EndpointerConfig.from_settings(settings.vad),
            mode=turn.endpointing,
            pause_ms=turn.pause_ms,
            first_check_ms=turn.first_check_ms,
            recheck_ms=turn.recheck_ms,
            threshold=turn.threshold,
            doubt_ms=turn.doubt_ms,
            settle_ms=turn.settle_ms,
            question_settle_ms=turn.question_settle_ms,
            fallback_ms=max(turn.fallback_ms, turn.first_check_ms),
            snapshot_interval_ms=round(settings.speech.partial_interval_s * 1000),
            words=turn.live_transcript,
            snapshots=turn.live_transcript,
            language=settings.speech.language,
        )
        return replace(config, **overrides)


@dataclass(frozen=True, slots=True)
class TurnBegan:
    """The first speech of a turn."""


@dataclass(frozen=True, slots=True)
class TurnResumed:
    """Speech again after a pause that was acted on: a reply started on it is stale."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The turn so far, to transcribe; `speech_bytes`: how much of `pcm` is up to the
    end of the last speech frame (what a transcript of it covers)."""

    pcm: bytes
    speech_bytes: int
    at_pause: bool


@dataclass(frozen=True, slots=True)
class Question:
    """Ask the turn model whether the turn in `pcm` (up to now) is complete."""

    pcm: bytes
    speech_bytes: int


@dataclass(frozen=True, slots=True)
class LikelyOver:
    """The user is silent and the transcript of all they said is in and does not
    sound unfinished: a reply may start on `text` before the turn is confirmed."""

    text: str
    speech_bytes: int


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The turn is over. `pcm` is the whole turn (None when it held too little speech
    to be one); `speech_end` is the `now` of its last speech frame; `text` the
    transcript of all of it when one is already in (None otherwise)."""

    pcm: bytes | None
    speech_bytes: int
    speech_ms: float
    speech_end: float
    reason: EndReason
    text: str | None = None


Action = TurnBegan | TurnResumed | Snapshot | Question | LikelyOver | TurnEnd


class TurnDetector:
    """Frames in, turn decisions out (one turn at a time). `unheard` marks the current
    turn as one whose words cannot be transcribed before it ends (over a barge-in)."""

    def __init__(self, config: EndpointingConfig | None = None, *, turn_model: bool = True):
        self.config = config or EndpointingConfig()
        # Without a turn model the turn model mode cannot run: fixed silence instead.
        self.mode = self.config.mode if turn_model else "silence"
        pad_frames = max(1, round(self.config.vad.pre_speech_pad_ms / FRAME_MS))
        self._pad: collections.deque[bytes] = collections.deque(maxlen=pad_frames)
        self._clear()

    def _clear(self) -> None:
        self.in_turn = False
        self.unheard = False
        # Push-to-talk is held: only its release (or the longest turn) ends the turn.
        self.push_to_talk = False
        # Whether transcripts will come for this turn's pauses (the listener says no
        # when nothing transcribes it): without them the words decide nothing.
        self.expect_words = self.config.words
        self._frames: list[bytes] = []
        self._bytes = 0
        self._speech_frames = 0
        self._silence_frames = 0
        self._speech_bytes = 0  # where the last speech frame ends
        self._speech_end = 0.0
        self._snapshot_bytes = 0  # the audio the last snapshot started at
        self._snapshot_covers = -1  # the speech the last snapshot covered
        self._asking = False
        self._next_check_ms = float(self.config.first_check_ms)
        self._acted = False  # something was done about this pause (snapshot, question)
        self._verdict: float | None = None  # the turn model's answer for this pause
        self._text: str | None = None  # the transcript of everything, for this pause
        self._finished: bool | None = None  # what the words say about it
        self._asked = False  # ... and whether they end on a question
        self._opener = False  # ... or are only what a speaker opens with ("Hi.")
        self._told_likely = False

    def set_turn_model(self, available: bool) -> None:
        """The turn model can be asked (from the next pause on), or cannot."""
        self.mode = self.config.mode if available else "silence"

    def reset(self) -> None:
        """Forget the turn in progress (the microphone closed, or heard the companion)."""
        self._clear()
        self._pad.clear()

    @property
    def silence_ms(self) -> float:
        return self._silence_frames * FRAME_MS

    @property
    def speech_bytes(self) -> int:
        return self._speech_bytes

    @property
    def words_known(self) -> bool:
        """The words of the pause in progress are in."""
        return self._text is not None

    def forget_words(self) -> None:
        """Newer words are coming for the pause in progress (a live stream heard more)."""
        self._text = self._finished = None
        self._asked = self._opener = False
        self._told_likely = False

    @property
    def waiting_for(self) -> bool:
        """A pause is in progress whose end depends on an answer on its way (the turn
        model's, or the transcript of everything said)."""
        if not self.in_turn or self._silence_frames == 0 or self.mode != "turn_model":
            return False
        words_coming = (
            self.config.snapshots
            and self.expect_words
            and not self.unheard
            and self._text is None
            and self._snapshot_covers == self._speech_bytes
        )
        return self._asking or words_coming

    @property
    def pcm(self) -> bytes:
        """The turn so far (from the pre-speech pad)."""
        return b"".join(self._frames)

    # ----- frames --------------------------------------------------------------------
    def push(self, frame: bytes, probability: float, now: float) -> list[Action]:
        cfg, vad = self.config, self.config.vad
        if not self.in_turn:
            if probability < vad.start_threshold:
                self._pad.append(frame)
                return []
            self.in_turn = True
            self._frames = [*self._pad, frame]
            self._pad.clear()
            self._bytes = sum(len(f) for f in self._frames)
            self._speech_frames, self._silence_frames = 1, 0
            self._speech_bytes, self._speech_end = self._bytes, now
            return [TurnBegan()]
        self._frames.append(frame)
        self._bytes += len(frame)
        actions: list[Action] = []
        if probability >= vad.stop_threshold:
            self._speech_frames += 1 + self._silence_frames
            self._silence_frames = 0
            self._speech_bytes, self._speech_end = self._bytes, now
            if self._acted:
                actions.append(TurnResumed())
            self._new_pause()
            interval = cfg.snapshot_interval_ms * BYTES_PER_SECOND // 1000
            wanted = cfg.snapshots and self.expect_words and not self.unheard and interval
            if wanted and self._bytes - self._snapshot_bytes >= interval:
                actions.append(self._snapshot(at_pause=False))
        else:
            self._silence_frames += 1
            silence = self.silence_ms
            if (
                cfg.snapshots
                and self.expect_words
                and not self.unheard
                and silence >= cfg.pause_ms
                and self._snapshot_covers != self._speech_bytes
            ):
                actions.append(self._snapshot(at_pause=True))
                self._acted = True
            if self._should_ask(silence):
                self._asking = True
                self._acted = True
                actions.append(Question(self.pcm, self._speech_bytes))
        if len(self._frames) * FRAME_MS >= vad.max_utterance_s * 1000:
            actions.append(self._end(EndReason.MAX_LENGTH))
            return actions
        reason = self._decide()
        if reason is not None:
            actions.append(self._end(reason))
        return actions

    def _new_pause(self) -> None:
        self._asking = False
        self._next_check_ms = float(self.config.first_check_ms)
        self._acted = False
        self._verdict = self._text = self._finished = None
        self._asked = self._opener = False
        self._told_likely = False

    def _snapshot(self, *, at_pause: bool) -> Snapshot:
        self._snapshot_bytes = self._bytes
        self._snapshot_covers = self._speech_bytes
        return Snapshot(self.pcm, self._speech_bytes, at_pause)

    def not_transcribed(self, snapshot: Snapshot) -> None:
        """`snapshot` was dropped, not transcribed: a pause right after it (it may end on
        the turn's last speech frame) is snapshotted again. Without this, a turn whose
        interval snapshot fell on its last word had no words until the fallback silence
        (2.5 s): 3 of 12 turns of the spoken conversation bench, the same ones each run."""
        if self._snapshot_covers == snapshot.speech_bytes:
            self._snapshot_covers = -1

    def _should_ask(self, silence: float) -> bool:
        if self.mode != "turn_model" or self._asking or silence < self._next_check_ms:
            return False
        if self.push_to_talk or (self._verdict or 0.0) >= self.config.threshold:
            return False  # held down, or the model said complete already this pause
        if self.unheard:
            return True
        # Asked once per pause until the words are in (the recognizer needs the CPU
        # then); again as the silence grows only for words that sound finished: words
        # that plainly go on wait for more speech, or the fallback, whatever it says.
        words_in = self._text is not None or not self.expect_words
        if self._verdict is not None and not words_in:
            return False
        return self._finished is not False

    # ----- answers ---------------------------------------------------------------------
    def verdict(self, speech_bytes: int, probability: float) -> list[Action]:
        """The turn model's answer to the `Question` about `speech_bytes` of speech."""
        if not self.in_turn or speech_bytes != self._speech_bytes:
            return []
        self._asking = False
        # The surest answer of this pause counts: once the model heard the turn end, a
        # later doubt (it wavers on the same audio with more silence) does not undo it.
        self._verdict = max(probability, self._verdict or 0.0)
        self._next_check_ms = self.silence_ms + self.config.recheck_ms
        reason = self._decide()
        return [self._end(reason)] if reason is not None else []

    def words_came(self, speech_bytes: int, text: str) -> list[Action]:
        """A transcript of the turn's first `speech_bytes` of speech is in."""
        if not self.in_turn or speech_bytes != self._speech_bytes or self._silence_frames == 0:
            return []
        self._text = text
        self._finished = sounds_finished(text, self.config.language)
        # a question asked, or a goodbye: the turn is handed over
        self._asked = sounds_asked(text, self.config.language) or says_goodbye(text)
        self._opener = sounds_like_an_opener(text)
        actions: list[Action] = []
        if self._finished is not False and text.strip() and not self._told_likely:
            self._told_likely = True
            actions.append(LikelyOver(text, speech_bytes))
        reason = self._decide()
        if reason is not None:
            actions.append(self._end(reason))
        return actions

    def flush(self, reason: EndReason) -> TurnEnd | None:
        """End the turn in progress now (push-to-talk released, the input ended)."""
        return self._end(reason) if self.in_turn else None

    # ----- the decision ----------------------------------------------------------------
    def _decide(self) -> EndReason | None:
        cfg = self.config
        silence = self.silence_ms
        if silence <= 0 or self.push_to_talk:
            return None
        end_silence = cfg.vad.end_silence_ms
        if self.mode != "turn_model":
            return EndReason.SILENCE if silence >= end_silence else None
        if self.unheard:
            if self._verdict is not None and self._verdict >= cfg.threshold:
                return EndReason.TURN_MODEL
            return EndReason.SILENCE if silence >= end_silence else None
        if silence >= cfg.fallback_ms:
            return EndReason.FALLBACK
        # Without the words nothing but the fallback ends the turn: the reply needs
        # them anyway, so waiting costs no time, and they may say it goes on.
        if (self.expect_words and self._text is None) or self._finished is False:
            return None
        # An opener ("Hi.") ends the turn only after the settle silence: the speaker
        # often goes on after it, whatever the turn model hears.
        verdict = self._verdict
        # The surer the model, the sooner: a bare "complete" waits for more silence.
        if (
            verdict is not None
            and verdict >= cfg.threshold
            and not self._opener
            and silence >= cfg.first_check_ms + (1.0 - verdict) * cfg.doubt_ms
        ):
            return EndReason.TURN_MODEL
        asked = self._asked and not self._opener  # "Hi?" is no question asked
        settle = min(cfg.settle_ms, cfg.question_settle_ms) if asked else cfg.settle_ms
        return EndReason.SETTLED if silence >= settle else None

    def _end(self, reason: EndReason) -> TurnEnd:
        speech_ms = self._speech_frames * FRAME_MS
        long_enough = speech_ms >= self.config.vad.min_speech_ms
        end = TurnEnd(
            self.pcm if long_enough else None,
            self._speech_bytes,
            speech_ms,
            self._speech_end,
            reason,
            self._text if long_enough else None,
        )
        self._clear()
        return end

"""Who is speaking, told one way. The parts that change it emit typed signals — the
companion started or stopped speaking (the turn), a reply is in flight or over and the
sound output came or went (the conductor), a barge-in paused the voice or was settled
(`BargeIns`), a sound test ended — and every part that needs to know keeps its own
`SpeakingView` of them, as Pipecat's processors follow frames. No part writes
another's state; the signals are delivered at once, in order, on the event loop.

The listening side's own signals are its `ListenEvent`s (`UserStartedSpeaking`,
`UserStoppedSpeaking`, …): the conductor gets those.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.audio.playback import AudioSink

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """A turn is in flight from now on (thinking, speaking, or paused by a barge-in);
    `spoken`: it answers what the user said aloud (they may still go on)."""

    spoken: bool = False


@dataclass(frozen=True, slots=True)
class ReplyOver:
    """The turn in flight is over (answered, failed or interrupted)."""


@dataclass(frozen=True, slots=True)
class CompanionStartedSpeaking:
    """The sound output plays the companion's voice now."""

    turn_id: int


@dataclass(frozen=True, slots=True)
class CompanionStoppedSpeaking:
    """The voice stopped (a sentence ended, or it was cut); `heard_reply` is the reply's
    words spoken so far, the sentence that stopped included, and their echo may be
    heard until `echo_until` (perf_counter())."""

    turn_id: int
    heard_reply: str
    echo_until: float


@dataclass(frozen=True, slots=True)
class BargeInPaused:
    """The user spoke over the companion: its voice is paused until the barge-in is
    settled."""

    speech_ms: float


@dataclass(frozen=True, slots=True)
class BargeInSettled:
    """The paused voice speaks on (`resumed`) or the interruption stands."""

    resumed: bool


@dataclass(frozen=True, slots=True)
class EchoLeaked:
    """What the microphone heard over the companion was its own voice (the canceller
    let it through): until this reply is over, its voice is not listened through."""


@dataclass(frozen=True, slots=True)
class UserSpeaking:
    """The microphone hears the user speak now (`speaking`), or no longer: speech that
    began with no voice in the room, or that counts towards a barge-in."""

    speaking: bool


@dataclass(frozen=True, slots=True)
class OutputChanged:
    """Replies are heard through `sink` from now on (None: shown only, no speaker)."""

    sink: AudioSink | None


@dataclass(frozen=True, slots=True)
class OutputLost:
    """The sound output failed mid-reply (`reason` in words): whoever owns it lets it go."""

    reason: str


@dataclass(frozen=True, slots=True)
class SoundTestEnded:
    """A sound test's play-back may still be heard until `echo_until`."""

    echo_until: float


SpeakingSignal = (
    ReplyStarted
    | ReplyOver
    | CompanionStartedSpeaking
    | CompanionStoppedSpeaking
    | BargeInPaused
    | BargeInSettled
    | EchoLeaked
    | UserSpeaking
    | OutputChanged
    | OutputLost
    | SoundTestEnded
)
Watcher = Callable[[SpeakingSignal], None]


class Signals:
    """Fan-out of speaking signals, synchronous and in order; a failing watcher is
    logged and the others still see the signal."""

    def __init__(self) -> None:
        self._watchers: list[Watcher] = []

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Tell `watcher` every signal from now on; returns a function that stops it."""
        self._watchers.append(watcher)

        def stop() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

        return stop

    def emit(self, signal: SpeakingSignal) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(signal)
            except Exception:
                log.exception("a speaking-signal watcher failed on %r", signal)


class SpeakingView:
    """One part's view of who is speaking, kept from the signals alone."""

    def __init__(self, signals: Signals, sink: AudioSink | None = None) -> None:
        self.sink = sink  # where replies are heard (None: shown only)
        self.speaking = False  # the companion's voice plays now
        self.echo_until = 0.0  # perf_counter() until which its echo may still be heard
        self.replies = 0  # turns in flight (0 or 1: the conductor runs one at a time)
        self.barge_pending = False  # a barge-in paused the voice and waits for words
        self.said = ""  # the reply's words spoken so far (this turn's, or the last one's)
        self._said_by = -1  # ... in turn number
        self.echo_leaked = False  # its own voice came back through the canceller
        self.answers_speech = False  # the turn in flight answers what the user said aloud
        self.user_speaking = False  # the microphone hears the user now
        self.voice_s = 0.0  # seconds of the reply in flight's voice played so far ...
        self._voice_since: float | None = None  # ... and since when it plays now
        self.stop = signals.watch(self._see)

    def _see(self, signal: SpeakingSignal) -> None:
        if isinstance(signal, ReplyStarted):
            self.replies += 1
            self.answers_speech = signal.spoken
            self.voice_s, self._voice_since = 0.0, None
        elif isinstance(signal, ReplyOver):
            self.replies = max(0, self.replies - 1)
            self.echo_leaked = False
            self.answers_speech = False
        elif isinstance(signal, CompanionStartedSpeaking):
            self.speaking = True
            self._voice_since = time.perf_counter()
        elif isinstance(signal, CompanionStoppedSpeaking):
            self.speaking = False
            if self._voice_since is not None:
                self.voice_s += time.perf_counter() - self._voice_since
                self._voice_since = None
            self.echo_until = max(self.echo_until, signal.echo_until)
            self.said, self._said_by = signal.heard_reply, signal.turn_id
        elif isinstance(signal, EchoLeaked):
            self.echo_leaked = True
        elif isinstance(signal, UserSpeaking):
            self.user_speaking = signal.speaking
        elif isinstance(signal, BargeInPaused):
            self.barge_pending = True
        elif isinstance(signal, BargeInSettled):
            self.barge_pending = False
        elif isinstance(signal, OutputChanged):
            self.sink = signal.sink
        elif isinstance(signal, SoundTestEnded):
            self.echo_until = max(self.echo_until, signal.echo_until)

    @property
    def busy(self) -> bool:
        """A turn is in flight (thinking, speaking, or paused by a barge-in)."""
        return self.replies > 0

    def voice_heard_s(self, now: float) -> float:
        """Seconds of the reply in flight's voice played by `now` (perf_counter())."""
        playing = 0.0 if self._voice_since is None else max(0.0, now - self._voice_since)
        return self.voice_s + playing

    def continuable(self, now: float, within_s: float) -> bool:
        """Speech at `now` would go on with the user's turn rather than interrupt a
        reply to it: a spoken turn is being answered, and its reply has not been heard
        for more than `within_s` yet (while it is prepared, or in its first seconds)."""
        return (
            within_s > 0
            and self.busy
            and self.answers_speech
            and not self.barge_pending
            and self.voice_heard_s(now) <= within_s
        )

    def over_voice(self, now: float) -> bool:
        """Whether the microphone may be hearing the companion (or its echo) at `now`."""
        return self.speaking or now < self.echo_until

    @property
    def has_far_end(self) -> bool:
        """The sink hands what it plays to the echo canceller (so barge-in can work)."""
        # (a sink that cannot feed the canceller has no `far_end`: a test's, a file's)
        return self.sink is not None and getattr(self.sink, "far_end", None) is not None


__all__ = [
    "BargeInPaused",
    "BargeInSettled",
    "CompanionStartedSpeaking",
    "CompanionStoppedSpeaking",
    "EchoLeaked",
    "OutputChanged",
    "OutputLost",
    "ReplyOver",
    "ReplyStarted",
    "Signals",
    "SoundTestEnded",
    "SpeakingSignal",
    "SpeakingView",
    "UserSpeaking",
]

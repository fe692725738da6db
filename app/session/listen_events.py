"""The events the listening side yields to the conductor (`ListenEvent`): the user's
turn as it is heard (started, resumed, partial words, words ready, ended), barge-in,
and the microphone coming and going. They decide nothing: the conductor does."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from app.audio.capture import AudioSource
from app.events import MicLevel
from app.session.endpointing import EndReason


@dataclass(frozen=True, slots=True)
class UserStartedSpeaking:
    """The VAD heard the user's turn begin."""


@dataclass(frozen=True, slots=True)
class SpeechResumed:
    """The user spoke again after a pause within the same turn: whatever was started
    on the words before the pause (a speculative reply) is stale."""


@dataclass(frozen=True, slots=True)
class PartialWords:
    """What the user has said so far in this turn, while they speak (it may change)."""

    text: str


@dataclass(frozen=True, slots=True)
class WordsReady:
    """The user is silent, and `text` is all they said in this turn and does not sound
    unfinished; the turn is not over yet (a reply may start on it, held)."""

    text: str


FinalWords = Callable[[], Awaitable[tuple[str, bool]]]


@dataclass(frozen=True, slots=True)
class UserStoppedSpeaking:
    """The user's turn is over. `pcm` is None when the speech was too short to be one.

    `speech_end` is the perf_counter() moment the speech ended; `over_barge_in`: it
    ended while a barge-in waited for the user's words (its audio after the
    companion's echo comes from the raw microphone); `push_to_talk`: the key was let go.
    `text` is the transcript of all of it when it was already heard while the user
    spoke; otherwise `final_words()` (when given) gives it, from the transcription
    that was running or a new one, with whether it was heard while they spoke.
    `ended_at` is when the turn was decided, `reason` why. An utterance over a reply
    in flight comes `over_barge_in` too (its words decide what it does), with
    `continues` when it began while the user's turn could still go on.
    """

    pcm: bytes | None
    speech_end: float
    over_barge_in: bool = False
    push_to_talk: bool = False
    text: str | None = None
    final_words: FinalWords | None = None
    ended_at: float = 0.0
    reason: EndReason | None = None
    continues: bool = False  # it began while the user's last turn could still go on


@dataclass(frozen=True, slots=True)
class BargeInHeard:
    """The user has spoken over the companion's reply for `speech_ms`: it should stop
    and listen. `continues`: it came while the reply was prepared or just begun, so
    the user is going on with their turn (their words join it)."""

    speech_ms: float
    continues: bool = False


@dataclass(frozen=True, slots=True)
class WordsCannotCome:
    """A barge-in waits for words the microphone can no longer hear (it was closed, or
    the companion's voice is back without echo cancellation)."""


@dataclass(frozen=True, slots=True)
class MicLost:
    """The microphone went away (unplugged, the sound server died); `reason` in words."""

    reason: str


@dataclass(frozen=True, slots=True)
class MicBack:
    """A microphone is there again: `source` is listened to from now on."""

    name: str
    source: AudioSource


@dataclass(frozen=True, slots=True)
class ListeningNote:
    """Something about listening the user should read (the turn model is missing)."""

    message: str


ListenEvent = (
    UserStartedSpeaking
    | SpeechResumed
    | PartialWords
    | WordsReady
    | UserStoppedSpeaking
    | BargeInHeard
    | WordsCannotCome
    | MicLevel
    | MicLost
    | MicBack
    | ListeningNote
)

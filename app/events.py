"""Events a `VoiceSession` emits for its presenters (the Qt window, the CLI, tests).

Data flows one way: the session emits; presenters listen. A presenter never
reaches into the session's parts, it calls the session's few public methods.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


class Status(enum.StrEnum):
    STARTING = "starting"
    LOADING = "loading"
    LISTENING = "listening"
    HEARING = "hearing you"
    TRANSCRIBING = "transcribing"
    THINKING = "thinking"
    SPEAKING = "speaking"
    REPLYING = "replying"  # the reply is shown, with no sound output to speak it
    MUTED = "mic off"
    IDLE = "ready"
    ERROR = "error"


@dataclass(slots=True, frozen=True)
class StatusChanged:
    status: Status
    detail: str = ""


@dataclass(slots=True, frozen=True)
class UserTranscript:
    """What the user said; `final=False` while it may still change."""

    text: str
    final: bool
    turn_id: int


@dataclass(slots=True, frozen=True)
class AssistantSentence:
    """One reply sentence as it becomes ready (shown as it is spoken)."""

    display_text: str
    tts_text: str
    expressions: tuple[str, ...]
    turn_id: int
    is_thinking: bool = False


@dataclass(slots=True, frozen=True)
class ExpressionChanged:
    expression: str
    intensity: float = 1.0


@dataclass(slots=True, frozen=True)
class MouthLevel:
    """Mouth openness 0..1 from the RMS envelope of what is playing."""

    level: float


@dataclass(slots=True, frozen=True)
class TurnFinished:
    turn_id: int
    timings_ms: dict[str, float]
    interrupted: bool = False


@dataclass(slots=True, frozen=True)
class ReplyWithdrawn:
    """The reply to turn `turn_id` is taken back: the user went on speaking, and their
    words are answered anew as one turn (the same number). What was shown of it goes."""

    turn_id: int


@dataclass(slots=True, frozen=True)
class HeardAside:
    """Words heard over the companion's voice that were too short to stop it, and so were
    not taken as a turn: shown, so that nothing the user said goes unseen."""

    text: str


@dataclass(slots=True, frozen=True)
class Notice:
    """Something the user should read, in words. `error=True` shows it as a problem.
    `side=True`: a side part (the long-term memory) failed, and turns go on without it;
    a one-turn command tells it and still answers."""

    message: str
    error: bool = False
    side: bool = False


@dataclass(slots=True, frozen=True)
class MicStateChanged:
    enabled: bool
    available: bool
    detail: str = ""


@dataclass(slots=True, frozen=True)
class CaptureTaken:
    """The model took a screenshot: the user always sees that a capture happened."""

    path: Path
    monitor: int  # 0: all monitors, 1..: one monitor
    width: int
    height: int


@dataclass(slots=True, frozen=True)
class CaptureRequested:
    """The model wants a screenshot and the user must allow it first: answer with
    `VoiceSession.answer_capture(request_id, allowed)`."""

    request_id: int
    monitor: str


@dataclass(slots=True, frozen=True)
class MicLevel:
    """The microphone's loudness about ten times a second while it is open (for a
    level meter): RMS in dBFS (-90 silence .. 0 full scale)."""

    dbfs: float


@dataclass(slots=True, frozen=True)
class LoadProgress:
    """Long work the user waits for: `done` of `total` parts ready; `what` in words."""

    what: str
    done: int
    total: int


@dataclass(slots=True, frozen=True)
class PushToTalkChanged:
    """Push-to-talk is held (or released), by whatever key, button or hotkey."""

    held: bool


@dataclass(slots=True, frozen=True)
class ToolUsed:
    """The model called a tool during turn `turn_id` (shown as a small chip)."""

    name: str
    turn_id: int


@dataclass(slots=True, frozen=True)
class ConversationChanged:
    """The session now talks in another conversation (new, switched, or the current one
    deleted); presenters reload its history with `VoiceSession.history_messages()`."""

    uid: str


@dataclass(slots=True, frozen=True)
class MemoryChanged:
    """The long-term memory changed. `action`: remembered, updated, forgot, edited,
    imported, cleared or undone; `texts` are the memories as they now read (what was
    forgotten, for `forgot`). With `undoable`, `VoiceSession.memory.undo(change_id)`
    takes it back (the "💭 Remembered: …" notice does it when clicked)."""

    change_id: int
    action: str
    texts: tuple[str, ...]
    undoable: bool = True


SessionEvent = (
    StatusChanged
    | UserTranscript
    | AssistantSentence
    | ExpressionChanged
    | MouthLevel
    | TurnFinished
    | ReplyWithdrawn
    | HeardAside
    | Notice
    | MicStateChanged
    | CaptureTaken
    | CaptureRequested
    | MicLevel
    | LoadProgress
    | ConversationChanged
    | ToolUsed
    | PushToTalkChanged
    | MemoryChanged
)

Listener = Callable[[SessionEvent], None]


@dataclass(slots=True)
class EventHub:
    """Fan-out of session events to listeners; a failing listener never breaks the session."""

    listeners: list[Listener] = field(default_factory=list)
    history: list[tuple[float, SessionEvent]] = field(default_factory=list)
    keep_history: bool = False

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event: SessionEvent) -> None:
        if self.keep_history:
            self.history.append((time.perf_counter(), event))
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # a presenter bug must not stop the conversation
                import logging

                logging.getLogger(__name__).exception("session listener failed")

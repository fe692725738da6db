"""A scripted stand-in for `VoiceSession` with every member of `SessionPort`: the UI
tests drive their windows with it (and subclass it for what a test needs)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from app.agent.persona import Character
from app.agent.storage import ConversationInfo
from app.avatar.live2d_model import Live2DModel
from app.avatar.pack import AvatarPack
from app.avatar.state import EXPRESSIONS
from app.config import Settings
from app.events import EventHub, MicStateChanged, Status, StatusChanged
from app.llm.messages import Msg
from app.ui.session_port import MemoryPort


class ScriptedSession:
    """Stands in for a VoiceSession: records calls, emits what a real one would.

    It keeps no conversations (`conversation_id` is "", so the window shows no side
    list) and no settings, and its character has no name (bubbles say "Companion")."""

    def __init__(
        self,
        *,
        start_error: Exception | None = None,
        on_aclose: Callable[[ScriptedSession], None] | None = None,
    ) -> None:
        self.events = EventHub()
        self.settings: Settings | None = None
        self.character = Character(name="")
        self.avatar_pack: AvatarPack | None = None
        self.live2d_model: Live2DModel | None = None
        self.expressions: tuple[str, ...] = EXPRESSIONS
        self.mic_mode = "always_on"
        self.conversation_id = ""
        self.memory: MemoryPort | None = None  # a test gives it one to show
        self.history: list[Msg] = []
        self.start_error = start_error
        self.on_aclose = on_aclose
        self.started = False
        self.closed = False
        self.sent: list[str] = []
        self.mic_calls: list[bool] = []
        self.modes: list[str] = []
        self.ptt: list[bool] = []
        self.pauses: list[bool] = []
        self.interrupts = 0
        self.answers: list[tuple[int, bool]] = []

    async def start(self) -> None:
        self.started = True
        self.events.emit(StatusChanged(Status.LOADING, "speech model"))
        await asyncio.sleep(0)
        if self.start_error is not None:
            raise self.start_error
        self.events.emit(MicStateChanged(enabled=True, available=True))
        self.events.emit(StatusChanged(Status.LISTENING))

    async def aclose(self) -> None:
        self.closed = True
        if self.on_aclose is not None:
            self.on_aclose(self)

    async def send_text(self, text: str) -> object:
        self.sent.append(text)
        await asyncio.sleep(0)
        return None

    def interrupt(self) -> None:
        self.interrupts += 1

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        self.answers.append((request_id, allowed))

    def set_mic_enabled(self, enabled: bool) -> None:
        self.mic_calls.append(enabled)
        self.events.emit(MicStateChanged(enabled=enabled, available=True))

    def set_mic_mode(self, mode: str) -> None:
        """As a VoiceSession does: the mode, then the microphone on unless muted."""
        self.modes.append(mode)
        self.mic_mode = mode
        self.set_mic_enabled(mode != "muted")

    def set_push_to_talk(self, pressed: bool) -> None:
        self.ptt.append(pressed)

    def set_turns_paused(self, paused: bool) -> None:
        self.pauses.append(paused)

    def conversations(self) -> list[ConversationInfo]:
        return []

    def history_messages(self) -> list[Msg]:
        return list(self.history)

    async def new_conversation(self) -> str:
        raise NotImplementedError("this stand-in keeps no conversations")

    async def switch_conversation(self, uid: str) -> None:
        raise NotImplementedError("this stand-in keeps no conversations")

    def rename_conversation(self, uid: str, title: str) -> None:
        raise NotImplementedError("this stand-in keeps no conversations")

    async def delete_conversation(self, uid: str) -> None:
        raise NotImplementedError("this stand-in keeps no conversations")

"""What the Qt shell uses of a session, declared in one place: `VoiceSession` has all of
it, and a stand-in (a test's scripted session, the shell's "could not start" session)
implements the same members. The UI touches a session only through these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: the window shows before the agent's modules load
    from pathlib import Path

    from app.agent.persona import Character
    from app.agent.storage import ConversationInfo
    from app.avatar.live2d_model import Live2DModel
    from app.avatar.pack import AvatarPack
    from app.config import Settings
    from app.events import EventHub
    from app.llm.messages import Msg
    from app.memory.store import MemoryItem


class MemoryPort(Protocol):
    """The character's long-term memory as the Memory page and the "💭 Remembered"
    notice see it (`app.memory.LongTermMemory`). Failures raise with a message in words."""

    @property
    def enabled(self) -> bool:
        """Whether memories are recalled and written now (off: they are only shown)."""
        ...

    @property
    def character(self) -> str:
        """Whose memories these are."""
        ...

    def items(self, query: str = "") -> list[MemoryItem]:
        """The memories, the most recently changed first; `query` keeps those holding it."""
        ...

    def count(self) -> int: ...

    def edit(self, memory_id: int, text: str) -> object: ...

    def delete(self, memory_id: int) -> None: ...

    def forget_everything(self) -> int:
        """Erase every memory of the character; returns how many there were."""
        ...

    def undo(self, change_id: int) -> None:
        """Take back the change a `MemoryChanged` event told of."""
        ...

    def export_json(self, path: Path) -> int: ...

    def import_json(self, path: Path) -> int: ...


class SessionPort(Protocol):
    """The session as the window, the pet, the tray, the keys and the shell see it."""

    # -- what it is ----------------------------------------------------------------------

    @property
    def events(self) -> EventHub:
        """Everything the session does, as events the UI presents."""
        ...

    @property
    def settings(self) -> Settings | None:
        """The app's settings (the shell saves its own state into them); None for a
        stand-in that has none."""
        ...

    @property
    def character(self) -> Character:
        """Who the companion is (its name is on its bubbles; "" shows "Companion")."""
        ...

    @property
    def avatar_pack(self) -> AvatarPack | None:
        """The avatar's art; None shows the built-in art."""
        ...

    @property
    def live2d_model(self) -> Live2DModel | None:
        """The user's Live2D model, checked and ready to draw; None shows the sprite
        avatar (`avatar_pack`)."""
        ...

    @property
    def expressions(self) -> tuple[str, ...]:
        """The expression tags the model uses (the avatar pack's): the faces offered in
        the menus and the tags taken out of stored replies."""
        ...

    @property
    def memory(self) -> MemoryPort | None:
        """The character's long-term memory (the Memory page); None when the session
        keeps none (a stand-in)."""
        ...

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Open the devices and load the models (the window is already shown)."""
        ...

    async def aclose(self) -> None:
        """Stop everything; the shell awaits it before the loop ends."""
        ...

    # -- a turn ----------------------------------------------------------------------------

    async def send_text(self, text: str) -> object:
        """Run a typed message as a turn."""
        ...

    def interrupt(self) -> None:
        """Stop the reply now."""
        ...

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        """The user's answer to a `CaptureRequested` event."""
        ...

    # -- the microphone --------------------------------------------------------------------

    @property
    def mic_mode(self) -> str:
        """`always_on`, `push_to_talk` or `muted`."""
        ...

    def set_mic_mode(self, mode: str) -> None: ...

    def set_mic_enabled(self, enabled: bool) -> None: ...

    def set_push_to_talk(self, pressed: bool) -> None:
        """The push-to-talk key or button went down (True) or up (False)."""
        ...

    def set_turns_paused(self, paused: bool) -> None:
        """A sound test (the guide's or the settings') starts (True) or ends (False):
        meanwhile nothing the microphone hears becomes a turn. Calls nest."""
        ...

    # -- conversations -----------------------------------------------------------------------

    @property
    def conversation_id(self) -> str:
        """The conversation talked in now; "" when the session keeps no conversations
        (a stand-in: the window then shows no conversation list)."""
        ...

    def conversations(self) -> list[ConversationInfo]:
        """Every saved conversation, oldest first."""
        ...

    def history_messages(self) -> list[Msg]:
        """The current conversation's messages, to show."""
        ...

    async def new_conversation(self) -> str: ...

    async def switch_conversation(self, uid: str) -> None: ...

    def rename_conversation(self, uid: str, title: str) -> None: ...

    async def delete_conversation(self, uid: str) -> None: ...


__all__ = ["MemoryPort", "SessionPort"]

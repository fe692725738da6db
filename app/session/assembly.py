"""Builds a session's parts from `Settings`: the chat model, vision, speech, voice,
storage, character, avatar pack, tools, the agent and the echo canceller (the agent's
own parts through `app.agent.building`, as a host's `AgentRunner` builds them).

Nothing here starts, connects or loads anything; problems the user should read (a
character file that could not be used, an avatar without the character's
expressions, a tool that cannot be used) come back as notices.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.agent import MemoryAgent
from app.agent.building import (
    build_agent,
    build_persona,
    build_provider,
    build_screen_text,
    build_tools,
    build_vision_or_notice,
    latest_or_new,
    long_term_memory,
)
from app.agent.persona import Character
from app.agent.storage import ConversationStorage, FileStorage
from app.agent.tools import ToolRegistry
from app.audio.echo import EchoCanceller, HalfDuplex, create_echo_canceller
from app.avatar.pack import AvatarPack
from app.avatar.state import ExpressionState
from app.config import Settings, data_dir
from app.media import Capture, ScreenGrabber
from app.session.masking import session_redactor
from app.speech import SpeechClient, create_speech_client
from app.tts import TTSEngine

if TYPE_CHECKING:
    from app.avatar.live2d_model import Live2DModel  # loaded only when a Live2D model is chosen
    from app.memory import LongTermMemory


def build_speech(settings: Settings) -> SpeechClient:
    # `speech.language = "auto"` hears the language of the windows.
    client = create_speech_client(settings.speech, ui_language=settings.ui.language)
    assert client is not None
    return client


def build_tts(settings: Settings, on_notice: Callable[[str], None] | None = None) -> TTSEngine:
    from app.speech.languages import base_code, is_auto, ui_code
    from app.tts import create_tts_engine

    spoken = settings.speech.language
    heard = ui_code(settings.ui.language) if is_auto(spoken) else base_code(spoken or "")
    return create_tts_engine(settings.tts, on_notice=on_notice, chinese_expected=heard == "zh")


def build_live2d(settings: Settings) -> tuple[Live2DModel | None, list[str]]:
    """The user's Live2D model (None: the sprite avatar shows) and what to tell them."""
    folder = settings.avatar.live2d.folder
    if folder is None:
        return None, []
    from app.avatar.live2d_model import load_live2d_or_none

    return load_live2d_or_none(folder, data_folder=data_dir())


@dataclass(slots=True)
class Parts:
    """Everything a `VoiceSession` is made of, built and not started."""

    provider: Any
    speech: SpeechClient
    tts: TTSEngine
    storage: ConversationStorage
    character: Character
    avatar_pack: AvatarPack
    expressions: tuple[str, ...]
    live2d_model: Live2DModel | None
    tools: ToolRegistry
    vision_client: Any
    agent: MemoryAgent
    avatar: ExpressionState
    echo: EchoCanceller
    memory: LongTermMemory
    notices: list[str] = field(default_factory=list)


def assemble(
    settings: Settings,
    *,
    provider: Any = None,
    speech: SpeechClient | None = None,
    tts: TTSEngine | None = None,
    storage: ConversationStorage | None = None,
    history_uid: str | None = None,
    on_capture: Callable[[Capture], None],
    confirm_capture: Callable[[str], Awaitable[bool]],
    grabber: ScreenGrabber,
    on_notice: Callable[[str], None] | None = None,
) -> Parts:
    """The parts for `settings`; the ones given are used as they are. `on_notice` hears
    what a part has to tell the user later (the voice falling back to the system's)."""
    notices: list[str] = list(settings.file_warnings)  # unknown keys in the config file
    provider = provider if provider is not None else build_provider(settings)
    speech = speech if speech is not None else build_speech(settings)
    tts = tts if tts is not None else build_tts(settings, on_notice)
    storage = storage if storage is not None else FileStorage(data_dir() / "history")
    history_uid = history_uid or latest_or_new(storage)
    live2d, live2d_notices = build_live2d(settings)  # the user's own model, if chosen
    notices.extend(live2d_notices)
    character, pack, expressions = build_persona(settings, notices, art=live2d)
    vision_client, vision = build_vision_or_notice(settings, notices)
    screen_text = None if vision is not None else build_screen_text(settings)
    if screen_text is not None:  # told of each screenshot's windows as it is taken
        reader, vision_client, shown = screen_text, screen_text, on_capture

        def on_capture(capture: Capture) -> None:
            reader.remember(capture)
            shown(capture)

    tools = build_tools(
        settings,
        on_capture=on_capture,
        confirm_capture=confirm_capture,
        grabber=grabber,
        notices=notices,
    )
    agent = build_agent(
        settings,
        provider=provider,
        storage=storage,
        history_uid=history_uid,
        character=character,
        expressions=expressions,
        tools=tools,
        vision=vision or screen_text,
        redactor=session_redactor(settings),
    )
    drain = getattr(storage, "drain_notices", None)
    if callable(drain):
        notices.extend(drain())
    memory = long_term_memory(agent)
    assert memory is not None  # build_agent gives every agent its memory
    avatar = ExpressionState(
        idle_s=settings.avatar.idle_s or settings.expression_idle_s, expressions=expressions
    )
    echo: EchoCanceller = HalfDuplex()
    if settings.audio.barge_in:
        echo = create_echo_canceller(settings.audio.echo_mode)
    return Parts(
        provider=provider,
        speech=speech,
        tts=tts,
        storage=storage,
        character=character,
        avatar_pack=pack,
        expressions=expressions,
        live2d_model=live2d,
        tools=tools,
        vision_client=vision_client,
        agent=agent,
        avatar=avatar,
        echo=echo,
        memory=memory,
        notices=notices,
    )

"""Builds the agent from `Settings`, the same way for every front end (the window,
`companion turn` and `chat` through the session, a host through `AgentRunner`): the
chat model client, the character and the expressions the avatar has, vision, tools,
and the `MemoryAgent` over an `AgentCore`.

Nothing here starts, connects or loads anything; problems the user should read come
back as notices.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from app.agent.builtin_tools import builtin_tools
from app.agent.core import AgentCore
from app.agent.held_words import HeldWords
from app.agent.looking import (
    CANNOT_LOOK_HINT,
    LOOKS_ON_REQUEST_HINT,
    SCREENSHOT_TOOL,
    screen_look_calls,
)
from app.agent.memory_agent import MemoryAgent
from app.agent.persona import Character, CharacterError, load_character
from app.agent.prompt import RECKONING_HINT, TOOLS_HINT
from app.agent.storage import ConversationStorage, FileStorage
from app.agent.tools import ToolRegistry, command_tool
from app.agent.vision import ScreenTextDescriber, VisionSummarizer
from app.avatar.pack import AvatarPack, ExpressionSource, expressions_for, load_pack_or_default
from app.config import Settings, data_dir, secret_fields
from app.llm import Msg, model_client
from app.llm.reply_form import ReplyForm
from app.media import Capture, ScreenGrabber
from app.redaction import Redactor

if TYPE_CHECKING:
    from app.memory import LongTermMemory

CONF_UID = "default"  # the one character configuration whose conversations are kept


def build_provider(settings: Settings) -> Any:
    """The chat model client for `settings.chat` (connects nothing yet)."""
    from app.llm import create_provider_client

    chat = settings.chat
    return create_provider_client(
        chat.model,
        api_style=chat.api_style,
        api_key=chat.api_key.get_secret_value() if chat.api_key else None,
        base_url=chat.base_url,
        timeout=chat.timeout_s,
        model_path=chat.local_model_path,
        n_threads=chat.local_threads,
        n_ctx=chat.local_context,
        gpu=chat.local_gpu,
        aws_region=chat.aws_region,
        aws_profile=chat.aws_profile,
        allow_plain_http=chat.allow_plain_http,
    )


def build_character(settings: Settings) -> tuple[Character, str | None]:
    """The character (file, then the `persona` settings set explicitly) and a problem
    to tell the user, if its file could not be used."""
    persona = settings.persona
    problem = None
    try:
        character = load_character(persona.character_file)
    except CharacterError as exc:
        problem = f"{exc} The default character is used instead."
        character = load_character()
    updates: dict[str, Any] = {}
    if "name" in persona.model_fields_set or persona.character_file is None:
        updates["name"] = persona.name
    if persona.system_prompt:
        updates["system_prompt"] = persona.system_prompt
    return character.model_copy(update=updates), problem


def build_persona(
    settings: Settings, notices: list[str], *, art: ExpressionSource | None = None
) -> tuple[Character, AvatarPack, tuple[str, ...]]:
    """The character, the avatar pack, and the expressions the model is told about: the
    ones the avatar's art has (`art`: a user's own model shown instead of the pack)."""
    character, problem = build_character(settings)
    if problem:
        notices.append(problem)
    pack, pack_problem = load_pack_or_default(settings.avatar.pack)
    if pack_problem:
        notices.append(pack_problem)
    shown: ExpressionSource = art if art is not None else pack
    expressions = expressions_for(shown, character.expressions)
    if not any(e in shown for e in expressions):
        name = getattr(shown, "name", pack.name)
        notices.append(
            f"The avatar {name!r} has none of the character's expressions "
            f"({', '.join(expressions)}): it will show its neutral face."
        )
    return character.model_copy(update={"expressions": expressions}), pack, expressions


def chat_model_facts(settings: Settings) -> tuple[bool, int | None]:
    """(can the chat model see images, its context window) from settings or the catalogue."""
    from app.llm import parse_model_route
    from app.llm.catalogue import model_info

    agent = settings.agent
    try:
        route = parse_model_route(settings.chat.model)
        info = model_info(route.provider, route.model)
        local = route.provider == "local"
    except ValueError:
        return bool(agent.chat_supports_vision), agent.context_window
    vision = info.vision if agent.chat_supports_vision is None else agent.chat_supports_vision
    window = agent.context_window or (settings.chat.local_context if local else info.context_window)
    return vision, window


def build_vision(settings: Settings) -> tuple[Any, VisionSummarizer | None]:
    """The vision model's client and summarizer, when one is configured."""
    from app.llm import create_provider_client

    agent = settings.agent
    if not agent.vision_model:
        return None, None
    client = create_provider_client(
        agent.vision_model,
        api_style=agent.vision_api_style,
        api_key=agent.vision_api_key.get_secret_value() if agent.vision_api_key else None,
        base_url=agent.vision_base_url,
        timeout=settings.chat.timeout_s,
        allow_plain_http=settings.chat.allow_plain_http,
    )
    return client, VisionSummarizer(client, agent.vision_model.split("/", 1)[-1])


def build_vision_or_notice(
    settings: Settings, notices: list[str]
) -> tuple[Any, VisionSummarizer | None]:
    """`build_vision`, with a bad vision route told as a notice: it must not stop the app."""
    try:
        return build_vision(settings)
    except Exception as exc:
        notices.append(f"The vision model could not be set up: {exc}")
        return None, None


def build_tools(
    settings: Settings,
    *,
    on_capture: Callable[[Capture], None] | None,
    confirm_capture: Callable[[str], Awaitable[bool]] | None,
    grabber: ScreenGrabber | None,
    notices: list[str],
    screenshots: bool = True,
) -> ToolRegistry:
    """The built-in tools and the command tools of the config (MCP tools join later).
    `screenshots=False` leaves the screenshot tool out."""
    agent = settings.agent
    registry = ToolRegistry(
        builtin_tools(
            captures_dir=data_dir() / "captures" if screenshots else None,
            allow_clipboard=agent.allow_clipboard,
            on_capture=on_capture,
            confirm_capture=confirm_capture if agent.confirm_screenshots else None,
            grabber=grabber,
            timeout_s=agent.tool_timeout_s,
        )
    )
    for name, spec in settings.tools.items():
        try:
            registry.add(
                command_tool(
                    name,
                    command=spec.command,
                    description=spec.description,
                    parameters={
                        k: p.model_dump(exclude_none=True) for k, p in spec.parameters.items()
                    },
                    timeout_s=spec.timeout_s,
                    accepts_options=spec.accepts_options,
                    env=spec.env,
                )
            )
        except ValueError as exc:
            notices.append(f"The tool {name!r} in the config cannot be used: {exc}")
    return registry


def latest_or_new(storage: ConversationStorage) -> str:
    """The conversation the app resumes: the newest saved one, or a new one if none."""
    uids = storage.list_histories(CONF_UID)
    return uids[-1] if uids else storage.create_history(CONF_UID)


def build_screen_text(settings: Settings) -> ScreenTextDescriber | None:
    """For a chat model that cannot see (and has no vision model): the offline reader
    of the text on a screenshot (OCR), or None when that is not installed."""
    from app.media.screen_text import ScreenTextReader, ocr_installed

    sees_images, _ = chat_model_facts(settings)
    if sees_images or not ocr_installed():
        return None
    return ScreenTextDescriber(ScreenTextReader())


def look_hint(settings: Settings, tools: ToolRegistry, tools_on: bool) -> str:
    """What the system prompt says about the tools: the clock and the calculator (a model
    that calls tools), and looking at the screen: call the tool, the app looks on
    request (a model without tools), or it cannot look at all."""
    if not (settings.agent.enable_tool and SCREENSHOT_TOOL in tools):
        look = CANNOT_LOOK_HINT
    else:
        look = TOOLS_HINT if tools_on else LOOKS_ON_REQUEST_HINT
    return f"{RECKONING_HINT} {look}" if tools_on else look


def tools_offered(settings: Settings) -> bool:
    """Whether the chat model is offered tools: on in the settings, and not the small
    embedded model (it cannot use them)."""
    return settings.agent.enable_tool and not settings.chat.model.startswith("local/")


def build_agent(
    settings: Settings,
    *,
    provider: Any,
    storage: ConversationStorage,
    history_uid: str,
    character: Character,
    expressions: Sequence[str],
    tools: ToolRegistry,
    vision: VisionSummarizer | ScreenTextDescriber | None,
    redactor: Redactor | None = None,
) -> MemoryAgent:
    """The agent for `settings` over the given parts. The embedded models get no tools:
    the app looks at the screen for them when asked (`screen_look_calls`), and the
    prompt says how looking works (`look_hint`). Every
    configured key is masked in what the model says (`redactor`, or the settings' own)."""
    tools_on = tools_offered(settings)
    sees_images, context_window = chat_model_facts(settings)
    prompt_extra = look_hint(settings, tools, tools_on)
    core = AgentCore(
        provider=model_client(provider),  # a completion-only one replayed as streams
        model=settings.chat.model.split("/", 1)[-1],
        storage=storage,
        conf_uid=CONF_UID,
        history_uid=history_uid,
        system_prompt=character.prompt(
            extra=prompt_extra, max_sentences=settings.persona.max_sentences
        ),
        temperature=settings.chat.temperature,
        max_tokens=settings.chat.max_tokens,
        max_tool_rounds=settings.agent.max_tool_rounds,
        max_tool_calls_per_round=settings.agent.max_tool_calls_per_round,
        max_tool_calls=settings.agent.max_tool_calls,
        enable_tool=tools_on,
        chat_supports_vision=sees_images,
        require_detailed=settings.agent.require_detailed,
        tools=tools,
        vision=vision,
        context_window=context_window,
        media_root=data_dir(),
        redactor=redactor or settings_redactor(settings),
        max_sentences=settings.persona.max_sentences,
        time_notes=not tools_on,  # no get_time tool: each message says the time
        # llama.cpp reuses the prompt's unchanged beginning: trim so it rarely changes
        stable_trim=settings.chat.model.startswith("local/"),
        app_tool_calls=screen_look_calls if settings.agent.enable_tool else None,
        held=HeldWords(storage.root) if isinstance(storage, FileStorage) else None,
        reply_form=reply_form(settings, expressions),
    )
    core.memory = build_long_term_memory(settings, character, core)
    return MemoryAgent(core, expressions=expressions)


def reply_form(settings: Settings, expressions: Sequence[str]) -> ReplyForm | None:
    """The form the embedded model's replies are held to: one of the avatar's tags,
    then at most the persona's sentences (`app.llm.reply_form`); None for a hosted
    model, which is told the form in the prompt."""
    if not settings.chat.model.startswith("local/") or not expressions:
        return None
    return ReplyForm(tags=tuple(expressions), max_sentences=settings.persona.max_sentences)


def settings_redactor(settings: Settings) -> Redactor:
    """A `Redactor` of every key in `settings`."""
    redactor = Redactor()
    for _, _, value in secret_fields(settings):
        redactor.add(value.get_secret_value())
    return redactor


def build_long_term_memory(
    settings: Settings, character: Character, core: AgentCore
) -> LongTermMemory:
    """The character's long-term memory, asking the core's own chat model (and nothing
    else) what to remember."""
    from app.agent.side_request import side_request
    from app.llm import parse_model_route
    from app.memory import build_memory

    try:
        provider = parse_model_route(settings.chat.model).provider
    except ValueError:
        provider = ""

    async def ask(
        messages: list[Msg], response_format: dict[str, Any] | None, max_tokens: int
    ) -> str:
        return await side_request(
            core.provider, core.model, messages, response_format=response_format,
            max_tokens=max_tokens,
        )

    return build_memory(settings, character=character.name, ask=ask, provider=provider)


def long_term_memory(agent: MemoryAgent) -> LongTermMemory | None:
    """The agent's long-term memory (None for an agent built without one)."""
    from app.memory import LongTermMemory

    memory = agent.core.memory
    return memory if isinstance(memory, LongTermMemory) else None

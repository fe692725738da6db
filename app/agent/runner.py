"""AgentRunner: the agent for a host that embeds it (a plugin, a script, another app)
and does not drive the voice session.

    runner = AgentRunner.from_config()            # the app's own configuration
    async with runner:
        async for item in runner.run(AgentRunRequest(input="What time is it?")):
            ...  # SentenceOutput, ToolStatus, then one AgentRunResult

The agent is built by `app.agent.building`, as the window's is: the same chat model,
character and expressions, tools, vision and conversation history. A run yields the
items the app gets: `SentenceOutput`s (display text, speakable text, expressions) as
they become ready, `ToolStatus` while a tool runs, and last an `AgentRunResult` with
the whole reply. A model that fails raises `AgentTurnError` after what it said was
yielded; the turn is stored either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeGuard

from app.agent.agent_turn import TurnOutcome
from app.agent.building import (
    CONF_UID,
    build_agent,
    build_persona,
    build_provider,
    build_tools,
    build_vision_or_notice,
    latest_or_new,
    long_term_memory,
    tools_offered,
)
from app.agent.mcp import McpServer, start_mcp_servers
from app.agent.memory_agent import BatchInput, MemoryAgent
from app.agent.outputs import SentenceOutput, ToolStatus
from app.agent.speech_text import tidy_spaces
from app.agent.storage import ConversationInfo, ConversationStorage, FileStorage
from app.agent.tools import Tool, ToolRegistry
from app.events import Notice
from app.llm import ContentBlock, ImageBlock, ModelClient, Msg, Role, TextBlock, ValidationError

if TYPE_CHECKING:
    from app.config import McpServerSettings, Settings
    from app.llm import CompletionProvider, StreamingProvider
    from app.media import Capture
    from app.memory import LongTermMemory


def check_input(value: object) -> None:
    """`ValidationError` unless `value` is text, or a list of text and image blocks."""
    if isinstance(value, str):
        if not value.strip():
            raise ValidationError("The input is empty: give the text the user said or typed.")
        return
    if not isinstance(value, Sequence) or isinstance(value, bytes | bytearray):
        raise ValidationError(
            f"The input must be text or a list of TextBlock and ImageBlock, not "
            f"{type(value).__name__}."
        )
    if not value:
        raise ValidationError("The input is an empty list: give at least one text or image.")
    for block in value:
        if isinstance(block, str | TextBlock):
            continue
        if isinstance(block, ImageBlock):
            if not Path(block.model.path).is_file():
                raise ValidationError(
                    f"The image file {block.model.path} does not exist: make image blocks "
                    "with app.media.import_image(path_or_bytes, session_id=...)."
                )
            continue
        kind = getattr(block, "kind", type(block).__name__)
        what = "a provider's own payload" if kind == "native" else f"a {kind} block"
        raise ValidationError(
            f"The input can hold text and images only, not {what} "
            f"({type(block).__name__}): give TextBlock and ImageBlock items."
        )


@dataclass(frozen=True, slots=True)
class AgentRunRequest:
    """One turn of the user's: `input` is text, or a list of `TextBlock`/`ImageBlock`
    (text goes first, then the images, in their order; images are labelled p1, p2...).

    `conversation`: `None` continues this runner's conversation (at first the one the
    app would resume); `"new"` starts one; `"latest"` is the newest saved one; any
    other value is the id of a saved conversation. `sender` and `metadata` are stored
    with the user's message.
    """

    input: str | Sequence[ContentBlock | str]
    conversation: str | None = None
    sender: str = "user"
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_input(self.input)

    def batch(self) -> BatchInput:
        if isinstance(self.input, str):
            return BatchInput([self.input], self.sender, dict(self.metadata))
        texts = [b.text if isinstance(b, TextBlock) else b for b in self.input if _is_text(b)]
        images: list[Path | bytes | ImageBlock] = [
            b for b in self.input if isinstance(b, ImageBlock)
        ]
        return BatchInput(texts, self.sender, dict(self.metadata), images)


def _is_text(block: object) -> TypeGuard[str | TextBlock]:
    return isinstance(block, str | TextBlock)


@dataclass(slots=True)
class AgentRunResult:
    """The last item of a run: the whole reply, and what the turn added to the history."""

    conversation: str
    sentences: list[SentenceOutput]
    messages: list[Msg]  # the user's message first, then calls, tool results, the reply
    outcome: TurnOutcome  # stamps, tool rounds, model calls, error, what is unsaved

    @property
    def text(self) -> str:
        """The reply as the app shows it (tags gone, reasoning left out)."""
        shown = [s.display_text.strip() for s in self.sentences if not s.is_thinking]
        return tidy_spaces(" ".join(part for part in shown if part))

    @property
    def reply(self) -> Msg | None:
        """The model's last message of the turn, as stored."""
        return next((m for m in reversed(self.messages) if m.role == Role.ASSISTANT), None)

    @property
    def expressions(self) -> list[str]:
        return [name for s in self.sentences for name in s.actions.expressions]

    @property
    def tools_used(self) -> list[str]:
        return [call.name for m in self.messages for call in m.tool_calls]


RunItem = SentenceOutput | ToolStatus | AgentRunResult


class AgentRunner:
    """Runs turns of the agent for a host, one at a time, in a saved conversation."""

    def __init__(
        self,
        agent: MemoryAgent,
        *,
        settings: Settings | None = None,
        owned: Sequence[Any] = (),
        notices: Sequence[str] = (),
        mcp_servers: Mapping[str, McpServerSettings] | None = None,
    ) -> None:
        self.agent = agent
        self.settings = settings
        self.notices = list(notices)  # what the user should read about the set-up
        self._mcp_config = dict(mcp_servers or {})
        self._mcp_servers: list[McpServer] = []
        self._started = False
        self._owned = list(owned)  # what this runner built and closes: clients, the grabber
        self._lock = asyncio.Lock()

    @classmethod
    def from_config(
        cls,
        settings_or_path: Settings | str | os.PathLike[str] | None = None,
        *,
        provider: CompletionProvider | StreamingProvider | None = None,
        storage: ConversationStorage | None = None,
        tools: ToolRegistry | Iterable[Tool] | None = None,
        on_capture: Callable[[Capture], None] | None = None,
        confirm_capture: Callable[[str], Awaitable[bool]] | None = None,
    ) -> AgentRunner:
        """The agent the app would build from its configuration: `settings_or_path` is
        a `Settings`, the path of a config file (read as the app reads its own), or
        None for the app's own configuration.

        `provider`, a `CompletionProvider` (optionally also a `StreamingProvider`), is
        used as it is: no provider client is built, not even the vision model's.
        `storage` defaults to the app's history folder. `tools` replaces the built-in
        and configured tools; the screenshot tool is offered only when the host shows
        each capture to the user (`on_capture`), and asks first (`confirm_capture`)
        when `agent.confirm_screenshots` is on.
        """
        settings = _settings(settings_or_path)
        notices: list[str] = []
        owned: list[Any] = []
        if provider is None:
            provider = build_provider(settings)
            owned.append(provider)
        if storage is None:
            from app.config import data_dir

            storage = FileStorage(data_dir() / "history")
        character, _pack, expressions = build_persona(settings, notices)
        registry = _tools(settings, tools, on_capture, confirm_capture, notices, owned)
        vision = None
        if owned:
            vision_client, vision = build_vision_or_notice(settings, notices)
            if vision_client is not None:
                owned.append(vision_client)
        elif settings.agent.vision_model:
            notices.append(
                "agent.vision_model is not used with a provider given by the host: images "
                "go to that provider's model as they are."
            )
        agent = build_agent(
            settings,
            provider=provider,
            storage=storage,
            history_uid=latest_or_new(storage),
            character=character,
            expressions=expressions,
            tools=registry,
            vision=vision,
        )
        notices.extend(getattr(storage, "drain_notices", list)())
        # The config's MCP servers are the configured tools' too: a host's own replace them.
        mcp = settings.mcp.servers if tools is None and tools_offered(settings) else {}
        runner = cls(agent, settings=settings, owned=owned, notices=notices, mcp_servers=mcp)
        memory = long_term_memory(agent)
        if memory is not None:  # its file moved aside, a full disk: the host tells the user
            memory.subscribe(
                lambda e: runner.notices.append(e.message) if isinstance(e, Notice) else None
            )
        return runner

    # ----- what the host can read --------------------------------------------------
    @property
    def conversation(self) -> str:
        """The id of the conversation the next run continues."""
        return self.agent.core.history_uid

    @property
    def storage(self) -> ConversationStorage:
        return self.agent.core.storage

    def conversations(self) -> list[ConversationInfo]:
        """Every saved conversation, oldest first."""
        return self.storage.list_conversations(CONF_UID)

    def history(self) -> list[Msg]:
        """The current conversation's messages."""
        return list(self.agent.history)

    @property
    def memory(self) -> LongTermMemory | None:
        """The character's long-term memory (its changes: `memory.subscribe`)."""
        return long_term_memory(self.agent)

    # ----- running ---------------------------------------------------------------------
    async def run(self, request: AgentRunRequest) -> AsyncGenerator[RunItem, None]:
        """The reply to `request`, item by item; runs wait for the one before to end.

        Stopping early (`contextlib.aclosing`) stops the model and its tools, and the
        turn is stored as far as it got, marked interrupted.
        """
        check_input(request.input)  # again: a list given to the request may have changed
        memory = self.memory
        async with self._lock:
            self._open(request.conversation)
            before = len(self.agent.history)
            sentences: list[SentenceOutput] = []
            reply = self.agent.chat(request.batch())
            quiet = memory.hold() if memory is not None else contextlib.nullcontext()
            async with contextlib.aclosing(reply):
                with quiet:
                    async for item in reply:
                        if isinstance(item, SentenceOutput):
                            sentences.append(item)
                        yield item
            yield AgentRunResult(
                conversation=self.conversation,
                sentences=sentences,
                messages=self.agent.history[before:],
                outcome=reply.outcome,
            )

    def _open(self, conversation: str | None) -> None:
        """Point the agent's memory at the conversation a request names."""
        if conversation is None:
            return
        storage = self.storage
        if conversation == "new":
            uid = storage.create_history(CONF_UID)
        elif conversation == "latest":
            uid = latest_or_new(storage)
        elif conversation in storage.list_histories(CONF_UID):
            uid = conversation
        else:
            raise ValueError(
                f"There is no conversation {conversation!r}: give 'new', 'latest' or the id "
                "of a saved one (AgentRunner.conversations() lists them)."
            )
        if uid != self.conversation:
            self.agent.set_memory_from_history(CONF_UID, uid)
        self.notices.extend(getattr(storage, "drain_notices", list)())

    # ----- life cycle ----------------------------------------------------------------
    async def start(self) -> None:
        """Start the MCP servers of the config, whose tools join the model's (`async with`
        does it); the ones that cannot start are told in `notices`."""
        if self._started:
            return
        self._started = True
        tools = self.agent.core.tools
        if not self._mcp_config or tools is None:
            return
        servers, problems = await start_mcp_servers(self._mcp_config, tools)
        self._mcp_servers.extend(servers)
        self.notices.extend(problems)

    async def load(self) -> None:
        """Load the chat model ahead of the first run (the embedded model's weights; a
        hosted one returns at once) and have a local model read the system prompt."""
        await self.agent.core.provider.load()
        if self.settings is not None and self.settings.chat.model.startswith("local/"):
            await self.agent.core.warm_up()

    async def aclose(self) -> None:
        """Stop the MCP servers and close what this runner built (a provider given by
        the host is the host's own)."""
        memory = self.memory
        if memory is not None:  # before the model goes: it may still be asked
            with contextlib.suppress(Exception):
                await memory.aclose()
        servers, self._mcp_servers = self._mcp_servers, []
        for server in servers:
            with contextlib.suppress(Exception):
                await server.aclose()
        owned, self._owned = self._owned, []
        for part in owned:
            with contextlib.suppress(Exception):
                if isinstance(part, ModelClient):  # the chat and vision model clients
                    await part.aclose()
                else:
                    part.close()  # the screen grabber

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _settings(settings_or_path: Settings | str | os.PathLike[str] | None) -> Settings:
    from app.config import Settings, load_settings
    from app.config.loading import load_settings_file

    if settings_or_path is None:
        return load_settings()
    if isinstance(settings_or_path, Settings):
        return settings_or_path
    if isinstance(settings_or_path, str | os.PathLike):
        return load_settings_file(settings_or_path)
    raise TypeError(
        f"from_config takes Settings or the path of a config file, not "
        f"{type(settings_or_path).__name__}"
    )


def _tools(
    settings: Settings,
    tools: ToolRegistry | Iterable[Tool] | None,
    on_capture: Callable[[Capture], None] | None,
    confirm_capture: Callable[[str], Awaitable[bool]] | None,
    notices: list[str],
    owned: list[Any],
) -> ToolRegistry:
    """The host's tools, or the app's: the screenshot tool only when the user sees it."""
    if isinstance(tools, ToolRegistry):
        return tools
    if tools is not None:
        return ToolRegistry(tools)
    asks = settings.agent.confirm_screenshots
    screenshots = on_capture is not None and (confirm_capture is not None or not asks)
    if not screenshots and tools_offered(settings):
        needed = "on_capture and confirm_capture" if asks else "on_capture"
        notices.append(
            f"The screenshot tool is left out: the user must see every capture, so the "
            f"host gives {needed} to offer it."
        )
    grabber = None
    if screenshots:
        from app.media import ScreenGrabber

        grabber = ScreenGrabber()
        owned.append(grabber)
    return build_tools(
        settings,
        on_capture=on_capture,
        confirm_capture=confirm_capture,
        grabber=grabber,
        notices=notices,
        screenshots=screenshots,
    )

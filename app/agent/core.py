"""AgentCore: the only place that calls the chat model, with what a turn needs around
it: the request (the prompt trimmed to the context window), the tools, image summaries
and the long-term memory's note.

`turn()` gives one turn of the model and its tools (`app.agent.agent_turn.AgentTurn`):
iterate it for what the reply streams, then read its messages and outcome. It records
nothing: the owner of the conversation does (`MemoryAgent`, through
`app.agent.recording`); `run_turn()` is a turn recorded into a history list the caller
keeps itself.

The prompt is trimmed oldest-turn-first to the context window (the system prompt and
the current turn always stay); a context overflow the provider reports triggers one
harder trim and a retry, and a model that rejects tools is asked again without them
(once, then never for this core).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from app.agent.agent_turn import AgentTurn, AgentTurnError, TurnOutcome, rejects_tools
from app.agent.commit import TurnCommit
from app.agent.context_fit import StableStart, first_fitting
from app.agent.held_words import HeldWords
from app.agent.looking import fold_app_looks
from app.agent.masking import mask_message
from app.agent.model_call import ModelCallStream, stream_call
from app.agent.moment import TimeNotes
from app.agent.recording import recorder
from app.agent.reply_guard import ReplyGuard
from app.agent.storage import ConversationStorage
from app.agent.tools import ToolContext, ToolRegistry
from app.agent.vision import (
    SUMMARIES_KEY,
    ImageDescriber,
    VisionError,
    images_as_text,
    last_label_number,
    message_images,
    missing_images_as_notes,
)
from app.llm import (
    ImageBlock,
    LLMRequest,
    ModelClient,
    Msg,
    ProviderError,
    Role,
    TextBlock,
    ToolChoice,
    ToolSpec,
    ToolUseBlock,
    model_client,
)
from app.llm.reply_form import ReplyForm
from app.llm.request import estimate_input_tokens
from app.redaction import Redactor

__all__ = ["AgentCore", "AgentTurnError", "TurnMemory", "TurnOutcome", "rejects_tools"]

log = logging.getLogger(__name__)

REPLY_RESERVE_TOKENS = 1024  # room for the answer when max_tokens is not set


def _has(msg: Msg, kind: str) -> bool:
    """Whether `msg` holds a block of `kind` (without building blocks for plain text)."""
    return not isinstance(msg.content, str) and any(b.kind == kind for b in msg.content)


def _turn_groups(history: Sequence[Msg]) -> list[list[Msg]]:
    """History cut into turns, each starting at a user's message (tool results are not)."""
    groups: list[list[Msg]] = []
    for msg in history:
        starts = msg.role == Role.USER and not _has(msg, "tool_result")
        if starts or not groups:
            groups.append([msg])
        else:
            groups[-1].append(msg)
    return groups


class TurnMemory(Protocol):
    """Long-term memory around a turn (`app.memory.LongTermMemory`): a note for the model
    before it answers (recalled memories, what a memory command did), and the finished
    turn handed over for extraction (queued, never run on the turn's path)."""

    def before_turn(self, text: str, conversation: str, turn: int) -> str: ...

    def after_turn(
        self, history: Sequence[Msg], start: int, conversation: str, *, failed: bool = False
    ) -> None: ...

    def read_ahead(self, work: Callable[[str], Awaitable[None]]) -> None: ...


@dataclass
class AgentCore:
    """The chat model and what a turn needs around it. `conf_uid`/`history_uid` name
    the conversation turns belong to: the agent that owns the conversation moves it
    with `use_conversation`."""

    # Any provider given is kept as a `ModelClient` (`app.llm.adapted`): the core asks
    # it what a ModelClient declares, and never whether it has it.
    provider: ModelClient
    model: str
    storage: ConversationStorage
    conf_uid: str
    history_uid: str
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    max_tool_rounds: int = 6
    max_tool_calls_per_round: int = 4  # calls of one reply run; the rest refused
    max_tool_calls: int = 12  # calls run in one turn; then the model must answer
    enable_tool: bool = False
    chat_supports_vision: bool = False
    require_detailed: bool = False
    tools: ToolRegistry | None = None
    vision: ImageDescriber | None = None
    context_window: int | None = None
    media_root: Path | None = None  # the data folder tool images are kept in
    max_sentences: int = 0  # a reply stops after this many sentences (0: no limit)
    time_notes: bool = False  # each user message says the local time it was sent
    stable_trim: bool = False  # trimmed history keeps its start for several turns
    reply_form: ReplyForm | None = None  # a tag, then N sentences (embedded: a grammar)
    # Tool calls the app makes itself before the model answers, when the model is
    # offered no tools (it cannot call them): the screenshot a screen question needs.
    app_tool_calls: Callable[[Msg], list[ToolUseBlock]] | None = None
    # The secrets masked in all a turn brings in (the model's words, tool results, the
    # user's): key shapes only unless the session gives its configured keys.
    redactor: Redactor = field(default_factory=Redactor)
    # Where the user's message of a turn in flight waits until it is recorded (a crash
    # mid-reply loses nothing): with file storage.
    held: HeldWords | None = None
    tools_rejected: bool = False  # the model refused tools once: not offered again
    memory: TurnMemory | None = None  # long-term memory, when on
    # Token estimates of history messages by identity (the message is kept to make
    # sure the id was not reused): trimming then costs no pydantic work per turn.
    _sizes: dict[int, tuple[Msg, int]] = field(default_factory=dict, repr=False)
    _clock: TimeNotes = field(default_factory=TimeNotes, repr=False)
    _start: StableStart = field(default_factory=StableStart, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "provider":
            value = model_client(value)
        super().__setattr__(name, value)

    def use_conversation(self, conf_uid: str, history_uid: str) -> None:
        """Turns from now on belong to this conversation (a turn running keeps its own)."""
        self.conf_uid, self.history_uid = conf_uid, history_uid

    # ----- the request ------------------------------------------------------
    def _message_size(self, msg: Msg) -> int:
        cached = self._sizes.get(id(msg))
        if cached is not None and cached[0] is msg:
            return cached[1]
        if len(self._sizes) > 20_000:
            self._sizes.clear()
        size = self._estimate([msg])
        self._sizes[id(msg)] = (msg, size)
        return size

    def _estimate(self, messages: list[Msg], tools: list[ToolSpec] | None = None) -> int:
        request = LLMRequest.model_construct(
            model=self.model, messages=messages, tools=tools or [], stream=True
        )
        try:
            return int(self.provider.estimate_input_tokens(request))
        except Exception:  # a provider's estimate must never stop a turn
            log.debug("the provider's token estimate failed", exc_info=True)
            return estimate_input_tokens(request)

    def _fit(
        self, system: list[Msg], history: list[Msg], turn: list[Msg], tools: list[ToolSpec],
        *, shrink: bool,
    ) -> list[Msg]:
        """The newest whole turns of `history` that fit beside the system prompt and the
        current turn; `shrink` (after an overflow) keeps at most half as much."""
        if not history or (not self.context_window and not shrink):
            return history
        groups = _turn_groups(history)
        sizes = [sum(self._message_size(m) for m in group) for group in groups]
        if self.context_window:
            budget = self.context_window - (self.max_tokens or REPLY_RESERVE_TOKENS)
            budget -= self._estimate(system + turn, tools)
        else:
            budget = sum(sizes)
        if shrink:
            budget = min(budget, sum(sizes)) // 2
        if self.stable_trim and not shrink:
            dropped = self._start.choose(groups, sizes, budget)
        else:
            dropped = first_fitting(sizes, budget)
        if dropped:
            log.info("left the %d oldest turn(s) out to fit the context window", dropped)
        return [msg for group in groups[dropped:] for msg in group]

    def build_request(
        self, history: Sequence[Msg], turn: Sequence[Msg], *, tools: list[ToolSpec],
        tool_choice: ToolChoice | None = None, shrink: bool = False, note: str = "",
    ) -> LLMRequest:
        """The request for `turn` (the user's message, then what the turn added) after
        `history`, trimmed to the context window (`shrink`: to at most half, after an
        overflow), with the long-term memory's `note` and the `tools` offered."""
        history, turn = list(history), list(turn)
        system = [Msg.system(self.system_prompt)] if self.system_prompt else []
        if not tools:  # looks the app made for a model without tools: told in words
            history, turn = fold_app_looks(history), fold_app_looks(turn)
        if self.time_notes:
            # In the new user message, not the system prompt: the prompt's beginning
            # stays the same from turn to turn, so a local model reuses what it read.
            # The memory's note stays a system message just before it (`app.memory.recall`).
            turn = self._clock.noted(turn, history)
        if not self.chat_supports_vision:
            have = self.vision is not None
            history = images_as_text(history, have_summarizer=have)
            turn = images_as_text(turn, have_summarizer=have)
        else:  # an image file deleted since: a note, not a turn that cannot be sent
            history, turn = missing_images_as_notes(history), missing_images_as_notes(turn)
        notes = [Msg.system(note)] if note else []
        past = self._fit(system + notes, history, turn, tools, shrink=shrink)
        return LLMRequest(
            model=self.model,
            messages=system + past + notes + turn,
            tools=tools,
            tool_choice=tool_choice if tools else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=True,
            reply_form=self.reply_form,
        )

    async def warm_up(self) -> None:
        """Have a local model read the system prompt ahead of the first turn.

        llama.cpp keeps the evaluated prefix, so the first real turn then only reads
        the user's words: its first token came about 4x sooner when measured here.
        Nothing is stored. Only for local models: a hosted one would bill for it.
        """
        request = self.build_request([], [Msg.user("Hi")], tools=[])
        request.max_tokens = 1
        async for event in self.provider.stream(request):
            if event.kind == "response.failed":
                log.info("warming the model up failed: %s", event.error)

    def offered_tools(self) -> list[ToolSpec]:
        """The tools the model is offered now (none once it refused them)."""
        if not self.enable_tool or self.tools is None or self.tools_rejected:
            return []
        return self.tools.specs()

    def refuse_tools(self, error: ProviderError) -> None:
        """The model said it cannot take tools: never offered them again."""
        log.warning("%s does not take tools (%s); answering without", self.model, error)
        self.tools_rejected = True

    def call_model(self, request: LLMRequest, guard: ReplyGuard) -> ModelCallStream:
        """One call of the chat model (`app.agent.model_call`): iterate, then `outcome`."""
        return stream_call(self.provider, request, self.redactor, guard)

    # ----- one turn ---------------------------------------------------------
    def turn(
        self,
        history: Sequence[Msg],
        user: Msg,
        *,
        commit: TurnCommit | None = None,
        on_end: Callable[[AgentTurn], None] | None = None,
    ) -> AgentTurn:
        """The reply to `user` after `history` (`AgentTurn`); nothing is recorded. A held
        `commit` keeps tools from running until it is confirmed; `on_end` is told when
        the turn is over, its messages complete."""
        return AgentTurn(self, history, user, commit=commit, on_end=on_end)

    def run_turn(
        self, history: list[Msg], user: Msg, *, commit: TurnCommit | None = None
    ) -> AgentTurn:
        """A turn recorded, when it ends, into `history` (a list the caller keeps) and
        storage; with a held `commit`, when it is confirmed, never if discarded. For a
        caller without a `MemoryAgent` (which records its own history as heard)."""
        return self.turn(history, user, commit=commit, on_end=recorder(self, history, commit))

    def recall(self, text: str, conversation: str, turn: int) -> str:
        """The long-term memory's note for the turn numbered `turn` ("" without one)."""
        if self.memory is None:
            return ""
        try:
            return self.memory.before_turn(text, conversation, turn)
        except Exception:  # the memory must never cost the user a turn
            log.exception("the long-term memory could not be read")
            return ""

    # ----- tools and images -------------------------------------------------
    async def run_tools(
        self, calls: list[ToolUseBlock], before: Sequence[Msg], question: str, *,
        conversation: str,
    ) -> list[Msg]:
        """The results of `calls` (run side by side), as tool messages: their images
        labelled after those `before` them, masked and summarized."""
        assert self.tools is not None
        context = ToolContext(session_id=conversation, media_root=self.media_root)
        results = await asyncio.gather(*(self.tools.run(c, context) for c in calls))
        number = last_label_number(list(before), "tool")
        messages: list[Msg] = []
        for result in results:
            content: list[TextBlock | ImageBlock] = []
            for part in result.content:
                if isinstance(part, ImageBlock):
                    number += 1
                    part = part.model_copy(update={"name": f"tool{number}"})
                content.append(part)
            msg = Msg(role=Role.TOOL, content=[result.model_copy(update={"content": content})])
            msg = mask_message(msg, self.redactor)  # a tool may print a key: not sent on
            await self.describe_images(msg, question=question)
            messages.append(msg)
        return messages

    async def describe_images(self, msg: Msg, *, question: str) -> None:
        """Per-image summaries into `msg.metadata` when the matrix asks for them."""
        images = message_images(msg)
        wanted = not self.chat_supports_vision or self.require_detailed
        if not images or not wanted or self.vision is None:
            return
        vision = self.vision

        async def one(image: ImageBlock) -> tuple[str, str | None]:
            label = image.name or "image"
            try:
                return label, await vision.summarize(image, question=question)
            except (VisionError, ProviderError, OSError, ValueError) as exc:
                log.warning("the vision model could not describe %s: %s", label, exc)
                return label, None

        found = await asyncio.gather(*(one(image) for image in images))
        summaries = dict(msg.metadata.get(SUMMARIES_KEY) or {})
        summaries.update({label: text for label, text in found if text})
        if summaries:
            msg.metadata[SUMMARIES_KEY] = summaries

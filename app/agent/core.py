"""AgentCore: the only place that calls the chat model, and its tool loop.

`run_turn` streams text tokens out the moment they arrive. When the model asks for
tools it runs them (concurrently within a round, each with its timeout), yields a
`ToolStatus` while they run, appends the assistant's calls and the tool results,
and calls the model again: at most `max_tool_rounds` rounds, then once more with
`tool_choice="none"` for a final answer. Whatever happens (success, failure,
interruption) every message of the turn is appended to storage at the end.

Model reasoning is passed on wrapped in `<think>` … `</think>` so the reply
pipeline shows it and never speaks it. The prompt is trimmed oldest-turn-first to
the context window (the system prompt and the current turn always stay); a context
overflow the provider reports triggers one harder trim and a retry, and a model
that rejects tools is asked again without them (once, then never for this core).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.agent.outputs import ToolStatus
from app.agent.storage import ConversationStorage
from app.agent.tools import ToolContext, ToolRegistry
from app.agent.vision import (
    SUMMARIES_KEY,
    VisionError,
    VisionSummarizer,
    images_as_text,
    message_images,
)
from app.llm import (
    ContentBlock,
    ImageBlock,
    LLMRequest,
    Msg,
    ProviderError,
    Role,
    StreamingProvider,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    is_context_overflow,
)
from app.llm.request import estimate_input_tokens

log = logging.getLogger(__name__)

REPLY_RESERVE_TOKENS = 1024  # room for the answer when max_tokens is not set
CANCELLED_TOOL = "Cancelled: the user interrupted before this tool finished."
# How servers say they cannot take tools (llama.cpp builds, older vLLM, Ollama models).
_TOOLS_REJECTED = re.compile(
    r"(does not|doesn't|do not|cannot|can't) support (tools|tool[ _-]?(use|calling|calls)"
    r"|function[ _-]?calling|functions)"
    r"|(tools?|tool[ _-]?(use|calling|choice)|function[ _-]?calling)\W+(is|are) not supported"
    r"|unsupported\W+(parameter\W+)?\W*(tools|tool_choice|functions)"
    r"|unrecognized request argument supplied: tools",
    re.IGNORECASE,
)


def rejects_tools(error: object) -> bool:
    """Whether a provider error says the model or server cannot take tools."""
    return bool(_TOOLS_REJECTED.search(str(error)))


class AgentTurnError(Exception):
    """The model could not answer; the message is the provider's complaint in words."""


@dataclass(slots=True)
class TurnStats:
    """perf_counter() stamps of one turn, for stage timings."""

    request_sent: float | None = None
    first_token: float | None = None
    finished: float | None = None
    text: str = ""
    interrupted: bool = False
    error: str | None = None
    tool_rounds: int = 0
    model_calls: int = 0


@dataclass(slots=True)
class _Call:
    """One model call in progress: what it streamed and how it ended."""

    parts: list[str] = field(default_factory=list)
    message: Msg | None = None
    error: ProviderError | None = None
    cancelled: bool = False
    emitted: bool = False


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


def _pair_tool_calls(messages: list[Msg]) -> list[Msg]:
    """Every tool call answered by a result and no result without its call: providers
    refuse anything else, and a crash or an old file may have left one unpaired."""
    out: list[Msg] = []
    open_calls: dict[str, ToolUseBlock] = {}

    def close_open() -> None:
        for call in open_calls.values():
            out.append(Msg.tool_result(call.id, CANCELLED_TOOL, is_error=True, name=call.name))
        open_calls.clear()

    for msg in messages:
        if isinstance(msg.content, str):
            if open_calls:
                close_open()
            out.append(msg)
            continue
        results = msg.tool_results
        if results:
            kept: list[ContentBlock] = [
                b for b in msg.blocks if not isinstance(b, ToolResultBlock)
            ]
            kept += [r for r in results if open_calls.pop(r.tool_use_id, None) is not None]
            if kept:
                out.append(msg if len(kept) == len(msg.blocks) else msg.model_copy(
                    update={"content": kept}))
            continue
        close_open()
        out.append(msg)
        is_reply = msg.role == Role.ASSISTANT
        open_calls = {call.id: call for call in msg.tool_calls} if is_reply else {}
    close_open()
    return out


@dataclass
class AgentCore:
    provider: StreamingProvider
    model: str
    storage: ConversationStorage
    conf_uid: str
    history_uid: str
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    max_tool_rounds: int = 6
    enable_tool: bool = False
    chat_supports_vision: bool = False
    require_detailed: bool = False
    tools: ToolRegistry | None = None
    vision: VisionSummarizer | None = None
    context_window: int | None = None
    media_root: Path | None = None  # the data folder tool images are kept in
    last_stats: TurnStats = field(default_factory=TurnStats)
    tools_rejected: bool = False  # the model refused tools once: not offered again
    # Token estimates of history messages by identity (the message is kept to make
    # sure the id was not reused): trimming then costs no pydantic work per turn.
    _sizes: dict[int, tuple[Msg, int]] = field(default_factory=dict, repr=False)

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
        estimate = getattr(self.provider, "estimate_input_tokens", None)
        if callable(estimate):
            try:
                return int(estimate(request))
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
        kept: list[list[Msg]] = []
        for group, size in zip(reversed(groups), reversed(sizes), strict=True):
            if size > budget:
                break
            budget -= size
            kept.append(group)
        dropped = len(groups) - len(kept)
        if dropped:
            log.info("left the %d oldest turn(s) out to fit the context window", dropped)
        return [msg for group in reversed(kept) for msg in group]

    def _request(
        self, history: list[Msg], turn: list[Msg], tools: list[ToolSpec],
        tool_choice: ToolChoice | None, *, shrink: bool = False,
    ) -> LLMRequest:
        system = [Msg.system(self.system_prompt)] if self.system_prompt else []
        if not self.chat_supports_vision:
            have = self.vision is not None
            history = images_as_text(history, have_summarizer=have)
            turn = images_as_text(turn, have_summarizer=have)
        past = self._fit(system, history, turn, tools, shrink=shrink)
        return LLMRequest(
            model=self.model,
            messages=system + _pair_tool_calls(past + turn),
            tools=tools,
            tool_choice=tool_choice if tools else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=True,
        )

    async def warm_up(self) -> None:
        """Have a local model read the system prompt ahead of the first turn.

        llama.cpp keeps the evaluated prefix, so the first real turn then only reads
        the user's words: its first token came about 4x sooner when measured here.
        Nothing is stored. Only for local models: a hosted one would bill for it.
        """
        request = self._request([], [Msg.user("Hi")], [], None)
        request.max_tokens = 1
        async for event in self.provider.stream(request):
            if event.kind == "response.failed":
                log.info("warming the model up failed: %s", event.error)

    # ----- one turn ---------------------------------------------------------
    def _tool_specs(self) -> list[ToolSpec]:
        if not self.enable_tool or self.tools is None or self.tools_rejected:
            return []
        return self.tools.specs()

    async def run_turn(
        self, history: list[Msg], user: Msg
    ) -> AsyncGenerator[str | ToolStatus, None]:
        """Stream the reply to `user`; `history` gets the turn appended when it ends."""
        stats = self.last_stats = TurnStats()
        turn: list[Msg] = [user]
        call = _Call()
        pending: list[ToolUseBlock] = []
        parts: list[str] = []
        try:
            await self._summarize(user, question=user.text)
            while True:
                final_round = stats.tool_rounds >= self.max_tool_rounds
                call = _Call()
                async for token in self._call(history, turn, final_round, stats, call):
                    yield token
                if call.message is not None:
                    parts.extend(call.parts)
                if call.cancelled:
                    stats.interrupted = True
                    break
                if call.error is not None or call.message is None:
                    stats.error = str(call.error or "The reply ended without a result.")
                    break
                reply = call.message
                calls = reply.tool_calls if self._tool_specs() and not final_round else []
                if not calls:
                    if reply.tool_calls:  # asked not to, yet it did: no results will follow
                        reply.content = [b for b in reply.blocks if not isinstance(b, ToolUseBlock)]
                    turn.append(reply)
                    break
                turn.append(reply)
                pending = calls
                for tool_call in calls:
                    yield ToolStatus(tool_call.name, f"[🔧 {tool_call.name}]")
                turn.extend(await self._run_tools(calls, history, turn, user.text))
                pending = []
                stats.tool_rounds += 1
        except GeneratorExit:
            stats.interrupted = True
            raise
        except BaseException as exc:
            # Cancellation or a bug: record what happened, then let it propagate.
            stats.interrupted = True
            if not isinstance(exc, Exception):
                raise
            stats.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            stats.finished = time.perf_counter()
            stats.text = "".join(parts if call.message is not None else [*parts, *call.parts])
            self._record(history, turn, call, pending, stats)
        if stats.error is not None:
            raise AgentTurnError(stats.error)

    async def _call(
        self, history: list[Msg], turn: list[Msg], final_round: bool, stats: TurnStats,
        call: _Call,
    ) -> AsyncIterator[str]:
        """One model call, retried once without tools if the model rejects them and once
        trimmed harder if the prompt overflowed (never after output was streamed)."""
        shrink = retried_tools = False
        while True:
            tools = self._tool_specs()
            choice: ToolChoice | None = "none" if final_round and tools else None
            request = self._request(history, turn, tools, choice, shrink=shrink)
            call.parts.clear()
            call.message, call.error, call.emitted = None, None, False
            async for token in self._stream(request, stats, call):
                yield token
            error = call.error
            if error is None or call.emitted:
                return
            if tools and not retried_tools and rejects_tools(error):
                log.warning("%s does not take tools (%s); answering without", self.model, error)
                self.tools_rejected = retried_tools = True
                continue
            if not shrink and is_context_overflow(error):
                log.warning("the prompt was too long for %s; trimming and trying again", self.model)
                shrink = True
                continue
            return

    async def _stream(
        self, request: LLMRequest, stats: TurnStats, call: _Call
    ) -> AsyncIterator[str]:
        thinking_open = False
        stats.model_calls += 1
        if stats.request_sent is None:
            stats.request_sent = time.perf_counter()
        async for event in self.provider.stream(request):
            if event.kind == "block.delta":
                channel, delta = event.channel, event.delta
                if not delta:
                    continue
                if channel == "text":
                    if thinking_open:
                        thinking_open = False
                        yield "</think>"
                    if stats.first_token is None:
                        stats.first_token = time.perf_counter()
                    call.parts.append(delta)
                    call.emitted = True
                    yield delta
                elif channel == "thinking":
                    if stats.first_token is None:
                        stats.first_token = time.perf_counter()
                    if not thinking_open:
                        thinking_open = True
                        yield "<think>"
                    call.emitted = True
                    yield delta
            elif event.kind == "response.completed":
                call.message = event.response.to_msg()
            elif event.kind == "response.failed":
                call.error = event.error
                call.emitted = call.emitted or bool(event.semantic_output_emitted)
            elif event.kind == "response.cancelled":
                call.cancelled = True
        if thinking_open:
            yield "</think>"

    # ----- tools and images -------------------------------------------------
    async def _run_tools(
        self, calls: list[ToolUseBlock], history: list[Msg], turn: list[Msg], question: str
    ) -> list[Msg]:
        assert self.tools is not None
        context = ToolContext(session_id=self.history_uid, media_root=self.media_root)
        results = await asyncio.gather(*(self.tools.run(c, context) for c in calls))
        number = last_label_number([*history, *turn], "tool")
        messages: list[Msg] = []
        for result in results:
            content: list[TextBlock | ImageBlock] = []
            for part in result.content:
                if isinstance(part, ImageBlock):
                    number += 1
                    part = part.model_copy(update={"name": f"tool{number}"})
                content.append(part)
            msg = Msg(role=Role.TOOL, content=[result.model_copy(update={"content": content})])
            await self._summarize(msg, question=question)
            messages.append(msg)
        return messages

    async def _summarize(self, msg: Msg, *, question: str) -> None:
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

    # ----- storage ----------------------------------------------------------
    def _record(
        self, history: list[Msg], turn: list[Msg], call: _Call, pending: list[ToolUseBlock],
        stats: TurnStats,
    ) -> None:
        answered = {r.tool_use_id for m in turn for r in m.tool_results}
        for tool_call in pending:
            if tool_call.id not in answered:
                turn.append(
                    Msg.tool_result(
                        tool_call.id, CANCELLED_TOOL, is_error=True, name=tool_call.name
                    )
                )
        if turn[-1].role != Role.ASSISTANT:
            turn.append(Msg.assistant("".join(call.parts) if call.message is None else ""))
        final = turn[-1]
        if stats.interrupted:
            final.metadata["interrupted"] = True
        if stats.error:
            final.metadata["error"] = stats.error
        if not final.blocks:
            final.content = [TextBlock(text="")]
        history.extend(turn)
        try:
            self.storage.append(self.conf_uid, self.history_uid, turn)
        except OSError as exc:
            log.error("could not save the conversation (%s); it stays in memory", exc)


def last_label_number(messages: Sequence[Msg], prefix: str) -> int:
    """The highest `<prefix>N` image label used so far (0 if none)."""
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    best = 0
    for msg in messages:
        for image in message_images(msg):
            match = pattern.match(image.name or "")
            if match:
                best = max(best, int(match.group(1)))
    return best

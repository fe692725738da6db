"""AgentCore: the only place that calls the chat model, and its tool loop.

`run_turn` streams text tokens out the moment they arrive. When the model asks for
tools it runs them (concurrently within a round, each with its timeout), yields a
`ToolStatus` while they run, appends the assistant's calls and the tool results,
and calls the model again: at most `max_tool_rounds` rounds, then once more with
`tool_choice="none"` for a final answer. A model offered no tools may still get a
tool's result: `app_tool_calls` are run before it answers (the screenshot a question
about the screen needs, `agent.looking`). Whatever happens (success, failure,
interruption) every message of the turn is appended to storage at the end.

Model reasoning is passed on typed (`ThinkingDelta`), so the reply pipeline shows it
and never speaks it. The prompt is trimmed oldest-turn-first to
the context window (the system prompt and the current turn always stay); a context
overflow the provider reports triggers one harder trim and a retry, and a model
that rejects tools is asked again without them (once, then never for this core).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from app.agent.clock import TimeNotes
from app.agent.commit import TurnCommit
from app.agent.context_fit import StableStart, first_fitting
from app.agent.looking import fold_app_looks
from app.agent.masking import mask_message
from app.agent.model_call import ModelCall, TurnStats, stream_call
from app.agent.notes import with_memory_note
from app.agent.outputs import ThinkingDelta, ToolStatus
from app.agent.read_ahead import schedule_read_ahead
from app.agent.reply_guard import (
    ReplyCut,
    ReplyGuard,
    fallback_reply,
    has_words,
    nudged,
)
from app.agent.storage import ConversationStorage, write_problem_words
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
    Msg,
    ProviderError,
    Role,
    StreamingProvider,
    TextBlock,
    ToolChoice,
    ToolSpec,
    ToolUseBlock,
    is_context_overflow,
)
from app.llm.reply_form import ReplyForm
from app.llm.request import estimate_input_tokens
from app.llm.transform import NO_RESULT
from app.redaction import Redactor

log = logging.getLogger(__name__)

REPLY_RESERVE_TOKENS = 1024  # room for the answer when max_tokens is not set
CANCELLED_TOOL = NO_RESULT  # the words a tool call the user cut short is answered with
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
    last_stats: TurnStats = field(default_factory=TurnStats)
    # The secrets masked in all a turn brings in (the model's words, tool results, the
    # user's): key shapes only unless the session gives its configured keys.
    redactor: Redactor = field(default_factory=Redactor)
    tools_rejected: bool = False  # the model refused tools once: not offered again
    memory: TurnMemory | None = None  # long-term memory, when on
    # This turn's memory note, after the history (the prefix read last turn is kept).
    _memory_note: str = field(default="", repr=False)
    # Token estimates of history messages by identity (the message is kept to make
    # sure the id was not reused): trimming then costs no pydantic work per turn.
    _sizes: dict[int, tuple[Msg, int]] = field(default_factory=dict, repr=False)
    _clock: TimeNotes = field(default_factory=TimeNotes, repr=False)
    _start: StableStart = field(default_factory=StableStart, repr=False)

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
        if self.stable_trim and not shrink:
            dropped = self._start.choose(groups, sizes, budget)
        else:
            dropped = first_fitting(sizes, budget)
        if dropped:
            log.info("left the %d oldest turn(s) out to fit the context window", dropped)
        return [msg for group in groups[dropped:] for msg in group]

    def _request(
        self, history: list[Msg], turn: list[Msg], tools: list[ToolSpec],
        tool_choice: ToolChoice | None, *, shrink: bool = False, note: str | None = None,
    ) -> LLMRequest:
        system = [Msg.system(self.system_prompt)] if self.system_prompt else []
        if not tools:  # looks the app made for a model without tools: told in words
            history, turn = fold_app_looks(history), fold_app_looks(turn)
        if self.time_notes:
            # In the new user message, not the system prompt: the prompt's beginning
            # stays the same from turn to turn, so a local model reuses what it read.
            turn = self._clock.noted(turn)
        if not self.chat_supports_vision:
            have = self.vision is not None
            history = images_as_text(history, have_summarizer=have)
            turn = images_as_text(turn, have_summarizer=have)
        else:  # an image file deleted since: a note, not a turn that cannot be sent
            history, turn = missing_images_as_notes(history), missing_images_as_notes(turn)
        note = self._memory_note if note is None else note
        notes = [Msg.system(note)] if note else []
        if notes and self.time_notes:  # a small model heeds the user's message more
            turn, notes = with_memory_note(turn, note), []
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
        self, history: list[Msg], user: Msg, *, commit: TurnCommit | None = None
    ) -> AsyncGenerator[str | ThinkingDelta | ToolStatus | ReplyCut, None]:
        """Stream the reply to `user` (answer text, reasoning, tool status, in order);
        `history` gets the turn appended when it ends. A held `commit` (a speculative
        reply) defers that until it is confirmed, and no tool runs before then.

        A reply the guard stopped inside a sentence is followed by a `ReplyCut`; a reply
        with no words (only a tag, or nothing) is asked for once more, then answered
        with a short fallback line, so the user never waits on silence."""
        stats = self.last_stats = TurnStats()
        if commit is not None:
            commit.stats = stats
        user = mask_message(user, self.redactor)
        self._memory_note = self._recall(user.text, len(history))
        turn: list[Msg] = [user]
        call = ModelCall()
        pending: list[ToolUseBlock] = []
        parts: list[str] = []
        asked_again = False
        try:
            await self._summarize(user, question=user.text)
            calls = self.app_tool_calls(user) if self.app_tool_calls else []
            if calls and self.tools is not None and not self._tool_specs():
                turn.append(Msg(role=Role.ASSISTANT, content=list(calls)))
                pending = calls
                for tool_call in calls:
                    yield ToolStatus(tool_call.name, f"[🔧 {tool_call.name}]")
                turn.extend(await self._run_tools(calls, history, turn, user.text))
                pending = []
            while True:
                final_round = stats.tool_rounds >= self.max_tool_rounds
                call = ModelCall(guard=ReplyGuard(self.max_sentences))
                async for token in self._call(history, turn, final_round, stats, call, asked_again):
                    yield token
                if call.message is not None:
                    parts.extend(call.parts)
                if call.guard.cut is not None and call.guard.tail_unfinished:
                    yield ReplyCut(call.guard.cut)
                if call.cancelled:
                    stats.interrupted = True
                    break
                if call.error is not None or call.message is None:
                    stats.error = str(call.error or "The reply ended without a result.")
                    break
                reply = call.message
                calls = reply.tool_calls if self._tool_specs() and not final_round else []
                if not calls:
                    if not has_words(reply.text):
                        if not asked_again:
                            log.info("the reply had no words (%r): asking once more", reply.text)
                            asked_again = True
                            continue
                        fallback = fallback_reply(user.text)
                        yield fallback
                        parts.append(fallback)
                        reply = Msg.assistant(fallback, metadata={"fallback": True})
                    if reply.tool_calls:  # asked not to, yet it did: no results will follow
                        reply.content = [b for b in reply.blocks if not isinstance(b, ToolUseBlock)]
                    turn.append(reply)
                    break
                turn.append(reply)
                pending = calls
                for tool_call in calls:
                    yield ToolStatus(tool_call.name, f"[🔧 {tool_call.name}]")
                if commit is not None:
                    await commit.confirmed()  # a tool's effects cannot be taken back
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
            stats.error = self.redactor(stats.error) if stats.error else stats.error
            stats.text = "".join(parts if call.message is not None else [*parts, *call.parts])
            if commit is None:
                self._record(history, turn, call, pending, stats)
            else:
                commit.record(lambda: self._record(history, turn, call, pending, stats))
        if stats.error is not None:
            raise AgentTurnError(stats.error)

    async def _call(
        self, history: list[Msg], turn: list[Msg], final_round: bool, stats: TurnStats,
        call: ModelCall, nudge: bool = False,
    ) -> AsyncIterator[str | ThinkingDelta]:
        """One model call, retried once without tools if the model rejects them and once
        trimmed harder if the prompt overflowed (never after output was streamed);
        `nudge` reminds the model to answer in words (its first answer had none)."""
        shrink = retried_tools = False
        while True:
            tools = self._tool_specs()
            choice: ToolChoice | None = "none" if final_round and tools else None
            request = self._request(history, turn, tools, choice, shrink=shrink)
            if nudge:
                request = nudged(request)
            call.guard = ReplyGuard(call.guard.max_sentences)
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

    def _stream(
        self, request: LLMRequest, stats: TurnStats, call: ModelCall
    ) -> AsyncIterator[str | ThinkingDelta]:
        return stream_call(self.provider, request, stats, call, self.redactor)

    def _recall(self, text: str, turn: int) -> str:
        if self.memory is None:
            return ""
        try:
            return self.memory.before_turn(text, self.history_uid, turn)
        except Exception:  # the memory must never cost the user a turn
            log.exception("the long-term memory could not be read")
            return ""

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
            msg = mask_message(msg, self.redactor)  # a tool may print a key: not sent on
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
        self, history: list[Msg], turn: list[Msg], call: ModelCall, pending: list[ToolUseBlock],
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
        said = "".join(call.parts) if call.message is None else ""
        # A failed turn keeps what was said and streamed, never an empty reply: the
        # next request would carry it, and a list would show a blank answer.
        if turn[-1].role != Role.ASSISTANT and (said.strip() or not stats.error):
            turn.append(Msg.assistant(said))
        final = turn[-1]
        if stats.interrupted:
            final.metadata["interrupted"] = True
        if stats.error:
            final.metadata["error"] = stats.error
        if final.role == Role.ASSISTANT and not final.blocks:
            final.content = [TextBlock(text="")]
        turn[:] = [mask_message(msg, self.redactor) for msg in turn]
        start = len(history)
        history.extend(turn)
        self._memory_note = ""
        if self.memory is not None:
            try:
                self.memory.after_turn(history, start, self.history_uid, failed=bool(stats.error))
                schedule_read_ahead(self, self.memory, history)
            except Exception:  # the memory must never cost the user a turn
                log.exception("the long-term memory could not take the turn")
        try:
            self.storage.append(self.conf_uid, self.history_uid, turn)
        except OSError as exc:
            log.error("could not save the turn (%s); it stays in memory", exc)
            stats.unsaved = getattr(exc, "unsaved", len(turn))
            stats.save_problem = write_problem_words(exc)
        else:  # written, with whatever waited from before; or still waiting elsewhere
            stats.unsaved, problem = self.storage.unsaved(), self.storage.write_problem
            stats.save_problem = write_problem_words(problem) if problem else None


"""Scripted chat models for the long-term memory's tests: one answers the turns, and
the side requests (extraction, `cache="none"`) get their own scripted replies, so
extraction, updates and recall can be checked exactly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field

from app.llm import LLMRequest, LLMResponse, Msg, Role, TextBlock
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent

NOTHING = '{"memories": []}'


def memory_note(request: LLMRequest) -> str:
    """The memory note a turn's request carried ("" when none): the system message
    after the first."""
    systems = [m.text for m in request.messages if m.role == Role.SYSTEM]
    return "\n".join(systems[1:])


def last_user(request: LLMRequest) -> str:
    return next((m.text for m in reversed(request.messages) if m.role == Role.USER), "")


@dataclass
class MemoryScript:
    """A StreamingProvider: turns are answered by `reply(request)` (default: "OK."),
    side requests by the next of `extractions` (the last one repeats; `NOTHING` when
    empty). Every request is kept, turns and side requests apart."""

    extractions: list[str] = field(default_factory=list)
    reply: Callable[[LLMRequest], str] = lambda request: "[joy] OK."
    side_delay_s: float = 0.0  # how long a side request takes (the extraction "thinking")
    turns: list[LLMRequest] = field(default_factory=list)
    side_requests: list[LLMRequest] = field(default_factory=list)
    side_cancelled: int = 0
    provider: str = "scripted"

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        from app.llm.request import estimate_input_tokens

        return estimate_input_tokens(request)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        side = request.cache == "none"
        (self.side_requests if side else self.turns).append(request.model_copy(deep=True))
        if side:
            text = self.extractions[0] if self.extractions else NOTHING
            if len(self.extractions) > 1:
                self.extractions.pop(0)
            try:
                await asyncio.sleep(self.side_delay_s)
            except asyncio.CancelledError:
                self.side_cancelled += 1
                raise
        else:
            text = self.reply(request)
        emit = EventEmitter("scripted", request.model)
        yield emit.started("resp")
        info = BlockInfo(0, "b0", "text")
        yield emit.delta(info, "text", text, text)
        yield emit.completed(
            LLMResponse(
                provider="scripted",
                id="r",
                model=request.model,
                content=[TextBlock(text=text)],
                finish_reason="stop",
            )
        )


def notes_in(messages: Sequence[Msg]) -> str:
    return "\n".join(m.text for m in messages if m.role == Role.SYSTEM)

"""One call of the chat model inside a turn: its streamed words masked as they come in,
then watched by the reply guard (enough said, or a loop, stops the model), and what
came of it (`ModelCall`) and the turn's time stamps (`TurnStats`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from app.agent.masking import ReplyMasking, mask_message
from app.agent.outputs import ThinkingDelta
from app.agent.reply_guard import ReplyGuard, kept_message
from app.llm import LLMRequest, Msg, ProviderError, StreamingProvider
from app.redaction import Redactor


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
    unsaved: int = 0  # messages and changes not written to history yet (a full disk)
    save_problem: str | None = None  # why not, in words


@dataclass(slots=True)
class ModelCall:
    """One model call in progress: what it streamed and how it ended."""

    parts: list[str] = field(default_factory=list)
    message: Msg | None = None
    error: ProviderError | None = None
    cancelled: bool = False
    emitted: bool = False
    guard: ReplyGuard = field(default_factory=ReplyGuard)



async def stream_call(
    provider: StreamingProvider,
    request: LLMRequest,
    stats: TurnStats,
    call: ModelCall,
    redactor: Redactor,
) -> AsyncIterator[str | ThinkingDelta]:
    """The model's answer to `request`, as it streams: text and typed reasoning; how it
    ended is left in `call`."""
    stats.model_calls += 1
    if stats.request_sent is None:
        stats.request_sent = time.perf_counter()
    guard = call.guard
    # The model's words are masked as they come in (a key it repeats is never shown,
    # spoken or stored), then the guard sees them: enough said, or a loop, stops it.
    masking = ReplyMasking(redactor)
    finish_reason: str | None = None
    stopped = False
    events = provider.stream(request)
    try:
        async for event in events:
            if event.kind == "block.delta":
                channel, delta = event.channel, event.delta
                if not delta or channel not in ("text", "thinking"):
                    continue
                if stats.first_token is None:
                    stats.first_token = time.perf_counter()
                call.emitted = True
                for item in masking.feed(channel, delta):
                    if isinstance(item, ThinkingDelta):
                        yield item
                        continue
                    piece, stopped = guard.feed(item)
                    if piece:
                        call.parts.append(piece)
                        yield piece
                    if stopped:
                        break
                if stopped:
                    break  # the model stops here (the stream is closed below)
            elif event.kind == "response.completed":
                call.message = mask_message(event.response.to_msg(), redactor)
                finish_reason = event.response.finish_reason
            elif event.kind == "response.failed":
                call.error = event.error
                call.emitted = call.emitted or bool(event.semantic_output_emitted)
            elif event.kind == "response.cancelled":
                call.cancelled = True
        if not stopped:
            for item in masking.flush():  # what the masker held back at the end
                if isinstance(item, ThinkingDelta):
                    yield item
                    continue
                piece, stopped = guard.feed(item)
                if piece:
                    call.parts.append(piece)
                    yield piece
                if stopped:
                    break
            if finish_reason is not None:
                guard.finished(cut_by_length=finish_reason == "length")
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()  # closing the stream stops the model generating
    if guard.cut is not None and call.error is None and not call.cancelled:
        call.message = kept_message(call.message, guard)
        call.parts[:] = [guard.kept]

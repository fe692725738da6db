"""Stream events a provider client yields while a reply is generated.

A stream is `response.started`, then blocks (`block.started`, `block.delta`...,
`block.completed`), `usage.updated`, and exactly one terminal event:
`response.completed`, `response.failed` or `response.cancelled`. Sequence numbers
start at 1 and have no gaps. Events are plain slotted dataclasses because a
stream parser makes many of them (the budget is 50,000 events/s per core).

Reading a stream::

    async for ev in client.stream(request):
        if ev.kind == "block.delta" and ev.channel == "text":
            say(ev.delta)
        elif ev.kind == "response.completed":
            history.append(ev.response.to_msg())
        elif ev.kind == "response.failed":
            show(str(ev.error))

For convenience an event answers `None` for the data attributes of other kinds
(`ev.channel` on a `response.started` is `None`), so such tests need no kind check.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from app.llm.errors import ModelResponseFailed, ProviderError, ProviderStreamError
from app.llm.messages import ContentBlock
from app.llm.response import LLMResponse, Usage

__all__ = [
    "TERMINAL_KINDS",
    "BlockCompleted",
    "BlockDelta",
    "BlockInfo",
    "BlockStarted",
    "Channel",
    "EventEmitter",
    "ModelStreamEvent",
    "ResponseCancelled",
    "ResponseCompleted",
    "ResponseFailed",
    "ResponseStarted",
    "StreamScope",
    "UsageUpdated",
    "collect_response",
]

Channel = Literal["text", "thinking", "tool_name", "tool_arguments"]
BlockKind = Literal["text", "thinking", "tool_use"]
TERMINAL_KINDS = frozenset({"response.completed", "response.failed", "response.cancelled"})

# Data attribute names of all kinds; an event of another kind answers None for them.
_DATA_NAMES = frozenset(
    {"response_id", "block", "channel", "delta", "snapshot", "partial_input", "content"}
    | {"usage", "complete", "response", "error", "semantic_output_emitted"}
)


@dataclass(slots=True, frozen=True)
class StreamScope:
    """Which stream an event belongs to; `attempt` counts retries from 1."""

    model_stream_id: str
    provider: str
    model: str
    attempt: int = 1


@dataclass(slots=True)
class BlockInfo:
    """One block of the reply. `index` counts blocks in the order they started.

    Tool blocks carry `tool_call_id` and `tool_name`; on `block.completed` a tool
    block also carries its parsed `input`.
    """

    index: int
    block_id: str
    kind: BlockKind
    tool_call_id: str | None = None
    tool_name: str | None = None
    input: dict[str, Any] | None = None


@dataclass(slots=True)
class _Event:
    scope: StreamScope
    sequence: int
    occurred_at: float  # time.time() seconds

    def __getattr__(self, name: str) -> None:
        if name in _DATA_NAMES:
            return None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def is_terminal(self) -> bool:
        return self.kind in TERMINAL_KINDS


@dataclass(slots=True)
class ResponseStarted(_Event):
    response_id: str | None
    kind: Literal["response.started"] = field(default="response.started", init=False)


@dataclass(slots=True)
class BlockStarted(_Event):
    block: BlockInfo
    kind: Literal["block.started"] = field(default="block.started", init=False)


@dataclass(slots=True)
class BlockDelta(_Event):
    """New output. `snapshot` is the block's whole text (or arguments) so far;
    `partial_input` is the tool arguments parsed so far (tool_arguments channel)."""

    block: BlockInfo
    channel: Channel
    delta: str
    snapshot: str
    partial_input: dict[str, Any] | None = None
    kind: Literal["block.delta"] = field(default="block.delta", init=False)


@dataclass(slots=True)
class BlockCompleted(_Event):
    """A finished block; `content` is its neutral form (TextBlock, ThinkingBlock, ToolUseBlock)."""

    block: BlockInfo
    content: ContentBlock
    kind: Literal["block.completed"] = field(default="block.completed", init=False)


@dataclass(slots=True)
class UsageUpdated(_Event):
    """Token counts so far; `complete` when they are the final counts of the reply."""

    usage: Usage
    complete: bool
    kind: Literal["usage.updated"] = field(default="usage.updated", init=False)


@dataclass(slots=True)
class ResponseCompleted(_Event):
    response: LLMResponse
    kind: Literal["response.completed"] = field(default="response.completed", init=False)


@dataclass(slots=True)
class ResponseFailed(_Event):
    """The reply failed; `semantic_output_emitted` says whether text or tool output
    was already streamed (then it must not be retried blindly). `error` is a
    `ProviderStreamError`, also of its cause's class (a `RateLimitError`, ...)."""

    error: ProviderStreamError
    semantic_output_emitted: bool
    kind: Literal["response.failed"] = field(default="response.failed", init=False)


@dataclass(slots=True)
class ResponseCancelled(_Event):
    semantic_output_emitted: bool
    error: ProviderError | None = None
    kind: Literal["response.cancelled"] = field(default="response.cancelled", init=False)


ModelStreamEvent = (
    ResponseStarted
    | BlockStarted
    | BlockDelta
    | BlockCompleted
    | UsageUpdated
    | ResponseCompleted
    | ResponseFailed
    | ResponseCancelled
)


class EventEmitter:
    """Builds one stream's events with its scope and gap-free sequence numbers."""

    __slots__ = ("_sequence", "scope", "semantic_output_emitted", "terminated")

    def __init__(self, provider: str, model: str, model_stream_id: str | None = None) -> None:
        self.scope = StreamScope(model_stream_id or uuid.uuid4().hex, provider, model, 1)
        self._sequence = 0
        self.semantic_output_emitted = False
        self.terminated = False

    @property
    def emitted(self) -> int:
        """How many events this stream has produced."""
        return self._sequence

    def next_attempt(self) -> None:
        s = self.scope
        self.scope = StreamScope(s.model_stream_id, s.provider, s.model, s.attempt + 1)

    def _next(self) -> int:
        self._sequence += 1
        return self._sequence

    def started(self, response_id: str | None) -> ResponseStarted:
        return ResponseStarted(self.scope, self._next(), time.time(), response_id)

    def block_started(self, block: BlockInfo) -> BlockStarted:
        return BlockStarted(self.scope, self._next(), time.time(), block)

    def delta(
        self,
        block: BlockInfo,
        channel: Channel,
        delta: str,
        snapshot: str,
        partial_input: dict[str, Any] | None = None,
    ) -> BlockDelta:
        self.semantic_output_emitted = True
        return BlockDelta(
            self.scope, self._next(), time.time(), block, channel, delta, snapshot, partial_input
        )

    def block_completed(self, block: BlockInfo, content: ContentBlock) -> BlockCompleted:
        return BlockCompleted(self.scope, self._next(), time.time(), block, content)

    def usage(self, usage: Usage, complete: bool) -> UsageUpdated:
        return UsageUpdated(self.scope, self._next(), time.time(), usage, complete)

    def completed(self, response: LLMResponse) -> ResponseCompleted:
        self.terminated = True
        return ResponseCompleted(self.scope, self._next(), time.time(), response)

    def failed(self, error: ProviderError) -> ResponseFailed:
        """The failed event for `error`, carried as a `ProviderStreamError`."""
        self.terminated = True
        emitted = self.semantic_output_emitted
        stream_error = ProviderStreamError.of(error, semantic_output_emitted=emitted)
        return ResponseFailed(self.scope, self._next(), time.time(), stream_error, emitted)

    def cancelled(self, error: ProviderError | None = None) -> ResponseCancelled:
        self.terminated = True
        return ResponseCancelled(
            self.scope, self._next(), time.time(), self.semantic_output_emitted, error
        )


async def collect_response(events: AsyncIterator[ModelStreamEvent]) -> LLMResponse:
    """Drain a stream: the reply, or the stream's error raised."""
    async for event in events:
        if event.kind == "response.completed":
            return event.response
        if event.kind == "response.failed":
            raise event.error
        if event.kind == "response.cancelled":
            raise event.error or ModelResponseFailed("The reply was cancelled.")
    raise ModelResponseFailed("The reply ended without a result.")

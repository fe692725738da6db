"""Anthropic Messages API, inbound: streamed events (and whole JSON replies) parsed into
`app.llm.events`, and HTTP errors mapped from Anthropic's real bodies.

Public through `app.llm.wire.anthropic`, which is the module the client loads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import jiter

from app.llm.errors import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    ModelResponseFailed,
    OverloadedError,
    ProviderError,
    RateLimitError,
    error_from_http,
    looks_like_context_overflow,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import ThinkingBlock
from app.llm.response import FinishReason, Usage
from app.llm.wire._stream_shared import SignedThinking, StreamParserBase, count, started_index

__all__ = [
    "STOP_REASONS",
    "AnthropicStreamParser",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
]

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}
_WHY_NOT = {
    "pause_turn": "paused a long-running turn, which this app does not resume",
}
# Error `type`s in Anthropic bodies and `error` events, as our typed errors.
_ERROR_TYPES: dict[str, type[ProviderError]] = {
    "overloaded_error": OverloadedError,
    "rate_limit_error": RateLimitError,
    "authentication_error": AuthenticationError,
    "permission_error": AuthenticationError,
    "invalid_request_error": InvalidRequestError,
    "not_found_error": InvalidRequestError,
    "request_too_large": InvalidRequestError,
    "api_error": ModelResponseFailed,
    "timeout_error": ModelResponseFailed,
}


def parse_usage(raw: Mapping[str, Any]) -> Usage:
    """Anthropic usage: `input_tokens` leaves out the cached part (read and written)."""
    usage = Usage(
        input=count(raw.get("input_tokens")),
        output=count(raw.get("output_tokens")),
        cache_read=count(raw.get("cache_read_input_tokens")),
        cache_write=count(raw.get("cache_creation_input_tokens")),
    )
    if usage.input is not None and usage.output is not None:
        usage.total = (
            usage.input + usage.output + (usage.cache_read or 0) + (usage.cache_write or 0)
        )
    return usage


def _error(kind: str, message: str, *, label: str, model: str) -> ProviderError:
    """A typed error for an Anthropic error `type` seen inside a 200 stream."""
    message = message.rstrip(".") or "no details given"
    common: dict[str, Any] = {"provider": "anthropic", "code": kind or None}
    if kind == "overloaded_error":
        return OverloadedError(f"{label} is overloaded: {message}.", **common)
    if looks_like_context_overflow(message):
        return ContextOverflowError(
            f"The conversation is too long for {model}: {message}.", **common
        )
    cls = _ERROR_TYPES.get(kind, ModelResponseFailed)
    return cls(f"{label} reported an error during the reply: {message}.", **common)


def map_http_error(
    status: int,
    body: bytes | str,
    headers: Mapping[str, str],
    *,
    label: str,
    provider: str,
    model: str,
    base_url: str = "",
    secrets: Sequence[str | None] = (),
) -> ProviderError:
    """`{"type": "error", "error": {"type", "message"}}` with its status, in words."""
    error = error_from_http(
        status,
        body,
        headers,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        secrets=secrets,
    )
    kind = _error_type(body)
    if kind and error.code is None:
        error.code = kind
    # An overload is an overload whatever status a proxy put on it.
    if kind == "overloaded_error" and not isinstance(error, OverloadedError):
        return OverloadedError(
            error.message, provider=provider, status_code=status, retry_after=error.retry_after
        )
    return error


def _error_type(body: bytes | str) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


class _Block:
    """One Anthropic content block while it streams."""

    __slots__ = ("kind", "opened", "position", "signature")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.opened = False
        self.position = -1  # its index among the reply's blocks, once opened
        self.signature = ""


class AnthropicStreamParser(StreamParserBase):
    """Messages API stream events in, `ModelStreamEvent`s out (see `WireParser`)."""

    def __init__(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
    ) -> None:
        super().__init__(emitter, label=label, secrets=secrets)
        self._blocks: dict[int, _Block] = {}
        self._signed = SignedThinking()
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._stopped = False

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        if self.terminated or not data.strip():
            return []
        if data.strip() == "[DONE]":  # not Anthropic's, but some proxies add it
            return self.finish(done=True)
        try:
            payload = jiter.from_json(data.encode())
        except ValueError:
            return self._not_json(data)
        if isinstance(payload, dict) and "type" not in payload and event:
            payload["type"] = event
        return self.feed(payload)

    def feed(self, payload: Any) -> list[ModelStreamEvent]:
        """One decoded event object."""
        out: list[ModelStreamEvent] = []
        if self.terminated:
            return out
        if not isinstance(payload, dict):
            self._failed(out, "sent a stream event that is not an object.")
            return out
        kind = payload.get("type")
        try:
            if kind == "message_start":
                self._message_start(out, payload.get("message") or {})
            elif kind == "content_block_start":
                self._block_start(out, payload.get("index"), payload.get("content_block") or {})
            elif kind == "content_block_delta":
                self._block_delta(out, payload.get("index"), payload.get("delta") or {})
            elif kind == "content_block_stop":
                self._block_stop(out, payload.get("index"))
            elif kind == "message_delta":
                self._message_delta(out, payload)
            elif kind == "message_stop":
                self._stopped = True
                out += self.finish(done=True)
            elif kind == "error":
                error = payload.get("error") or {}
                message = redact(str(error.get("message") or ""), self._secrets)
                scope = self.assembler.emitter.scope
                self.assembler.fail(
                    out,
                    _error(
                        str(error.get("type") or ""), message, label=self._label, model=scope.model
                    ),
                )
            # `ping` and event types added later are ignored, as Anthropic asks.
        except ProviderError as exc:  # broken tool arguments
            self.assembler.fail(out, exc)
        return self._signed.apply(out)

    def _message_start(self, out: list[ModelStreamEvent], message: Mapping[str, Any]) -> None:
        asm = self.assembler
        asm.start(out, message.get("id"))
        if message.get("model"):
            asm.model = message["model"]
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})
            asm.usage(out, parse_usage(self._usage), False)

    def _open(self, out: list[ModelStreamEvent], block: _Block, piece: str = "") -> None:
        """Send `piece` to the neutral block, opening it first if needed (an empty piece
        opens a block with no text: a signed or redacted thinking block)."""
        start = len(out)
        if block.kind == "thinking":
            self.assembler.thinking(out, piece)
        else:
            self.assembler.text(out, piece)
        if not block.opened:
            block.opened = True
            block.position = started_index(out, start)

    def _block_start(self, out: list[ModelStreamEvent], index: Any, raw: Mapping[str, Any]) -> None:
        asm = self.assembler
        asm.start(out, None)
        kind = raw.get("type")
        if kind == "tool_use":
            block = self._blocks[index] = _Block("tool_use")
            arguments = raw.get("input")
            start = len(out)
            asm.tool_call(
                out,
                index,
                call_id=raw.get("id"),
                name=raw.get("name") or "",
                arguments=json.dumps(arguments) if arguments else None,
            )
            block.opened, block.position = True, started_index(out, start)
        elif kind in ("text", "thinking", "redacted_thinking"):
            block = self._blocks[index] = _Block("text" if kind == "text" else "thinking")
            # Whole replies carry their content in the start event; streams start empty.
            self._piece(out, block, raw.get("text") or raw.get("thinking") or "")
            block.signature = raw.get("signature") or ""
            if kind == "redacted_thinking":
                block.signature = raw.get("data") or ""
                self._open(out, block)
                self._signed.add(
                    block.position,
                    ThinkingBlock(
                        signature=block.signature, redacted=True, provider=self._provider
                    ),
                )
        # Server tools (web search, ...) run at Anthropic: their blocks are not ours to run.

    def _piece(self, out: list[ModelStreamEvent], block: _Block, piece: str) -> None:
        if piece:
            self._open(out, block, piece)

    def _block_delta(
        self, out: list[ModelStreamEvent], index: Any, delta: Mapping[str, Any]
    ) -> None:
        block = self._blocks.get(index)
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta" and block.kind == "text":
            self._piece(out, block, delta.get("text") or "")
        elif kind == "thinking_delta" and block.kind == "thinking":
            self._piece(out, block, delta.get("thinking") or "")
        elif kind == "signature_delta" and block.kind == "thinking":
            block.signature += delta.get("signature") or ""
        elif kind == "input_json_delta" and block.kind == "tool_use":
            # The first fragment is often "": the assembler only counts real text.
            self.assembler.tool_call(out, index, arguments=delta.get("partial_json") or "")

    def _block_stop(self, out: list[ModelStreamEvent], index: Any) -> None:
        block = self._blocks.get(index)
        if block is None:
            return
        if block.kind == "thinking" and block.signature and not block.opened:
            self._open(out, block)
        if block.kind == "thinking" and block.signature and block.position not in self._signed:
            self._signed.add(block.position, ThinkingBlock(signature=block.signature))
        # Blocks arrive one after another, so closing "every open block" closes this one.
        if block.opened:
            self.assembler.close_blocks(out)

    def _message_delta(self, out: list[ModelStreamEvent], payload: Mapping[str, Any]) -> None:
        delta = payload.get("delta") or {}
        if delta.get("stop_reason"):
            self._stop_reason = delta["stop_reason"]
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})
            self.assembler.usage(out, parse_usage(self._usage), True)

    def finish(self, *, done: bool = True) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        finish = STOP_REASONS.get(self._stop_reason or "")
        if finish is not None:
            metadata = {"stop_reason": self._stop_reason}
            asm.complete(out, finish, parse_usage(self._usage) if self._usage else None, metadata)
        elif (done or self._stopped) and self._stop_reason is not None:
            reason = _WHY_NOT.get(
                self._stop_reason, f"stopped for an unknown reason {self._stop_reason!r}"
            )
            self._failed(out, f"{reason}.", code=self._stop_reason)
        else:
            # A drop after `message_stop` is no drop: the reply had ended.
            self._ended_early(out, done=done or self._stopped)
        return self._signed.apply(out)


def new_parser(
    emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> AnthropicStreamParser:
    return AnthropicStreamParser(emitter, label=label, secrets=secrets)


def parse_response(
    payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> list[ModelStreamEvent]:
    """A whole `message` object, replayed as the events its stream would have had."""
    parser = AnthropicStreamParser(emitter, label=label, secrets=secrets)
    if not isinstance(payload, dict) or payload.get("type") == "error":
        return parser.feed(payload)
    if not isinstance(payload.get("content"), list):
        return parser.fail(
            ModelResponseFailed(
                f"{label} sent a reply that is not a message.", provider=emitter.scope.provider
            )
        )
    events = parser.feed({"type": "message_start", "message": payload})
    for index, block in enumerate(payload["content"]):
        events += parser.feed(
            {"type": "content_block_start", "index": index, "content_block": block}
        )
        events += parser.feed({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": payload.get("stop_reason")}
    events += parser.feed({"type": "message_delta", "delta": delta, "usage": payload.get("usage")})
    return events + parser.feed({"type": "message_stop"})

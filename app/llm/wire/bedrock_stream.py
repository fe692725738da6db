"""Amazon Bedrock's Converse API, inbound: ConverseStream events (cut from the binary
event stream by `aws_eventstream`) and whole Converse replies parsed into
`app.llm.events`, and HTTP errors and exception events mapped to typed errors.

Public through `app.llm.wire.bedrock`, which is the module the client loads.

A stream: `messageStart`, then per block (keyed by `contentBlockIndex`) an optional
`contentBlockStart` (tool calls only), `contentBlockDelta`s (`text`, `toolUse.input`
JSON pieces, `reasoningContent` text then its `signature`, or `redactedContent`),
`contentBlockStop`; then `messageStop` with the `stopReason`, and `metadata` with the
usage, after which the reply is complete.
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
    ProviderTimeoutError,
    RateLimitError,
    error_for_status,
    looks_like_context_overflow,
    parse_retry_after,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import ThinkingBlock
from app.llm.response import FinishReason, Usage
from app.llm.wire._stream_shared import SignedThinking, StreamParserBase, count, started_index

__all__ = [
    "STOP_REASONS",
    "BedrockStreamParser",
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
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}

# Exception types (an exception event's `:exception-type`, or an HTTP error's
# `x-amzn-ErrorType`, in either case), as our errors and the words that say what happened.
_EXCEPTIONS: dict[str, tuple[type[ProviderError], str]] = {
    "throttlingexception": (RateLimitError, "is limiting how fast requests may be sent"),
    "servicequotaexceededexception": (RateLimitError, "says the account's quota is used up"),
    "serviceunavailableexception": (OverloadedError, "is unavailable right now"),
    "modelnotreadyexception": (OverloadedError, "is still getting the model ready"),
    "internalserverexception": (ModelResponseFailed, "had an internal error"),
    "modelstreamerrorexception": (ModelResponseFailed, "says the model failed while answering"),
    "modelerrorexception": (ModelResponseFailed, "says the model failed while answering"),
    "modeltimeoutexception": (ProviderTimeoutError, "says the model took too long"),
    "validationexception": (InvalidRequestError, "refused the request"),
    "resourcenotfoundexception": (InvalidRequestError, "does not know this model"),
    "accessdeniedexception": (AuthenticationError, "refused access"),
    "unrecognizedclientexception": (AuthenticationError, "does not recognise the credentials"),
    "invalidsignatureexception": (AuthenticationError, "refused the request's signature"),
    "incompletesignatureexception": (AuthenticationError, "refused the request's signature"),
    "expiredtokenexception": (AuthenticationError, "says the AWS session token has expired"),
}
_RETRYABLE = frozenset(
    {"internalserverexception", "modelnotreadyexception", "serviceunavailableexception"}
)
_NOT_RETRYABLE = frozenset({"servicequotaexceededexception"})
_HINTS = {
    "accessdeniedexception": " Check that the credentials may call bedrock:InvokeModel and "
    "that the model is enabled in the Bedrock console for this region.",
    "expiredtokenexception": " Refresh the credentials (for SSO: aws sso login).",
}


def parse_usage(raw: Mapping[str, Any]) -> Usage:
    """Converse usage: `inputTokens` leaves out the cached part (read and written)."""
    return Usage(
        input=count(raw.get("inputTokens")),
        output=count(raw.get("outputTokens")),
        cache_read=count(raw.get("cacheReadInputTokens")),
        cache_write=count(raw.get("cacheWriteInputTokens")),
        total=count(raw.get("totalTokens")),
    )


def _message(payload: Any) -> str:
    if not isinstance(payload, dict):
        return ""
    text = payload.get("message") or payload.get("Message") or payload.get("originalMessage")
    return str(text or "")


def _exception(
    kind: str,
    message: str,
    *,
    label: str,
    provider: str,
    model: str,
    status: int | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an AWS exception type, in words (`message` redacted already)."""
    key = kind.lower()
    message = message.strip().rstrip(".") or "no details given"
    common: dict[str, Any] = {
        "provider": provider,
        "status_code": status,
        "code": kind or None,
        "retry_after": retry_after,
    }
    if key in _RETRYABLE:
        common["retryable"] = True
    elif key in _NOT_RETRYABLE:
        common["retryable"] = False
    where = f" (HTTP {status}, {kind})" if status else f" ({kind})" if kind else ""
    if looks_like_context_overflow(message):
        return ContextOverflowError(
            f"The conversation is too long for {model}{where}: {message}.", **common
        )
    cls, words = _EXCEPTIONS.get(key, (ModelResponseFailed, "reported an error"))
    return cls(f"{label} {words}{where}: {message}.{_HINTS.get(key, '')}", **common)


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
    """`{"message": ...}` with the exception type in `x-amzn-ErrorType`, in words."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    message = redact(_message(payload) or " ".join(text.split())[:300], secrets)
    lowered = {k.lower(): v for k, v in headers.items()}
    kind = lowered.get("x-amzn-errortype", "").split(":", 1)[0].strip()
    if not kind and isinstance(payload, dict):
        kind = str(payload.get("__type") or "").rsplit("#", 1)[-1]
    retry_after = parse_retry_after(headers)
    if kind.lower() in _EXCEPTIONS:
        return _exception(
            kind,
            message,
            label=label,
            provider=provider,
            model=model,
            status=status,
            retry_after=retry_after,
        )
    return error_for_status(
        status,
        message,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        code=kind or None,
        retry_after=retry_after,
    )


class _Block:
    __slots__ = ("kind", "position", "signature")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "text" | "thinking" | "tool_use"
        self.position = -1  # its index among the reply's blocks
        self.signature = ""


class BedrockStreamParser(StreamParserBase):
    """ConverseStream events in, `ModelStreamEvent`s out (see `WireParser`): `feed_sse`
    takes an event's name (`aws_eventstream.event_name`) and its JSON payload."""

    def __init__(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
    ) -> None:
        super().__init__(emitter, label=label, secrets=secrets)
        self._blocks: dict[Any, _Block] = {}
        self._signed = SignedThinking()
        self._usage: Usage | None = None
        self._stop_reason: str | None = None
        self._metadata: dict[str, Any] = {}

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        if self.terminated:
            return []
        try:
            payload = jiter.from_json(data.encode()) if data.strip() else {}
        except ValueError:
            return self._not_json(data)
        return self.feed(event, payload)

    def feed(self, event: str, payload: Any) -> list[ModelStreamEvent]:
        """One decoded event: its name and payload object."""
        out: list[ModelStreamEvent] = []
        if self.terminated:
            return out
        if not isinstance(payload, dict):
            self._failed(out, f"sent a {event} event that is not an object.")
            return out
        try:
            if event.startswith(("exception:", "error:")):
                self._exception_event(out, event.partition(":")[2], payload)
            elif event == "messageStart":
                self.assembler.start(out, None)
            elif event == "contentBlockStart":
                self._block_start(out, payload.get("contentBlockIndex"), payload.get("start"))
            elif event == "contentBlockDelta":
                self._block_delta(out, payload.get("contentBlockIndex"), payload.get("delta"))
            elif event == "contentBlockStop":
                self.assembler.close_blocks(out)  # blocks arrive one after another
            elif event == "messageStop":
                self.assembler.start(out, None)
                self._stop_reason = str(payload.get("stopReason") or "") or None
                fields = payload.get("additionalModelResponseFields")
                if fields:
                    self._metadata["additional_fields"] = fields
            elif event == "metadata":
                self._metadata_event(out, payload)
            # Event types added later are ignored, as the event-stream contract allows.
        except ProviderError as exc:  # broken tool arguments
            self.assembler.fail(out, exc)
        return self._signed.apply(out)

    def _exception_event(self, out: list[ModelStreamEvent], kind: str, payload: Any) -> None:
        scope = self.assembler.emitter.scope
        message = redact(_message(payload), self._secrets)
        error = _exception(
            kind, message, label=self._label, provider=scope.provider, model=scope.model
        )
        self.assembler.fail(out, error)

    def _block(self, index: Any, kind: str) -> _Block:
        block = self._blocks.get(index)
        if block is None or block.kind != kind:
            block = self._blocks[index] = _Block(kind)
        return block

    def _block_start(self, out: list[ModelStreamEvent], index: Any, start: Any) -> None:
        use = start.get("toolUse") if isinstance(start, dict) else None
        if not isinstance(use, dict):
            return
        self.assembler.start(out, None)
        block = self._block(index, "tool_use")
        at = len(out)
        self.assembler.tool_call(
            out, index, call_id=use.get("toolUseId"), name=use.get("name") or ""
        )
        block.position = started_index(out, at)

    def _open(self, out: list[ModelStreamEvent], block: _Block, piece: str) -> None:
        at = len(out)
        if block.kind == "thinking":
            self.assembler.thinking(out, piece)
        else:
            self.assembler.text(out, piece)
        if block.position < 0:
            block.position = started_index(out, at)

    def _block_delta(self, out: list[ModelStreamEvent], index: Any, delta: Any) -> None:
        if not isinstance(delta, dict):
            return
        self.assembler.start(out, None)
        if isinstance(delta.get("text"), str):
            if delta["text"]:
                self._open(out, self._block(index, "text"), delta["text"])
        elif isinstance(delta.get("toolUse"), dict):
            pieces = delta["toolUse"].get("input")
            if index not in self._blocks:  # a call without its start: open it anyway
                self._block_start(out, index, {"toolUse": {}})
            self.assembler.tool_call(out, index, arguments=pieces if pieces else None)
        elif isinstance(delta.get("reasoningContent"), dict):
            self._reasoning(out, self._block(index, "thinking"), delta["reasoningContent"])

    def _reasoning(self, out: list[ModelStreamEvent], block: _Block, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("text"), str) and delta["text"]:
            self._open(out, block, delta["text"])
        if isinstance(delta.get("signature"), str):
            if block.position < 0:
                self._open(out, block, "")  # a signature with no words before it
            block.signature += delta["signature"]
            self._signed.add(block.position, ThinkingBlock(signature=block.signature))
        if isinstance(delta.get("redactedContent"), str):
            self._open(out, block, "")
            signed = ThinkingBlock(
                signature=delta["redactedContent"], redacted=True, provider=self._provider
            )
            self._signed.add(block.position, signed)

    def _metadata_event(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self._usage = parse_usage(usage)
            self.assembler.usage(out, self._usage, True)
        metrics = payload.get("metrics")
        if isinstance(metrics, dict) and count(metrics.get("latencyMs")) is not None:
            self._metadata["latency_ms"] = metrics["latencyMs"]
        if self._stop_reason is not None:
            out += self.finish(done=True)

    def finish(self, *, done: bool = True) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        finish = STOP_REASONS.get(self._stop_reason or "")
        if finish is not None:
            # `messageStop` ends the reply: a drop before `metadata` loses only the usage.
            metadata = {"stop_reason": self._stop_reason, **self._metadata}
            asm.complete(out, finish, self._usage, metadata)
        elif self._stop_reason is not None:
            why = f"stopped the reply for an unknown reason {self._stop_reason!r}."
            self._failed(out, why, code=self._stop_reason)
        else:
            self._ended_early(out, done=done)
        return self._signed.apply(out)


def new_parser(
    emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> BedrockStreamParser:
    return BedrockStreamParser(emitter, label=label, secrets=secrets)


def _replay_block(parser: BedrockStreamParser, index: int, block: Any) -> list[ModelStreamEvent]:
    """One content block of a whole reply, as the stream events it would have had."""
    if not isinstance(block, dict):
        return []
    events: list[ModelStreamEvent] = []
    at = {"contentBlockIndex": index}
    if isinstance(block.get("text"), str):
        events += parser.feed("contentBlockDelta", {**at, "delta": {"text": block["text"]}})
    elif isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        start = {"toolUse": {"toolUseId": use.get("toolUseId"), "name": use.get("name")}}
        events += parser.feed("contentBlockStart", {**at, "start": start})
        arguments = json.dumps(use.get("input") or {})
        events += parser.feed(
            "contentBlockDelta", {**at, "delta": {"toolUse": {"input": arguments}}}
        )
    elif isinstance(block.get("reasoningContent"), dict):
        reasoning = block["reasoningContent"]
        inner = reasoning.get("reasoningText") or {}
        delta = {
            "text": inner.get("text") or "",
            "signature": inner.get("signature"),
            "redactedContent": reasoning.get("redactedContent"),
        }
        delta = {k: v for k, v in delta.items() if v}
        if delta:
            events += parser.feed("contentBlockDelta", {**at, "delta": {"reasoningContent": delta}})
    return events + parser.feed("contentBlockStop", at)


def parse_response(
    payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> list[ModelStreamEvent]:
    """A whole Converse reply, replayed as the events its stream would have had."""
    parser = BedrockStreamParser(emitter, label=label, secrets=secrets)
    output = payload.get("output") if isinstance(payload, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return parser.fail(
            ModelResponseFailed(
                f"{label} sent a reply that is not a Converse result.",
                provider=emitter.scope.provider,
            )
        )
    events = parser.feed("messageStart", {"role": "assistant"})
    for index, block in enumerate(message["content"]):
        events += _replay_block(parser, index, block)
    events += parser.feed("messageStop", {"stopReason": payload.get("stopReason")})
    return events + parser.feed("metadata", {"usage": payload.get("usage") or {}})

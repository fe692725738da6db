"""OpenAI Responses replies in: typed stream events (or a whole JSON body) turned into
`app.llm` events, and HTTP error bodies turned into typed errors.

Events are told apart by the `type` in their data (the SSE `event:` name is only a
fallback); types this parser does not know are ignored, as OpenAI asks clients to do.
A reasoning item with `encrypted_content` is kept as a `NativeBlock` in the finished
reply, at its place among the blocks, so the next request can replay it verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import jiter

from app.llm.errors import (
    ModelResponseFailed,
    ProviderError,
    RateLimitError,
    error_from_http,
    error_from_payload,
)
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import NativeBlock
from app.llm.response import FinishReason, Usage
from app.llm.wire._stream_shared import StreamParserBase, count

__all__ = [
    "INCOMPLETE_REASONS",
    "ResponsesStreamParser",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
]

WIRE_FORMAT = "openai_responses"

INCOMPLETE_REASONS: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def parse_usage(raw: Mapping[str, Any]) -> Usage:
    """Responses usage (`input_tokens`, `output_tokens`, their details); gaps stay None."""
    input_details = raw.get("input_tokens_details") or {}
    output_details = raw.get("output_tokens_details") or {}
    return Usage(
        input=count(raw.get("input_tokens")),
        output=count(raw.get("output_tokens")),
        cache_read=count(input_details.get("cached_tokens")),
        total=count(raw.get("total_tokens")),
        reasoning=count(output_details.get("reasoning_tokens")),
    )


# OpenAI's error bodies are the common `{"error": {"message", "type", "code"}}` shape,
# which `error_from_http` reads: a 429 `insufficient_quota` is never retried, a 400
# `context_length_exceeded` is a `ContextOverflowError`, `retry-after-ms` is honoured.
map_http_error = error_from_http


class ResponsesStreamParser(StreamParserBase):
    """Responses stream events in, `ModelStreamEvent`s out; never raises.

    Call `feed_sse(event, data)` per SSE event (or `feed(payload)` with the parsed
    data), then `finish(done=...)` when the body ends. After a terminal event every
    call returns nothing. Blocks are keyed by the provider's `output_index`.
    """

    # Event type -> the method that handles it; other types are ignored.
    _HANDLERS: ClassVar[dict[str, str]] = {
        "response.created": "_on_start",
        "response.in_progress": "_on_start",
        "response.queued": "_on_start",
        "response.output_item.added": "_on_item_added",
        "response.output_text.delta": "_on_text",
        "response.refusal.delta": "_on_text",
        "response.reasoning_summary_text.delta": "_on_summary",
        "response.reasoning_text.delta": "_on_reasoning_text",
        "response.function_call_arguments.delta": "_on_arguments",
        "response.function_call_arguments.done": "_on_arguments_done",
        "response.output_item.done": "_on_item_done",
        "response.completed": "_on_completed",
        "response.incomplete": "_on_completed",
        "response.failed": "_on_failed",
        "error": "_on_error",
    }

    def __init__(
        self, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
    ) -> None:
        super().__init__(emitter, label=label, secrets=secrets)
        self._keys: dict[str, int] = {}  # item id -> output_index
        self._seen: set[int] = set()  # output indices any event spoke of
        self._tools: set[int] = set()
        self._with_arguments: set[int] = set()
        self._with_text: set[int] = set()
        self._with_thinking: set[int] = set()
        self._thinking_part: tuple[int, object] | None = None  # the part thinking last came from
        self._blocks_started = 0
        self._native: list[tuple[int, dict[str, Any]]] = []  # (block position, reasoning item)

    # ------------------------------------------------------------ input ----

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        if self.terminated:
            return out
        data = data.strip()
        if not data or data == "[DONE]":
            return out
        try:
            payload = jiter.from_json(data.encode())
        except ValueError:
            return self._not_json(data)
        if isinstance(payload, dict) and not payload.get("type") and event:
            payload["type"] = event
        return self.feed(payload)

    def feed(self, payload: Any) -> list[ModelStreamEvent]:
        """One event's parsed data."""
        out: list[ModelStreamEvent] = []
        if self.terminated:
            return out
        if not isinstance(payload, dict):
            self._failed(out, "sent a stream event that is not a JSON object.")
            return out
        kind = payload.get("type")
        name = self._HANDLERS.get(kind) if isinstance(kind, str) else None
        if name is None:
            return out  # unknown event types are ignored, as the API documents
        try:
            getattr(self, name)(out, payload)
        except (AttributeError, KeyError, TypeError, ValueError):
            self._failed(out, f"sent a {kind} event in a shape this app does not understand.")
        self._blocks_started += sum(1 for e in out if e.kind == "block.started")
        return out

    def finish(self, *, done: bool = True) -> list[ModelStreamEvent]:
        """The body ended; `done=False` when the connection was cut short."""
        out: list[ModelStreamEvent] = []
        if not self.terminated:
            why = "ended the stream before the reply was complete."
            self._ended_early(out, done=done, incomplete=why)
        return out

    # ---------------------------------------------------------- helpers ----

    def _index(self, payload: Mapping[str, Any]) -> int:
        index = payload.get("output_index")
        if isinstance(index, int):
            return index
        item_id = payload.get("item_id")
        if isinstance(item_id, str) and item_id in self._keys:
            return self._keys[item_id]
        return -1

    def _begin(self, out: list[ModelStreamEvent]) -> None:
        if not self.assembler.started:
            self.assembler.start(out, None)

    def _text(self, out: list[ModelStreamEvent], index: int, piece: Any) -> None:
        self._seen.add(index)
        if isinstance(piece, str) and piece:
            self._begin(out)
            self.assembler.text(out, piece)
            self._with_text.add(index)
            self._thinking_part = None

    def _thinking(self, out: list[ModelStreamEvent], index: int, part: object, piece: Any) -> None:
        self._seen.add(index)
        if not isinstance(piece, str) or not piece:
            return
        self._begin(out)
        # Summary parts are paragraphs: keep them apart inside one thinking block.
        key = (index, part)
        if self._thinking_part is not None and self._thinking_part != key:
            piece = "\n\n" + piece
        self._thinking_part = key
        self.assembler.thinking(out, piece)
        self._with_thinking.add(index)

    def _tool(
        self,
        out: list[ModelStreamEvent],
        index: int,
        *,
        call_id: Any = None,
        name: Any = None,
        arguments: Any = None,
    ) -> None:
        self._seen.add(index)
        self._begin(out)
        if index not in self._tools:
            self._tools.add(index)
            self._thinking_part = None
            self.assembler.tool_call(
                out,
                index,
                call_id=call_id if isinstance(call_id, str) and call_id else None,
                name=name if isinstance(name, str) and name else None,
            )
        if isinstance(arguments, str) and arguments:
            self._with_arguments.add(index)
            self.assembler.tool_call(out, index, arguments=arguments)

    def _error(self, payload: Mapping[str, Any]) -> ProviderError:
        """The typed error for an `error` event (nested `{"error": {...}}` or flat) or a
        failed response's `error` object."""
        scope = self.assembler.emitter.scope
        error = error_from_payload(
            payload, label=self._label, provider=scope.provider, model=scope.model,
            secrets=self._secrets,
        )  # fmt: skip
        codes = {error.code or ""}
        inner = payload.get("error")
        if isinstance(inner, dict):
            codes.add(str(inner.get("type") or ""))
        if "insufficient_quota" in codes:
            error.retryable = False  # out of credit: trying again cannot help
        elif "rate_limit_exceeded" in codes and not isinstance(error, RateLimitError):
            error = RateLimitError(
                f"{self._label} is limiting how fast requests may be sent: {error.message}",
                provider=scope.provider,
                code=error.code,
            )
        return error

    # --------------------------------------------------------- handlers ----

    def _on_start(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        response = payload.get("response")
        if isinstance(response, dict):
            if not self.assembler.started:
                self.assembler.start(out, response.get("id"))
            if isinstance(response.get("model"), str) and response["model"]:
                self.assembler.model = response["model"]
        self._begin(out)

    def _on_item_added(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        index, item = self._index(payload), payload.get("item") or {}
        self._seen.add(index)
        if isinstance(item.get("id"), str):
            self._keys[item["id"]] = index
        if item.get("type") == "function_call":
            self._tool(
                out,
                index,
                call_id=item.get("call_id"),
                name=item.get("name"),
                arguments=item.get("arguments"),
            )

    def _on_text(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        self._text(out, self._index(payload), payload.get("delta"))

    def _on_summary(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        part = ("summary", payload.get("summary_index"))
        self._thinking(out, self._index(payload), part, payload.get("delta"))

    def _on_reasoning_text(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        part = ("content", payload.get("content_index"))
        self._thinking(out, self._index(payload), part, payload.get("delta"))

    def _on_arguments(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        self._tool(out, self._index(payload), arguments=payload.get("delta"))

    def _on_arguments_done(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        index = self._index(payload)
        if index not in self._with_arguments:  # a server that sends no deltas
            self._tool(out, index, name=payload.get("name"), arguments=payload.get("arguments"))

    def _on_item_done(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        index, item = self._index(payload), payload.get("item") or {}
        self._seen.add(index)
        kind = item.get("type")
        # Whatever was not streamed as deltas is taken from the finished item.
        if kind == "function_call":
            arguments = None if index in self._with_arguments else item.get("arguments")
            self._tool(
                out, index, call_id=item.get("call_id"), name=item.get("name"), arguments=arguments
            )
        elif kind == "message" and index not in self._with_text:
            for part in item.get("content") or ():
                if part.get("type") in ("output_text", "refusal"):
                    self._text(out, index, part.get("text") or part.get("refusal"))
        elif kind == "reasoning":
            if index not in self._with_thinking:
                parts = [("summary", n, p) for n, p in enumerate(item.get("summary") or ())]
                if not parts:
                    parts = [("content", n, p) for n, p in enumerate(item.get("content") or ())]
                for where, n, part in parts:
                    self._thinking(out, index, (where, n), part.get("text"))
            if item.get("encrypted_content"):
                started = self._blocks_started + sum(1 for e in out if e.kind == "block.started")
                self._native.append((started, item))

    def _on_completed(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        response = payload.get("response")
        if not isinstance(response, dict):
            response = {}
        self._begin(out)
        # A server that streams no items still lists them in the final response.
        for index, item in enumerate(response.get("output") or ()):
            if index not in self._seen and isinstance(item, dict):
                self._on_item_done(out, {"output_index": index, "item": item})
        status = response.get("status")
        if status is None:
            status = "incomplete" if payload["type"] == "response.incomplete" else "completed"
        usage_raw = response.get("usage")
        usage = parse_usage(usage_raw) if isinstance(usage_raw, dict) else None
        if usage is not None:
            self.assembler.usage(out, usage, True)
        finish: FinishReason | None
        raw: str | None = status
        if status == "completed":
            finish = "tool_use" if self._tools else "stop"
        elif status == "incomplete":
            raw = (response.get("incomplete_details") or {}).get("reason")
            finish = INCOMPLETE_REASONS.get(raw or "")
        elif status == "failed":
            self._on_failed(out, {"response": response})
            return
        else:
            finish = None
        if finish is None:
            self._failed(out, f"stopped the reply for an unknown reason {raw!r}.", code=raw)
            return
        metadata = {"status": status, "finish_reason_raw": raw}
        self.assembler.complete(out, finish, usage, metadata)
        self._add_native_blocks(out)

    def _add_native_blocks(self, out: list[ModelStreamEvent]) -> None:
        """Put each kept reasoning item into the finished reply where it came in the
        output, so a replay sends it just before the message or call it led to."""
        if not self._native or not out or out[-1].kind != "response.completed":
            return
        content = out[-1].response.content
        for shift, (position, item) in enumerate(self._native):
            content.insert(position + shift, NativeBlock(format=WIRE_FORMAT, data=item))

    def _on_failed(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        response = payload.get("response")
        if isinstance(response, dict) and isinstance(response.get("error"), dict):
            self.assembler.fail(out, self._error(response))
        else:
            self._failed(out, "reported that the reply failed, without saying why.")

    def _on_error(self, out: list[ModelStreamEvent], payload: dict[str, Any]) -> None:
        self.assembler.fail(out, self._error(payload))


def new_parser(
    emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
) -> ResponsesStreamParser:
    return ResponsesStreamParser(emitter, label=label, secrets=secrets)


def parse_response(
    payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
) -> list[ModelStreamEvent]:
    """A non-streamed Responses body (`output` array) as the events a stream would give,
    ending in one terminal event; anything else ends in `response.failed`."""
    parser = ResponsesStreamParser(emitter, label=label, secrets=secrets)
    provider = emitter.scope.provider
    if not isinstance(payload, dict):
        why = f"{label} answered with something that is not a JSON object."
        return parser.fail(ModelResponseFailed(why, provider=provider))
    output = payload.get("output")
    if not isinstance(output, list):
        if payload.get("error"):
            return parser.feed({"type": "error", **payload})
        why = f"{label} answered without the reply's output."
        return parser.fail(ModelResponseFailed(why, provider=provider))
    events = parser.feed({"type": "response.created", "response": payload})
    for index, item in enumerate(output):
        events += parser.feed(
            {"type": "response.output_item.done", "output_index": index, "item": item}
        )
    status = payload.get("status") or "completed"
    if status in ("completed", "incomplete", "failed"):
        events += parser.feed({"type": f"response.{status}", "response": payload})
    else:
        why = f"{label} answered before the reply was finished (status {status!r})."
        events += parser.fail(ModelResponseFailed(why, provider=provider, code=str(status)))
    return events + parser.finish(done=True)

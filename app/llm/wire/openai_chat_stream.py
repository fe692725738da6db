"""OpenAI Chat Completions, inbound: streamed chunks (and whole `chat.completion`
bodies) parsed into `app.llm.events`, and HTTP errors mapped.

Public through `app.llm.wire.openai_chat`; the in-process llama.cpp model feeds the
same chunk dicts to `ChatStreamParser`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import jiter

from app.llm.errors import ProviderError, error_from_http, error_from_payload
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.response import FinishReason, Usage
from app.llm.wire._stream_shared import StreamParserBase, count

__all__ = [
    "FINISH_REASONS",
    "ChatStreamParser",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
    "replay_completion",
]

# ----------------------------------------------------------------- errors ----


# Chat Completions servers answer errors with the common `{"error": {"message", "code",
# "type"}}` body (Ollama: `{"error": "text"}`), which `error_from_http` reads.
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
    return error_from_http(
        status,
        body,
        headers,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        secrets=secrets,
    )


# ----------------------------------------------------------------- stream ----

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Chat Completions usage; counts the provider left out stay None."""
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cache_read = count(prompt_details.get("cached_tokens"))
    if cache_read is None:
        cache_read = count(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    return Usage(
        input=count(raw.get("prompt_tokens")),
        output=count(raw.get("completion_tokens")),
        cache_read=cache_read,
        total=count(raw.get("total_tokens")),
        reasoning=count(completion_details.get("reasoning_tokens")),
    )


class ChatStreamParser(StreamParserBase):
    """Chat-completion chunks (dicts, or raw `data:` payloads) in, stream events out.

    Call `feed`/`feed_data` per chunk, then `finish()` at `[DONE]` or the end of the
    body. After a terminal event every call returns nothing.
    """

    def __init__(
        self,
        emitter: EventEmitter,
        *,
        label: str,
        secrets: Sequence[str | None] = (),
        model_from_chunks: bool = True,
    ) -> None:
        super().__init__(emitter, label=label, secrets=secrets)
        self._model_from_chunks = model_from_chunks
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._tool_ids: dict[str, int] = {}
        self._metadata: dict[str, Any] = {}

    def feed_sse(self, event: str, data: str) -> list[ModelStreamEvent]:
        """One SSE event; `[DONE]` ends the reply, keep-alive blanks are skipped."""
        if data == "[DONE]":
            return self.finish(done=True)
        if not data.strip():
            return []
        return self.feed_data(data)

    def feed_data(self, data: str | bytes) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        if self.assembler.terminated:
            return out
        try:
            chunk = jiter.from_json(data.encode() if isinstance(data, str) else data)
        except ValueError:
            return self._not_json(data)
        return self.feed(chunk)

    def feed(self, chunk: Any) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        if not isinstance(chunk, dict):
            self._failed(out, "sent a stream chunk that is not an object.")
            return out
        asm.start(out, chunk.get("id"))
        if self._model_from_chunks and chunk.get("model"):
            asm.model = chunk["model"]
        if chunk.get("error") or chunk.get("object") == "error":  # Mistral's own shape
            scope = asm.emitter.scope
            error = error_from_payload(
                chunk,
                label=self._label,
                provider=scope.provider,
                model=scope.model,
                secrets=self._secrets,
            )
            asm.fail(out, error)
            return out
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) == 0:
                self._choice(out, choice)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = parse_usage(usage)
            final = self._finish is not None or not chunk.get("choices")
            asm.usage(out, self._usage, final)
        if chunk.get("system_fingerprint"):
            self._metadata["system_fingerprint"] = chunk["system_fingerprint"]
        return out

    def _choice(self, out: list[ModelStreamEvent], choice: dict[str, Any]) -> None:
        asm = self.assembler
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            asm.thinking(out, reasoning)
        content = delta.get("content")
        if content and isinstance(content, str):
            asm.text(out, content)
        elif isinstance(content, list):
            self._content_parts(out, content)
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            asm.text(out, refusal)
        for call in delta.get("tool_calls") or ():
            self._tool_call(out, call)
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]

    def _content_parts(self, out: list[ModelStreamEvent], parts: list[Any]) -> None:
        """Content as a list of parts, as Mistral's reasoning models send it:
        `{"type": "text", "text"}` and `{"type": "thinking", "thinking": [text parts]}`."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
                self.assembler.text(out, part["text"])
            elif part.get("type") == "thinking":
                inner = part.get("thinking")
                pieces = inner if isinstance(inner, list) else [{"type": "text", "text": inner}]
                for piece in pieces:
                    text = piece.get("text") if isinstance(piece, dict) else None
                    if isinstance(text, str) and text:
                        self.assembler.thinking(out, text)

    def _tool_call(self, out: list[ModelStreamEvent], call: dict[str, Any]) -> None:
        index = call.get("index")
        call_id = call.get("id")
        if not isinstance(index, int):
            # Some servers leave out `index`: a new id starts a new call.
            if call_id and call_id not in self._tool_ids:
                index = len(self._tool_ids)
            else:
                index = self._tool_ids.get(call_id or "", max(self._tool_ids.values(), default=0))
        if call_id and call_id not in self._tool_ids:
            self._tool_ids[call_id] = index
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        self.assembler.tool_call(
            out, index, call_id=call_id, name=function.get("name"), arguments=arguments
        )

    def finish(self, *, done: bool = True) -> list[ModelStreamEvent]:
        """End of the stream: `done` when it ended normally (`[DONE]` or end of body)."""
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        finish = FINISH_REASONS.get(self._finish or "")
        if finish is not None:
            metadata = {"finish_reason_raw": self._finish, **self._metadata}
            asm.complete(out, finish, self._usage, metadata)
        elif done and self._finish is not None:
            why = f"stopped the reply for an unknown reason {self._finish!r}."
            self._failed(out, why, code=self._finish)
        else:
            self._ended_early(out, done=done)
        return out


def new_parser(
    emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> ChatStreamParser:
    return ChatStreamParser(emitter, label=label, secrets=secrets)


def parse_response(
    payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None]
) -> list[ModelStreamEvent]:
    """A non-streamed `chat.completion` body, replayed as one chunk through the parser."""
    return replay_completion(ChatStreamParser(emitter, label=label, secrets=secrets), payload)


def replay_completion(parser: ChatStreamParser, payload: Any) -> list[ModelStreamEvent]:
    """A whole `chat.completion` body fed to `parser` as the one chunk a stream of it
    would be (each message as a delta), then the end."""
    if not isinstance(payload, dict):
        return parser.feed(payload)
    chunk = {k: v for k, v in payload.items() if k != "choices"}
    choices = []
    for choice in payload.get("choices") or ():
        if not isinstance(choice, dict):
            continue
        delta = dict(choice.get("message") or {})
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            delta["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(calls) if isinstance(call, dict)
            ]
        choices.append({**choice, "delta": delta})
    chunk["choices"] = choices
    return parser.feed(chunk) + parser.finish(done=True)

"""OpenAI Chat Completions wire: requests out, streamed chunks in, HTTP errors mapped.

Also spoken by OpenRouter, DeepSeek, Ollama, llama.cpp and most local servers, and
the in-process llama.cpp model yields the same chunk dicts.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jiter

from app.llm.errors import (
    ModelResponseFailed,
    ProviderConnectionError,
    ProviderError,
    ValidationError,
    error_from_http,
    error_from_payload,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import (
    AudioBlock,
    FileBlock,
    ImageBlock,
    ImageFileRef,
    Msg,
    NativeBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.llm.request import CacheRetention, LLMRequest, ThinkingLevel
from app.llm.response import FinishReason, Usage
from app.llm.wire import StreamAssembler, read_base64

__all__ = [
    "FINISH_REASONS",
    "ChatStreamParser",
    "map_http_error",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

WIRE_FORMAT = "openai_chat"
_FILE_PROVIDERS = frozenset({"openai", "openrouter"})
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


# ---------------------------------------------------------------- request ----


def _read_data_url(source: ImageFileRef | AudioBlock | FileBlock, what: str) -> str:
    return f"data:{source.mime_type};base64,{read_base64(source, what)}"


def _image_parts(block: ImageBlock) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if block.name:
        parts.append({"type": "text", "text": f"[image {block.name}]"})
    url = _read_data_url(block.model, "image")
    parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _thinking_as_text(block: ThinkingBlock, provider: str) -> str | None:
    """Reasoning from another provider is passed on as plain text; our own is not replayed."""
    if block.redacted or not block.text or block.provider == provider:
        return None
    return block.text


def _user_parts(msg: Msg, provider: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.extend(_image_parts(block))
        elif isinstance(block, ThinkingBlock):
            text = _thinking_as_text(block, provider)
            if text:
                parts.append({"type": "text", "text": text})
        elif isinstance(block, AudioBlock):
            fmt = _AUDIO_FORMATS.get(block.mime_type)
            if fmt is None:
                raise ValidationError(
                    f"Chat Completions carries only WAV or MP3 audio, not {block.mime_type}."
                )
            data = _read_data_url(block, "audio file").partition(",")[2]
            parts.append({"type": "input_audio", "input_audio": {"data": data, "format": fmt}})
        elif isinstance(block, FileBlock):
            if provider not in _FILE_PROVIDERS or block.mime_type != "application/pdf":
                raise ValidationError(
                    f"This model's API cannot read the file {block.path.name} "
                    f"({block.mime_type}); only OpenAI and OpenRouter take PDF files."
                )
            name, data = block.name or block.path.name, _read_data_url(block, "file")
            parts.append({"type": "file", "file": {"filename": name, "file_data": data}})
        elif isinstance(block, NativeBlock):
            if block.format == WIRE_FORMAT:
                parts.append(block.data)
            else:
                logger.info(
                    "Leaving out a %s block the Chat Completions API cannot use", block.format
                )
        elif isinstance(block, ToolUseBlock):
            raise ValidationError("A tool call can only be in an assistant message.")
    return parts


def _content_value(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Plain text as a string (simple servers accept only that), else content parts."""
    if all(p.get("type") == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _assistant_message(msg: Msg, provider: str) -> dict[str, Any]:
    texts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    own_reasoning: list[str] = []
    extra: dict[str, Any] = {}
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            text = _thinking_as_text(block, provider)
            if text:
                texts.append(text)
            elif block.provider == provider and block.text:
                own_reasoning.append(block.text)
        elif isinstance(block, ToolUseBlock):
            tool_calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {
                        "name": block.name,
                        "arguments": json.dumps(block.input, ensure_ascii=False),
                    },
                }
            )
        elif isinstance(block, NativeBlock) and block.format == WIRE_FORMAT:
            if isinstance(block.data, dict):
                extra.update(block.data)
        elif isinstance(block, NativeBlock):
            logger.info("Leaving out a %s block the Chat Completions API cannot use", block.format)
        else:
            raise ValidationError(
                f"Chat Completions cannot carry a {block.kind} block in an assistant message."
            )
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
    if tool_calls:
        out["tool_calls"] = tool_calls
        # DeepSeek wants its reasoning back while a tool loop is still going.
        if provider == "deepseek" and own_reasoning:
            out["reasoning_content"] = "".join(own_reasoning)
    elif out["content"] is None:
        out["content"] = ""
    out.update(extra)
    return out


def _tool_message(result: ToolResultBlock) -> dict[str, Any]:
    text = result.text
    if result.is_error and not text.lower().startswith("error"):
        text = f"Error: {text}"
    images = result.images
    if images:
        names = ", ".join(i.name or f"#{n + 1}" for n, i in enumerate(images))
        text = f"{text}\n(The image {names} follows in the next message.)".lstrip()
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": text or "(no output)"}


def _messages(request: LLMRequest, provider: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    # Tool messages carry text only: their images follow in one user message after them.
    tool_images: list[ImageBlock] = []

    def flush_tool_images() -> None:
        if tool_images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": "Images returned by tools:"}]
            for image in tool_images:
                parts.extend(_image_parts(image))
            out.append({"role": "user", "content": parts})
            tool_images.clear()

    for msg in request.messages:
        results = msg.tool_results
        if results:
            for result in results:
                out.append(_tool_message(result))
                tool_images.extend(result.images)
            rest = [b for b in msg.blocks if not isinstance(b, ToolResultBlock)]
            if not rest:
                continue
            msg = msg.model_copy(update={"content": rest, "role": Role.USER})
        flush_tool_images()
        if msg.role == Role.SYSTEM:
            parts = _user_parts(msg, provider)
            if any(p.get("type") != "text" for p in parts):
                raise ValidationError("A system message can only hold text.")
            out.append({"role": "system", "content": _content_value(parts)})
        elif msg.role == Role.ASSISTANT:
            out.append(_assistant_message(msg, provider))
        else:
            out.append({"role": "user", "content": _content_value(_user_parts(msg, provider))})
    flush_tool_images()
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


def to_wire(request: LLMRequest, *, model: str, provider: str = "openai") -> dict[str, Any]:
    """The Chat Completions request body. Reads image files now; raises `ValidationError`."""
    body: dict[str, Any] = {"model": model, "messages": _messages(request, provider)}
    if request.tools:
        tools = []
        for tool in request.tools:
            function: dict[str, Any] = {"name": tool.name, "parameters": tool.input_schema}
            if tool.description:
                function["description"] = tool.description
            if tool.strict:
                function["strict"] = True
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
    if request.tool_choice is not None:
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.max_tokens is not None:
        # OpenAI's reasoning models refuse `max_tokens`; everyone else expects it.
        key = "max_completion_tokens" if provider == "openai" else "max_tokens"
        body[key] = request.max_tokens
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.thinking != ThinkingLevel.OFF:
        effort = "high" if request.thinking == ThinkingLevel.XHIGH else str(request.thinking)
        if provider == "openrouter":
            body["reasoning"] = {"effort": effort}
        elif provider in ("openai", "openai-compatible", "ollama"):
            body["reasoning_effort"] = effort
    if provider == "openai" and request.cache != CacheRetention.NONE and request.session_id:
        body["prompt_cache_key"] = request.session_id
        if request.cache == CacheRetention.LONG:
            body["prompt_cache_retention"] = "24h"
    if request.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    body.update(request.provider_options)
    return body


# ----------------------------------------------------------------- errors ----


# Chat Completions servers answer errors with the common `{"error": {"message", "code",
# "type"}}` body (Ollama: `{"error": "text"}`), which `error_from_http` reads.
map_http_error = error_from_http


# ----------------------------------------------------------------- stream ----

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Chat Completions usage; counts the provider left out stay None."""
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cache_read = _count(prompt_details.get("cached_tokens"))
    if cache_read is None:
        cache_read = _count(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    return Usage(
        input=_count(raw.get("prompt_tokens")),
        output=_count(raw.get("completion_tokens")),
        cache_read=cache_read,
        total=_count(raw.get("total_tokens")),
        reasoning=_count(completion_details.get("reasoning_tokens")),
    )


class ChatStreamParser:
    """Chat-completion chunks (dicts, or raw `data:` payloads) in, stream events out.

    Call `feed`/`feed_data` per chunk, then `finish()` at `[DONE]` or the end of the
    body. After a terminal event every call returns nothing.
    """

    def __init__(
        self,
        emitter: EventEmitter,
        *,
        label: str,
        secrets: tuple[str | None, ...] = (),
        model_from_chunks: bool = True,
    ) -> None:
        self.assembler = StreamAssembler(emitter)
        self._label = label
        self._secrets = secrets
        self._model_from_chunks = model_from_chunks
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._tool_ids: dict[str, int] = {}
        self._metadata: dict[str, Any] = {}

    @property
    def terminated(self) -> bool:
        return self.assembler.terminated

    def feed_data(self, data: str | bytes) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        if self.assembler.terminated:
            return out
        try:
            chunk = jiter.from_json(data.encode() if isinstance(data, str) else data)
        except ValueError:
            shown = redact(str(data)[:120], self._secrets)
            self.assembler.fail(
                out,
                ModelResponseFailed(
                    f"{self._label} sent stream data that is not JSON: {shown!r}",
                    provider=self.assembler.emitter.scope.provider,
                ),
            )
            return out
        return self.feed(chunk)

    def feed(self, chunk: Any) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        asm = self.assembler
        if asm.terminated:
            return out
        if not isinstance(chunk, dict):
            asm.fail(
                out,
                ModelResponseFailed(f"{self._label} sent a stream chunk that is not an object."),
            )
            return out
        asm.start(out, chunk.get("id"))
        if self._model_from_chunks and chunk.get("model"):
            asm.model = chunk["model"]
        if chunk.get("error"):
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
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            asm.text(out, refusal)
        for call in delta.get("tool_calls") or ():
            self._tool_call(out, call)
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]

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
        provider = asm.emitter.scope.provider
        finish = FINISH_REASONS.get(self._finish or "")
        if finish is not None:
            metadata = {"finish_reason_raw": self._finish, **self._metadata}
            asm.complete(out, finish, self._usage, metadata)
        elif not done:
            why = f"The connection to {self._label} closed before the reply finished."
            asm.fail(out, ProviderConnectionError(why, provider=provider))
        elif self._finish is not None:
            why = f"{self._label} stopped the reply for an unknown reason {self._finish!r}."
            asm.fail(out, ModelResponseFailed(why, provider=provider, code=self._finish))
        elif not asm.started:
            asm.fail(
                out, ModelResponseFailed(f"{self._label} sent an empty reply.", provider=provider)
            )
        else:
            why = f"{self._label} ended the reply without saying why it stopped."
            asm.fail(out, ModelResponseFailed(why, provider=provider))
        return out

    def fail(self, error: ProviderError) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        self.assembler.fail(out, error)
        return out

    def cancel(self, error: ProviderError | None = None) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        self.assembler.cancel(out, error)
        return out

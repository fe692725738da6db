"""OpenAI Chat Completions wire: requests out (this module), streamed chunks in and HTTP
errors mapped (`openai_chat_stream`, re-exported here so the module is a whole `Wire`).

Also spoken by OpenRouter, DeepSeek, Ollama, llama.cpp and most local servers, and
the in-process llama.cpp model yields the same chunk dicts.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from app.llm.catalogue import clamp_thinking_level
from app.llm.errors import ValidationError
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
from app.llm.transform import prepare_messages
from app.llm.wire import read_base64
from app.llm.wire.openai_chat_stream import (
    FINISH_REASONS,
    ChatStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)
from app.llm.wire.sse import SSE_FRAMING

__all__ = [
    "FINISH_REASONS",
    "FRAMING",
    "NAME",
    "ChatStreamParser",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "openai_chat"
FRAMING = SSE_FRAMING
WIRE_FORMAT = NAME
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


def _user_parts(msg: Msg, provider: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.extend(_image_parts(block))
        elif isinstance(block, ThinkingBlock):
            continue  # the provider's own reasoning is not replayed (another's is text now)
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
            if block.text:
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
    content = text or "(no output)"
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}


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

    for msg in prepare_messages(request.messages, wire=NAME, provider=provider):
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
    level = request.thinking
    if provider in ("openai", "openrouter"):
        level = clamp_thinking_level(model, level)  # never sent to a model that refuses it
    if level != ThinkingLevel.OFF:
        effort = "high" if level == ThinkingLevel.XHIGH and provider != "openai" else str(level)
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


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    return f"{base_url.rstrip('/')}/chat/completions"


def headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}

"""Anthropic Messages API wire: neutral requests out (this module), streamed events and
errors in (`anthropic_stream`, re-exported here so the module is a whole `Wire`).

Rules the API imposes: `system` is a top-level parameter; a user message answers every
tool call of the assistant message before it, in one message, results first (the calls
are paired and their ids made valid in `app.llm.transform`); thinking blocks go back
with their signatures untouched.
"""

from __future__ import annotations

import logging
from typing import Any

from app.llm.catalogue import clamp_thinking_level, model_info
from app.llm.errors import ValidationError
from app.llm.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
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
from app.llm.wire.anthropic_stream import (
    STOP_REASONS,
    AnthropicStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)
from app.llm.wire.sse import SSE_FRAMING

__all__ = [
    "API_VERSION",
    "FRAMING",
    "NAME",
    "STOP_REASONS",
    "AnthropicStreamParser",
    "apply_thinking",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "anthropic"
FRAMING = SSE_FRAMING
API_VERSION = "2023-06-01"
LABEL = "Anthropic"
DEFAULT_MAX_TOKENS = 4096
MIN_THINKING_BUDGET = 1024  # the API's floor for `budget_tokens`
THINKING_BUDGETS = {
    ThinkingLevel.MINIMAL: 1024,
    ThinkingLevel.LOW: 2048,
    ThinkingLevel.MEDIUM: 8192,
    ThinkingLevel.HIGH: 16384,
    ThinkingLevel.XHIGH: 32768,
}
# Adaptive-thinking models (4.6 on) take an effort word instead of a budget.
THINKING_EFFORTS = {
    ThinkingLevel.MINIMAL: "low",
    ThinkingLevel.LOW: "low",
    ThinkingLevel.MEDIUM: "medium",
    ThinkingLevel.HIGH: "high",
    ThinkingLevel.XHIGH: "max",
}
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    return f"{base_url.rstrip('/')}/messages"


def headers(api_key: str | None) -> dict[str, str]:
    out = {"anthropic-version": API_VERSION}
    if api_key:
        out["x-api-key"] = api_key
    return out


def _cannot(block: ContentBlock, where: str, hint: str = "") -> ValidationError:
    return ValidationError(
        f"Anthropic cannot take a {block.kind} block {where}.{hint}", provider=NAME
    )


def _image(block: ImageBlock, where: str) -> list[dict[str, Any]]:
    ref = block.model
    if ref.mime_type not in _IMAGE_TYPES:
        raise _cannot(block, where, f" Its type {ref.mime_type} is not JPEG, PNG, GIF or WebP.")
    parts: list[dict[str, Any]] = []
    if block.name:
        parts.append({"type": "text", "text": f"[image {block.name}]"})
    source = {"type": "base64", "media_type": ref.mime_type, "data": read_base64(ref, "image")}
    parts.append({"type": "image", "source": source})
    return parts


def _document(block: FileBlock) -> dict[str, Any]:
    if block.mime_type == "application/pdf":
        data = read_base64(block, "file")
        source = {"type": "base64", "media_type": "application/pdf", "data": data}
    elif block.mime_type == "text/plain":
        try:
            text = block.path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ValidationError(
                f"The file {block.path} cannot be read ({exc.strerror or exc}), "
                "so it cannot be sent to the model.",
                provider=NAME,
            ) from None
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        raise _cannot(
            block, "in a message", f" Only PDF and plain text files, not {block.mime_type}."
        )
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.name:
        out["title"] = block.name
    return out


def _thinking(block: ThinkingBlock) -> dict[str, Any] | None:
    """Signed thinking goes back verbatim; without a signature the API refuses it as
    thinking, so its words go as text. (Another provider's reasoning is text already.)"""
    if block.redacted and block.signature:
        return {"type": "redacted_thinking", "data": block.signature}
    if block.signature:
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    return {"type": "text", "text": block.text} if block.text else None


def _tool_result(result: ToolResultBlock) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for inner in result.content:
        if isinstance(inner, TextBlock):
            if inner.text:
                parts.append({"type": "text", "text": inner.text})
        else:
            parts.extend(_image(inner, "in a tool result"))
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_use_id}
    if parts and all(p["type"] == "text" for p in parts):
        out["content"] = "\n".join(p["text"] for p in parts)
    elif parts:
        out["content"] = parts
    elif result.is_error:
        out["content"] = "Error"
    if result.is_error:
        out["is_error"] = True
    return out


def _user_content(msg: Msg) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []  # first, as the API wants them
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.extend(_image(block, "in a user message"))
        elif isinstance(block, ToolResultBlock):
            results.append(_tool_result(block))
        elif isinstance(block, FileBlock):
            parts.append(_document(block))
        elif isinstance(block, ThinkingBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, NativeBlock):
            if block.format == NAME:
                parts.append(block.data)
            else:
                logger.info("Leaving out a %s block the Anthropic API cannot use", block.format)
        elif isinstance(block, AudioBlock):
            raise _cannot(block, "(audio input)", " Use a speech-to-text step first.")
        else:
            raise _cannot(block, "in a user message")
    return results + parts


def _assistant_content(msg: Msg) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            part = _thinking(block)
            if part is not None:
                parts.append(part)
        elif isinstance(block, ToolUseBlock):
            parts.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        elif isinstance(block, NativeBlock):
            if block.format == NAME:
                parts.append(block.data)
            else:
                logger.info("Leaving out a %s block the Anthropic API cannot use", block.format)
        else:
            raise _cannot(block, "in an assistant message")
    return parts


def _messages(request: LLMRequest, provider: str) -> tuple[list[str], list[dict[str, Any]]]:
    """(system texts, messages): consecutive messages of one side merged into one."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for msg in prepare_messages(request.messages, wire=NAME, provider=provider):
        if msg.role == Role.SYSTEM:
            for block in msg.blocks:
                if not isinstance(block, TextBlock):
                    raise _cannot(block, "in the system prompt", " It holds text only.")
            if msg.text:
                system.append(msg.text)
            continue
        if msg.role == Role.ASSISTANT:
            role, content = "assistant", _assistant_content(msg)
        else:
            role, content = "user", _user_content(msg)
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return system, out


def _cache_control(retention: CacheRetention) -> dict[str, str] | None:
    if retention == CacheRetention.SHORT:
        return {"type": "ephemeral"}
    if retention == CacheRetention.LONG:
        return {"type": "ephemeral", "ttl": "1h"}
    return None


def _mark_cache(system: list[str], messages: list[dict[str, Any]], cache: CacheRetention) -> Any:
    """Breakpoints on the system prompt and the last user message; returns `system`."""
    control = _cache_control(cache)
    if control is None:
        return "\n\n".join(system) if system else None
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in system]
    if blocks:
        blocks[-1]["cache_control"] = control
    for message in reversed(messages):
        if message["role"] == "user" and message["content"]:
            last = message["content"][-1]
            if last.get("type") in ("text", "image", "tool_result", "document"):
                message["content"][-1] = {**last, "cache_control": control}
            break
    return blocks or None


def _tool_choice(choice: Any) -> dict[str, Any]:
    if isinstance(choice, dict):
        return {"type": "tool", "name": choice["name"]}
    return {"type": {"required": "any"}.get(choice, choice)}


def apply_thinking(body: dict[str, Any], request: LLMRequest, model: str) -> None:
    """The thinking parameter for the clamped level, and room for it in `max_tokens`
    (`body` holds `max_tokens` and maybe `temperature`/`top_p`; Bedrock's Claude models
    take the same fields)."""
    info = model_info(NAME, model)
    level = clamp_thinking_level(model, request.thinking)
    forced = isinstance(request.tool_choice, dict) or request.tool_choice == "required"
    if level == ThinkingLevel.OFF or (forced and request.tools):
        return  # the API refuses thinking together with a forced tool call
    body.pop("temperature", None)  # thinking runs at the default temperature only
    if body.get("top_p", 1.0) < 0.95:
        body.pop("top_p")
    budget = THINKING_BUDGETS[level]
    answer = request.max_tokens or DEFAULT_MAX_TOKENS
    total = min(answer + budget, info.max_output)
    body["max_tokens"] = max(body["max_tokens"], total)
    if info.thinking_style == "effort":
        body["thinking"] = {"type": "adaptive"}
        body["output_config"] = {"effort": THINKING_EFFORTS[level]}
        return
    # `budget_tokens` must be at least 1024 and below `max_tokens`, leaving room to answer.
    budget = max(MIN_THINKING_BUDGET, min(budget, total - MIN_THINKING_BUDGET))
    body["max_tokens"] = max(body["max_tokens"], budget + MIN_THINKING_BUDGET)
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}


def to_wire(request: LLMRequest, *, model: str, provider: str = NAME) -> dict[str, Any]:
    """The Messages API body. Reads image and document files now; raises `ValidationError`."""
    system, messages = _messages(request, provider)
    max_tokens = request.max_tokens or min(DEFAULT_MAX_TOKENS, model_info(NAME, model).max_output)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    system_value = _mark_cache(system, messages, request.cache)
    if system_value:
        body["system"] = system_value
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            if t.description
            else {"name": t.name, "input_schema": t.input_schema}
            for t in request.tools
        ]
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.response_format is not None and request.response_format.get("type") != "text":
        raise ValidationError(
            "Anthropic has no response_format; describe the format in the prompt or ask "
            "for it through a tool.",
            provider=NAME,
        )
    apply_thinking(body, request, model)
    if request.stream:
        body["stream"] = True
    body.update(request.provider_options)
    return body

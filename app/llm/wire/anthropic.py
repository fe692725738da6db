"""Anthropic Messages API wire: neutral requests out (this module), streamed events and
errors in (`anthropic_stream`, re-exported here so the module is a whole `Wire`).

Rules the API imposes: `system` is a top-level parameter; a user message answers every
tool call of the assistant message before it, in one message, results first; tool-call
ids match `^[a-zA-Z0-9_-]+$`; thinking blocks go back with their signatures untouched.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any

from app.llm.catalogue import model_info
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
from app.llm.request import CacheRetention, LLMRequest, ThinkingLevel, clamp_thinking_level
from app.llm.wire import read_base64
from app.llm.wire.anthropic_stream import (
    STOP_REASONS,
    AnthropicStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)

__all__ = [
    "API_VERSION",
    "NAME",
    "STOP_REASONS",
    "AnthropicStreamParser",
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
MISSING_RESULT = "No result: the tool call was interrupted before it finished."
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_ID = 64


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


class _ToolIds:
    """Tool-call ids in the form Anthropic accepts, the same for a call and its result."""

    def __init__(self) -> None:
        self._map: dict[str, str] = {}
        self._used: set[str] = set()

    def __call__(self, original: str) -> str:
        known = self._map.get(original)
        if known is not None:
            return known
        clean = _ID_CHARS.sub("_", original)[:_MAX_ID] or "toolu"
        if clean != original or clean in self._used:
            digest = hashlib.sha1(original.encode()).hexdigest()[:8]
            clean = f"{clean[: _MAX_ID - 9]}_{digest}"
        self._map[original] = clean
        self._used.add(clean)
        return clean


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


def _thinking(block: ThinkingBlock, provider: str) -> dict[str, Any] | None:
    """Our own signed thinking goes back verbatim; anyone else's is plain text."""
    own = block.provider in (None, NAME, provider)
    if own and block.redacted and block.signature:
        return {"type": "redacted_thinking", "data": block.signature}
    if own and block.signature:
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    return {"type": "text", "text": block.text} if block.text else None


def _tool_result(result: ToolResultBlock, ids: _ToolIds) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for inner in result.content:
        if isinstance(inner, TextBlock):
            if inner.text:
                parts.append({"type": "text", "text": inner.text})
        else:
            parts.extend(_image(inner, "in a tool result"))
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids(result.tool_use_id)}
    if parts and all(p["type"] == "text" for p in parts):
        out["content"] = "\n".join(p["text"] for p in parts)
    elif parts:
        out["content"] = parts
    elif result.is_error:
        out["content"] = "Error"
    if result.is_error:
        out["is_error"] = True
    return out


def _user_content(msg: Msg, provider: str, ids: _ToolIds) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.extend(_image(block, "in a user message"))
        elif isinstance(block, ToolResultBlock):
            parts.append(_tool_result(block, ids))
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
    return parts


def _assistant_content(msg: Msg, provider: str, ids: _ToolIds) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            part = _thinking(block, provider)
            if part is not None:
                parts.append(part)
        elif isinstance(block, ToolUseBlock):
            parts.append(
                {"type": "tool_use", "id": ids(block.id), "name": block.name, "input": block.input}
            )
        elif isinstance(block, NativeBlock):
            if block.format == NAME:
                parts.append(block.data)
            else:
                logger.info("Leaving out a %s block the Anthropic API cannot use", block.format)
        else:
            raise _cannot(block, "in an assistant message")
    return parts


def _call_ids(message: dict[str, Any]) -> list[str]:
    if message["role"] != "assistant":
        return []
    return [p["id"] for p in message["content"] if p.get("type") == "tool_use"]


def _answer_every_call(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each user message starts with the results for the calls just before it; a call
    left without a result gets an error result, and a result whose call is not just
    before it becomes plain text (the API refuses both)."""
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if message["role"] == "user":
            calls = set(_call_ids(out[-1])) if out else set()
            results, rest = [], []
            for part in message["content"]:
                if part.get("type") != "tool_result":
                    rest.append(part)
                elif part["tool_use_id"] in calls:
                    results.append(part)
                else:
                    text = part.get("content") if isinstance(part.get("content"), str) else ""
                    rest.append({"type": "text", "text": f"[tool result] {text}".strip()})
            message = {"role": "user", "content": results + rest}
        out.append(message)
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered: set[str] = set()
        if following is not None and following["role"] == "user":
            answered = {p.get("tool_use_id", "") for p in following["content"]}
        missing = [
            {"type": "tool_result", "tool_use_id": c, "content": MISSING_RESULT, "is_error": True}
            for c in _call_ids(message)
            if c not in answered
        ]
        if missing and following is not None and following["role"] == "user":
            following["content"] = missing + following["content"]
        elif missing:
            out.append({"role": "user", "content": missing})
    return out


def _messages(request: LLMRequest, provider: str) -> tuple[list[str], list[dict[str, Any]]]:
    """(system texts, messages): consecutive messages of one side merged into one."""
    ids = _ToolIds()
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for msg in request.messages:
        if msg.role == Role.SYSTEM:
            for block in msg.blocks:
                if not isinstance(block, TextBlock):
                    raise _cannot(block, "in the system prompt", " It holds text only.")
            if msg.text:
                system.append(msg.text)
            continue
        if msg.role == Role.ASSISTANT:
            role, content = "assistant", _assistant_content(msg, provider, ids)
        else:
            role, content = "user", _user_content(msg, provider, ids)
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return system, _answer_every_call(out)


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


def _apply_thinking(body: dict[str, Any], request: LLMRequest, model: str) -> None:
    """The thinking parameter for the clamped level, and room for it in `max_tokens`."""
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
    _apply_thinking(body, request, model)
    if request.stream:
        body["stream"] = True
    body.update(request.provider_options)
    return body

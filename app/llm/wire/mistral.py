"""Mistral's chat-completions API: Chat Completions (`openai_chat` builds the body and
parses the stream) with Mistral's differences handled here, where they bite.

- Tool-call ids must be exactly nine letters and digits: that is one rule in
  `app.llm.transform.PROVIDER_CALL_ID_RULES`, which every wire's messages pass, so
  calls and their results keep matching; the ids Mistral sends back already fit.
- A required tool is `tool_choice: "any"`; tool messages name their tool.
- `stream_options` is refused (usage comes in the last chunk anyway).
- A conversation that ends with an assistant message continues it (`prefix: true`).
- Reasoning arrives as `thinking` content parts (read by the chat parser).
- Errors come as `{"object": "error", "message", "type", "code"}`, where `message` may be
  a validation report (`{"detail": [{"loc", "msg"}]}`), and sometimes as a bare
  `{"detail": ...}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from app.llm.catalogue import model_info
from app.llm.errors import (
    OverloadedError,
    ProviderError,
    error_for_status,
    parse_retry_after,
    redact,
)
from app.llm.request import LLMRequest, ThinkingLevel
from app.llm.wire import openai_chat
from app.llm.wire.openai_chat_stream import new_parser, parse_response

__all__ = [
    "FRAMING",
    "NAME",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "to_wire",
]

NAME = "mistral"
# 429 bodies with these types mean Mistral has no room now, not that we sent too much.
_CAPACITY = frozenset({"service_tier_capacity_exceeded", "capacity_exceeded"})

FRAMING = openai_chat.FRAMING
endpoint = openai_chat.endpoint
headers = openai_chat.headers


def _tool_names(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {
        call["id"]: call["function"]["name"]
        for message in messages
        for call in message.get("tool_calls") or ()
    }


def to_wire(request: LLMRequest, *, model: str, provider: str = NAME) -> dict[str, Any]:
    """The chat-completions body Mistral accepts. Raises `ValidationError`."""
    body = openai_chat.to_wire(request, model=model, provider=provider)
    if "stream_options" not in request.provider_options:
        body.pop("stream_options", None)
    if body.get("tool_choice") == "required":
        body["tool_choice"] = "any"
    messages: list[dict[str, Any]] = body["messages"]
    names = _tool_names(messages)
    for message in messages:
        if message["role"] == "tool" and message.get("tool_call_id") in names:
            message.setdefault("name", names[message["tool_call_id"]])
    if messages and messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls"):
        messages[-1]["prefix"] = True
    level = model_info(provider, model).clamp(request.thinking)
    if level != ThinkingLevel.OFF and model_info(provider, model).thinking_style == "effort":
        body.setdefault("reasoning_effort", "high")  # the one level Mistral names
    return body


def _detail_text(detail: Any) -> str:
    """A validation report (`[{"loc": [...], "msg": ...}]`) in one line."""
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, dict):
                where = ".".join(str(p) for p in (item.get("loc") or ())[1:] if p != "body")
                msg = str(item.get("msg") or "").strip()
                parts.append(f"{where}: {msg}" if where else msg)
        return "; ".join(p for p in parts if p)
    return "" if detail is None else str(detail)


def _fields(body: bytes | str) -> tuple[str, str | None, str | None]:
    """(message, code, type) from Mistral's error bodies (or a proxy's text)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        payload = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300], None, None
    if not isinstance(payload, dict):
        return str(payload)[:300], None, None
    error = payload.get("error")
    inner: dict[str, Any] = error if isinstance(error, dict) else payload
    message: Any = inner.get("message")
    if isinstance(message, dict):
        message = _detail_text(message.get("detail")) or json.dumps(message)[:300]
    if not message:
        message = _detail_text(inner.get("detail"))
    code, kind = inner.get("code"), inner.get("type")
    return (
        str(message or ""),
        None if code is None else str(code),
        None if kind is None else str(kind),
    )


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
    """Mistral's error bodies with their status, in words and redacted."""
    message, code, kind = _fields(body)
    message = redact(message, secrets).strip()
    retry_after = parse_retry_after(headers)
    if status == 429 and kind in _CAPACITY:
        return OverloadedError(
            f"{label} has no capacity for {model} right now (HTTP 429): {message}",
            provider=provider,
            status_code=status,
            code=code or kind,
            retry_after=retry_after,
        )
    return error_for_status(
        status,
        message,
        label=label,
        provider=provider,
        model=model,
        base_url=base_url,
        code=code or kind,
        kind=kind,
        retry_after=retry_after,
    )

"""Google Gemini API wire (`generateContent`, `streamGenerateContent?alt=sse`): neutral
requests as `contents`/`parts` bodies. The replies are read in `gemini_stream`, error
bodies in `gemini_errors`, schemas cleaned in `gemini_schema`; this module is the face
the HTTP client drives.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from app.llm.catalogue import model_info
from app.llm.errors import ValidationError
from app.llm.events import EventEmitter, ModelStreamEvent
from app.llm.messages import (
    AudioBlock,
    ContentBlock,
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
from app.llm.request import LLMRequest, ThinkingLevel
from app.llm.transform import prepare_messages
from app.llm.wire import read_base64
from app.llm.wire.gemini_errors import error_from_body, map_http_error
from app.llm.wire.gemini_schema import clean_schema
from app.llm.wire.gemini_stream import GENERATED_ID_PREFIX, GeminiStreamParser
from app.llm.wire.sse import SSE_FRAMING

__all__ = [
    "FRAMING",
    "GENERATED_ID_PREFIX",
    "NAME",
    "SKIP_SIGNATURE",
    "GeminiStreamParser",
    "clean_schema",
    "endpoint",
    "error_from_body",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "thinking_config",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "gemini"
FRAMING = SSE_FRAMING
WIRE_FORMAT = "gemini"
# Gemini 3 refuses a function call without a signature in the current turn; Google's
# documented stand-in for calls that did not come from Gemini (other models, edits).
SKIP_SIGNATURE = "skip_thought_signature_validator"
_INLINE_LIMIT = 20 * 1024 * 1024  # Gemini's limit for a whole request with inline data
_INLINE_TYPES = frozenset({"application/pdf", "text/plain"})
_INLINE_FAMILIES = ("audio/", "image/", "video/")


# ------------------------------------------------------------ the module face ----


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    """`.../models/<model>:streamGenerateContent?alt=sse`, or `:generateContent`."""
    name = model.strip().removeprefix("models/")
    path = name if name.startswith("tunedModels/") else f"models/{name}"
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"{base_url.rstrip('/')}/{quote(path, safe='/-._~')}:{method}"


def headers(api_key: str | None) -> dict[str, str]:
    """The key goes in `x-goog-api-key`, never in the URL (URLs end up in logs)."""
    return {"x-goog-api-key": api_key} if api_key else {}


def new_parser(
    emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
) -> GeminiStreamParser:
    return GeminiStreamParser(emitter, label=label, secrets=secrets)


def parse_response(
    payload: Any, emitter: EventEmitter, *, label: str, secrets: Sequence[str | None] = ()
) -> list[ModelStreamEvent]:
    """A whole `generateContent` body: the events its stream would have given."""
    parser = GeminiStreamParser(emitter, label=label, secrets=secrets)
    return parser.feed(payload) + parser.finish(done=True)


# ------------------------------------------------------------------ content ----


def _unsupported(block: ContentBlock, provider: str, why: str) -> ValidationError:
    return ValidationError(
        f"The {provider} provider (Gemini API) cannot take a {block.kind} block {why}.",
        provider=provider,
    )


def _inline(source: ImageFileRef | AudioBlock | FileBlock, what: str) -> dict[str, Any]:
    try:
        size = source.path.stat().st_size
    except OSError:
        size = 0  # read_base64 says in words that the file is gone
    if size > _INLINE_LIMIT:
        raise ValidationError(
            f"The {what} {source.path.name} is {size // (1024 * 1024)} MB; Gemini takes at "
            "most 20 MB of inline data per request."
        )
    return {"inlineData": {"mimeType": source.mime_type, "data": read_base64(source, what)}}


def _image_parts(block: ImageBlock, label: str | None = None) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if label or block.name:
        parts.append({"text": label or f"[image {block.name}]"})
    parts.append(_inline(block.model, "image"))
    return parts


def _media_part(block: AudioBlock | FileBlock, provider: str) -> dict[str, Any]:
    mime = block.mime_type.lower()
    name = block.name if isinstance(block, FileBlock) and block.name else block.path.name
    if isinstance(block, AudioBlock):
        accepted = mime.startswith("audio/")
    else:
        accepted = mime in _INLINE_TYPES or mime.startswith(_INLINE_FAMILIES)
    if not accepted:
        raise _unsupported(
            block,
            provider,
            f"for {name} ({block.mime_type}): Gemini reads audio, images, video, PDF and "
            "plain text",
        )
    return _inline(block, "audio file" if isinstance(block, AudioBlock) else "file")


def _native_parts(block: NativeBlock) -> list[dict[str, Any]]:
    if block.format != WIRE_FORMAT:
        logger.info("Leaving out a %s block the Gemini API cannot use", block.format)
        return []
    data = block.data if isinstance(block.data, list) else [block.data]
    return [part for part in data if isinstance(part, dict)]


def _user_parts(blocks: list[ContentBlock], provider: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"text": block.text})
        elif isinstance(block, ImageBlock):
            parts += _image_parts(block)
        elif isinstance(block, AudioBlock | FileBlock):
            parts.append(_media_part(block, provider))
        elif isinstance(block, ThinkingBlock):
            if block.text:
                parts.append({"text": block.text})
        elif isinstance(block, NativeBlock):
            parts += _native_parts(block)
        elif isinstance(block, ToolUseBlock):
            raise _unsupported(block, provider, "in a user message (a call is the model's)")
        else:
            raise _unsupported(block, provider, "in a user message")
    return parts


def _sends_id(call: ToolUseBlock, msg: Msg, provider: str) -> bool:
    """Only ids Gemini gave (not ours, not another provider's) go back on the wire."""
    if call.id.startswith(GENERATED_ID_PREFIX):
        return False
    return msg.metadata.get("provider", provider) == provider


def _model_parts(
    msg: Msg, provider: str, *, gemini3: bool, sent_ids: set[str]
) -> list[dict[str, Any]]:
    """An assistant message as `model` parts, each thoughtSignature on its own part."""
    parts: list[dict[str, Any]] = []
    pending: str | None = None  # a signature for the next part

    def add(part: dict[str, Any], signature: str | None = None) -> None:
        nonlocal pending
        signature = signature or pending
        pending = None
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)

    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text:
                add({"text": block.text})
        elif isinstance(block, ThinkingBlock):  # our own: another's is text by now
            if block.text:
                add({"text": block.text, "thought": True}, block.signature)
            elif block.signature:
                pending = block.signature
        elif isinstance(block, ToolUseBlock):
            call: dict[str, Any] = {"name": block.name, "args": block.input}
            if _sends_id(block, msg, provider):
                call["id"] = block.id
                sent_ids.add(block.id)
            add({"functionCall": call})
        elif isinstance(block, NativeBlock):
            parts += _native_parts(block)
        else:
            raise _unsupported(block, provider, "in an assistant message")
    if pending:
        logger.debug("Dropping a Gemini thought signature with no part after it")
    calls = [p for p in parts if "functionCall" in p]
    if gemini3 and calls and not any("thoughtSignature" in p for p in calls):
        calls[0]["thoughtSignature"] = SKIP_SIGNATURE
    return parts


def _result_text(result: ToolResultBlock) -> str:
    text = result.text
    if result.images:
        names = ", ".join(i.name or f"#{n + 1}" for n, i in enumerate(result.images))
        text = f"{text}\n(The image {names} follows after the tool results.)".lstrip()
    return text or "(no output)"


@dataclass
class _Turn:
    role: str
    responses: list[dict[str, Any]] = field(default_factory=list)  # functionResponse parts
    parts: list[dict[str, Any]] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        return {"role": self.role, "parts": self.responses + self.parts}


class _Contents:
    """Builds `contents`: alternating turns, each call answered in the next user turn
    (`app.llm.transform` has paired every call with its result)."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.gemini3 = "gemini-3" in model.lower()
        self.turns: list[_Turn] = []
        self.call_names: dict[str, str] = {}  # every call's id -> its tool name
        self.sent_ids: set[str] = set()

    def turn(self, role: str) -> _Turn:
        if not self.turns or self.turns[-1].role != role:
            self.turns.append(_Turn(role))
        return self.turns[-1]

    def add(self, msg: Msg) -> None:
        if msg.role == Role.SYSTEM:
            return
        if msg.role == Role.ASSISTANT:
            if msg.tool_results:
                raise _unsupported(msg.tool_results[0], self.provider, "in an assistant message")
            parts = _model_parts(msg, self.provider, gemini3=self.gemini3, sent_ids=self.sent_ids)
            if parts:
                self.turn("model").parts.extend(parts)
            for call in msg.tool_calls:
                self.call_names[call.id] = call.name
            return
        rest: list[ContentBlock] = []
        for block in msg.blocks:
            if isinstance(block, ToolResultBlock):
                self._result(block)
            else:
                rest.append(block)
        parts = _user_parts(rest, self.provider)
        if parts:
            self.turn("user").parts.extend(parts)

    def _result(self, result: ToolResultBlock) -> None:
        name = self.call_names.get(result.tool_use_id) or result.name or "tool"
        key = "error" if result.is_error else "output"
        part: dict[str, Any] = {"name": name, "response": {key: _result_text(result)}}
        if result.tool_use_id in self.sent_ids:
            part["id"] = result.tool_use_id
        self.turn("user").responses.append({"functionResponse": part})
        # Gemini cannot reliably read images inside a functionResponse: they follow it.
        for image in result.images:
            label = f"[image {image.name or 'from a tool'}, returned by the tool {name}]"
            self.turn("user").parts.extend(_image_parts(image, label))

    def wire(self) -> list[dict[str, Any]]:
        return [t.wire() for t in self.turns if t.responses or t.parts]


def _system_instruction(messages: list[Msg], provider: str) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role != Role.SYSTEM:
            continue
        for block in msg.blocks:
            if not isinstance(block, TextBlock):
                raise _unsupported(block, provider, "in a system message (text only)")
            if block.text:
                parts.append({"text": block.text})
    return {"parts": parts} if parts else None


# ------------------------------------------------------------------ schemas ----


def _parameters(schema: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The cleaned parameters, or None for a tool without any (Gemini refuses an
    OBJECT schema with no properties)."""
    cleaned = clean_schema(schema, where=where)
    if cleaned.get("type", "object") == "object" and not cleaned.get("properties"):
        return None
    return cleaned


# -------------------------------------------------------------- the request ----


def _tool_config(request: LLMRequest, provider: str) -> dict[str, Any] | None:
    choice = request.tool_choice
    if choice is None:
        return None
    names = [tool.name for tool in request.tools]
    if not names:
        if choice in ("auto", "none"):
            return None
        raise ValidationError(
            f"tool_choice {choice!r} needs tools, and the request has none.", provider=provider
        )
    if isinstance(choice, dict):
        if choice["name"] not in names:
            raise ValidationError(
                f"tool_choice names the tool {choice['name']!r}, which is not among the "
                f"request's tools ({', '.join(names)}).",
                provider=provider,
            )
        config = {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}
    else:
        config = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]}
    return {"functionCallingConfig": config}


# Thinking tokens per level for Gemini 2.5 (`thinkingBudget`); 0 turns thinking off.
_BUDGETS = {
    ThinkingLevel.OFF: 0,
    ThinkingLevel.MINIMAL: 512,
    ThinkingLevel.LOW: 1024,
    ThinkingLevel.MEDIUM: 8192,
    ThinkingLevel.HIGH: 24576,
    ThinkingLevel.XHIGH: 32768,
}


def thinking_config(model: str, level: ThinkingLevel) -> dict[str, Any] | None:
    """`thinkingConfig` for `model` at the requested level, clamped to what the catalogue
    says the model takes: `thinkingLevel` for Gemini 3, `thinkingBudget` for Gemini 2.5,
    None for models without a thinking setting."""
    info = model_info(NAME, model)
    clamped = info.clamp(level)
    name = model.lower()
    config: dict[str, Any]
    if info.thinking_style == "level":
        # Gemini 3 always thinks: "off" asks for the least it can do.
        wanted = clamped if clamped != ThinkingLevel.OFF else info.reasoning_levels[0]
        config = {"thinkingLevel": "high" if wanted == ThinkingLevel.XHIGH else str(wanted)}
    elif info.thinking_style == "budget":
        budget = _BUDGETS[clamped]
        if "pro" in name:
            budget = max(128, budget)  # 2.5 Pro cannot stop thinking
        elif "flash-lite" in name and budget:
            budget = max(512, min(budget, 24576))
        else:
            budget = min(budget, 24576)
        config = {"thinkingBudget": budget}
    else:
        if level != ThinkingLevel.OFF:
            logger.info("%s has no thinking setting; thinking=%s is left out", model, level)
        return None
    if clamped != ThinkingLevel.OFF:
        config["includeThoughts"] = True
    return config


def _response_format(request: LLMRequest, provider: str) -> dict[str, Any]:
    spec = request.response_format
    if not spec:
        return {}
    kind = spec.get("type")
    if kind == "text":
        return {}
    if kind == "json_object":
        return {"responseMimeType": "application/json"}
    schema = spec.get("json_schema", {}).get("schema") if kind == "json_schema" else None
    if kind is None and isinstance(spec.get("schema"), dict):
        schema = spec["schema"]
    if not isinstance(schema, dict):
        raise ValidationError(
            f"The response_format {json.dumps(spec)[:120]} is not one Gemini can use; give "
            '{"type": "json_object"} or {"type": "json_schema", "json_schema": {"schema": ...}}.',
            provider=provider,
        )
    return {
        "responseMimeType": "application/json",
        "responseSchema": clean_schema(schema, where="the response format"),
    }


def to_wire(request: LLMRequest, *, model: str, provider: str = "gemini") -> dict[str, Any]:
    """The `generateContent` body (the same for streaming: the URL differs). Reads media
    files now; raises `ValidationError` for content Gemini cannot take."""
    messages = prepare_messages(request.messages, wire=NAME, provider=provider)
    contents = _Contents(provider, model)
    for msg in messages:
        contents.add(msg)
    body: dict[str, Any] = {"contents": contents.wire()}
    system = _system_instruction(messages, provider)
    if system:
        body["systemInstruction"] = system
    if request.tools:
        declarations = []
        for tool in request.tools:
            declaration: dict[str, Any] = {"name": tool.name}
            if tool.description:
                declaration["description"] = tool.description
            parameters = _parameters(tool.input_schema, f"the tool {tool.name!r}")
            if parameters is not None:
                declaration["parameters"] = parameters
            declarations.append(declaration)
        body["tools"] = [{"functionDeclarations": declarations}]
    tool_config = _tool_config(request, provider)
    if tool_config:
        body["toolConfig"] = tool_config
    generation: dict[str, Any] = {}
    if request.temperature is not None:
        generation["temperature"] = request.temperature
    if request.top_p is not None:
        generation["topP"] = request.top_p
    thinking = thinking_config(model, request.thinking)
    if request.max_tokens is not None:
        # Thinking tokens count against maxOutputTokens: leave room for the budget.
        budget = thinking.get("thinkingBudget", 0) if thinking else 0
        generation["maxOutputTokens"] = request.max_tokens + budget
    generation.update(_response_format(request, provider))
    if thinking:
        generation["thinkingConfig"] = thinking
    if generation:
        body["generationConfig"] = generation
    for key, value in request.provider_options.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body

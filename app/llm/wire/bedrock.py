"""Amazon Bedrock's Converse API wire (`ConverseStream` streamed, `Converse` whole):
neutral requests out (this module), the binary event stream and errors in
(`bedrock_stream`, re-exported so the module is a whole `Wire`).

The request: `system` is a list of text blocks; content blocks carry no `type`, their
one key says what they are (`{"text"}`, `{"image"}`, `{"document"}`, `{"toolUse"}`,
`{"toolResult"}`, `{"reasoningContent"}`); tools go in `toolConfig`, limits in
`inferenceConfig`, Claude's thinking in `additionalModelRequestFields`; cache points
follow the system prompt and the last message for models that take them. The model id
is in the URL, signed by `app.llm.aws` (or a Bedrock API key as a bearer token).
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote

from app.llm.aws import region_missing
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
from app.llm.request import CacheRetention, LLMRequest
from app.llm.transform import prepare_messages
from app.llm.wire import read_base64
from app.llm.wire.anthropic import DEFAULT_MAX_TOKENS, apply_thinking
from app.llm.wire.aws_eventstream import EVENT_STREAM
from app.llm.wire.bedrock_stream import (
    STOP_REASONS,
    BedrockStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)

__all__ = [
    "FRAMING",
    "NAME",
    "STOP_REASONS",
    "BedrockStreamParser",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "bedrock"
FRAMING = EVENT_STREAM
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}
# A document's name may hold only these (and no two spaces in a row).
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    """`/model/{modelId}/converse-stream` (or `/converse`); the id, which may hold `:` and
    `/` (an ARN), is one encoded path segment. An empty `base_url` means no region."""
    if not base_url:
        raise region_missing()
    action = "converse-stream" if stream else "converse"
    return f"{base_url.rstrip('/')}/model/{quote(model, safe='')}/{action}"


def headers(api_key: str | None) -> dict[str, str]:
    """A Bedrock API key as a bearer token; without one the request is signed (SigV4)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _cannot(block: ContentBlock, where: str, hint: str = "") -> ValidationError:
    return ValidationError(
        f"Amazon Bedrock cannot take a {block.kind} block {where}.{hint}", provider=NAME
    )


def _image(block: ImageBlock, where: str) -> list[dict[str, Any]]:
    ref = block.model
    fmt = _IMAGE_FORMATS.get(ref.mime_type)
    if fmt is None:
        raise _cannot(block, where, f" Its type {ref.mime_type} is not PNG, JPEG, GIF or WebP.")
    parts: list[dict[str, Any]] = []
    if block.name:
        parts.append({"text": f"[image {block.name}]"})
    parts.append({"image": {"format": fmt, "source": {"bytes": read_base64(ref, "image")}}})
    return parts


def _document(block: FileBlock) -> dict[str, Any]:
    fmt = _DOCUMENT_FORMATS.get(block.mime_type)
    if fmt is None:
        known = ", ".join(sorted(set(_DOCUMENT_FORMATS.values())))
        raise _cannot(block, "in a message", f" Its type {block.mime_type} is not one of {known}.")
    name = " ".join(_NOT_IN_NAME.sub(" ", block.name or block.path.stem).split()) or "document"
    source = {"bytes": read_base64(block, "file")}
    return {"document": {"format": fmt, "name": name[:200], "source": source}}


def _tool_result(result: ToolResultBlock) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for inner in result.content:
        if isinstance(inner, TextBlock):
            if inner.text:
                content.append({"text": inner.text})
        else:
            content.extend(_image(inner, "in a tool result"))
    if not content:  # Bedrock refuses an empty result
        content.append({"text": "Error" if result.is_error else "(no output)"})
    status = "error" if result.is_error else "success"
    return {"toolResult": {"toolUseId": result.tool_use_id, "content": content, "status": status}}


def _thinking(block: ThinkingBlock) -> dict[str, Any] | None:
    """Bedrock's own reasoning goes back verbatim with its signature; without one it is
    only words (another provider's is text already, from the neutral pass)."""
    if block.redacted and block.signature:
        return {"reasoningContent": {"redactedContent": block.signature}}
    if block.signature:
        text = {"text": block.text, "signature": block.signature}
        return {"reasoningContent": {"reasoningText": text}}
    return {"text": block.text} if block.text.strip() else None


def _content(msg: Msg, assistant: bool) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []  # first, as the Converse API wants them
    parts: list[dict[str, Any]] = []
    where = "in an assistant message" if assistant else "in a user message"
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            if block.text.strip():  # Bedrock refuses blank text
                parts.append({"text": block.text})
        elif isinstance(block, ImageBlock):
            parts.extend(_image(block, where))
        elif isinstance(block, FileBlock) and not assistant:
            parts.append(_document(block))
        elif isinstance(block, ToolResultBlock) and not assistant:
            results.append(_tool_result(block))
        elif isinstance(block, ToolUseBlock) and assistant:
            use = {"toolUseId": block.id, "name": block.name, "input": block.input}
            parts.append({"toolUse": use})
        elif isinstance(block, ThinkingBlock):
            part = (
                _thinking(block)
                if assistant
                else _thinking(block.model_copy(update={"signature": None}))
            )
            if part is not None:
                parts.append(part)
        elif isinstance(block, NativeBlock):
            if block.format == NAME:
                parts.append(block.data)
            else:
                logger.info("Leaving out a %s block the Converse API cannot use", block.format)
        elif isinstance(block, AudioBlock):
            raise _cannot(block, "(audio input)", " Use a speech-to-text step first.")
        else:
            raise _cannot(block, where)
    return results + parts


def _messages(request: LLMRequest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages): consecutive messages of one side merged into one."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for msg in prepare_messages(request.messages, wire=NAME, provider=NAME):
        if msg.role == Role.SYSTEM:
            for block in msg.blocks:
                if not isinstance(block, TextBlock):
                    raise _cannot(block, "in the system prompt", " It holds text only.")
            if msg.text.strip():
                system.append({"text": msg.text})
            continue
        role = "assistant" if msg.role == Role.ASSISTANT else "user"
        content = _content(msg, role == "assistant")
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return system, out


def _cache_point(request: LLMRequest, model: str) -> dict[str, Any] | None:
    """The cache point for this model and retention, or None where it takes none."""
    support = model_info(NAME, model).cache_points
    if request.cache == CacheRetention.NONE or support == "none":
        return None
    point: dict[str, Any] = {"type": "default"}
    if request.cache == CacheRetention.LONG and support == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _used_tool_names(messages: list[dict[str, Any]]) -> list[str]:
    names = [
        part["toolUse"]["name"]
        for message in messages
        for part in message["content"]
        if "toolUse" in part
    ]
    return list(dict.fromkeys(names))


def _tool_config(request: LLMRequest, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """`toolConfig`, which Bedrock also wants whenever the history holds tool blocks (then
    the tools it names are declared, with an open schema, if the request has none)."""
    used = _used_tool_names(messages)
    choice = request.tool_choice
    if not request.tools and not used:
        return None
    if choice == "none" and not used:
        return None  # no tools offered is how Converse says "none"
    tools: list[dict[str, Any]] = []
    for tool in request.tools:
        spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.input_schema}}
        if tool.description:
            spec["description"] = tool.description
        tools.append({"toolSpec": spec})
    declared = {tool.name for tool in request.tools}
    for name in used:
        if name not in declared:
            schema = {"type": "object", "properties": {}}
            tools.append({"toolSpec": {"name": name, "inputSchema": {"json": schema}}})
    config: dict[str, Any] = {"tools": tools}
    if isinstance(choice, dict):
        config["toolChoice"] = {"tool": {"name": choice["name"]}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "auto":
        config["toolChoice"] = {"auto": {}}
    return config


def _is_claude(model: str) -> bool:
    return "claude" in model.lower()


def to_wire(request: LLMRequest, *, model: str, provider: str = NAME) -> dict[str, Any]:
    """The Converse body. Reads image and document files now; raises `ValidationError`."""
    system, messages = _messages(request)
    body: dict[str, Any] = {"messages": messages}
    point = _cache_point(request, model)
    if system:
        body["system"] = system + ([point] if point else [])
    if point and messages:
        messages[-1]["content"].append(point)
    config = _tool_config(request, messages)
    if config is not None:
        body["toolConfig"] = config
    # Claude's fields, as the Messages API has them, to reuse its thinking rules.
    fields: dict[str, Any] = {}
    if request.max_tokens is not None:
        fields["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        fields["temperature"] = request.temperature
    if request.top_p is not None:
        fields["top_p"] = request.top_p
    extra: dict[str, Any] = {}
    if _is_claude(model):
        fields.setdefault("max_tokens", min(DEFAULT_MAX_TOKENS, model_info(NAME, model).max_output))
        apply_thinking(fields, request, model)
        extra = {k: fields.pop(k) for k in ("thinking", "output_config") if k in fields}
    inference = {
        "maxTokens": fields.get("max_tokens"),
        "temperature": fields.get("temperature"),
        "topP": fields.get("top_p"),
    }
    inference = {k: v for k, v in inference.items() if v is not None}
    if inference:
        body["inferenceConfig"] = inference
    if extra:
        body["additionalModelRequestFields"] = extra
    if request.response_format is not None and request.response_format.get("type") != "text":
        raise ValidationError(
            "Amazon Bedrock's Converse API has no response_format; describe the format in "
            "the prompt or ask for it through a tool.",
            provider=NAME,
        )
    body.update(request.provider_options)
    return body

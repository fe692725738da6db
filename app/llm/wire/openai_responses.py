"""OpenAI Responses wire (`POST {base}/responses`): neutral requests out.

The stream parser, `parse_response` and the HTTP error mapper live in
`openai_responses_stream` and are re-exported here, so this module is the whole `Wire`.

Reasoning is kept in the neutral history as two blocks: the readable summary as a
`ThinkingBlock` (shown to the user, sent as plain text to other providers) and the
reasoning item itself, with its `encrypted_content`, as
`NativeBlock(format="openai_responses")`, replayed here verbatim (requests are sent
with `store: false`, so the item is the only way the model gets its reasoning back).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from app.llm.catalogue import clamp_thinking_level, model_info
from app.llm.errors import ValidationError
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
from app.llm.request import CacheRetention, LLMRequest, ThinkingLevel
from app.llm.transform import prepare_messages
from app.llm.wire import read_base64
from app.llm.wire.openai_responses_stream import (
    ResponsesStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)
from app.llm.wire.sse import SSE_FRAMING

__all__ = [
    "FRAMING",
    "NAME",
    "ResponsesStreamParser",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "parse_response",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "openai_responses"
FRAMING = SSE_FRAMING
# Content-part types; any other `type` in a native block is a whole input item.
_CONTENT_PART_TYPES = frozenset(
    {"input_text", "input_image", "input_file", "input_audio", "output_text", "refusal"}
)
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    return f"{base_url.rstrip('/')}/responses"


def headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _cannot(
    block: ContentBlock | str, provider: str, where: str, hint: str = ""
) -> ValidationError:
    kind = block if isinstance(block, str) else block.kind
    article = "an" if kind[0] in "aeiou" else "a"
    return ValidationError(
        f"The OpenAI Responses API ({provider}) cannot carry {article} {kind} block {where}{hint}.",
        provider=provider,
    )


def _data_url(source: ImageFileRef | AudioBlock | FileBlock, what: str) -> str:
    return f"data:{source.mime_type};base64,{read_base64(source, what)}"


def _image_parts(block: ImageBlock) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if block.name:
        parts.append({"type": "input_text", "text": f"[image {block.name}]"})
    url = _data_url(block.model, "image")
    parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def _is_native(block: ContentBlock) -> bool:
    return isinstance(block, NativeBlock) and block.format == NAME


def _native_is_part(block: NativeBlock) -> bool:
    return isinstance(block.data, dict) and block.data.get("type") in _CONTENT_PART_TYPES


def _instructions(messages: list[Msg], provider: str) -> str | None:
    texts: list[str] = []
    for msg in messages:
        for block in msg.blocks:
            if not isinstance(block, TextBlock):
                raise _cannot(block, provider, "in a system message", "; it takes text only")
            if block.text:
                texts.append(block.text)
    return "\n\n".join(texts) if texts else None


class _InputBuilder:
    """Builds the `input` items in order (the calls and their outputs already paired)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.items: list[dict[str, Any]] = []

    def add(self, msg: Msg) -> None:
        blocks = msg.blocks
        for block in blocks:
            if isinstance(block, ToolResultBlock):
                self._result(block)
        rest: list[ContentBlock] = [b for b in blocks if not isinstance(b, ToolResultBlock)]
        if not rest:
            return
        if msg.role == Role.ASSISTANT:
            self._assistant(rest)
        else:
            self._user(rest)

    def _user(self, blocks: list[ContentBlock]) -> None:
        parts: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, TextBlock):
                if block.text:
                    parts.append({"type": "input_text", "text": block.text})
            elif isinstance(block, ImageBlock):
                parts.extend(_image_parts(block))
            elif isinstance(block, ThinkingBlock):
                continue  # our own reasoning travels as its native item
            elif isinstance(block, AudioBlock):
                parts.append(self._audio(block))
            elif isinstance(block, FileBlock):
                parts.append(self._file(block))
            elif isinstance(block, NativeBlock):
                if not _is_native(block):
                    logger.info("Leaving out a %s block the Responses API cannot use", block.format)
                elif _native_is_part(block):
                    parts.append(block.data)
                else:
                    self._flush_user(parts)
                    self.items.append(block.data)
            else:  # a tool call
                raise _cannot(block, self.provider, "in a user message", "; calls are the model's")
        self._flush_user(parts)

    def _flush_user(self, parts: list[dict[str, Any]]) -> None:
        if parts:
            self.items.append({"role": "user", "content": list(parts)})
            parts.clear()

    def _audio(self, block: AudioBlock) -> dict[str, Any]:
        fmt = _AUDIO_FORMATS.get(block.mime_type)
        if fmt is None:
            raise _cannot(block, self.provider, f"of type {block.mime_type}", "; only WAV or MP3")
        data = read_base64(block, "audio file")
        return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}

    def _file(self, block: FileBlock) -> dict[str, Any]:
        if block.mime_type != "application/pdf":
            raise _cannot(block, self.provider, f"of type {block.mime_type}", "; only PDF files")
        name = block.name or block.path.name
        return {"type": "input_file", "filename": name, "file_data": _data_url(block, "file")}

    def _assistant(self, blocks: list[ContentBlock]) -> None:
        start = len(self.items)
        parts: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, TextBlock):
                if block.text:
                    parts.append({"type": "output_text", "text": block.text})
            elif isinstance(block, ThinkingBlock):
                continue  # our own reasoning travels as its native item
            elif isinstance(block, ToolUseBlock):
                self._flush_assistant(parts)
                self.items.append(
                    {
                        "type": "function_call",
                        "call_id": block.id,
                        "name": block.name,
                        "arguments": json.dumps(block.input, ensure_ascii=False),
                    }
                )
            elif isinstance(block, NativeBlock):
                if not _is_native(block):
                    logger.info("Leaving out a %s block the Responses API cannot use", block.format)
                elif _native_is_part(block):
                    parts.append(block.data)
                else:
                    self._flush_assistant(parts)
                    self.items.append(block.data)
            else:
                raise _cannot(block, self.provider, "in an assistant message")
        self._flush_assistant(parts)
        self._drop_dangling_reasoning(start)

    def _flush_assistant(self, parts: list[dict[str, Any]]) -> None:
        if parts:
            self.items.append({"type": "message", "role": "assistant", "content": list(parts)})
            parts.clear()

    def _drop_dangling_reasoning(self, start: int) -> None:
        """The API refuses a reasoning item that is not followed by the message or call
        it led to (a reply cut short can leave one at the end): such items are left out."""
        own = self.items[start:]
        keep: list[dict[str, Any]] = []
        for n, item in enumerate(own):
            if _is_reasoning(item) and not any(not _is_reasoning(i) for i in own[n + 1 :]):
                logger.info("Leaving out a reasoning item that no message or call follows")
                continue
            keep.append(item)
        self.items[start:] = keep

    def _result(self, result: ToolResultBlock) -> None:
        text = result.text
        if result.is_error and not text.lower().startswith("error"):
            text = f"Error: {text}"
        output: str | list[dict[str, Any]] = text or "(no output)"
        if result.images:
            # Images go inside the output as content parts, right after their text.
            parts = [{"type": "input_text", "text": text}] if text else []
            for image in result.images:
                parts.extend(_image_parts(image))
            output = parts
        call_id = result.tool_use_id
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": output})


def _is_reasoning(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "reasoning"


def _text_format(response_format: dict[str, Any]) -> dict[str, Any]:
    """Chat-style `response_format` → the Responses `text.format` shape."""
    if response_format.get("type") == "json_schema" and isinstance(
        response_format.get("json_schema"), dict
    ):
        return {"type": "json_schema", **response_format["json_schema"]}
    return response_format


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "name": choice["name"]}
    return choice


def to_wire(request: LLMRequest, *, model: str, provider: str = "openai") -> dict[str, Any]:
    """The Responses request body. Reads image and file bytes now; raises `ValidationError`
    for content the API cannot carry, naming the block and the provider."""
    messages = prepare_messages(request.messages, wire=NAME, provider=provider)
    system = [m for m in messages if m.role == Role.SYSTEM]
    builder = _InputBuilder(provider)
    for msg in messages:
        if msg.role != Role.SYSTEM:
            builder.add(msg)
    body: dict[str, Any] = {"model": model}
    instructions = _instructions(system, provider)
    if instructions:
        body["instructions"] = instructions
    body["input"] = builder.items
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                **({"description": tool.description} if tool.description else {}),
                "parameters": tool.input_schema,
                # The Responses API makes tools strict when this is left out.
                "strict": tool.strict,
            }
            for tool in request.tools
        ]
    if request.tool_choice is not None:
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    level = clamp_thinking_level(model, request.thinking)
    if not model_info(provider, model).reasoning:
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    else:
        # Reasoning models refuse sampling options. They reason even when `off` was asked
        # for (gpt-5 cannot stop; 5.1 defaults to none), so their reasoning items are
        # always asked for in the replayable form; non-reasoning models answer 400 to it.
        body["include"] = ["reasoning.encrypted_content"]
        if level != ThinkingLevel.OFF:
            body["reasoning"] = {"effort": str(level), "summary": "auto"}
    body["store"] = False
    if provider == "openai" and request.cache != CacheRetention.NONE:
        if request.session_id:
            body["prompt_cache_key"] = request.session_id
        if request.cache == CacheRetention.LONG:
            body["prompt_cache_retention"] = "24h"
    if request.response_format is not None:
        body["text"] = {"format": _text_format(request.response_format)}
    if request.stream:
        body["stream"] = True
    body.update(request.provider_options)
    return body

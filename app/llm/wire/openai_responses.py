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

import hashlib
import json
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
    ImageFileRef,
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
from app.llm.wire.openai_responses_stream import (
    ResponsesStreamParser,
    map_http_error,
    new_parser,
    parse_response,
    parse_usage,
)

__all__ = [
    "NAME",
    "ResponsesStreamParser",
    "endpoint",
    "headers",
    "map_http_error",
    "new_parser",
    "normalize_call_id",
    "parse_response",
    "parse_usage",
    "to_wire",
]

logger = logging.getLogger(__name__)

NAME = "openai_responses"
# Content-part types; any other `type` in a native block is a whole input item.
_CONTENT_PART_TYPES = frozenset(
    {"input_text", "input_image", "input_file", "input_audio", "output_text", "refusal"}
)
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NO_RESULT = "Error: the tool call got no result (it was not run or was interrupted)."


def endpoint(base_url: str, model: str, *, stream: bool) -> str:
    return f"{base_url.rstrip('/')}/responses"


def headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def normalize_call_id(raw: str) -> str:
    """A call id the Responses API accepts (≤ 64 characters of `[A-Za-z0-9_-]`).

    Ids already valid are kept; others are cleaned and given a hash of the original,
    so two different ids never become one and a call still pairs with its result.
    """
    if _CALL_ID.fullmatch(raw):
        return raw
    digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:53] or "call"
    return f"{cleaned}_{digest}"


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


def _foreign_thinking(block: ThinkingBlock, provider: str) -> str | None:
    """Reasoning from another provider goes on as plain text; ours travels as the
    native reasoning item next to it, and redacted reasoning cannot be read at all."""
    if block.redacted or not block.text or block.provider == provider:
        return None
    return block.text


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
    """Builds the `input` items in order, pairing every function call with an output."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.items: list[dict[str, Any]] = []
        self._called: set[str] = set()
        self._pending: dict[str, str] = {}  # call id -> tool name, still without output

    def add(self, msg: Msg) -> None:
        blocks = msg.blocks
        for block in blocks:
            if isinstance(block, ToolResultBlock):
                self._result(block)
        rest: list[ContentBlock] = [b for b in blocks if not isinstance(b, ToolResultBlock)]
        if not rest:
            return
        self._close_pending()
        if msg.role == Role.ASSISTANT:
            self._assistant(rest)
        else:
            self._user(rest)

    def finish(self) -> list[dict[str, Any]]:
        self._close_pending()
        return self.items

    def _close_pending(self) -> None:
        # A call with no result would be refused by the API: it gets an error result.
        for call_id in self._pending:
            self.items.append(
                {"type": "function_call_output", "call_id": call_id, "output": _NO_RESULT}
            )
        self._pending.clear()

    def _user(self, blocks: list[ContentBlock]) -> None:
        parts: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, TextBlock):
                if block.text:
                    parts.append({"type": "input_text", "text": block.text})
            elif isinstance(block, ImageBlock):
                parts.extend(_image_parts(block))
            elif isinstance(block, ThinkingBlock):
                text = _foreign_thinking(block, self.provider)
                if text:
                    parts.append({"type": "input_text", "text": text})
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
                text = _foreign_thinking(block, self.provider)
                if text:
                    parts.append({"type": "output_text", "text": text})
            elif isinstance(block, ToolUseBlock):
                self._flush_assistant(parts)
                call_id = normalize_call_id(block.id)
                self.items.append(
                    {
                        "type": "function_call",
                        "call_id": call_id,
                        "name": block.name,
                        "arguments": json.dumps(block.input, ensure_ascii=False),
                    }
                )
                self._called.add(call_id)
                self._pending[call_id] = block.name
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
        call_id = normalize_call_id(result.tool_use_id)
        text = result.text
        if result.is_error and not text.lower().startswith("error"):
            text = f"Error: {text}"
        if call_id not in self._called:
            # A result whose call is not in the history would be refused: pass it as text.
            self._close_pending()
            what = f"the tool {result.name}" if result.name else "a tool"
            intro = f"Result of {what} (call {result.tool_use_id}): {text or '(no output)'}"
            parts: list[dict[str, Any]] = [{"type": "input_text", "text": intro}]
            for image in result.images:
                parts.extend(_image_parts(image))
            self.items.append({"role": "user", "content": parts})
            return
        output: str | list[dict[str, Any]] = text or "(no output)"
        if result.images:
            # Images go inside the output as content parts, right after their text.
            parts = [{"type": "input_text", "text": text}] if text else []
            for image in result.images:
                parts.extend(_image_parts(image))
            output = parts
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        self._pending.pop(call_id, None)


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
    system = [m for m in request.messages if m.role == Role.SYSTEM]
    builder = _InputBuilder(provider)
    for msg in request.messages:
        if msg.role != Role.SYSTEM:
            builder.add(msg)
    body: dict[str, Any] = {"model": model}
    instructions = _instructions(system, provider)
    if instructions:
        body["instructions"] = instructions
    body["input"] = builder.finish()
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

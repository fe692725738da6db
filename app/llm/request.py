"""What a caller asks a model for: messages, tools and options, for any provider."""

from __future__ import annotations

import enum
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from app.llm.errors import ValidationError
from app.llm.messages import (
    AudioBlock,
    Conversation,
    FileBlock,
    ImageBlock,
    Msg,
    NativeBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "CacheRetention",
    "LLMRequest",
    "ThinkingLevel",
    "ToolChoice",
    "ToolSpec",
    "clamp_thinking_level",
    "estimate_input_tokens",
    "require_stream_flag",
]


class ThinkingLevel(enum.StrEnum):
    """How hard a model should reason; each wire maps it to its own parameter."""

    OFF = "off"
    MINIMAL = "minimal"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"


class CacheRetention(enum.StrEnum):
    """How long a provider should keep the prompt prefix cached."""

    NONE = "none"
    SHORT = "short"
    LONG = "long"


_LEVELS = list(ThinkingLevel)
_ALL = frozenset(_LEVELS)
_L = ThinkingLevel
# The levels a model family accepts, first match wins (searched on the bare model name).
_SUPPORTED_LEVELS: list[tuple[re.Pattern[str], frozenset[ThinkingLevel]]] = [
    (re.compile(r"smollm|^local"), frozenset({_L.OFF})),
    (re.compile(r"deepseek-reasoner|deepseek-r1"), frozenset({_L.HIGH})),
    (re.compile(r"deepseek-chat"), frozenset({_L.OFF})),
    (re.compile(r"gpt-5\.\d"), frozenset({_L.OFF, _L.LOW, _L.MEDIUM, _L.HIGH})),
    (re.compile(r"gpt-5"), frozenset({_L.MINIMAL, _L.LOW, _L.MEDIUM, _L.HIGH})),
    (re.compile(r"(^|/)o[134](-|$)"), frozenset({_L.LOW, _L.MEDIUM, _L.HIGH})),
    (re.compile(r"gpt-4|gpt-3\.5|claude-3-5|claude-3-(opus|sonnet|haiku)"), frozenset({_L.OFF})),
    (re.compile(r"gemini-2\.5-pro"), frozenset({_L.LOW, _L.MEDIUM, _L.HIGH})),
    (re.compile(r"gemini-3"), frozenset({_L.LOW, _L.HIGH})),
]


def clamp_thinking_level(model: str, level: ThinkingLevel | str) -> ThinkingLevel:
    """The nearest level `model` supports: searched upward first, then downward."""
    wanted = ThinkingLevel(level)
    name = model.lower()
    supported = next(
        (levels for pattern, levels in _SUPPORTED_LEVELS if pattern.search(name)), _ALL
    )
    if wanted in supported:
        return wanted
    start = _LEVELS.index(wanted)
    for candidate in _LEVELS[start + 1 :]:
        if candidate in supported:
            return candidate
    for candidate in reversed(_LEVELS[:start]):
        if candidate in supported:
            return candidate
    return wanted


class ToolSpec(BaseModel):
    """A tool the model may call; `input_schema` is a JSON Schema object."""

    name: str
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    description: str = ""
    strict: bool = False


ToolChoice = Literal["auto", "none", "required"] | dict[str, str]


class LLMRequest(BaseModel):
    """One model call. `model` may be a route (`openai/gpt-4o-mini`) or the bare model id.

    `tool_choice` is `auto`, `none`, `required` or `{"name": tool_name}`.
    """

    model: str
    messages: list[Msg] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    tool_choice: ToolChoice | None = None
    response_format: dict[str, Any] | None = None
    stream: bool = False
    timeout: float | None = None
    thinking: ThinkingLevel = ThinkingLevel.OFF
    cache: CacheRetention = CacheRetention.SHORT
    session_id: str | None = None
    provider_options: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tool_choice")
    @classmethod
    def _named_choice_has_name(cls, value: ToolChoice | None) -> ToolChoice | None:
        if isinstance(value, dict) and not value.get("name"):
            raise ValueError('a named tool_choice is written {"name": "<tool name>"}')
        return value

    @classmethod
    def from_conversation(
        cls, conversation: Conversation | list[Msg], model: str, **options: Any
    ) -> LLMRequest:
        messages = conversation.messages if isinstance(conversation, Conversation) else conversation
        return cls(model=model, messages=list(messages), **options)


# Rough sizes for a no-network estimate: about 4 characters per token for text.
_CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 4
_UNKNOWN_IMAGE_TOKENS = 1000
_FILE_TOKENS = 1500


def _image_tokens(block: ImageBlock) -> int:
    ref = block.model
    if ref.width and ref.height:
        return max(85, min(1600, ref.width * ref.height // 750))
    return _UNKNOWN_IMAGE_TOKENS


def _block_chars_and_tokens(block: Any) -> tuple[int, int]:
    if isinstance(block, TextBlock | ThinkingBlock):
        return len(block.text), 0
    if isinstance(block, ImageBlock):
        return 0, _image_tokens(block)
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(json.dumps(block.input, ensure_ascii=False)), 0
    if isinstance(block, ToolResultBlock):
        chars, tokens = 0, 0
        for inner in block.content:
            c, t = _block_chars_and_tokens(inner)
            chars, tokens = chars + c, tokens + t
        return chars, tokens
    if isinstance(block, AudioBlock | FileBlock):
        return 0, _FILE_TOKENS
    if isinstance(block, NativeBlock):
        return len(json.dumps(block.data, default=str)), 0
    return 0, 0


def estimate_input_tokens(request: LLMRequest) -> int:
    """A quick estimate of the prompt size in tokens, without the network or a tokenizer."""
    chars = 0
    tokens = 0
    for message in request.messages:
        tokens += _MESSAGE_OVERHEAD
        if isinstance(message.content, str):
            chars += len(message.content)
            continue
        for block in message.content:
            c, t = _block_chars_and_tokens(block)
            chars, tokens = chars + c, tokens + t
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.input_schema))
    return tokens + (chars + _CHARS_PER_TOKEN - 1) // _CHARS_PER_TOKEN


def require_stream_flag(request: LLMRequest, *, streaming: bool) -> None:
    """`stream()` takes only `stream=True` requests and `complete()` only `stream=False`."""
    if streaming and not request.stream:
        raise ValidationError("stream() needs a request with stream=True; use complete().")
    if not streaming and request.stream:
        raise ValidationError("complete() needs a request with stream=False; use stream().")

"""What a caller asks a model for: the conversation, tools and options, for any provider."""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from app.llm.errors import ValidationError
from app.llm.messages import (
    AudioBlock,
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
from app.llm.reply_form import ReplyForm

__all__ = [
    "CacheRetention",
    "Conversation",
    "LLMRequest",
    "ThinkingLevel",
    "ToolChoice",
    "ToolSpec",
    "estimate_input_tokens",
    "estimate_text_tokens",
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
    # The form a spoken reply takes (a tag, then a few sentences): the embedded model
    # is held to it by a grammar; other wires leave it to the prompt.
    reply_form: ReplyForm | None = None
    # The start of the reply the app already knows ("[neutral] It's 4:13 p.m."): a
    # client that `continues_replies` streams it at once and has the model go on from
    # it; only such a client is given one (`AgentCore.build_request`).
    reply_start: str | None = None

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


class Conversation(BaseModel):
    """An ordered list of messages; a container only, it stores nothing on disk."""

    messages: list[Msg] = Field(default_factory=list)

    def add(self, message: Msg) -> Msg:
        self.messages.append(message)
        return message

    def add_many(self, messages: Iterable[Msg]) -> None:
        self.messages.extend(messages)

    def last(self, role: Role | str | None = None) -> Msg | None:
        """The newest message, or the newest one with `role`."""
        for message in reversed(self.messages):
            if role is None or message.role == role:
                return message
        return None

    @property
    def system_prompt(self) -> str | None:
        """The text of the system messages joined by blank lines, or None if there are none."""
        parts = [m.text for m in self.messages if m.role == Role.SYSTEM and m.text]
        return "\n\n".join(parts) if parts else None

    @property
    def non_system_messages(self) -> list[Msg]:
        return [m for m in self.messages if m.role != Role.SYSTEM]

    def to_llm_request(self, model: str, **options: Any) -> LLMRequest:
        return LLMRequest.from_conversation(self, model, **options)

    def __len__(self) -> int:
        return len(self.messages)


# A no-network estimate, tuned on SmolLM2's byte-level BPE (GPT-2-like, as most
# providers' tokenizers are): a common English word is one token with its leading
# space; longer words, ALL-CAPS words and other scripts split into more; every digit,
# newline run and short punctuation run is about one.
_PIECES = re.compile(r"[^\W\d_]+|\d|\n+|(?:[^\w\s]|_)+")
_MESSAGE_OVERHEAD = 4  # role markers around each message (`<|im_start|>user\n`…)
_REPLY_OVERHEAD = 3  # the assistant turn the prompt ends with
_TOOL_OVERHEAD = 8  # the wrapper a template puts around each tool's schema
_UNKNOWN_IMAGE_TOKENS = 1000
_FILE_TOKENS = 1500


def _word_tokens(word: str) -> float:
    length = len(word)
    if not word.isascii():
        if all(ord(ch) < 0x250 for ch in word):  # Latin with accents: café, naïve
            return 1 + max(0, length - 5) / 6
        return len(word.encode()) / 2  # other scripts: about a token per 2 UTF-8 bytes
    if length > 1 and word.isupper():
        return 1 + (length - 2) * 0.3
    if length <= 20:
        return 1 + max(0, length - 7) / 8
    return 2.625 + (length - 20) / 4  # no real word is this long: an id, a hash, noise


def _text_tokens(text: str) -> float:
    total = 0.0
    for match in _PIECES.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isalpha():
            total += _word_tokens(piece)
        elif first.isdigit() or first == "\n":
            total += 1
        elif piece.isascii():
            total += (len(piece) + 1) // 2
        else:
            total += max(1.0, len(piece.encode()) / 3)
    return total


def estimate_text_tokens(text: str) -> int:
    """About how many tokens `text` is, for plain English within ±15 % of a BPE count."""
    return math.ceil(_text_tokens(text))


def _json_tokens(value: Any) -> float:
    return _text_tokens(json.dumps(value, ensure_ascii=False, default=str))


def _image_tokens(block: ImageBlock) -> int:
    # Anthropic's rule of thumb (width × height / 750), which OpenAI's tiles roughly match.
    ref = block.model
    if ref.width and ref.height:
        return max(85, min(1600, ref.width * ref.height // 750))
    return _UNKNOWN_IMAGE_TOKENS


def _block_tokens(block: Any) -> float:
    if isinstance(block, TextBlock | ThinkingBlock):
        return _text_tokens(block.text)
    if isinstance(block, ImageBlock):
        return _image_tokens(block) + (_text_tokens(block.name) if block.name else 0)
    if isinstance(block, ToolUseBlock):
        return _text_tokens(block.name) + _json_tokens(block.input)
    if isinstance(block, ToolResultBlock):
        return sum(_block_tokens(inner) for inner in block.content)
    if isinstance(block, AudioBlock | FileBlock):
        return _FILE_TOKENS
    if isinstance(block, NativeBlock):
        return _json_tokens(block.data)
    return 0


def estimate_input_tokens(request: LLMRequest) -> int:
    """About how many tokens the prompt is, without the network or a tokenizer:
    messages (text, tool calls and results, images by size), tool schemas and the
    response format. Within ±15 % of a real count for plain English text."""
    total = 0.0
    for message in request.messages:
        total += _MESSAGE_OVERHEAD
        if isinstance(message.content, str):
            total += _text_tokens(message.content)
        else:
            total += sum(_block_tokens(block) for block in message.content)
    for tool in request.tools:
        total += _TOOL_OVERHEAD + _text_tokens(tool.name) + _text_tokens(tool.description)
        total += _json_tokens(tool.input_schema)
    if request.response_format is not None:
        total += _json_tokens(request.response_format)
    if request.messages:
        total += _REPLY_OVERHEAD
    return math.ceil(total)


def require_stream_flag(request: LLMRequest, *, streaming: bool) -> None:
    """`stream()` takes only `stream=True` requests and `complete()` only `stream=False`."""
    if streaming and not request.stream:
        raise ValidationError("stream() needs a request with stream=True; use complete().")
    if not streaming and request.stream:
        raise ValidationError("complete() needs a request with stream=False; use stream().")

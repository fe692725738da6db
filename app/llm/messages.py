"""Neutral chat messages and content blocks, the same for every provider.

History never holds image bytes: images are `ImageFileRef` file references that a
wire module reads when it builds a request.
"""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AudioBlock",
    "ContentBlock",
    "FileBlock",
    "ImageBlock",
    "ImageFileRef",
    "Msg",
    "NativeBlock",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
]


class Role(enum.StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Block):
    kind: Literal["text"] = "text"
    text: str


class ImageFileRef(_Block):
    """An image file on disk; `width`/`height` in pixels when known."""

    kind: Literal["image_file"] = "image_file"
    path: Path
    mime_type: str
    width: int | None = None
    height: int | None = None


class ImageBlock(_Block):
    """An image: the user's original file and the copy sized for models.

    `name` is the label the model sees (`p1`, `tool1`, ...).
    """

    kind: Literal["image"] = "image"
    original: ImageFileRef
    model: ImageFileRef
    name: str | None = None


class ToolUseBlock(_Block):
    """A call the model asked for. `id` pairs it with its `ToolResultBlock`. `refused`
    says why it is not run (its arguments were cut off or are not a JSON object, or it
    is over the turn's limits): it is answered with that as an error result."""

    kind: Literal["tool_use"] = "tool_use"
    id: str = Field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    refused: str | None = Field(default=None, exclude=True)  # (its result says why)


class ToolResultBlock(_Block):
    kind: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[TextBlock | ImageBlock] = Field(default_factory=list)
    is_error: bool = False
    name: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content", mode="before")
    @classmethod
    def _text_to_blocks(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [TextBlock(text=value)] if value else []
        return value

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def images(self) -> list[ImageBlock]:
        return [b for b in self.content if isinstance(b, ImageBlock)]


class ThinkingBlock(_Block):
    """Model reasoning. `signature` (or a redacted block) must be replayed verbatim
    to the provider that made it; `provider` says which one that was."""

    kind: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    provider: str | None = None


class AudioBlock(_Block):
    kind: Literal["audio"] = "audio"
    path: Path
    mime_type: str


class FileBlock(_Block):
    kind: Literal["file"] = "file"
    path: Path
    mime_type: str
    name: str | None = None


class NativeBlock(_Block):
    """A provider's own block passed through verbatim; `format` names the wire protocol
    (`openai_chat`, `openai_responses`, `anthropic`, `gemini`)."""

    kind: Literal["native"] = "native"
    format: str
    data: Any


ContentBlock = Annotated[
    TextBlock
    | ImageBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | AudioBlock
    | FileBlock
    | NativeBlock,
    Field(discriminator="kind"),
]


def _now() -> datetime:
    return datetime.now(UTC)


class Msg(BaseModel):
    """One chat message. `content` is plain text or a list of blocks."""

    role: Role
    content: str | list[ContentBlock] = ""
    sender: str = ""
    timestamp: datetime = Field(default_factory=_now)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def system(cls, content: str | list[ContentBlock], **fields: Any) -> Msg:
        return cls(role=Role.SYSTEM, content=content, **fields)

    @classmethod
    def user(cls, content: str | list[ContentBlock], **fields: Any) -> Msg:
        return cls(role=Role.USER, content=content, **fields)

    @classmethod
    def assistant(cls, content: str | list[ContentBlock], **fields: Any) -> Msg:
        return cls(role=Role.ASSISTANT, content=content, **fields)

    @classmethod
    def tool_result(
        cls,
        tool_use_id: str,
        content: str | list[TextBlock | ImageBlock] = "",
        *,
        is_error: bool = False,
        name: str = "",
        metadata: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Msg:
        """A `tool` message carrying one result for the call `tool_use_id`."""
        block = ToolResultBlock(
            tool_use_id=tool_use_id,
            content=content,  # a str becomes one TextBlock in the validator
            is_error=is_error,
            name=name,
            metadata=metadata or {},
        )
        return cls(role=Role.TOOL, content=[block], **fields)

    @property
    def blocks(self) -> list[ContentBlock]:
        if isinstance(self.content, str):
            return [TextBlock(text=self.content)] if self.content else []
        return list(self.content)

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.blocks if isinstance(b, ToolResultBlock)]

    @property
    def images(self) -> list[ImageBlock]:
        return [b for b in self.blocks if isinstance(b, ImageBlock)]

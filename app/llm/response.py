"""A finished model reply, the same for every provider."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.llm.messages import ContentBlock, Msg, TextBlock, ThinkingBlock, ToolUseBlock

__all__ = ["FinishReason", "LLMResponse", "Usage"]

FinishReason = Literal["stop", "length", "tool_use", "content_filter"]


class Usage(BaseModel):
    """Token counts as the provider reported them; `None` where it did not say.

    `input` is the prompt as the provider counts it (for OpenAI-family APIs it
    includes `cache_read`); `reasoning` is part of `output`.
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    total: int | None = None
    reasoning: int | None = None

    @property
    def known(self) -> bool:
        return any(v is not None for v in self.model_dump().values())


class LLMResponse(BaseModel):
    """A complete reply. `reasoning` is the joined thinking text, or None if there was none."""

    provider: str
    id: str
    model: str
    content: list[ContentBlock] = Field(default_factory=list)
    finish_reason: FinishReason = "stop"
    usage: Usage = Field(default_factory=Usage)
    reasoning: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def thinking(self) -> list[ThinkingBlock]:
        return [b for b in self.content if isinstance(b, ThinkingBlock)]

    def to_msg(self) -> Msg:
        """The reply as an assistant message for the history (thinking kept for replay)."""
        return Msg.assistant(
            list(self.content),
            metadata={"provider": self.provider, "model": self.model, "response_id": self.id},
        )

"""The conversation as the embedded model's chat template takes it: a role and plain
text per message (a tool's call and result in words; images refused in words)."""

from __future__ import annotations

import json

from app.llm.errors import ValidationError
from app.llm.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.llm.request import LLMRequest
from app.llm.transform import prepare_messages

__all__ = ["NAME", "to_messages"]

NAME = "local"  # the wire's name (app.llm.wire.local)


def _text_of(msg: Msg) -> str:
    parts: list[str] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            continue  # its own reasoning is not read back (another's is text by now)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[calls {block.name} {json.dumps(block.input, ensure_ascii=False)}]")
        elif isinstance(block, ImageBlock):
            raise ValidationError(
                "The embedded model cannot see images; choose a vision model for image input."
            )
        elif not isinstance(block, ToolResultBlock):
            raise ValidationError(f"The embedded model cannot read a {block.kind} block.")
    return "\n".join(p for p in parts if p)


def to_messages(request: LLMRequest) -> list[dict[str, str]]:
    """Messages as the GGUF chat template wants them: a role and plain text."""
    out: list[dict[str, str]] = []
    for msg in prepare_messages(request.messages, wire=NAME, provider=NAME):
        for result in msg.tool_results:
            if result.images:
                raise ValidationError("The embedded model cannot see images from tools.")
            out.append({"role": "tool", "content": result.text or "(no output)"})
        text = _text_of(msg)
        if text or (not msg.tool_results and msg.role != Role.TOOL):
            role = Role.USER if msg.role == Role.TOOL else msg.role
            out.append({"role": str(role), "content": text})
    return out

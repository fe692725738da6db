"""Secrets out of everything a turn brings into the app, where it comes in.

A model may repeat a key it was shown (a server echoing the request's Authorization
header, a tool that printed a config file), a user may read one out. The model's
streamed text and reasoning are masked as they arrive (`ReplyMasking`), before the
reply pipeline shows or speaks them; every message of a turn (the user's words, the
model's reply and tool calls, tool results, notes in its metadata) is masked before it
is sent on or stored (`mask_message`). The secrets are the `Redactor`'s.
"""

from __future__ import annotations

from typing import Any

from app.agent.outputs import ThinkingDelta
from app.llm import (
    ContentBlock,
    Msg,
    NativeBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.redaction import MASK, Redactor, StreamMasker

__all__ = ["ReplyMasking", "mask_message"]


class ReplyMasking:
    """One model call's streamed text and reasoning, masked; the order of the two is kept
    (what one channel holds back comes out before the other goes on)."""

    __slots__ = ("_last", "_maskers")

    def __init__(self, redactor: Redactor) -> None:
        self._maskers = {"text": StreamMasker(redactor), "thinking": StreamMasker(redactor)}
        self._last = ""

    @staticmethod
    def _item(channel: str, text: str) -> str | ThinkingDelta:
        return text if channel == "text" else ThinkingDelta(text)

    def feed(self, channel: str, delta: str) -> list[str | ThinkingDelta]:
        out: list[str | ThinkingDelta] = []
        if self._last and self._last != channel:
            held = self._maskers[self._last].flush()
            if held:
                out.append(self._item(self._last, held))
        self._last = channel
        masked = self._maskers[channel].feed(delta)
        if masked:
            out.append(self._item(channel, masked))
        return out

    def flush(self) -> list[str | ThinkingDelta]:
        out: list[str | ThinkingDelta] = []
        for channel, masker in self._maskers.items():
            held = masker.flush()
            if held:
                out.append(self._item(channel, held))
        return out


def _exact(value: Any, redactor: Redactor) -> Any:
    """`value` with the redactor's exact secrets masked in every string (no key shapes:
    a provider's opaque data, such as encrypted reasoning, must stay byte for byte)."""
    if isinstance(value, str):
        for secret in redactor.secrets:
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {k: _exact(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v, redactor) for v in value]
    return value


def _masked(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {k: _masked(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, redactor) for v in value]
    if isinstance(value, tuple):
        return tuple(_masked(v, redactor) for v in value)
    return value


def _block(block: ContentBlock, redactor: Redactor) -> ContentBlock:
    if isinstance(block, TextBlock):
        text = redactor(block.text)
        return block if text == block.text else block.model_copy(update={"text": text})
    if isinstance(block, ThinkingBlock):
        text = redactor(block.text)
        if text == block.text:
            return block
        # Its signature no longer fits the words: it goes on as unsigned reasoning.
        return block.model_copy(update={"text": text, "signature": None, "provider": None})
    if isinstance(block, ToolUseBlock):
        given = _masked(block.input, redactor)
        return block if given == block.input else block.model_copy(update={"input": given})
    if isinstance(block, ToolResultBlock):
        content = [_block(b, redactor) for b in block.content]
        if all(a is b for a, b in zip(content, block.content, strict=True)):
            return block
        return block.model_copy(update={"content": content})
    if isinstance(block, NativeBlock):
        data = _exact(block.data, redactor)
        return block if data == block.data else block.model_copy(update={"data": data})
    return block  # images, audio, files: references to files, no text


def mask_message(msg: Msg, redactor: Redactor) -> Msg:
    """`msg` with every secret masked in its text, reasoning, tool calls and results and
    metadata (the same object when there was nothing to mask)."""
    if isinstance(msg.content, str):
        content: Any = redactor(msg.content)
        changed = content != msg.content
    else:
        content = [_block(b, redactor) for b in msg.content]
        changed = any(a is not b for a, b in zip(content, msg.content, strict=True))
    metadata = _masked(msg.metadata, redactor) if msg.metadata else msg.metadata
    if not changed and metadata == msg.metadata:
        return msg
    return msg.model_copy(update={"content": content, "metadata": metadata})

"""`StreamAssembler`: the one place where a wire parser's pieces (text, thinking,
tool-call fragments) become stream events and, at the end, an `LLMResponse`."""

from __future__ import annotations

from typing import Any, Literal

import jiter

from app.llm.errors import ProviderError
from app.llm.events import BlockInfo, BlockKind, EventEmitter, ModelStreamEvent
from app.llm.messages import ContentBlock, TextBlock, ThinkingBlock, ToolUseBlock
from app.llm.response import FinishReason, LLMResponse, Usage

__all__ = ["StreamAssembler"]


class _OpenBlock:
    __slots__ = ("info", "snapshot")

    def __init__(self, info: BlockInfo) -> None:
        self.info = info
        self.snapshot = ""


class StreamAssembler:
    """Turns a wire's pieces (text, thinking, tool-call fragments) into events, and the
    finished blocks into an `LLMResponse`. Every wire parser drives one of these.

    Methods append to `out` rather than return lists: a parser calls several per chunk.
    Text and thinking blocks close when the other channel or a tool call starts; tool
    blocks are keyed by the provider's own index, so parallel calls never mix.
    """

    __slots__ = ("_blocks", "_open", "_tools", "emitter", "model", "response_id", "started")

    def __init__(self, emitter: EventEmitter) -> None:
        self.emitter = emitter
        self.model = emitter.scope.model
        self.response_id: str | None = None
        self.started = False
        self._blocks: list[tuple[_OpenBlock, ContentBlock | None]] = []
        self._open: _OpenBlock | None = None  # the open text or thinking block
        self._tools: dict[Any, _OpenBlock] = {}

    @property
    def terminated(self) -> bool:
        return self.emitter.terminated

    def start(self, out: list[ModelStreamEvent], response_id: str | None) -> None:
        if not self.started:
            self.started = True
            self.response_id = response_id
            out.append(self.emitter.started(response_id))

    def _new_block(self, kind: BlockKind, **tool: Any) -> _OpenBlock:
        index = len(self._blocks)
        block = _OpenBlock(
            BlockInfo(index, f"{self.emitter.scope.model_stream_id}:{index}", kind, **tool)
        )
        self._blocks.append((block, None))
        return block

    def _text_like(
        self, out: list[ModelStreamEvent], kind: Literal["text", "thinking"], piece: str
    ) -> None:
        block = self._open
        if block is None or block.info.kind != kind:
            if block is not None:
                self._close(out, block)
            block = self._open = self._new_block(kind)
            out.append(self.emitter.block_started(block.info))
        block.snapshot += piece
        out.append(self.emitter.delta(block.info, kind, piece, block.snapshot))

    def text(self, out: list[ModelStreamEvent], piece: str) -> None:
        self._text_like(out, "text", piece)

    def thinking(self, out: list[ModelStreamEvent], piece: str) -> None:
        self._text_like(out, "thinking", piece)

    def tool_call(
        self,
        out: list[ModelStreamEvent],
        key: Any,
        *,
        call_id: str | None = None,
        name: str | None = None,
        arguments: str | None = None,
    ) -> None:
        """A tool-call fragment: the first one for `key` opens the block."""
        block = self._tools.get(key)
        if block is None:
            if self._open is not None:
                self._close(out, self._open)
            block = self._new_block(
                "tool_use",
                tool_call_id=call_id or f"call_{self.emitter.scope.model_stream_id}_{key}",
                tool_name=name or "",
            )
            self._tools[key] = block
            out.append(self.emitter.block_started(block.info))
            if name:
                out.append(self.emitter.delta(block.info, "tool_name", name, name))
        elif name and name != block.info.tool_name:
            block.info.tool_name = (block.info.tool_name or "") + name
            out.append(self.emitter.delta(block.info, "tool_name", name, block.info.tool_name))
        if arguments:
            block.snapshot += arguments
            try:
                partial = jiter.from_json(block.snapshot.encode(), partial_mode="trailing-strings")
            except ValueError:
                partial = None
            out.append(
                self.emitter.delta(
                    block.info,
                    "tool_arguments",
                    arguments,
                    block.snapshot,
                    partial if isinstance(partial, dict) else None,
                )
            )

    def _close(self, out: list[ModelStreamEvent], block: _OpenBlock) -> None:
        info = block.info
        content: ContentBlock
        if info.kind == "text":
            content = TextBlock(text=block.snapshot)
        elif info.kind == "thinking":
            content = ThinkingBlock(text=block.snapshot, provider=self.emitter.scope.provider)
        else:
            raw = block.snapshot.strip()
            value: Any = {}
            if raw:
                try:
                    value = jiter.from_json(raw.encode())
                except ValueError:
                    value = None  # cut off (a length limit) or not JSON: never guessed at
            name = info.tool_name or ""
            refused = None
            if not isinstance(value, dict):
                refused = (
                    f"This call to {name} was not run: its arguments were cut off or are "
                    f"not a JSON object ({_clipped(raw)}). Call it again with complete "
                    "arguments, or answer without it."
                )
                value = {}
            info.input = value
            content = ToolUseBlock(
                id=info.tool_call_id or "", name=name, input=value, refused=refused
            )
        if self._open is block:
            self._open = None
        self._blocks[info.index] = (block, content)
        out.append(self.emitter.block_completed(info, content))

    def close_blocks(self, out: list[ModelStreamEvent]) -> None:
        """Close every open block (a tool call with broken arguments is marked, not run)."""
        for block, content in self._blocks:
            if content is None:
                self._close(out, block)

    def usage(self, out: list[ModelStreamEvent], usage: Usage, complete: bool) -> None:
        out.append(self.emitter.usage(usage, complete))

    def complete(
        self,
        out: list[ModelStreamEvent],
        finish_reason: FinishReason,
        usage: Usage | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Close the blocks and end the stream with `response.completed`."""
        self.close_blocks(out)
        content = [c for _, c in self._blocks if c is not None]
        thinking = [c.text for c in content if isinstance(c, ThinkingBlock) and c.text]
        response = LLMResponse(
            provider=self.emitter.scope.provider,
            id=self.response_id or self.emitter.scope.model_stream_id,
            model=self.model,
            content=content,
            finish_reason=finish_reason,
            usage=usage or Usage(),
            reasoning="".join(thinking) if thinking else None,
            metadata=metadata or {},
        )
        out.append(self.emitter.completed(response))

    def fail(self, out: list[ModelStreamEvent], error: ProviderError) -> None:
        if not self.emitter.terminated:
            out.append(self.emitter.failed(error))

    def cancel(self, out: list[ModelStreamEvent], error: ProviderError | None = None) -> None:
        if not self.emitter.terminated:
            out.append(self.emitter.cancelled(error))


def _clipped(raw: str, limit: int = 80) -> str:
    """The start of a call's raw arguments, for the model to see what it sent."""
    return repr(raw[:limit] + "…") if len(raw) > limit else repr(raw)

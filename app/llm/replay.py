"""A provider that can only `complete()`, seen as one that streams.

`ReplayedStream(provider).stream(request)` asks for the whole reply and replays it as
the events a streaming provider sends (one delta per block), ending in exactly one
terminal event; a `ProviderError` from `complete()` becomes `response.failed`, as
the stream rules want. Everything that reads streams (AgentCore, the vision
summarizer) then takes a completion-only provider as it is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from app.llm.errors import ProviderError
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent
from app.llm.messages import TextBlock, ThinkingBlock, ToolUseBlock
from app.llm.request import LLMRequest

if TYPE_CHECKING:
    from app.llm.client import CompletionProvider


class ReplayedStream:
    """A `StreamingProvider` over a `CompletionProvider`. Other attributes (`load`,
    `aclose`, `estimate_input_tokens`, ...) are the wrapped provider's own."""

    def __init__(self, provider: CompletionProvider, *, name: str = "custom") -> None:
        self.provider = provider
        self.name = str(getattr(provider, "provider", "") or name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.provider, attribute)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        emitter = EventEmitter(self.name, request.model)
        try:
            response = await self.provider.complete(request.model_copy(update={"stream": False}))
        except ProviderError as exc:
            yield emitter.failed(exc)
            return
        yield emitter.started(response.id)
        for index, block in enumerate(response.content):
            info: BlockInfo
            if isinstance(block, TextBlock):
                info = BlockInfo(index, f"block{index}", "text")
                yield emitter.block_started(info)
                yield emitter.delta(info, "text", block.text, block.text)
            elif isinstance(block, ThinkingBlock):
                info = BlockInfo(index, f"block{index}", "thinking")
                yield emitter.block_started(info)
                if block.text:
                    yield emitter.delta(info, "thinking", block.text, block.text)
            elif isinstance(block, ToolUseBlock):
                info = BlockInfo(
                    index, f"block{index}", "tool_use", tool_call_id=block.id, tool_name=block.name
                )
                yield emitter.block_started(info)
                arguments = json.dumps(block.input, ensure_ascii=False)
                yield emitter.delta(
                    info, "tool_arguments", arguments, arguments, partial_input=block.input
                )
                info.input = block.input
            else:
                continue  # no stream block carries it; the reply below keeps it
            yield emitter.block_completed(info, block)
        if response.usage.known:
            yield emitter.usage(response.usage, True)
        yield emitter.completed(response)

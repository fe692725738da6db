"""MemoryAgent: the conversation's memory around AgentCore.

It keeps the history, turns a `BatchInput` into the user's message, runs the
reply pipeline over AgentCore's token stream, and rewrites an interrupted
reply into exactly what the user heard. It never calls the model itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from app.agent.core import AgentCore
from app.agent.outputs import SentenceOutput, ToolStatus
from app.agent.transformers import reply_pipeline
from app.avatar.state import EXPRESSIONS
from app.llm import Msg

INTERRUPTED_NOTE = "[The user interrupted you here; they heard only the text above.]"


@dataclass(slots=True)
class BatchInput:
    """What the user gave in one turn (speech transcript and/or typed text)."""

    texts: list[str]
    from_name: str = "user"
    metadata: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(t for t in self.texts if t.strip())


class MemoryAgent:
    def __init__(
        self,
        core: AgentCore,
        *,
        expressions: Sequence[str] = EXPRESSIONS,
        first_fragment_at_comma: bool = True,
    ) -> None:
        self.core = core
        self.expressions = tuple(expressions)
        self.first_fragment_at_comma = first_fragment_at_comma
        self.history: list[Msg] = core.storage.load(core.conf_uid, core.history_uid)

    def set_memory_from_history(self, conf_uid: str, history_uid: str) -> None:
        self.core.conf_uid, self.core.history_uid = conf_uid, history_uid
        self.history = self.core.storage.load(conf_uid, history_uid)

    async def chat(self, batch: BatchInput) -> AsyncIterator[SentenceOutput | ToolStatus]:
        """Sentences (and tool status) of the reply, in order, as they become ready."""
        user = Msg.user(batch.text)
        user.sender = batch.from_name
        out: asyncio.Queue[SentenceOutput | ToolStatus | BaseException | None] = asyncio.Queue()
        tokens: asyncio.Queue[str | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async for item in self.core.run_turn(self.history, user):
                    if isinstance(item, ToolStatus):
                        await out.put(item)
                    else:
                        await tokens.put(item)
            except BaseException as exc:
                await tokens.put(None)
                await out.put(exc)
                raise
            await tokens.put(None)

        async def token_stream() -> AsyncIterator[str]:
            while (token := await tokens.get()) is not None:
                yield token

        async def shape() -> None:
            async for sentence in reply_pipeline(
                token_stream(),
                expressions=self.expressions,
                first_fragment_at_comma=self.first_fragment_at_comma,
            ):
                await out.put(sentence)
            await out.put(None)

        producer = asyncio.create_task(produce())
        shaper = asyncio.create_task(shape())
        try:
            while True:
                item = await out.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    await asyncio.gather(shaper, return_exceptions=True)
                    # Sentences already shaped still reach the user before the error.
                    while not out.empty():
                        rest = out.get_nowait()
                        if isinstance(rest, SentenceOutput | ToolStatus):
                            yield rest
                    raise item
                yield item
            await producer
        finally:
            for task in (producer, shaper):
                if not task.done():
                    task.cancel()
            for task in (producer, shaper):
                with contextlib.suppress(BaseException):
                    await task

    def handle_interrupt(self, heard_response: str) -> None:
        """The user cut the reply off: keep only what they heard, and tell the model so."""
        for index in range(len(self.history) - 1, -1, -1):
            msg = self.history[index]
            if msg.role == "assistant":
                heard = heard_response.strip()
                amended = Msg.assistant(
                    f"{heard}\n{INTERRUPTED_NOTE}" if heard else INTERRUPTED_NOTE
                )
                amended.metadata = {**msg.metadata, "interrupted": True, "heard": heard}
                self.history[index] = amended
                if index == len(self.history) - 1:
                    self.core.storage.amend_last(self.core.conf_uid, self.core.history_uid, amended)
                return

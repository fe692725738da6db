"""MemoryAgent: the conversation's memory around AgentCore.

It keeps the history, turns a `BatchInput` into the user's message (attached images
become `p1`, `p2`, ... through `media.import_image`), runs the reply pipeline over
AgentCore's token stream, and rewrites an interrupted reply into exactly what the
user heard. It never calls the model itself.

Interruption is one generation counter: every turn takes a number, and each stage
(the token producer, the sentence shaper, the consumer loop) checks that its number
is still the current one before passing anything on, so output of a cancelled turn
never reaches the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.agent.commit import TurnCommit
from app.agent.core import AgentCore
from app.agent.notes import INTERRUPTED_NOTE
from app.agent.outputs import SentenceOutput, ToolStatus
from app.agent.read_ahead import schedule_read_ahead
from app.agent.transformers import reply_pipeline
from app.agent.vision import last_label_number
from app.avatar.state import EXPRESSIONS
from app.llm import ContentBlock, ImageBlock, Msg, Role, TextBlock
from app.media import ImageError, import_image_async

log = logging.getLogger(__name__)



@dataclass(slots=True)
class BatchInput:
    """What the user gave in one turn: speech transcript and/or typed text, and images
    (files, bytes, or already imported `ImageBlock`s)."""

    texts: list[str]
    from_name: str = "user"
    metadata: dict[str, object] = field(default_factory=dict)
    images: list[Path | bytes | ImageBlock] = field(default_factory=list)

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
        self._generation = 0
        self._turn_task: asyncio.Task[None] | None = None
        self._pending_heard: str | None = None

    @property
    def generation(self) -> int:
        """The current turn's number; a turn whose number is older is stale."""
        return self._generation

    def set_memory_from_history(self, conf_uid: str, history_uid: str) -> None:
        """Resume a saved conversation (any running turn is dropped first)."""
        self._generation += 1
        if self._turn_task is not None and not self._turn_task.done():
            self._turn_task.cancel()
        self.core.conf_uid, self.core.history_uid = conf_uid, history_uid
        self.history = self.core.storage.load(conf_uid, history_uid)
        self.read_ahead()  # its first turn finds its start read

    def read_ahead(self) -> None:
        """Have the embedded model read the start of the next turn of this conversation
        when it is free (`app.agent.read_ahead`)."""
        if self.core.memory is not None:
            schedule_read_ahead(self.core, self.core.memory, self.history)

    async def _user_message(self, batch: BatchInput) -> Msg:
        if not batch.images:
            user = Msg.user(batch.text)
        else:
            blocks: list[ContentBlock] = [TextBlock(text=batch.text)] if batch.text else []
            number = last_label_number(self.history, "p")
            for source in batch.images:
                number += 1
                label = f"p{number}"
                try:
                    if isinstance(source, ImageBlock):
                        image = source.model_copy(update={"name": label})
                    else:
                        image = await import_image_async(
                            source,
                            session_id=self.core.history_uid,
                            name=label,
                            root=self.core.media_root,
                        )
                except ImageError as exc:
                    blocks.append(TextBlock(text=f"[image {label} could not be read: {exc}]"))
                    continue
                blocks.append(image)
            user = Msg.user(blocks)
        user.sender = batch.from_name
        if batch.metadata:
            user.metadata.update(batch.metadata)
        return user

    async def chat(
        self, batch: BatchInput, *, commit: TurnCommit | None = None
    ) -> AsyncIterator[SentenceOutput | ToolStatus]:
        """Sentences (and tool status) of the reply, in order, as they become ready.
        With a held `commit` (a speculative reply) nothing of the turn is recorded, and
        no tool runs, until it is confirmed; discarded, it leaves no trace."""
        self._generation += 1
        generation = self._generation

        def current() -> bool:
            return generation == self._generation

        user = await self._user_message(batch)
        out: asyncio.Queue[SentenceOutput | ToolStatus | BaseException | None] = asyncio.Queue()

        async def produce() -> None:
            # The reply pipeline runs straight over the model's turn, so answer text,
            # reasoning and tool statuses come out in the order the model produced them.
            # It runs in a task of its own so an interruption can cancel it wherever it
            # waits (the model, a tool), not only between sentences.
            replies = reply_pipeline(
                self.core.run_turn(self.history, user, commit=commit),
                expressions=self.expressions,
                first_fragment_at_comma=self.first_fragment_at_comma,
            )
            try:
                async with contextlib.aclosing(replies):
                    async for item in replies:
                        if not current():
                            break
                        await out.put(item)
            except BaseException as exc:
                await out.put(exc)
                raise
            await out.put(None)

        producer = asyncio.create_task(produce())
        self._turn_task = producer
        try:
            while current():
                item = await out.get()
                if item is None or not current():
                    break
                if isinstance(item, BaseException):
                    raise item  # what was said before it is already out, in order
                yield item
            if current():
                await producer
        finally:
            if not producer.done():
                producer.cancel()
            with contextlib.suppress(BaseException):
                await producer
            self._apply_pending_interrupt()

    def handle_interrupt(self, heard_response: str) -> None:
        """The user cut the reply off: stop the running turn (model stream and tools),
        keep only what they heard, and tell the model so on the next turn."""
        self._generation += 1
        task = self._turn_task
        if task is not None and not task.done():
            # The turn records itself when its task ends; amend it after that.
            self._pending_heard = heard_response
            task.cancel()
            task.add_done_callback(lambda _task: self._apply_pending_interrupt())
            return
        self._amend_last_turn(heard_response)

    def _apply_pending_interrupt(self) -> None:
        heard, self._pending_heard = self._pending_heard, None
        if heard is not None:
            self._amend_last_turn(heard)

    def _amend_last_turn(self, heard_response: str) -> None:
        history = self.history
        start = next(
            (
                i
                for i in range(len(history) - 1, -1, -1)
                if history[i].role == Role.USER and not history[i].tool_results
            ),
            None,
        )
        if start is None:
            return
        replies = [i for i in range(start + 1, len(history)) if history[i].role == Role.ASSISTANT]
        if not replies:
            return
        heard = heard_response.strip()
        # What was heard covers the whole turn: text of earlier rounds (before a tool
        # call) is folded into the last reply, their tool calls stay.
        for index in replies[:-1]:
            msg = history[index]
            kept = [b for b in msg.blocks if not isinstance(b, TextBlock)]
            if len(kept) != len(msg.blocks):
                self._amend(index, msg.model_copy(update={"content": kept}))
        index = replies[-1]
        old = history[index]
        amended = Msg.assistant(
            f"{heard}\n{INTERRUPTED_NOTE}" if heard else INTERRUPTED_NOTE,
            metadata={**old.metadata, "interrupted": True, "heard": heard},
            timestamp=old.timestamp,
        )
        self._amend(index, amended)

    def _amend(self, index: int, message: Msg) -> None:
        self.history[index] = message
        try:
            self.core.storage.amend(
                self.core.conf_uid, self.core.history_uid, index - len(self.history), message
            )
        except OSError as exc:
            log.error("could not save what was heard (%s); it stays in memory", exc)

"""MemoryAgent: the conversation's memory around AgentCore.

It owns the history and which conversation it is (the core is told through
`AgentCore.use_conversation`), turns a `BatchInput` into the user's message (attached
images become `p1`, `p2`, ... through `media.import_image`), runs the reply pipeline
over the core's turn, and records each turn once, when it is over (`app.agent.recording`):
with a `TurnCommit` that waits for what the user heard, as far as they heard it. It
never calls the model itself.

Interrupting a reply is closing it (or cancelling whoever reads it): that stops the
model stream and the tools wherever they wait, and nothing more comes out.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from app.agent.agent_turn import AgentTurn, TurnOutcome
from app.agent.commit import TurnCommit
from app.agent.core import AgentCore
from app.agent.notes import INTERRUPTED_NOTE
from app.agent.outputs import SentenceOutput, ToolStatus
from app.agent.read_ahead import schedule_read_ahead
from app.agent.recording import Saved, recorder
from app.agent.streams import OutcomeStream
from app.agent.transformers import reply_pipeline
from app.agent.vision import last_label_number
from app.avatar.state import EXPRESSIONS
from app.llm import ContentBlock, ImageBlock, Msg, TextBlock
from app.media import ImageError, import_image_async
from app.text_input import readable

__all__ = ["INTERRUPTED_NOTE", "AgentReply", "BatchInput", "MemoryAgent", "Reply"]


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
        # Text that is not valid Unicode (lone surrogates from undecodable bytes) is
        # mended here, where every host's words enter the agent (`app.text_input`).
        return readable("\n".join(t for t in self.texts if t.strip()))


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
        self._switches = 0
        self._reply: AgentReply | None = None  # the latest reply, maybe still running

    @property
    def conversation_switches(self) -> int:
        """How many times the agent moved to another conversation: a reply started
        before the last move belongs to a conversation it is no longer on."""
        return self._switches

    def set_memory_from_history(self, conf_uid: str, history_uid: str) -> None:
        """Resume a saved conversation (any running turn is dropped first; it is
        recorded in its own conversation)."""
        self._switches += 1
        if self._reply is not None:
            self._reply.stop()
        self.core.use_conversation(conf_uid, history_uid)
        self.history = self.core.storage.load(conf_uid, history_uid)
        self.read_ahead()  # its first turn finds its start read

    def read_ahead(self) -> None:
        """Have the embedded model read the start of the next turn of this conversation
        when it is free (`app.agent.read_ahead`)."""
        if self.core.memory is not None:
            schedule_read_ahead(self.core, self.core.memory, self.history)

    async def user_message(self, batch: BatchInput) -> Msg:
        """The user's message for `batch`, its images imported and labelled."""
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

    def chat(self, batch: BatchInput, *, commit: TurnCommit | None = None) -> AgentReply:
        """The reply to `batch` (`AgentReply`): sentences and tool statuses, in order, as
        they become ready; then its `outcome`. The turn is recorded once, when it is
        over: at once without a `commit`; with one, when the commit allows (a held one
        when it is confirmed, never if discarded, and no tool runs before; one that
        waits for what was heard, when it is settled, as far as the user heard it)."""
        reply = self._reply = AgentReply(self, batch, commit)
        return reply


class Reply(Protocol):
    """A reply as the one who shows or speaks it reads it: `AgentReply`, or one started
    ahead and held until its turn came (`app.session.speculation`). `commit` is the
    `TurnCommit` that says when its turn is recorded, if it was given one."""

    @property
    def commit(self) -> TurnCommit | None: ...

    @property
    def outcome(self) -> TurnOutcome: ...

    def __aiter__(self) -> AsyncIterator[SentenceOutput | ToolStatus]: ...

    async def aclose(self) -> None:
        """Stop the reply where it is (its model and tools too)."""
        ...


class AgentReply(OutcomeStream[SentenceOutput | ToolStatus]):
    """The reply to one batch. Iterate it (closing it, or cancelling its reader, stops
    the model and the tools); `outcome` tells how the turn went, once the iteration
    ended, however it ended."""

    def __init__(self, agent: MemoryAgent, batch: BatchInput, commit: TurnCommit | None) -> None:
        self.agent = agent
        self.batch = batch
        self.commit = commit
        self._turn: AgentTurn | None = None
        self._saved: Saved | None = None
        self._producer: asyncio.Task[None] | None = None
        self._stopped = False

    @property
    def outcome(self) -> TurnOutcome:
        """The turn's stamps, tool rounds, model calls and error, and once it was
        recorded, what of the history could not be written yet."""
        outcome = self._turn.outcome if self._turn is not None else TurnOutcome()
        if self._saved is None:
            return outcome
        saved = self._saved
        return dataclasses.replace(outcome, unsaved=saved.unsaved, save_problem=saved.problem)

    def stop(self) -> None:
        """Stop the turn wherever it waits (the model, a tool), and end the reply: the
        agent moved to another conversation."""
        self._stopped = True
        if self._producer is not None and not self._producer.done():
            self._producer.cancel()

    def _saved_as(self, saved: Saved) -> None:
        self._saved = saved

    async def _items(self) -> AsyncGenerator[SentenceOutput | ToolStatus, None]:
        agent = self.agent
        user = await agent.user_message(self.batch)
        history = agent.history
        ended = recorder(agent.core, history, self.commit, self._saved_as)
        turn = self._turn = agent.core.turn(history, user, commit=self.commit, on_end=ended)
        out: asyncio.Queue[SentenceOutput | ToolStatus | BaseException | None] = asyncio.Queue()

        async def produce() -> None:
            # The reply pipeline runs straight over the model's turn, so answer text,
            # reasoning and tool statuses come out in the order the model produced them.
            # It runs in a task of its own so an interruption can cancel it wherever it
            # waits (the model, a tool), not only between sentences.
            replies = reply_pipeline(
                turn,
                expressions=agent.expressions,
                first_fragment_at_comma=agent.first_fragment_at_comma,
            )
            try:
                async with contextlib.aclosing(turn), contextlib.aclosing(replies):
                    async for item in replies:
                        await out.put(item)
            except BaseException as exc:
                await out.put(exc)
                raise
            await out.put(None)

        producer = self._producer = asyncio.create_task(produce())
        try:
            while not self._stopped:
                item = await out.get()
                if item is None or self._stopped:
                    break
                if isinstance(item, BaseException):
                    raise item  # what was said before it is already out, in order
                yield item
            if not self._stopped:
                await producer
        finally:
            if not producer.done():
                producer.cancel()
            with contextlib.suppress(BaseException):
                await producer

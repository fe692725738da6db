"""Speculative replies: when the words of a pause are in before the turn is confirmed,
the model may start on them. The reply is held (nothing played, shown or stored, no
tool run: `app.agent.commit.TurnCommit`) until the turn is confirmed with the same
words, and then it is the turn's reply from its first sentence on (`reply()`), recorded
as its turn heard it; otherwise it is discarded and leaves no trace.

Speculation costs model calls that may be thrown away, so it is on by default only
for models that cost nothing (`speculation_enabled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from app.agent import BatchInput, MemoryAgent, SentenceOutput, ToolStatus, TurnOutcome
from app.agent.commit import CommitState, TurnCommit
from app.agent.streams import OutcomeStream
from app.session.wording import same_words

if TYPE_CHECKING:
    from app.config import Settings

log = logging.getLogger(__name__)

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def speculation_enabled(settings: Settings) -> bool:
    """`turn.speculative_replies`: on, off, or (auto) on for the embedded model and for
    models served on this computer (Ollama, a llama.cpp server on loopback), whose
    thrown-away calls cost nothing but time."""
    choice = settings.turn.speculative_replies
    if choice != "auto":
        return choice == "on"
    model = settings.chat.model
    provider = model.split("/", 1)[0]
    if provider == "local":
        return True
    base_url = settings.chat.base_url
    if base_url:
        return (urlparse(base_url).hostname or "") in _LOOPBACK
    return provider == "ollama"


@dataclass(slots=True)
class SpeculationStats:
    """What speculation did in a session: replies started, used, thrown away, and the
    model calls they made (those of thrown-away ones were wasted)."""

    started: int = 0
    used: int = 0
    discarded: int = 0
    model_calls: int = 0
    wasted_calls: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


Item = SentenceOutput | ToolStatus


class Speculation:
    """One held reply to `text`, started at once."""

    def __init__(self, agent: MemoryAgent, text: str, stats: SpeculationStats) -> None:
        self.text = text
        self.agent = agent
        # Held until the turn is confirmed; then recorded as far as its turn was heard.
        self.commit = TurnCommit(until_heard=True)
        self.started_at = time.perf_counter()
        self._stats = stats
        self._items: asyncio.Queue[Item | BaseException | None] = asyncio.Queue()
        self._switches = agent.conversation_switches  # the conversation it belongs to
        self._reply = agent.chat(BatchInput([text]), commit=self.commit)
        self._task = asyncio.ensure_future(self._run())
        self._task.add_done_callback(self._count_calls)
        self._counted = False
        stats.started += 1

    def _count_calls(self, _task: asyncio.Future[None] | None = None) -> None:
        # Counted once the reply is over and its fate known: every call it made, used
        # or not (those of a discarded reply were wasted).
        if self.commit.held or not self._task.done() or self._counted:
            return
        self._counted = True
        calls = self.model_calls
        self._stats.model_calls += calls
        if self.commit.state is CommitState.DISCARDED:
            self._stats.wasted_calls += calls

    async def _run(self) -> None:
        replies = self._reply
        try:
            async for item in replies:
                self._items.put_nowait(item)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the turn that uses it reports it (AgentTurnError)
            self._items.put_nowait(exc)
        finally:
            self._items.put_nowait(None)
            with contextlib.suppress(BaseException):
                await replies.aclose()

    @property
    def outcome(self) -> TurnOutcome:
        """How the reply's turn went, so far."""
        return self._reply.outcome

    @property
    def model_calls(self) -> int:
        return self._reply.outcome.model_calls

    def matches(self, text: str) -> bool:
        """Whether the confirmed turn said the same words, and the reply still belongs
        to the agent's current conversation."""
        same_conversation = self.agent.conversation_switches == self._switches
        return self.commit.held and same_conversation and same_words(self.text, text)

    def confirm(self) -> None:
        """The turn is confirmed with these words: the reply is the turn's."""
        self.commit.confirm()
        self._stats.used += 1
        self._count_calls()

    def discard(self) -> None:
        """The user went on, said something else, or interrupted: drop the reply."""
        if not self.commit.held:
            return
        self.commit.discard()
        self._task.cancel()
        self._stats.discarded += 1
        self._count_calls()
        log.info("speculative reply to %r thrown away", self.text)

    def stop(self) -> None:
        """Its turn was interrupted: the model and the tools stop (the turn is recorded
        as far as it was heard, when its commit is settled)."""
        self._task.cancel()

    def reply(self) -> HeldReply:
        """The reply from its first sentence on, for the turn that uses it."""
        return HeldReply(self)

    async def held_items(self) -> AsyncIterator[Item]:
        """What was held, then the rest, as it comes."""
        while (item := await self._items.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def describe(self) -> dict[str, Any]:
        return {"text": self.text, "state": self.commit.state.value}


class HeldReply(OutcomeStream[Item]):
    """A confirmed speculation's reply as its turn reads it (an `app.agent.Reply`):
    stopping to read it before the end (an interruption) stops the reply."""

    def __init__(self, speculation: Speculation) -> None:
        self.speculation = speculation

    @property
    def commit(self) -> TurnCommit:
        return self.speculation.commit

    @property
    def outcome(self) -> TurnOutcome:
        return self.speculation.outcome

    async def _items(self) -> AsyncGenerator[Item, None]:
        finished = False
        try:
            async for item in self.speculation.held_items():
                yield item
            finished = True
        finally:
            if not finished:
                self.speculation.stop()

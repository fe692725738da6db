"""Speculative replies: when the words of a pause are in before the turn is confirmed,
the model may start on them. The reply is held (nothing played, shown or stored, no
tool run: `app.agent.commit.TurnCommit`) until the turn is confirmed with the same
words, and then it is the turn's reply from its first sentence on; otherwise it is
discarded and leaves no trace.

Speculation costs model calls that may be thrown away, so it is on by default only
for models that cost nothing (`speculation_enabled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from app.agent import BatchInput, MemoryAgent, SentenceOutput, ToolStatus
from app.agent.commit import CommitState, TurnCommit
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
        self.commit = TurnCommit()
        self.started_at = time.perf_counter()
        self._stats = stats
        self._items: asyncio.Queue[Item | BaseException | None] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._run())
        self._task.add_done_callback(self._count_calls)
        self._counted = False
        self._generation = -1
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
        replies = self.agent.chat(BatchInput([self.text]), commit=self.commit)
        self._generation = self.agent.generation + 1  # chat() takes the next number
        try:
            async for item in replies:
                self._items.put_nowait(item)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the turn that uses it reports it (AgentTurnError)
            self._items.put_nowait(exc)
        finally:
            self._items.put_nowait(None)
            close = getattr(replies, "aclose", None)
            if close is not None:
                with contextlib.suppress(BaseException):
                    await close()

    @property
    def model_calls(self) -> int:
        stats = self.commit.stats
        return int(getattr(stats, "model_calls", 0)) if stats is not None else 0

    def matches(self, text: str) -> bool:
        """Whether the confirmed turn said the same words, and the reply still belongs
        to the agent's current conversation."""
        stale = self.agent.generation != self._generation and self._generation >= 0
        return self.commit.held and not stale and same_words(self.text, text)

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

    async def replies(self) -> AsyncIterator[Item]:
        """The reply from its first sentence on (what was held, then the rest)."""
        while (item := await self._items.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def describe(self) -> dict[str, Any]:
        return {"text": self.text, "state": self.commit.state.value}

"""AgentCore: the only place that calls the chat model.

`run_turn` streams text tokens out the moment they arrive and, whatever happens
(success, failure, interruption), appends the turn to storage at the end.
Model reasoning is passed on wrapped in `<think>` … `</think>` so the reply
pipeline shows it and never speaks it. The tool loop arrives with the agent
issue; the `enable_tool` switch is here so configs need not change then.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from app.agent.outputs import ToolStatus
from app.agent.storage import ConversationStorage
from app.llm import LLMRequest, Msg, StreamingProvider, TextBlock

log = logging.getLogger(__name__)


class AgentTurnError(Exception):
    """The model could not answer; the message is the provider's complaint in words."""


@dataclass(slots=True)
class TurnStats:
    """perf_counter() stamps of one turn, for stage timings."""

    request_sent: float | None = None
    first_token: float | None = None
    finished: float | None = None
    text: str = ""
    interrupted: bool = False
    error: str | None = None


@dataclass
class AgentCore:
    provider: StreamingProvider
    model: str
    storage: ConversationStorage
    conf_uid: str
    history_uid: str
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    max_tool_rounds: int = 6
    enable_tool: bool = False
    chat_supports_vision: bool = False
    require_detailed: bool = False
    last_stats: TurnStats = field(default_factory=TurnStats)

    def _request(self, history: list[Msg], user: Msg) -> LLMRequest:
        messages = [Msg.system(self.system_prompt)] if self.system_prompt else []
        messages += [*history, user]
        return LLMRequest(
            model=self.model,
            messages=messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=True,
        )

    async def warm_up(self) -> None:
        """Have a local model read the system prompt ahead of the first turn.

        llama.cpp keeps the evaluated prefix, so the first real turn then only reads
        the user's words: its first token came about 4x sooner when measured here.
        Nothing is stored. Only for local models: a hosted one would bill for it.
        """
        request = self._request([], Msg.user("Hi"))
        request.max_tokens = 1
        async for event in self.provider.stream(request):
            if event.kind == "response.failed":
                log.info("warming the model up failed: %s", event.error)

    async def run_turn(self, history: list[Msg], user: Msg) -> AsyncIterator[str | ToolStatus]:
        """Stream the reply to `user`; `history` gets the turn appended when it ends."""
        stats = self.last_stats = TurnStats()
        request = self._request(history, user)
        parts: list[str] = []
        thinking_open = False
        final: Msg | None = None
        try:
            stats.request_sent = time.perf_counter()
            async for event in self.provider.stream(request):
                if event.kind == "block.delta":
                    channel, delta = event.channel, event.delta
                    if not delta:
                        continue
                    if channel == "text":
                        if thinking_open:
                            thinking_open = False
                            yield "</think>"
                        if stats.first_token is None:
                            stats.first_token = time.perf_counter()
                        parts.append(delta)
                        yield delta
                    elif channel == "thinking":
                        if stats.first_token is None:
                            stats.first_token = time.perf_counter()
                        if not thinking_open:
                            thinking_open = True
                            yield "<think>"
                        yield delta
                elif event.kind == "response.completed":
                    final = event.response.to_msg()
                elif event.kind == "response.failed":
                    stats.error = str(event.error)
                elif event.kind == "response.cancelled":
                    stats.interrupted = True
            if thinking_open:
                yield "</think>"
        except GeneratorExit:
            stats.interrupted = True
            raise
        except BaseException as exc:
            # Cancellation or a bug: record what happened, then let it propagate.
            stats.interrupted = True
            if not isinstance(exc, Exception):
                raise
            stats.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            stats.finished = time.perf_counter()
            stats.text = "".join(parts)
            self._record(history, user, final, stats)
        if stats.error is not None:
            raise AgentTurnError(stats.error)

    def _record(self, history: list[Msg], user: Msg, final: Msg | None, stats: TurnStats) -> None:
        if final is None or stats.interrupted or stats.error:
            final = Msg.assistant(stats.text)
            if stats.interrupted:
                final.metadata["interrupted"] = True
            if stats.error:
                final.metadata["error"] = stats.error
        if not final.blocks:
            final.content = [TextBlock(text="")]
        turn = [user, final]
        history.extend(turn)
        try:
            self.storage.append(self.conf_uid, self.history_uid, turn)
        except OSError as exc:
            log.error("could not save the conversation (%s); it stays in memory", exc)

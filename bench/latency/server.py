"""The scripted chat model for the latency bench: an OpenAI-compatible server on
loopback with a known time to first token and token rate, so model time is the
same, and known, for every system measured.

Built on `tests/llm_servers.ScriptedChatServer`: the response headers go out after
`ttft - 1/rate` seconds, then one SSE event per token, `1/rate` apart; the first
event already carries the first token, so it arrives `ttft` after the request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.llm_servers import Reply, ScriptedChatServer, chat_chunk, sse

REPLY_TEXT = (
    "[joy] Oh, that's a great question! "
    "It looks sunny and warm outside today, perfect for a walk. "
    "[surprise] Did you know the forecast said rain this morning? "
    "Anyway, take a light jacket just in case."
)
SCREEN_REPLY_TEXT = (
    "[joy] I can see your screen now! "
    "It's a plain dark desktop with nothing open yet. "
    "Do you want me to help you find something?"
)


def tokens_of(text: str) -> list[str]:
    """Word-sized tokens (a tag is one token), leading spaces kept."""
    return re.findall(r"\s*\[[^\]]*\]|\s*[^\s\[]+", text)


def text_reply(text: str, interval: float) -> Reply:
    pieces = tokens_of(text)
    events = [sse(chat_chunk({"role": "assistant", "content": pieces[0]}))]
    events += [sse(chat_chunk({"content": piece})) for piece in pieces[1:]]
    events.append(sse(chat_chunk({}, finish_reason="stop")))
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": len(pieces),
        "total_tokens": 50 + len(pieces),
    }
    events.append(sse({"id": "chatcmpl-scripted", "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return Reply(headers={"content-type": "text/event-stream"}, chunks=events, delay=interval)


def screenshot_call_reply(interval: float) -> Reply:
    """A streamed take_screenshot call, as OpenAI sends it (cf. tests/test_agent_e2e.py)."""
    arguments = json.dumps({"monitor": "under_mouse"})
    head = {
        "index": 0,
        "id": "call_screen1",
        "type": "function",
        "function": {"name": "take_screenshot", "arguments": ""},
    }
    cut = len(arguments) // 2
    events = [
        sse(chat_chunk({"role": "assistant", "content": None, "tool_calls": [head]})),
        sse(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:cut]}}]})),
        sse(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[cut:]}}]})),
        sse(chat_chunk({}, finish_reason="tool_calls")),
        b"data: [DONE]\n\n",
    ]
    return Reply(headers={"content-type": "text/event-stream"}, chunks=events, delay=interval)


@dataclass(frozen=True)
class ModelScript:
    ttft_ms: float = 300.0
    tokens_per_s: float = 50.0

    @property
    def interval(self) -> float:
        return 1.0 / self.tokens_per_s

    def describe(self) -> dict[str, Any]:
        return {
            "ttft_ms": self.ttft_ms,
            "tokens_per_s": self.tokens_per_s,
            "reply": REPLY_TEXT,
            "reply_tokens": len(tokens_of(REPLY_TEXT)),
            "first_sentence_tokens": len(tokens_of(REPLY_TEXT.split("!")[0] + "!")),
        }


class BenchChatServer(ScriptedChatServer):
    """Serves `cycle` over and over (one reply per request) with a fixed TTFT."""

    def __init__(self, script: ModelScript, cycle: list[Reply]) -> None:
        super().__init__(cycle)
        self.script = script
        self._cycle = itertools.cycle(cycle)
        # perf_counter() stamps per request: (arrived, last byte written)
        self.served: list[tuple[float, float]] = []

    @classmethod
    def chat(cls, script: ModelScript | None = None) -> BenchChatServer:
        script = script or ModelScript()
        return cls(script, [text_reply(REPLY_TEXT, script.interval)])

    @classmethod
    def tool_first(cls, script: ModelScript | None = None) -> BenchChatServer:
        script = script or ModelScript()
        return cls(
            script,
            [
                screenshot_call_reply(script.interval),
                text_reply(SCREEN_REPLY_TEXT, script.interval),
            ],
        )

    def reset(self) -> None:
        """Start the cycle over (before each tool-call turn)."""
        with self._lock:
            self._cycle = itertools.cycle(self._replies)

    def _next_reply(self) -> Reply:
        with self._lock:
            return next(self._cycle)

    async def _send(
        self, writer: asyncio.StreamWriter, reply: Reply, reader: asyncio.StreamReader
    ) -> None:
        arrived = time.perf_counter()
        await asyncio.sleep(max(0.0, self.script.ttft_ms / 1000 - reply.delay))
        await super()._send(writer, reply, reader)
        self.served.append((arrived, time.perf_counter()))

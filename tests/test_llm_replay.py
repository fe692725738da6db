"""A completion-only provider seen as a streaming one: its finished reply replayed as
well-formed stream events, its errors encoded in the stream."""

from __future__ import annotations

from typing import Any

from app.llm import (
    LLMRequest,
    LLMResponse,
    Msg,
    OverloadedError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    collect_response,
)
from app.llm.replay import ReplayedStream
from tests.llm_servers import assert_well_formed


class Completes:
    def __init__(self, answer: LLMResponse | Exception) -> None:
        self.answer = answer
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        return 7


REQUEST = LLMRequest(model="m", messages=[Msg.user("Hi")], stream=True)


async def events_of(provider: Any) -> list[Any]:
    return [e async for e in ReplayedStream(provider).stream(REQUEST)]


async def test_a_finished_reply_is_replayed_block_by_block_and_completes() -> None:
    reply = LLMResponse(
        provider="host",
        id="r1",
        model="m",
        content=[
            ThinkingBlock(text="hmm", signature="sig"),
            TextBlock(text="Hello."),
            ToolUseBlock(name="get_time", input={"timezone": "UTC"}),
        ],
        finish_reason="tool_use",
        usage=Usage(input=5, output=3),
    )
    provider = Completes(reply)
    events = await events_of(provider)
    assert_well_formed(events)
    assert provider.requests[0].stream is False  # complete() wants a non-streaming request
    deltas = [(e.channel, e.delta) for e in events if e.kind == "block.delta"]
    assert deltas == [
        ("thinking", "hmm"),
        ("text", "Hello."),
        ("tool_arguments", '{"timezone": "UTC"}'),
    ]
    tool_done = [e for e in events if e.kind == "block.completed"][-1]
    assert tool_done.block.tool_name == "get_time" and tool_done.block.input == {"timezone": "UTC"}
    assert [e.usage for e in events if e.kind == "usage.updated"] == [reply.usage]
    assert await collect_response(ReplayedStream(provider).stream(REQUEST)) == reply


async def test_a_provider_error_ends_the_stream_failed_not_raised() -> None:
    events = await events_of(Completes(OverloadedError("The model is busy.")))
    assert_well_formed(events)
    assert events[-1].kind == "response.failed" and "busy" in str(events[-1].error)
    assert events[-1].semantic_output_emitted is False


def test_the_wrapped_providers_own_methods_stay_reachable() -> None:
    assert ReplayedStream(Completes(OverloadedError("x"))).estimate_input_tokens(REQUEST) == 7

"""A held turn (a speculative reply, app.agent.commit.TurnCommit): nothing of it is
recorded and no tool runs until it is confirmed; discarded, it leaves no trace in the
history or the storage, through AgentCore and through MemoryAgent."""

from __future__ import annotations

import asyncio
import contextlib

from app.agent import BatchInput, MemoryAgent, SentenceOutput
from app.agent.commit import CommitState, TurnCommit
from app.llm import Msg
from tests.test_agent_core import Step, call, make_core, tool


async def test_a_held_turn_is_recorded_only_when_confirmed() -> None:
    core, _, storage = make_core([Step(text=["Sure", ", here you go."])])
    history: list[Msg] = []
    commit = TurnCommit()
    out = [t async for t in core.run_turn(history, Msg.user("hi"), commit=commit)]
    assert out == ["Sure", ", here you go."]  # it streamed, held
    assert history == [] and storage.load("c", core.history_uid) == []
    commit.confirm()
    assert [m.text for m in history] == ["hi", "Sure, here you go."]
    assert history == storage.load("c", core.history_uid)
    commit.confirm()  # once only
    assert len(history) == 2 and commit.stats.model_calls == 1


async def test_a_discarded_turn_leaves_no_trace_finished_or_cut_short() -> None:
    core, _, storage = make_core([Step(text=["One.", " Two.", " Three."], delay=0.05)])
    history: list[Msg] = []
    finished = TurnCommit()
    [t async for t in core.run_turn(history, Msg.user("first"), commit=finished)]
    finished.discard()
    cut = TurnCommit()
    turn = core.run_turn(history, Msg.user("second"), commit=cut)
    assert await turn.__anext__() == "One."
    cut.discard()
    await turn.aclose()
    assert finished.state is cut.state is CommitState.DISCARDED
    assert history == [] and storage.load("c", core.history_uid) == []
    finished.confirm()  # too late: a discarded turn stays discarded
    assert history == []


async def test_no_tool_runs_while_the_turn_is_held() -> None:
    ran: list[str] = []
    clock = tool("get_clock", lambda a, c: ran.append("clock") or {"time": "12:34"})
    core, provider, _ = make_core(
        [Step(text=["Let me check."], calls=[call("get_clock")]), Step(text=["It is 12:34."])],
        tools=[clock],
    )
    history: list[Msg] = []
    commit = TurnCommit()
    out: list[object] = []

    async def consume() -> None:
        async for item in core.run_turn(history, Msg.user("what time is it?"), commit=commit):
            out.append(item)

    task = asyncio.create_task(consume())
    async with asyncio.timeout(10):
        while len(out) < 2:  # the text and the tool status
            await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    assert ran == [] and len(provider.requests) == 1  # waiting for confirmation
    commit.confirm()
    await asyncio.wait_for(task, 10)
    assert ran == ["clock"] and out[-1] == "It is 12:34."
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]


async def test_a_held_tool_call_discarded_never_runs_the_tool() -> None:
    ran: list[str] = []
    shot = tool("take_screenshot", lambda a, c: ran.append("shot") or {"ok": True})
    core, _, storage = make_core(
        [Step(text=["Looking."], calls=[call("take_screenshot")])], tools=[shot]
    )
    commit = TurnCommit()
    history: list[Msg] = []
    turn = core.run_turn(history, Msg.user("what is on my screen?"), commit=commit)
    task = asyncio.create_task(anext(turn))
    await asyncio.sleep(0.1)
    commit.discard()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    await turn.aclose()
    assert ran == [] and history == [] and storage.load("c", core.history_uid) == []


async def test_memory_agent_held_reply_streams_sentences_and_records_after_confirm() -> None:
    core, _, storage = make_core([Step(text=["Hello there.", " How are you?"])])
    agent = MemoryAgent(core)
    commit = TurnCommit()
    said = [
        s.display_text
        async for s in agent.chat(BatchInput(["hi"]), commit=commit)
        if isinstance(s, SentenceOutput)
    ]
    assert said == ["Hello there.", "How are you?"] and agent.history == []
    commit.confirm()
    assert [m.text for m in agent.history] == ["hi", "Hello there. How are you?"]
    assert [m.text for m in storage.load("c", core.history_uid)] == [m.text for m in agent.history]


async def test_a_held_reply_waiting_for_what_was_heard_is_recorded_once_both_came() -> None:
    core, _, storage = make_core([Step(text=["Sure", ", here you go."])])
    agent = MemoryAgent(core)
    commit = TurnCommit(until_heard=True)  # a speculative reply a spoken turn will use
    [s async for s in agent.chat(BatchInput(["hi"]), commit=commit)]
    commit.settle(None)  # all of it was heard, but the turn is not confirmed yet
    assert agent.history == [] and storage.load("c", core.history_uid) == []
    commit.confirm()
    assert [m.text for m in agent.history] == ["hi", "Sure, here you go."]
    assert storage.load("c", core.history_uid) == agent.history


async def test_a_discarded_reply_is_never_recorded_whatever_is_settled() -> None:
    core, _, storage = make_core([Step(text=["Sure."])])
    agent = MemoryAgent(core)
    commit = TurnCommit(until_heard=True)
    [s async for s in agent.chat(BatchInput(["hi"]), commit=commit)]
    commit.discard()
    commit.settle(None)
    commit.confirm()
    assert agent.history == [] and storage.load("c", core.history_uid) == []

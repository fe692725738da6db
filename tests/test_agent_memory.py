"""MemoryAgent: interruption (mid-sentence, mid-tool-call, between sentences) and a turn
recorded once, as heard; resuming a conversation and user images."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from app.agent import BatchInput, FileStorage, InMemoryStorage, MemoryAgent, SentenceOutput
from app.agent.commit import TurnCommit
from app.agent.memory_agent import INTERRUPTED_NOTE
from app.agent.outputs import ToolStatus
from app.agent.reply_guard import MAX_REPLY_CHARS
from app.agent.tools import ToolContext
from app.llm import Msg
from tests.test_agent_core import Nothing, Step, call, make_core, tool


async def first_item(
    agent: MemoryAgent, text: str, received: list[object], commit: TurnCommit | None = None
) -> None:
    async for item in agent.chat(BatchInput([text]), commit=commit):
        received.append(item)


def until_heard() -> TurnCommit:
    """A commit as a spoken turn makes one: its turn is recorded once what the user
    heard of the reply is known."""
    return TurnCommit(held=False, until_heard=True)


async def cut_off(task: asyncio.Task[None], commit: TurnCommit, heard: str) -> None:
    """What the session does when the user cuts the reply off: it cancels the turn's
    task, then says what was heard."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    commit.settle(heard)


async def wait_for(predicate: object, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_a_reply_is_shaped_into_sentences() -> None:
    core, _, _ = make_core([Step(text=["[joy] Hi there! ", "How are ", "you?"])])
    agent = MemoryAgent(core)
    out = [s async for s in agent.chat(BatchInput(["hello"]))]
    assert [s.display_text for s in out if isinstance(s, SentenceOutput)] == [
        "Hi there!",
        "How are you?",
    ]
    assert out[0].actions.expressions == ["joy"]  # type: ignore[union-attr]


async def test_interrupted_mid_sentence_keeps_exactly_what_was_heard(tmp_path: Path) -> None:
    pieces = ["First sentence here. ", "Second ", "sentence ", "is ", "never ", "finished", "."]
    storage = FileStorage(tmp_path)
    core, provider, _ = make_core([Step(text=pieces, delay=0.05)], storage=storage)  # type: ignore[arg-type]
    agent = MemoryAgent(core)
    received: list[object] = []
    commit = until_heard()
    turn = asyncio.create_task(first_item(agent, "tell me", received, commit))
    await wait_for(lambda: received)
    await cut_off(turn, commit, "First sentence here.")
    # Nothing of the cancelled turn reached the caller after the interruption.
    assert [s.display_text for s in received] == ["First sentence here."]  # type: ignore[attr-defined]
    for stored in (agent.history, storage.load("c", core.history_uid)):
        assert [m.role for m in stored] == ["user", "assistant"]
        assert stored[-1].text == f"First sentence here.\n{INTERRUPTED_NOTE}"
        assert stored[-1].metadata["interrupted"] is True
    # The model is told on the next turn.
    provider.steps = [Step(text=["Sorry!"])]
    [s async for s in agent.chat(BatchInput(["go on"]))]
    sent = provider.requests[-1].messages
    assert INTERRUPTED_NOTE in sent[-2].text and sent[-1].text == "go on"


async def test_an_interrupted_turn_is_written_to_the_history_file_once_as_heard(
    tmp_path: Path,
) -> None:
    pieces = ["First sentence here. ", "Second ", "sentence ", "is ", "never ", "finished", "."]
    storage = FileStorage(tmp_path)
    core, _, _ = make_core([Step(text=pieces, delay=0.05)], storage=storage)  # type: ignore[arg-type]
    agent = MemoryAgent(core)
    received: list[object] = []
    commit = until_heard()
    turn = asyncio.create_task(first_item(agent, "tell me", received, commit))
    await wait_for(lambda: received)
    await cut_off(turn, commit, "First sentence here.")
    lines = (tmp_path / "c" / f"{core.history_uid}.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    # Two messages added, nothing amended or rewritten: the reply's line already holds
    # what was heard.
    assert [r["op"] for r in records] == ["add", "add"]
    reply = Msg.model_validate(records[-1]["msg"])
    assert reply.text == f"First sentence here.\n{INTERRUPTED_NOTE}"
    assert reply.metadata["interrupted"] is True
    assert reply.metadata["heard"] == "First sentence here."
    assert storage.load("c", core.history_uid)[-1] == reply
    commit.settle(None)  # a later settling changes nothing
    assert len((tmp_path / "c" / f"{core.history_uid}.jsonl").read_text().splitlines()) == 2


async def test_a_reply_heard_before_its_turn_wound_down_is_recorded_when_it_has() -> None:
    core, _, storage = make_core([Step(text=["One. ", "Two. ", "Three."], delay=0.1)])
    agent = MemoryAgent(core)
    received: list[object] = []
    commit = until_heard()
    turn = asyncio.create_task(first_item(agent, "count", received, commit))
    await wait_for(lambda: received)
    turn.cancel()
    commit.settle("One.")  # what was heard is known before the turn has ended
    assert storage.load("c", core.history_uid) == []
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(turn, 5)
    saved = storage.load("c", core.history_uid)
    assert [m.text for m in saved] == ["count", f"One.\n{INTERRUPTED_NOTE}"]
    assert agent.history == saved


async def test_interrupted_between_sentences_stops_before_the_next_one() -> None:
    core, _, storage = make_core(
        [Step(text=["One. ", "Two.", "", "", "", "Three. ", "Four."], delay=0.1)]
    )
    agent = MemoryAgent(core)
    received: list[object] = []
    commit = until_heard()
    turn = asyncio.create_task(first_item(agent, "count", received, commit))
    await wait_for(lambda: len(received) >= 1)
    await cut_off(turn, commit, "One.")
    assert all("Three" not in s.display_text for s in received)  # type: ignore[attr-defined]
    saved = storage.load("c", core.history_uid)
    assert saved[-1].text == f"One.\n{INTERRUPTED_NOTE}"


async def test_interrupted_mid_tool_call_cancels_the_tool() -> None:
    cancelled = asyncio.Event()

    async def slow(args: Nothing, ctx: ToolContext) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    core, provider, storage = make_core(
        [Step(text=["Let me look. "], calls=[call("slow")]), Step(text=["Too late."])],
        tools=[tool("slow", slow)],
    )
    agent = MemoryAgent(core)
    received: list[object] = []
    commit = until_heard()
    turn = asyncio.create_task(first_item(agent, "check it", received, commit))
    await wait_for(lambda: any(isinstance(r, ToolStatus) for r in received))
    await cut_off(turn, commit, "Let me look.")
    await asyncio.wait_for(cancelled.wait(), 1)
    assert len(provider.requests) == 1  # the model was not called again
    assert not any(getattr(r, "display_text", "") == "Too late." for r in received)
    saved = storage.load("c", core.history_uid)
    assert [m.role for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[1].tool_calls and saved[1].text == ""  # the heard text moved to the end
    assert saved[2].tool_results[0].is_error
    assert saved[-1].text == f"Let me look.\n{INTERRUPTED_NOTE}"
    assert agent.history == saved


async def test_a_reply_cut_off_after_it_streamed_whole_is_recorded_as_heard() -> None:
    core, _, storage = make_core([Step(text=["A long answer. ", "With two sentences."])])
    agent = MemoryAgent(core)
    commit = until_heard()
    [s async for s in agent.chat(BatchInput(["q"]), commit=commit)]
    assert agent.history == [] and storage.load("c", core.history_uid) == []  # not heard yet
    commit.settle("A long")  # playback was cut in the first sentence
    saved = storage.load("c", core.history_uid)
    assert saved[-1].text == f"A long\n{INTERRUPTED_NOTE}"
    assert saved[-1].metadata["heard"] == "A long"


async def test_output_of_an_interrupted_turn_never_reaches_the_caller_of_a_newer_turn() -> None:
    core, provider, _ = make_core(
        [Step(text=["Old one. ", "Old two. ", "Old three."], delay=0.05)]
    )
    agent = MemoryAgent(core)
    old: list[object] = []
    commit = until_heard()
    first = asyncio.create_task(first_item(agent, "first", old, commit))
    await wait_for(lambda: old)
    switches = agent.conversation_switches
    first.cancel()  # the newer turn starts before the old one has wound down
    provider.steps = [Step(text=["New answer."])]
    new = [s async for s in agent.chat(BatchInput(["second"]))]
    commit.settle("Old one.")
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(first, 5)
    assert agent.conversation_switches == switches  # an interruption is not a new conversation
    assert [s.display_text for s in new] == ["New answer."]  # type: ignore[union-attr]
    assert all("Old t" not in s.display_text for s in old)  # type: ignore[attr-defined]


async def test_a_saved_conversation_is_resumed(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    core, provider, _ = make_core([Step(text=["Yes."])], storage=storage)  # type: ignore[arg-type]
    older = storage.create_history("c")
    storage.append("c", older, [Msg.user("my name is Ada"), Msg.assistant("Hi Ada!")])
    agent = MemoryAgent(core)
    agent.set_memory_from_history("c", older)
    [s async for s in agent.chat(BatchInput(["remember me?"]))]
    texts = [m.text for m in provider.requests[-1].messages]
    assert texts[1:] == ["my name is Ada", "Hi Ada!", "remember me?"]
    assert [m.text for m in storage.load("c", older)][-1] == "Yes."


async def test_user_images_are_labelled_p1_p2_across_turns(tmp_path: Path) -> None:
    core, provider, _ = make_core(
        [Step(text=["Nice."])], chat_supports_vision=True, media_root=tmp_path
    )
    agent = MemoryAgent(core)
    first = tmp_path / "a.png"
    Image.new("RGB", (10, 10), "red").save(first)
    second = (tmp_path / "a.png").read_bytes()
    [s async for s in agent.chat(BatchInput(["look"], images=[first, second]))]
    [s async for s in agent.chat(BatchInput(["and"], images=[first, b"not an image"]))]
    sent = provider.requests[-1].messages
    labels = [i.name for m in sent for i in m.images]
    assert labels == ["p1", "p2", "p3"]
    assert "[image p4 could not be read" in sent[-1].text


async def test_in_memory_and_file_storage_behave_the_same_for_amendments(tmp_path: Path) -> None:
    for storage in (InMemoryStorage(), FileStorage(tmp_path)):
        uid = storage.create_history("c")
        storage.append("c", uid, [Msg.user("a"), Msg.assistant("b"), Msg.assistant("c")])
        storage.amend("c", uid, -2, Msg.assistant("B"))
        storage.amend_last("c", uid, Msg.assistant("C"))
        assert [m.text for m in storage.load("c", uid)] == ["a", "B", "C"]


async def test_a_very_long_reply_is_spoken_and_kept_up_to_the_apps_bound() -> None:
    # Sentences that never repeat (a repeating reply is a loop, which the guard stops):
    # 100,000 characters sent, spoken and kept up to MAX_REPLY_CHARS, whole sentences.
    pieces = [f"This is sentence {n} of a very long answer. " for n in range(3000)]
    text = "".join(pieces)[:100_000]
    core, _, storage = make_core([Step(text=[text[i : i + 50] for i in range(0, len(text), 50)])])
    agent = MemoryAgent(core)
    out = [s async for s in agent.chat(BatchInput(["talk"]))]
    stored = storage.load("c", core.history_uid)[-1].text
    assert text.startswith(stored) and stored.endswith("of a very long answer.")
    assert MAX_REPLY_CHARS - 50 < len(stored) <= MAX_REPLY_CHARS
    assert len(out) == stored.count("of a very long answer.")  # each one spoken


async def test_unbalanced_think_and_bracket_tags_do_not_lose_the_turn() -> None:
    core, _, storage = make_core([Step(text=["<think>never closed ", "[joy and [ no end"])])
    agent = MemoryAgent(core)
    out = [s async for s in agent.chat(BatchInput(["hm"]))]
    assert out  # something was shown
    assert storage.load("c", core.history_uid)[-1].text == "<think>never closed [joy and [ no end"


async def test_a_tool_status_comes_between_the_sentences_around_it() -> None:
    async def clock(args: Nothing, ctx: ToolContext) -> str:
        return "12:00"

    core, _, _ = make_core(
        [Step(text=["Let me ", "check"], calls=[call("clock")]), Step(text=["It is ", "noon."])],
        tools=[tool("clock", clock)],
    )
    agent = MemoryAgent(core)
    out = [item async for item in agent.chat(BatchInput(["what time is it?"]))]
    shown = [
        item.display_text if isinstance(item, SentenceOutput) else f"<{item.name}>"
        for item in out
        if not (isinstance(item, SentenceOutput) and item.is_thinking)
    ]
    assert shown == ["Let me check", "<clock>", "It is noon."]


async def test_reasoning_comes_typed_and_is_never_parsed_as_tags() -> None:
    # A typed reasoning channel that happens to contain "</think>" and a tag: it is all
    # thinking (shown, never spoken, no expression), and the answer after it is spoken.
    core, _, _ = make_core([Step(thinking="Use [joy]. </think> Not the answer.", text=["Hi!"])])
    agent = MemoryAgent(core)
    out = [s async for s in agent.chat(BatchInput(["hello"]))]
    sentences = [s for s in out if isinstance(s, SentenceOutput)]
    thinking = [s for s in sentences if s.is_thinking]
    assert " ".join(s.display_text for s in thinking) == "Use [joy]. </think> Not the answer."
    assert all(not s.tts_text and not s.actions.expressions for s in thinking)
    assert [(s.display_text, s.tts_text) for s in sentences if not s.is_thinking] == [
        ("Hi!", "Hi!")
    ]


async def test_what_was_said_before_a_failure_is_shown_then_the_error() -> None:
    from app.agent import AgentTurnError
    from app.llm import ProviderConnectionError

    class FailsMidReply:
        provider = "scripted"

        async def stream(self, request: object) -> AsyncIterator[object]:
            from app.llm.events import BlockInfo, EventEmitter

            emit = EventEmitter("scripted", "m")
            yield emit.started("r")
            info = BlockInfo(0, "b0", "text")
            yield emit.delta(info, "text", "Half a sent", "Half a sent")
            yield emit.failed(ProviderConnectionError("the connection dropped"))

    core, _, _ = make_core([Step(text=["unused"])])
    core.provider = FailsMidReply()  # type: ignore[assignment]
    agent = MemoryAgent(core)
    out: list[object] = []
    with pytest.raises(AgentTurnError):
        async for item in agent.chat(BatchInput(["hi"])):
            out.append(item)
    assert [s.display_text for s in out if isinstance(s, SentenceOutput)] == ["Half a sent"]

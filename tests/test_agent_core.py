"""AgentCore: streaming, the tool loop, retries, context trimming and the vision matrix,
with a scripted provider injected (real stream events, no HTTP)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import BaseModel

from app.agent import AgentCore, AgentTurnError, InMemoryStorage, ToolStatus
from app.agent.outputs import ThinkingDelta
from app.agent.reply_guard import MAX_REPLY_CHARS
from app.agent.tools import Tool, ToolContext, ToolRegistry
from app.agent.vision import SUMMARIES_KEY, VisionSummarizer
from app.llm import (
    ContextOverflowError,
    ImageBlock,
    InvalidRequestError,
    LLMRequest,
    LLMResponse,
    Msg,
    ProviderError,
    TextBlock,
    ToolUseBlock,
)
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent
from app.media import import_image

# ---------------------------------------------------------------- a scripted provider


@dataclass
class Step:
    """One scripted reply: text pieces, then tool calls; or an error before any output."""

    text: Sequence[str] = ()
    calls: Sequence[ToolUseBlock] = ()
    thinking: str = ""
    error: ProviderError | None = None
    delay: float = 0.0  # between text pieces


def call(name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(name=name, input=arguments)


@dataclass
class ScriptedProvider:
    """A StreamingProvider that answers each request with the next `Step` (the last
    one repeats) and records the requests it got."""

    steps: list[Step]
    requests: list[LLMRequest] = field(default_factory=list)
    provider: str = "scripted"

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        from app.llm.request import estimate_input_tokens

        return estimate_input_tokens(request)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        self.requests.append(request.model_copy(deep=True))
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        emit = EventEmitter("scripted", request.model)
        yield emit.started("resp")
        if step.error is not None:
            yield emit.failed(step.error)
            return
        content: list[Any] = []
        index = 0
        if step.thinking:
            info = BlockInfo(index, "b0", "thinking")
            yield emit.delta(info, "thinking", step.thinking, step.thinking)
            index += 1
        if step.text:
            info = BlockInfo(index, f"b{index}", "text")
            snapshot = ""
            for piece in step.text:
                if step.delay:
                    await asyncio.sleep(step.delay)
                snapshot += piece
                yield emit.delta(info, "text", piece, snapshot)
            content.append(TextBlock(text=snapshot))
        for c in step.calls:
            content.append(c)
        finish = "tool_use" if step.calls else "stop"
        yield emit.completed(
            LLMResponse(provider="scripted", id="r", model=request.model, content=content,
                        finish_reason=finish)
        )


def make_core(
    steps: list[Step],
    *,
    tools: Sequence[Tool] = (),
    storage: InMemoryStorage | None = None,
    **options: Any,
) -> tuple[AgentCore, ScriptedProvider, InMemoryStorage]:
    provider = ScriptedProvider(steps)
    storage = storage or InMemoryStorage()
    uid = storage.create_history("c")
    core = AgentCore(
        provider=provider,
        model="scripted",
        storage=storage,
        conf_uid="c",
        history_uid=uid,
        system_prompt="You are Mika.",
        enable_tool=bool(tools),
        tools=ToolRegistry(tools) if tools else None,
        **options,
    )
    return core, provider, storage


async def run(core: AgentCore, history: list[Msg], user: Msg | str) -> list[str | ToolStatus]:
    msg = Msg.user(user) if isinstance(user, str) else user
    return [item async for item in core.run_turn(history, msg)]


class Nothing(BaseModel):
    pass


class Wait(BaseModel):
    seconds: float = 0.0
    label: str = ""


def tool(name: str, func: Callable[..., Any], args: type[BaseModel] = Nothing, **kw: Any) -> Tool:
    async def wrapped(a: Any, ctx: ToolContext) -> Any:
        result = func(a, ctx)
        if asyncio.iscoroutine(result):
            result = await result
        return result

    return Tool(name, wrapped, args, f"the {name} tool", **kw)


def tool_messages(request: LLMRequest) -> list[Msg]:
    return [m for m in request.messages if m.role == "tool"]


# ---------------------------------------------------------------- streaming and storage


async def test_text_streams_out_and_the_turn_is_stored() -> None:
    core, provider, storage = make_core([Step(text=["Hello", " there!"])])
    history: list[Msg] = []
    out = await run(core, history, "hi")
    assert out == ["Hello", " there!"]
    saved = storage.load("c", core.history_uid)
    assert [(m.role, m.text) for m in saved] == [("user", "hi"), ("assistant", "Hello there!")]
    assert history == saved
    assert provider.requests[0].messages[0].text == "You are Mika."


async def test_thinking_comes_out_typed_not_as_think_tags() -> None:
    core, _, _ = make_core([Step(thinking="hmm", text=["Yes."])])
    out = await run(core, [], "?")
    assert out == [ThinkingDelta("hmm"), "Yes."]


async def test_a_failure_is_raised_in_words_and_still_recorded() -> None:
    error = InvalidRequestError("The server refused the request (HTTP 400): bad thing.")
    core, _, storage = make_core([Step(error=error)])
    with pytest.raises(AgentTurnError, match="bad thing"):
        await run(core, [], "hi")
    saved = storage.load("c", core.history_uid)
    # The user's words are kept, with what went wrong; no empty reply is made up.
    assert [(m.role, m.text) for m in saved] == [("user", "hi")]
    assert "bad thing" in saved[-1].metadata["error"]


# ---------------------------------------------------------------- the tool loop


async def test_a_tool_call_runs_and_the_model_answers_with_its_result() -> None:
    clock = tool("get_clock", lambda a, c: {"time": "12:34"})
    core, provider, storage = make_core(
        [Step(text=["Let me check."], calls=[call("get_clock")]), Step(text=["It is 12:34."])],
        tools=[clock],
    )
    turn = core.run_turn([], Msg.user("what time is it?"))
    out = [item async for item in turn]
    assert out == ["Let me check.", ToolStatus("get_clock", "[🔧 get_clock]"), "It is 12:34."]
    assert len(provider.requests) == 2
    assert provider.requests[0].tools[0].name == "get_clock"
    second = provider.requests[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2].tool_calls[0].name == "get_clock"
    result = second[3].tool_results[0]
    assert json.loads(result.text) == {"time": "12:34"} and not result.is_error
    assert result.tool_use_id == second[2].tool_calls[0].id
    # Every message of the turn is in storage, in order.
    saved = storage.load("c", core.history_uid)
    assert [m.role for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[-1].text == "It is 12:34."
    assert turn.outcome.tool_rounds == 1 and turn.outcome.model_calls == 2


async def test_tool_calls_of_one_round_run_concurrently() -> None:
    # Each call waits until both have started: run one after the other, the first one
    # would wait alone and report so.
    started: list[str] = []
    both_running = asyncio.Event()

    async def slow(a: Wait, c: ToolContext) -> str:
        started.append(a.label)
        if len(started) == 2:
            both_running.set()
        try:
            await asyncio.wait_for(both_running.wait(), a.seconds)
        except TimeoutError:
            return f"{a.label} ran alone"
        return a.label

    core, provider, _ = make_core(
        [
            Step(calls=[call("slow", seconds=30, label=x) for x in "ab"]),
            Step(text=["Done."]),
        ],
        tools=[tool("slow", slow, Wait)],
    )
    out = await run(core, [], "go")
    assert [o for o in out if isinstance(o, ToolStatus)] == [
        ToolStatus("slow", "[🔧 slow]"),
        ToolStatus("slow", "[🔧 slow]"),
    ]
    results = [m.tool_results[0].text for m in tool_messages(provider.requests[1])]
    assert results == ["a", "b"]


@pytest.mark.parametrize(
    ("func", "args", "timeout_s", "expected"),
    [
        (lambda a, c: 1 / 0, {}, 5.0, "ZeroDivisionError"),
        (lambda a, c: asyncio.sleep(5), {}, 0.1, "did not finish within 0.1 seconds"),
        (lambda a, c: "never", {"seconds": "soon"}, 5.0, "Invalid arguments for t: seconds"),
    ],
    ids=["exception", "timeout", "invalid arguments"],
)
async def test_a_failing_tool_becomes_an_error_result_not_a_crash(
    func: Callable[..., Any], args: dict[str, Any], timeout_s: float, expected: str
) -> None:
    core, provider, _ = make_core(
        [Step(calls=[call("t", **args)]), Step(text=["Sorry, that failed."])],
        tools=[tool("t", func, Wait, timeout_s=timeout_s)],
    )
    out = await run(core, [], "go")
    assert out[-1] == "Sorry, that failed."
    result = tool_messages(provider.requests[1])[0].tool_results[0]
    assert result.is_error and expected in result.text


async def test_an_unknown_tool_and_non_json_data_are_answered_in_words() -> None:
    odd = tool("odd", lambda a, c: {"when": object()})
    core, provider, _ = make_core(
        [Step(calls=[call("nope"), call("odd")]), Step(text=["ok"])], tools=[odd]
    )
    await run(core, [], "go")
    unknown, weird = (m.tool_results[0] for m in tool_messages(provider.requests[1]))
    assert unknown.is_error and "no tool named 'nope'" in unknown.text
    assert not weird.is_error and "object object" in weird.text


async def test_after_max_rounds_the_model_is_asked_for_a_final_answer_without_tools() -> None:
    ping = tool("ping", lambda a, c: "pong")
    core, provider, storage = make_core(
        [Step(calls=[call("ping")])], tools=[ping], max_tool_rounds=3
    )
    out = await run(core, [], "loop forever")
    # The final answer had no words (only calls it was told not to make): asked once
    # more, then the fallback line is said rather than silence.
    assert len(provider.requests) == 5
    assert [r.tool_choice for r in provider.requests] == [None, None, None, "none", "none"]
    assert sum(isinstance(o, ToolStatus) for o in out) == 3
    saved = storage.load("c", core.history_uid)
    # The last reply's ignored calls are dropped: no call is left without a result.
    assert saved[-1].role == "assistant" and not saved[-1].tool_calls
    assert saved[-1].metadata.get("fallback") and "lost my words" in saved[-1].text
    assert len([m for m in saved if m.role == "tool"]) == 3


async def test_a_model_that_rejects_tools_is_asked_again_without_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused = InvalidRequestError("The server refused the request (HTTP 400): tools is not supported")  # noqa: E501
    core, provider, _ = make_core(
        [Step(error=refused), Step(text=["Hi!"])], tools=[tool("ping", lambda a, c: "pong")]
    )
    with caplog.at_level(logging.WARNING):
        out = await run(core, [], "hello")
    assert out == ["Hi!"]
    assert [len(r.tools) for r in provider.requests] == [1, 0]
    assert core.tools_rejected and "does not take tools" in caplog.text
    await run(core, [], "again")
    assert provider.requests[-1].tools == []


# ---------------------------------------------------------------- context


def long_history(turns: int) -> list[Msg]:
    history: list[Msg] = []
    for n in range(turns):
        history += [Msg.user(f"question {n} {'x' * 400}"), Msg.assistant(f"answer {n} {'y' * 400}")]
    return history


async def test_history_beyond_the_context_window_is_trimmed_oldest_first() -> None:
    core, provider, _ = make_core([Step(text=["ok"])], context_window=1500, max_tokens=200)
    await run(core, long_history(20), "newest question")
    sent = provider.requests[0].messages
    assert sent[0].role == "system" and sent[-1].text == "newest question"
    assert provider.estimate_input_tokens(provider.requests[0]) <= 1500 - 200
    kept = [m.text.split()[1] for m in sent[1:-1]]
    assert kept and kept == sorted(kept, key=int) and kept[-1] == "19"
    assert "0" not in kept
    assert [m.role for m in sent[1:-1]] == ["user", "assistant"] * (len(kept) // 2)


async def test_a_context_overflow_trims_and_retries_once() -> None:
    overflow = ContextOverflowError("The conversation is too long for scripted.")
    core, provider, _ = make_core([Step(error=overflow), Step(text=["fits now"])])
    out = await run(core, long_history(10), "q")
    assert out == ["fits now"]
    first, second = provider.requests
    assert len(second.messages) < len(first.messages)
    assert second.messages[0].role == "system" and second.messages[-1].text == "q"


async def test_a_second_overflow_is_reported() -> None:
    overflow = ContextOverflowError("The conversation is too long for scripted.")
    core, provider, _ = make_core([Step(error=overflow)])
    with pytest.raises(AgentTurnError, match="too long"):
        await run(core, long_history(4), "q")
    assert len(provider.requests) == 2


# ---------------------------------------------------------------- images and vision


def png(path: Path, color: str = "red", size: tuple[int, int] = (64, 48)) -> Path:
    Image.new("RGB", size, color).save(path)
    return path


class Picture(BaseModel):
    color: str = "red"


def picture_tool(root: Path) -> Tool:
    async def picture(a: Picture, ctx: ToolContext) -> list[Any]:
        image = import_image(
            png(root / f"{a.color}.png", a.color), session_id=ctx.session_id, root=root
        )
        return [f"a {a.color} picture", image]

    return Tool("picture", picture, Picture, "a picture")


class FakeVision:
    """A vision 'model' that describes an image by its label."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def summarize(self, image: ImageBlock, *, question: str = "") -> str:
        self.seen.append(image.name or "")
        return f"a drawing called {image.name}"


async def test_tool_images_are_labelled_tool1_tool2_and_never_collide_with_user_images(
    tmp_path: Path,
) -> None:
    core, provider, storage = make_core(
        [
            Step(calls=[call("picture", color="red")]),
            Step(calls=[call("picture", color="blue")]),
            Step(text=["Two pictures."]),
        ],
        tools=[picture_tool(tmp_path)],
        chat_supports_vision=True,
        media_root=tmp_path,
    )
    user_image = import_image(png(tmp_path / "u.png", "green"), session_id="s", name="p1",
                                   root=tmp_path)
    await run(core, [], Msg.user([TextBlock(text="look"), user_image]))
    last = provider.requests[-1]
    labels = [img.name for m in last.messages for r in m.tool_results for img in r.images]
    assert labels == ["tool1", "tool2"]
    assert last.messages[1].images[0].name == "p1"
    # A later turn continues the numbering.
    provider.steps = [Step(calls=[call("picture", color="black")]), Step(text=["ok"])]
    await run(core, storage.load("c", core.history_uid), "again")
    latest = [img.name for m in provider.requests[-1].messages for r in m.tool_results
              for img in r.images]
    assert latest == ["tool1", "tool2", "tool3"]


async def test_a_vision_chat_model_gets_images_directly_without_a_vision_call(
    tmp_path: Path,
) -> None:
    vision = FakeVision()
    core, provider, _ = make_core(
        [Step(calls=[call("picture")]), Step(text=["Red."])],
        tools=[picture_tool(tmp_path)], chat_supports_vision=True, vision=vision,
        media_root=tmp_path,
    )
    await run(core, [], "what is it?")
    images = [i for m in provider.requests[1].messages for r in m.tool_results for i in r.images]
    assert [i.name for i in images] == ["tool1"]
    assert vision.seen == []


async def test_require_detailed_also_stores_per_image_summaries(tmp_path: Path) -> None:
    vision = FakeVision()
    core, provider, storage = make_core(
        [Step(calls=[call("picture")]), Step(text=["Red."])],
        tools=[picture_tool(tmp_path)], chat_supports_vision=True, require_detailed=True,
        vision=vision, media_root=tmp_path,
    )
    await run(core, [], "what is it?")
    assert vision.seen == ["tool1"]
    assert any(r.images for m in provider.requests[1].messages for r in m.tool_results)
    saved_tool = next(m for m in storage.load("c", core.history_uid) if m.role == "tool")
    assert saved_tool.metadata[SUMMARIES_KEY] == {"tool1": "a drawing called tool1"}


async def test_a_text_only_chat_model_reads_summaries_instead_of_images(tmp_path: Path) -> None:
    vision = FakeVision()
    core, provider, _ = make_core(
        [Step(calls=[call("picture")]), Step(text=["Red."])],
        tools=[picture_tool(tmp_path)], chat_supports_vision=False, vision=vision,
        media_root=tmp_path,
    )
    user_image = import_image(png(tmp_path / "u.png"), session_id="s", name="p1",
                                   root=tmp_path)
    await run(core, [], Msg.user([TextBlock(text="and this?"), user_image]))
    assert vision.seen == ["p1", "tool1"]
    for request in provider.requests:
        assert not any(m.images for m in request.messages)
        assert not any(r.images for m in request.messages for r in m.tool_results)
    texts = json.dumps([m.model_dump(mode="json") for m in provider.requests[1].messages])
    assert "[image p1: a drawing called p1]" in texts
    assert "[image tool1: a drawing called tool1]" in texts


async def test_a_text_only_model_without_a_vision_model_gets_a_clear_note(tmp_path: Path) -> None:
    core, provider, _ = make_core([Step(text=["I cannot see it."])], chat_supports_vision=False)
    user_image = import_image(png(tmp_path / "u.png"), session_id="s", name="p1",
                                   root=tmp_path)
    await run(core, [], Msg.user([TextBlock(text="see?"), user_image]))
    sent = provider.requests[0].messages[-1]
    assert not sent.images
    assert "cannot see images and no vision model is configured" in sent.text


async def test_the_vision_summarizer_uses_the_neutral_provider_interface(tmp_path: Path) -> None:
    provider = ScriptedProvider([Step(text=["A red ", "square."])])
    summarizer = VisionSummarizer(provider, "vision-model")
    image = import_image(png(tmp_path / "u.png"), session_id="s", name="p1", root=tmp_path)
    assert await summarizer.summarize(image, question="what colour?") == "A red square."
    request = provider.requests[0]
    assert request.model == "vision-model" and request.messages[0].images[0].name == "p1"
    assert "what colour?" in request.messages[0].text


# ---------------------------------------------------------------- interruption at core level


async def test_a_turn_cancelled_mid_tool_records_the_call_as_cancelled() -> None:
    started = asyncio.Event()

    async def hang(a: Nothing, c: ToolContext) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    core, provider, storage = make_core(
        [Step(text=["Looking."], calls=[call("hang")]), Step(text=["never said"])],
        tools=[tool("hang", hang)],
    )

    async def consume() -> None:
        await run(core, [], "go")

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = storage.load("c", core.history_uid)
    assert [m.role for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[2].tool_results[0].is_error and "interrupted" in saved[2].tool_results[0].text
    assert saved[-1].metadata["interrupted"] is True
    assert len(provider.requests) == 1


async def test_a_reply_is_bounded_by_the_app_whatever_the_server_sends() -> None:
    # 100,000 characters of sentences that never repeat (a repeating reply is a loop,
    # which the guard stops): the app stops it at MAX_REPLY_CHARS, at a sentence's end.
    text = " ".join(f"Note w{n} is kept." for n in range(8_000))[:100_000]
    pieces = [text[i : i + 100] for i in range(0, len(text), 100)]
    core, _, storage = make_core([Step(text=pieces)])
    out = await run(core, [], "talk a lot")
    said = "".join(o for o in out if isinstance(o, str))
    assert MAX_REPLY_CHARS - 100 <= len(said) <= MAX_REPLY_CHARS
    stored = storage.load("c", core.history_uid)[-1].text
    assert stored.endswith("is kept.") and len(stored) <= MAX_REPLY_CHARS
    assert len(stored) > MAX_REPLY_CHARS - 30  # all its whole sentences
    # A voice reply stops at its sentences long before this: no limit set here.
    assert core.max_sentences == 0

"""The agent's own cost: tool-loop overhead per round, and screenshot → model-ready image.

    python bench/bench_agent.py [--turns 200] [--rounds 4] [--history 200] [--no-screen]

The tool loop runs against an in-process scripted provider that answers at once
and a no-op tool, so what is measured is AgentCore itself: building each request
(vision matrix, trimming to the context window, tool-call pairing), reading the
stream, running and recording the tool calls. The screenshot figure captures a
4K Xvfb screen (started here if Xvfb is installed) and imports it through
`media.import_image`. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel

from app.agent import AgentCore, InMemoryStorage
from app.agent.tools import Tool, ToolContext, ToolRegistry
from app.llm import LLMRequest, LLMResponse, Msg, TextBlock, ToolUseBlock
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent


class InstantProvider:
    """Calls the tool `rounds` times per turn, then answers; no waiting anywhere."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.calls = 0

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        emit = EventEmitter("bench", request.model)
        yield emit.started("r")
        in_turn = sum(1 for m in request.messages[-(2 * self.rounds + 1) :] if m.role == "tool")
        if request.tools and in_turn < self.rounds:
            content: list[Any] = [ToolUseBlock(name="noop", input={"n": in_turn})]
            finish = "tool_use"
        else:
            info = BlockInfo(0, "b0", "text")
            for piece in ("Done", " now."):
                yield emit.delta(info, "text", piece, piece)
            content, finish = [TextBlock(text="Done now.")], "stop"
        yield emit.completed(
            LLMResponse(
                provider="bench", id="r", model=request.model, content=content, finish_reason=finish
            )
        )


class NoopArgs(BaseModel):
    n: int = 0


async def noop(args: NoopArgs, context: ToolContext) -> dict[str, int]:
    return {"n": args.n}


def history_of(turns: int) -> list[Msg]:
    history: list[Msg] = []
    for n in range(turns):
        history += [Msg.user(f"question {n} about something"), Msg.assistant(f"answer {n}.")]
    return history


async def time_turns(rounds: int, turns: int, history_turns: int) -> list[float]:
    storage = InMemoryStorage()
    core = AgentCore(
        provider=InstantProvider(rounds),
        model="bench",
        storage=storage,
        conf_uid="b",
        history_uid=storage.create_history("b"),
        system_prompt="You are a bench.",
        enable_tool=True,
        tools=ToolRegistry([Tool("noop", noop, NoopArgs, "does nothing")]),
        max_tool_rounds=rounds + 1,
        context_window=32_000,
    )
    base = history_of(history_turns)
    times: list[float] = []
    for _ in range(turns):
        history = list(base)
        start = time.perf_counter()
        async for _item in core.run_turn(history, Msg.user("go")):
            pass
        times.append(time.perf_counter() - start)
    return times


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def tool_loop(turns: int, rounds: int, history: int) -> None:
    plain = await time_turns(0, turns, history)
    looped = await time_turns(rounds, turns, history)
    per_round = (p50(looped) - p50(plain)) / rounds
    print(f"tool loop, {history}-turn history, {turns} turns each (p50):")
    print(f"  turn without tools          {p50(plain):8.3f} ms")
    print(f"  turn with {rounds} tool rounds     {p50(looped):8.3f} ms")
    print(f"  overhead per tool round     {per_round:8.3f} ms")


def start_xvfb() -> tuple[subprocess.Popen[bytes], str] | None:
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        return None
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "3840x2160x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as reader:
        number = reader.readline().strip()
    return proc, f":{number}"


async def screenshot(runs: int) -> None:
    from app.media import ScreenGrabber, capture_screen, import_image_async

    started = start_xvfb() if not os.environ.get("DISPLAY") else None
    if started is not None:
        os.environ["DISPLAY"] = started[1]
    grabber = ScreenGrabber()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            grab, total, fused = [], [], []
            for n in range(runs):
                start = time.perf_counter()
                capture = await capture_screen("under_mouse", folder=root / "captures")
                mid = time.perf_counter()
                await import_image_async(capture.path, session_id=f"b{n}", root=root)
                end = time.perf_counter()
                await grabber.capture_for_model(
                    "under_mouse", folder=root / "captures", session_id=f"f{n}", root=root
                )
                grab.append(mid - start)
                total.append(end - start)
                fused.append(time.perf_counter() - end)
            size = f"{capture.width}x{capture.height}"
            print(f"screenshot {size} → model-ready image, {runs} runs (p50):")
            print(f"  capture + save PNG                  {p50(grab):8.1f} ms")
            print(f"  then import_image from the file     {p50(total) - p50(grab):8.1f} ms")
            print(f"  ScreenGrabber.capture_for_model     {p50(fused):8.1f} ms  (budget 120 ms)")
            print("    (the tool's way: mss kept open, the model copy made while the PNG is saved)")
    finally:
        grabber.close()
        if started is not None:
            started[0].terminate()
            started[0].wait(5)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--history", type=int, default=200)
    parser.add_argument("--screens", type=int, default=5)
    parser.add_argument("--no-screen", action="store_true")
    args = parser.parse_args()
    await tool_loop(args.turns, args.rounds, 0)
    await tool_loop(args.turns, args.rounds, args.history)
    if not args.no_screen:
        await screenshot(args.screens)


if __name__ == "__main__":
    asyncio.run(main())

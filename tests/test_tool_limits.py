"""The model's tool calls are bounded, whatever it asks for: a real session against a
scripted OpenAI-compatible server on loopback (Chat Completions tool calls as OpenAI
streams them), and a user tool that leaves a file behind each time it really runs."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.agent.tool_budget import ToolBudget
from app.config import Settings
from app.llm import ToolUseBlock
from tests.llm_servers import Reply, ScriptedChatServer, chat_chunk, sse
from tests.test_agent_e2e import make_session


def calls_reply(arguments: list[str], finish_reason: str = "tool_calls") -> Reply:
    """A streamed reply that calls the `note` tool once per item of `arguments` (raw
    JSON text, sent in two pieces as OpenAI does)."""
    events = [sse(chat_chunk({"role": "assistant", "content": None}))]
    for index, raw in enumerate(arguments):
        head = {"index": index, "id": f"call_{index}", "type": "function",
                "function": {"name": "note", "arguments": ""}}
        events.append(sse(chat_chunk({"tool_calls": [head]})))
        for piece in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            events.append(sse(chat_chunk(delta)))
    events += [sse(chat_chunk({}, finish_reason=finish_reason)), b"data: [DONE]\n\n"]
    return Reply(headers={"content-type": "text/event-stream"}, chunks=events)


def note_tool(folder: Path) -> dict[str, Any]:
    """A user tool that writes a file named after its argument: proof that it ran."""
    script = "import pathlib, sys; pathlib.Path(sys.argv[1], sys.argv[2]).write_text('ran')"
    return {
        "command": [sys.executable, "-c", script, str(folder), "{name}"],
        "description": "Keep a note.",
        "parameters": {"name": {"type": "string", "description": "the note's name"}},
    }


async def _turn(replies: list[Reply], folder: Path, **agent: Any) -> list[dict[str, Any]]:
    """One typed turn; the requests the server got."""
    folder.mkdir(exist_ok=True)
    with ScriptedChatServer(replies) as server:
        session, _ = make_session(server, tools={"note": note_tool(folder)}, **agent)
        try:
            result = await session.send_text("Take notes.")
        finally:
            await session.aclose()
        assert result.error is None, result.error
        return [request.json() for request in server.requests]


def _results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_forty_calls_in_a_reply_run_four_and_the_rest_are_told_why(tmp_path: Path) -> None:
    tmp_path = tmp_path / "notes"  # the tool's notes, apart from the profile
    forty = calls_reply([json.dumps({"name": f"n{i}"}) for i in range(40)])
    requests = await _turn([forty, Reply.text_stream(["Noted four."])], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n0", "n1", "n2", "n3"]
    results = _results(requests[1])
    assert len(results) == 40  # every call is answered: the wire needs each one paired
    assert all("at most 4 tool calls are run at once" in r for r in results[4:])


async def test_a_turn_runs_at_most_its_limit_then_must_answer(tmp_path: Path) -> None:
    tmp_path = tmp_path / "notes"  # the tool's notes, apart from the profile
    def round_of(number: int) -> Reply:
        return calls_reply([json.dumps({"name": f"r{number}c{i}"}) for i in range(40)])

    replies = [round_of(n) for n in range(3)] + [Reply.text_stream(["Done."])]
    requests = await _turn(replies, tmp_path, max_tool_calls=10, max_tool_rounds=20)
    ran = sorted(p.name for p in tmp_path.iterdir())
    assert len(ran) == 10 and ran[:4] == ["r0c0", "r0c1", "r0c2", "r0c3"]
    # 4 + 4 + 2: then the model is asked for its answer, without tools.
    assert [r.get("tool_choice") for r in requests] == [None, None, None, "none"]
    assert sum("has used all 10 of its tool calls" in r for r in _results(requests[3])) == 38


async def test_a_call_cut_off_by_the_length_limit_never_runs(tmp_path: Path) -> None:
    tmp_path = tmp_path / "notes"  # the tool's notes, apart from the profile
    cut = calls_reply(['{"name": "secret-notes.txt'], finish_reason="length")
    broken = calls_reply(['{"name": secret}'])
    for reply in (cut, broken):
        requests = await _turn([reply, Reply.text_stream(["I could not."])], tmp_path)
        [result] = _results(requests[1])
        assert "was not run: its arguments were cut off or are not a JSON object" in result
    assert list(tmp_path.iterdir()) == []


def test_the_budget_counts_what_runs_and_never_a_refused_call() -> None:
    budget = ToolBudget(per_round=2, per_turn=3)
    cut = ToolUseBlock(name="note", refused="cut off")
    first = budget.take([cut, *(ToolUseBlock(name=name) for name in "abc")])
    assert [c.refused is None for c in first] == [False, True, True, False]
    assert first[0].refused == "cut off" and budget.used == 2 and not budget.spent
    second = budget.take([ToolUseBlock(name="d"), ToolUseBlock(name="e")])
    assert [c.refused is None for c in second] == [True, False] and budget.spent
    assert "all 3 of its tool calls" in (second[1].refused or "")


def test_the_limits_are_settings_with_defaults_a_user_never_meets() -> None:
    agent = Settings().agent
    assert (agent.max_tool_calls_per_round, agent.max_tool_calls) == (4, 12)


async def test_a_user_tool_never_sees_the_apps_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Made-up keys, split so that no scanner takes them for real ones.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "proj-FAKEKEYFORTHISTEST")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-" + "ant-FAKEKEYFORTHISTEST")
    printenv = {
        "command": [sys.executable, "-c", "import os; print(sorted(os.environ))", "{name}"],
        "description": "Show the environment.",
        "parameters": {"name": {"type": "string", "description": "unused"}},
        "env": {"NOTES_DIR": str(tmp_path)},
    }
    call = calls_reply([json.dumps({"name": "x"})])
    call.chunks = [c.replace(b'"note"', b'"printenv"') for c in call.chunks]
    with ScriptedChatServer([call, Reply.text_stream(["Done."])]) as server:
        session, _ = make_session(server, tools={"printenv": printenv})
        try:
            await session.send_text("Show me.")
        finally:
            await session.aclose()
        second = server.requests[1].json()
    [result] = _results(second)
    names = set(ast.literal_eval(result))
    assert "PATH" in names and "NOTES_DIR" in names  # the basics, and what its config names
    assert not names & {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "COMPANION_DATA_DIR"}
    assert not {name for name in names if "KEY" in name or "TOKEN" in name}

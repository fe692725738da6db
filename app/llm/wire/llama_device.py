"""Where the embedded model runs: on the graphics card when the installed llama.cpp can
use one (a CUDA, Vulkan or Metal build of llama-cpp-python), else on the processor.

With `chat.local_gpu = "auto"` a build that can offload gets every layer on the GPU;
when that load fails (too little graphics memory, a driver error: llama-cpp-python
raises ValueError or RuntimeError) the model is loaded again on the CPU and the user is
told once, in words. The CPU build the app installs by default simply loads on the CPU.
A load also gets `llama_cpu.safe_model_params` (a crash on AMX CPUs), as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.llm.errors import ModelNotInstalledError
from app.llm.wire.llama_cpu import safe_model_params

__all__ = ["GpuUse", "Loaded", "gpu_offload_available", "llama_class", "load_on_device"]

log = logging.getLogger(__name__)

GpuUse = Literal["auto", "off"]
ALL_LAYERS = -1  # llama-cpp-python's n_gpu_layers for "every layer"


def llama_class() -> Any:
    """`llama_cpp.Llama`; `ModelNotInstalledError` in words when it is not installed."""
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ModelNotInstalledError(
            "llama-cpp-python is not installed, so the embedded model cannot run. "
            "Install it with `pip install llama-cpp-python`.",
            provider="local",
        ) from None
    return Llama


def gpu_offload_available() -> bool:
    """Whether the installed llama.cpp build can put layers on a graphics card."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:  # not installed, or an older binding without the call
        return False


@dataclass(frozen=True)
class Loaded:
    """A loaded `Llama`, the device it runs on ("GPU" or "CPU"), whether it got the
    AMX-safe parameters, and why the GPU was not used when it was tried and failed."""

    llama: Any
    device: Literal["GPU", "CPU"]
    cpu_guarded: bool
    gpu_problem: str | None = None


def gpu_problem_words(exc: BaseException) -> str:
    """What the user is told when the graphics card failed to load the model."""
    reason = str(exc).strip() or type(exc).__name__
    return (
        f"The graphics card could not run the chat model ({reason}); it runs on the "
        "processor instead, which answers more slowly. Set chat.local_gpu to off to "
        "stop trying the graphics card."
    )


def load_on_device(path: Path, gpu: GpuUse, **params: Any) -> Loaded:
    """`llama_cpp.Llama(path, **params)` with every layer on the GPU when `gpu` is "auto"
    and the build can offload, else (or when that fails) on the CPU. Without
    llama-cpp-python: `ModelNotInstalledError`; a failure on the CPU is raised as it came
    (ValueError/RuntimeError)."""
    make = llama_class()
    params = {"model_path": str(path), "verbose": False, **params}
    problem = None
    if gpu == "auto" and gpu_offload_available():
        try:
            with safe_model_params() as guarded:
                llama = make(**params, n_gpu_layers=ALL_LAYERS)
            return Loaded(llama, "GPU", guarded)
        except (ValueError, RuntimeError) as exc:
            problem = gpu_problem_words(exc)
            log.warning("%s", problem)
    with safe_model_params() as guarded:
        llama = make(**params, n_gpu_layers=0)
    return Loaded(llama, "CPU", guarded, problem)


def loaded_words(name: str, loaded: Loaded) -> str:
    """The log line of a load: the file and where it runs."""
    where = "on the GPU" if loaded.device == "GPU" else "on the CPU"
    guard = " (plain CPU buffers: this llama.cpp has AMX)" if loaded.cpu_guarded else ""
    return f"Loaded the embedded chat model {name} {where}{guard}"

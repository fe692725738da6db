"""llama.cpp on CPUs where one of its fast paths crashes.

llama-cpp-python is built from source on the user's machine, for that machine's CPU.
On an Intel Xeon with AMX (Sapphire Rapids and newer) the build includes ggml's AMX
buffer type, which repacks the weights for AMX tiles; on such a machine every decode
of both embedded models (Q4_K_M and Q4_1) ended in a segmentation fault inside
`ggml_backend_amx_mul_mat` (seen under a virtual machine whose CPU reports AMX). A
crash in C takes the whole app with it, so when the build has AMX the model is loaded
without llama.cpp's extra buffer types: the weights stay in plain CPU buffers, which
every CPU computes correctly. Elsewhere nothing changes.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)

_patching = threading.Lock()


@functools.cache
def build_has_amx() -> bool:
    """Whether the installed llama.cpp was built with AMX (its system info says so)."""
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
    except Exception:  # not installed, or another binding: nothing to guard
        return False
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    return "AMX_INT8 = 1" in text


def _low_level() -> Any:
    import llama_cpp.llama as high_level

    return high_level.llama_cpp  # the module `Llama.__init__` takes its defaults from


def _without_extra_buffers(defaults: Callable[[], Any]) -> Callable[[], Any]:
    def params() -> Any:
        chosen = defaults()
        chosen.use_extra_bufts = False
        return chosen

    return params


@contextlib.contextmanager
def safe_model_params() -> Iterator[bool]:
    """While in the block, a `llama_cpp.Llama` being made gets model parameters that
    are safe on this CPU; yields whether they differ from llama.cpp's defaults."""
    if not build_has_amx():
        yield False
        return
    with _patching:
        low = _low_level()
        defaults = low.llama_model_default_params
        low.llama_model_default_params = _without_extra_buffers(defaults)
        try:
            yield True
        finally:
            low.llama_model_default_params = defaults


def always_safe_model_params() -> bool:
    """Make every `Llama` of this process get safe parameters (a process that only
    serves a model, such as `python -m llama_cpp.server`); whether it changed any."""
    if not build_has_amx():
        return False
    low = _low_level()
    low.llama_model_default_params = _without_extra_buffers(low.llama_model_default_params)
    log.info("llama.cpp has AMX: models load without its extra buffer types")
    return True

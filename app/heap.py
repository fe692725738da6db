"""Giving memory back to the system once the models are loaded: loading them frees a
lot of short-lived buffers (CTranslate2 reads and converts the speech model, llama.cpp
and onnxruntime set up theirs), and glibc's allocator keeps what was freed mapped
unless asked to return it. Elsewhere (macOS, Windows, musl) there is nothing to do."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

log = logging.getLogger(__name__)


def return_freed_memory() -> bool:
    """`malloc_trim(0)` on glibc: freed heap pages go back to the system. Returns
    whether it ran."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
    return True


__all__ = ["return_freed_memory"]

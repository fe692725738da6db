"""The Live2D library (live2d-py, with the Cubism core inside its wheel), imported once and
started, or the reason in words why it cannot be.

Two things about it are handled here so nobody else has to know them. Its import prints a
banner on stdout (that would corrupt `companion ... --json`), so stdout is held while it
loads. And on Linux its C++ template code must bind to its own copies, not to the ones an
already loaded OpenGL driver exports (Mesa's LLVM does): otherwise reading a model throws
`std::bad_alloc` and aborts the process. `RTLD_DEEPBIND` makes the library look in itself
first, whatever was loaded before it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import sys
from types import ModuleType

__all__ = ["Live2DUnavailable", "live2d_library"]

log = logging.getLogger(__name__)


class Live2DUnavailable(Exception):
    """The Live2D library cannot be used here; the message says why and what to do."""


@functools.cache  # the library is one per process: it is started once and stays started
def live2d_library() -> ModuleType:
    """The started `live2d` module; raises `Live2DUnavailable`."""
    flags = sys.getdlopenflags() if hasattr(sys, "getdlopenflags") else None
    deep = getattr(os, "RTLD_DEEPBIND", 0)
    try:
        if flags is not None and deep:
            sys.setdlopenflags(flags | deep)
        with contextlib.redirect_stdout(io.StringIO()):
            import live2d
    except (ImportError, OSError) as exc:
        raise Live2DUnavailable(
            f"The Live2D library (live2d-py) could not be loaded ({exc}). Reinstall Companion, "
            "or `pip install live2d-py==1.0.0` into its environment."
        ) from exc
    finally:
        if flags is not None and deep:
            sys.setdlopenflags(flags)
    live2d.enableLog(log.isEnabledFor(logging.DEBUG))
    live2d.init()
    return live2d

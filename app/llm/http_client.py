"""One HTTP client for every hosted model: a wire module says what to send and how to
read the reply; `HttpWireClient` does the talking (httpx, SSE, retries, cancellation).

Wire modules are found by name (`load_wire("anthropic")`) and imported only when a
route needs them. Their shape is `app.llm.wire.base.Wire`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import random
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any, cast

import httpx

from app.llm.errors import (
    ModelResponseFailed,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ValidationError,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent, collect_response
from app.llm.request import LLMRequest, estimate_input_tokens, require_stream_flag
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute, resolve_api_key, wire_model_name
from app.llm.wire.base import Wire, WireParser
from app.llm.wire.sse import SSEError, is_event_stream, iter_sse

__all__ = ["WIRE_MODULES", "HttpWireClient", "load_wire"]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0  # seconds between streamed chunks; reasoning models pause long
CONNECT_TIMEOUT = 10.0
MAX_RETRIES = 2
RETRY_BASE_DELAY = 0.4
MAX_RETRY_AFTER = 20.0  # a longer wait than this is reported, not slept through

WIRE_MODULES: Mapping[str, str] = {
    "openai_chat": "app.llm.wire.openai_chat",
    "openai_responses": "app.llm.wire.openai_responses",
    "anthropic": "app.llm.wire.anthropic",
    "gemini": "app.llm.wire.gemini",
}
if TYPE_CHECKING:  # mypy checks here that every wire module has the `Wire` shape
    from app.llm.wire import anthropic, gemini, openai_chat, openai_responses

    _CONFORMING: tuple[Wire, ...] = (openai_chat, openai_responses, anthropic, gemini)

_WIRE_NAMES = (
    "NAME",
    "endpoint",
    "headers",
    "to_wire",
    "new_parser",
    "map_http_error",
    "parse_response",
)


def load_wire(name: str) -> Wire:
    """The wire module called `name`, imported now. `ValidationError` in words when this
    version has no such protocol (or only part of it)."""
    path = WIRE_MODULES.get(name)
    if path is None:
        known = ", ".join(WIRE_MODULES)
        raise ValidationError(f"There is no wire protocol called {name!r}; known are {known}.")
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name != path:
            raise  # a missing dependency of the module is a real installation problem
        raise ValidationError(
            f"The {name} protocol is not available in this version of Companion."
        ) from None
    missing = [attr for attr in _WIRE_NAMES if not hasattr(module, attr)]
    if missing:
        raise ValidationError(
            f"The {name} protocol is incomplete in this version of Companion "
            f"(it lacks {', '.join(missing)})."
        )
    return cast(Wire, module)


class _Control:
    """One reply in progress. `cancel()` may come from anywhere: it sets the flag, and if
    the reply is waiting on the network (or a retry pause) it interrupts that wait."""

    __slots__ = ("cancelled", "interrupted", "task", "waiting")

    def __init__(self) -> None:
        self.cancelled = False
        self.interrupted = False
        self.waiting = False
        self.task: asyncio.Task[Any] | None = None

    def resume(self) -> None:
        """The generator runs again (in whichever task drives it now) and may wait."""
        self.task = asyncio.current_task()
        self.waiting = True

    def cancel(self) -> None:
        self.cancelled = True
        task = self.task
        if task is not None and not task.done():
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing waits
                task.get_loop().call_soon_threadsafe(self._interrupt)

    def _interrupt(self) -> None:
        task = self.task
        if self.waiting and not self.interrupted and task is not None and not task.done():
            self.interrupted = True
            task.cancel()

    def owns(self) -> bool:
        """Whether this cancellation was ours alone (then it is swallowed)."""
        task = asyncio.current_task()
        if not self.interrupted or task is None:
            return False
        self.interrupted = False
        return task.uncancel() == 0


class HttpWireClient:
    """A hosted model reached over HTTP through one wire module (a `ProviderClient`)."""

    def __init__(
        self,
        route: ModelRoute,
        wire_module: Wire,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        max_retries: int = MAX_RETRIES,
        retry_base_delay: float = RETRY_BASE_DELAY,
    ) -> None:
        self.route = route
        self.wire = wire_module
        self.provider = route.provider
        self.model = route.model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._max_retries = max_retries
        self._retry_base_delay = retry_base_delay
        info = route.info
        self.label = info.label if info.default_base_url else f"The server at {self.base_url}"
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._active: set[_Control] = set()

    def __repr__(self) -> str:
        return (
            f"HttpWireClient({str(self.route)!r}, wire={self.wire.NAME!r}, "
            f"base_url={self.base_url!r})"
        )

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        return estimate_input_tokens(request)

    async def load(self) -> None:
        """Nothing to load for a hosted model."""

    async def complete(self, request: LLMRequest) -> LLMResponse:
        require_stream_flag(request, streaming=False)
        async with contextlib.aclosing(self._run(request, streaming=False)) as events:
            return await collect_response(events)

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        require_stream_flag(request, streaming=True)
        return self._run(request, streaming=True)

    def cancel(self) -> None:
        """End every reply in progress with `response.cancelled`."""
        for control in list(self._active):
            control.cancel()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _client(self) -> httpx.AsyncClient:
        # One pooled client per event loop: a pool cannot move between loops.
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop or self._http.is_closed:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(DEFAULT_TIMEOUT, connect=CONNECT_TIMEOUT)
            )
            self._http_loop = loop
        return self._http

    def _request_timeout(self, request: LLMRequest) -> httpx.Timeout:
        seconds = request.timeout or self._timeout or DEFAULT_TIMEOUT
        return httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT))

    def _retry_delay(self, attempt: int, error: ProviderError) -> float | None:
        if error.retry_after is not None:
            if error.retry_after > MAX_RETRY_AFTER:
                return None
            return error.retry_after + random.uniform(0.0, 0.1)
        return self._retry_base_delay * (2 ** (attempt - 1)) * random.uniform(0.5, 1.0)

    def _body_events(
        self, raw: bytes, content_type: str, emitter: EventEmitter, secrets: tuple[str | None]
    ) -> list[ModelStreamEvent]:
        """A whole JSON reply (a non-streamed request, or a server that ignored `stream`)."""
        if not raw.strip():
            error = ModelResponseFailed(
                f"{self.label} sent an empty reply.", provider=self.provider
            )
            return [emitter.failed(error)]
        try:
            payload = json.loads(raw)
        except ValueError:
            shown = redact(" ".join(raw[:120].decode("utf-8", "replace").split()), secrets)
            error = ModelResponseFailed(
                f"{self.label} did not answer with JSON ({content_type or 'no content type'}): "
                f"{shown!r}",
                provider=self.provider,
            )
            return [emitter.failed(error)]
        return self.wire.parse_response(payload, emitter, label=self.label, secrets=secrets)

    def _http_error(
        self, response: httpx.Response, body: bytes, model: str, secrets: tuple[str | None]
    ) -> ProviderError:
        return self.wire.map_http_error(
            response.status_code,
            body,
            response.headers,
            label=self.label,
            provider=self.provider,
            model=model,
            base_url=self.base_url,
            secrets=secrets,
        )

    async def _run(
        self, request: LLMRequest, *, streaming: bool
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        """The reply as events, ending in exactly one terminal event; never raises for a
        provider or network failure."""
        model = wire_model_name(self.route, request.model)
        emitter = EventEmitter(self.provider, model)
        control = _Control()
        self._active.add(control)
        try:
            try:
                api_key = resolve_api_key(self.route, self._api_key)
                body = self.wire.to_wire(request, model=model, provider=self.provider)
                url = self.wire.endpoint(self.base_url, model, stream=streaming)
            except ProviderError as exc:
                yield emitter.failed(exc)
                return
            secrets = (api_key,)
            headers = {**self.wire.headers(api_key), **self._headers}
            headers["Accept"] = "text/event-stream" if streaming else "application/json"
            timeout = self._request_timeout(request)
            attempt = 0
            while True:
                parser: WireParser = self.wire.new_parser(
                    emitter, label=self.label, secrets=secrets
                )
                error: ProviderError | None = None
                if control.cancelled:
                    for event in parser.cancel():
                        yield event
                    return
                control.resume()
                try:
                    async with self._client().stream(
                        "POST", url, json=body, headers=headers, timeout=timeout
                    ) as response:
                        content_type = response.headers.get("content-type", "")
                        if response.status_code >= 400:
                            error = self._http_error(
                                response, await response.aread(), model, secrets
                            )
                        elif not is_event_stream(response):
                            if streaming and "json" not in content_type:
                                kind = content_type.partition(";")[0] or "no content type"
                                error = ModelResponseFailed(
                                    f"{self.label} did not answer with an event stream ({kind}).",
                                    provider=self.provider,
                                )
                            else:
                                # A whole JSON reply: asked for, or a server ignored `stream`.
                                out = self._body_events(
                                    await response.aread(), content_type, emitter, secrets
                                )
                                control.waiting = False
                                for event in out:
                                    yield event
                                return
                        else:
                            # After the reply is complete the body is read to its end rather
                            # than left with `break`: httpcore's inner generators are then
                            # finished on this loop, not finalised later by the garbage
                            # collector (which warns under loops without async-generator
                            # hooks, such as qasync's).
                            completed = False
                            async with contextlib.aclosing(iter_sse(response)) as sse_events:
                                async for sse in sse_events:
                                    if completed:
                                        continue
                                    out = parser.feed_sse(sse.event, sse.data)
                                    if out:
                                        control.waiting = False
                                        for event in out:
                                            yield event
                                        control.resume()
                                        if parser.terminated:
                                            if out[-1].kind != "response.completed":
                                                return
                                            completed = True
                                    if control.cancelled and not completed:
                                        control.waiting = False
                                        break
                            control.waiting = False
                            if completed:
                                return
                            if control.cancelled:
                                for event in parser.cancel():
                                    yield event
                                return
                            for event in parser.finish(done=True):
                                yield event
                            return
                except asyncio.CancelledError:
                    if not control.owns():
                        raise
                    control.waiting = False
                    for event in parser.cancel():
                        yield event
                    return
                except httpx.TimeoutException:
                    error = ProviderTimeoutError(
                        f"{self.label} did not answer within {timeout.read:g} seconds.",
                        provider=self.provider,
                    )
                except httpx.ConnectError:
                    error = ProviderConnectionError(
                        f"Could not reach {self.base_url}: is the server running?",
                        provider=self.provider,
                    )
                except (httpx.TransportError, httpx.StreamError, SSEError) as exc:
                    control.waiting = False
                    if control.cancelled:
                        for event in parser.cancel():
                            yield event
                        return
                    if emitter.emitted:
                        # The wire decides: a drop after its end marker still leaves a reply.
                        for event in parser.finish(done=False):
                            yield event
                        return
                    error = ProviderConnectionError(
                        f"The connection to {self.label} failed ({type(exc).__name__}).",
                        provider=self.provider,
                    )
                except Exception as exc:
                    # A wire module must never raise; if one does, the stream still ends
                    # in words instead of an exception in the caller's loop.
                    logger.exception("The %s wire could not handle a reply", self.wire.NAME)
                    error = ModelResponseFailed(
                        f"The reply from {self.label} could not be read ({type(exc).__name__}).",
                        provider=self.provider,
                    )
                control.waiting = False
                assert error is not None
                if control.cancelled:
                    for event in parser.cancel(error):
                        yield event
                    return
                delay = None
                if error.retryable and not emitter.emitted and attempt < self._max_retries:
                    attempt += 1
                    delay = self._retry_delay(attempt, error)
                if delay is None:
                    for event in parser.fail(error):
                        yield event
                    return
                logger.info("%s Trying again in %.1f s (retry %d).", error, delay, attempt)
                control.resume()
                try:
                    await asyncio.sleep(delay)
                except asyncio.CancelledError:
                    if not control.owns():
                        raise
                    control.waiting = False
                    for event in parser.cancel(error):
                        yield event
                    return
                control.waiting = False
                emitter.next_attempt()
        finally:
            control.waiting = False
            self._active.discard(control)

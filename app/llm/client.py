"""Provider clients: one object per configured model that completes or streams requests.

`create_provider_client("openai/gpt-4o-mini")` picks the wire protocol from the
route. Every client streams `ModelStreamEvent`s that end in exactly one terminal
event; `complete()` is the same stream collected, raising the typed error instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import httpx

from app.llm.errors import (
    ModelResponseFailed,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ValidationError,
)
from app.llm.events import EventEmitter, ModelStreamEvent, collect_response
from app.llm.request import LLMRequest, estimate_input_tokens, require_stream_flag
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute, parse_model_route, resolve_api_key
from app.llm.wire import openai_chat
from app.llm.wire.sse import SSEError, is_event_stream, iter_sse

__all__ = [
    "CompletionProvider",
    "OpenAIChatClient",
    "ProviderClient",
    "StreamingProvider",
    "collect_response",
    "create_provider_client",
    "wire_model_name",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0  # seconds between streamed chunks; reasoning models pause long
CONNECT_TIMEOUT = 10.0
MAX_RETRIES = 2
RETRY_BASE_DELAY = 0.4
MAX_RETRY_AFTER = 20.0  # a longer wait than this is reported, not slept through


@runtime_checkable
class CompletionProvider(Protocol):
    """Anything that answers a request with one finished reply."""

    async def complete(self, request: LLMRequest) -> LLMResponse: ...


@runtime_checkable
class StreamingProvider(Protocol):
    """Anything that streams a reply as events ending in exactly one terminal event."""

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]: ...


@runtime_checkable
class ProviderClient(CompletionProvider, StreamingProvider, Protocol):
    """A configured model. `stream()` needs `request.stream=True`, `complete()` needs False.

    `cancel()` ends every stream in progress with `response.cancelled`.
    """

    provider: str
    model: str

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        """The reply as events; `aclose()` the generator to stop a reply early."""
        ...

    def estimate_input_tokens(self, request: LLMRequest) -> int: ...

    async def load(self) -> None:
        """Get ready to answer: the embedded model loads its weights; hosted ones return."""
        ...

    def cancel(self) -> None: ...

    async def aclose(self) -> None: ...


def wire_model_name(route: ModelRoute, requested: str) -> str:
    """The model id to send: the request's model without our `provider/` prefix."""
    requested = requested.strip()
    if not requested or requested == str(route):
        return route.model
    try:
        parsed = parse_model_route(requested)
    except ValueError:
        return requested
    return parsed.model if parsed.provider == route.provider else requested


class _Control:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False


class OpenAIChatClient:
    """A model behind the OpenAI Chat Completions API, over httpx with SSE streaming."""

    def __init__(
        self,
        route: ModelRoute,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        max_retries: int = MAX_RETRIES,
        retry_base_delay: float = RETRY_BASE_DELAY,
    ) -> None:
        self.route = route
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
        return f"OpenAIChatClient({str(self.route)!r}, base_url={self.base_url!r})"

    def estimate_input_tokens(self, request: LLMRequest) -> int:
        return estimate_input_tokens(request)

    async def load(self) -> None:
        """Nothing to load for a hosted model."""

    async def complete(self, request: LLMRequest) -> LLMResponse:
        require_stream_flag(request, streaming=False)
        return await collect_response(self._run(request.model_copy(update={"stream": True})))

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        require_stream_flag(request, streaming=True)
        return self._run(request)

    def cancel(self) -> None:
        for control in self._active:
            control.cancelled = True

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

    async def _run(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        model = wire_model_name(self.route, request.model)
        emitter = EventEmitter(self.provider, model)
        control = _Control()
        self._active.add(control)
        try:
            try:
                api_key = resolve_api_key(self.route, self._api_key)
                body = openai_chat.to_wire(request, model=model, provider=self.provider)
            except ProviderError as exc:
                yield emitter.failed(exc)
                return
            secrets = (api_key,)
            headers = {"Accept": "text/event-stream", **self._headers}
            if api_key:
                headers["Authorization"] = f"Bearer {api_key}"
            if self.provider == "openrouter":
                headers.setdefault("X-Title", "Companion")
            url = f"{self.base_url}/chat/completions"
            timeout = self._request_timeout(request)
            attempt = 0
            while True:
                parser = openai_chat.ChatStreamParser(emitter, label=self.label, secrets=secrets)
                error: ProviderError | None = None
                try:
                    async with self._client().stream(
                        "POST", url, json=body, headers=headers, timeout=timeout
                    ) as response:
                        if response.status_code >= 400:
                            error = openai_chat.map_http_error(
                                response.status_code,
                                await response.aread(),
                                response.headers,
                                label=self.label,
                                provider=self.provider,
                                model=model,
                                base_url=self.base_url,
                                secrets=secrets,
                            )
                        elif not is_event_stream(response):
                            kind = response.headers.get("content-type", "no content type")
                            error = ModelResponseFailed(
                                f"{self.label} did not answer with an event stream ({kind}).",
                                provider=self.provider,
                            )
                        else:
                            # After [DONE] the body is read to its end rather than left
                            # with `break`: httpcore's inner generators are then finished
                            # on this loop, not finalised later by the garbage collector
                            # (which warns under loops without async-generator hooks).
                            done = False
                            async with contextlib.aclosing(iter_sse(response)) as events:
                                async for sse in events:
                                    if control.cancelled:
                                        break
                                    if done or sse.data == "[DONE]":
                                        done = True
                                        continue
                                    if sse.data:
                                        for event in parser.feed_data(sse.data):
                                            yield event
                                        if parser.terminated:
                                            return
                            if control.cancelled:
                                for event in parser.cancel():
                                    yield event
                                return
                            for event in parser.finish(done=True):
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
                    if control.cancelled:
                        for event in parser.cancel():
                            yield event
                        return
                    if emitter.emitted:
                        # A drop after the finish reason still leaves a whole reply.
                        for event in parser.finish(done=False):
                            yield event
                        return
                    error = ProviderConnectionError(
                        f"The connection to {self.label} failed ({type(exc).__name__}).",
                        provider=self.provider,
                    )
                assert error is not None
                delay = None
                if error.retryable and not emitter.emitted and attempt < self._max_retries:
                    attempt += 1
                    delay = self._retry_delay(attempt, error)
                if delay is None:
                    for event in parser.fail(error):
                        yield event
                    return
                logger.info("%s Trying again in %.1f s (retry %d).", error, delay, attempt)
                await asyncio.sleep(delay)
                emitter.next_attempt()
        finally:
            self._active.discard(control)


def create_provider_client(
    model: str,
    *,
    api_style: Literal["responses", "chat"] = "responses",
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
    model_path: str | Path | None = None,
    n_threads: int | None = None,
    n_ctx: int | None = None,
) -> ProviderClient:
    """The client for a `provider/model` route.

    `api_style` (`responses` or `chat`) matters only for OpenAI routes; `model_path`,
    `n_threads` and `n_ctx` only for `local/...` (the embedded llama.cpp model).
    Raises `ValueError` for a malformed route, `ValidationError` for a provider this
    version cannot speak to yet, `ModelNotInstalledError` for a missing local model.
    A missing API key is reported by the first request, in words.
    """
    if api_style not in ("responses", "chat"):
        raise ValueError(f"api_style must be 'responses' or 'chat', not {api_style!r}.")
    route = parse_model_route(model)
    info = route.info
    if info.wire in ("anthropic", "gemini"):
        raise ValidationError(
            f"{info.label} models ({route}) are not supported yet; use openai-compatible/"
            f"<model> with the base_url of an OpenAI-compatible endpoint or proxy instead.",
            provider=route.provider,
        )
    if info.wire == "local":
        from app.llm.wire.local import LocalModelClient

        return LocalModelClient(route, model_path=model_path, n_threads=n_threads, n_ctx=n_ctx)
    url = base_url or info.default_base_url
    if not url or not url.startswith(("http://", "https://")):
        raise ValueError(
            f"{route} needs a base_url starting with http:// or https://, the address of the "
            "server's OpenAI-compatible API, for example http://127.0.0.1:8080/v1."
        )
    if route.provider == "openai" and api_style == "responses":
        logger.info(
            "The OpenAI Responses API is not implemented yet; %s uses Chat Completions.", route
        )
    return OpenAIChatClient(route, base_url=url, api_key=api_key, timeout=timeout, headers=headers)

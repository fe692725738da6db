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
import ssl
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Protocol, cast

import httpx

from app.http_bodies import BodyTooLarge, read_body
from app.llm.base import ModelClient
from app.llm.errors import (
    ModelResponseFailed,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ValidationError,
    inside,
    redact,
)
from app.llm.events import EventEmitter, ModelStreamEvent, collect_response
from app.llm.plain_http import check_key_transport
from app.llm.request import LLMRequest, require_stream_flag
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute, resolve_api_key, wire_model_name
from app.llm.waiting import REPLY_DEADLINE_S, ReplyBudget, ReplyControl, when_to_retry
from app.llm.wire.base import StreamFramingError, Wire, WireParser
from app.llm.wire.sse import MAX_EVENT_CHARS, SSEError, SSEEventTooLarge, SSEFraming

__all__ = ["WIRE_MODULES", "HttpWireClient", "RequestSigner", "load_wire"]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0  # seconds without content; reasoning models pause long
CONNECT_TIMEOUT = 10.0
MAX_RETRIES = 2
RETRY_BASE_DELAY = 0.4
MAX_RETRY_AFTER = 20.0  # a longer wait than this is reported, not slept through
MAX_BODY_BYTES = 16 * 1024 * 1024  # a whole (non-streamed) JSON reply
MAX_ERROR_BODY_BYTES = 64 * 1024  # what is read of an error reply
# Stream events that are content: keep-alives, `response.started` and usage are not.
_NOT_CONTENT = frozenset({"response.started", "usage.updated"})

WIRE_MODULES: Mapping[str, str] = {
    "openai_chat": "app.llm.wire.openai_chat",
    "openai_responses": "app.llm.wire.openai_responses",
    "anthropic": "app.llm.wire.anthropic",
    "gemini": "app.llm.wire.gemini",
    "mistral": "app.llm.wire.mistral",
    "bedrock": "app.llm.wire.bedrock",
}
if TYPE_CHECKING:  # mypy checks here that every wire module has the `Wire` shape
    from app.llm.wire import anthropic, bedrock, gemini, mistral, openai_chat, openai_responses

    _CONFORMING: tuple[Wire, ...] = (
        openai_chat,
        openai_responses,
        anthropic,
        gemini,
        mistral,
        bedrock,
    )

_WIRE_NAMES = (
    "NAME",
    "FRAMING",
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


class RequestSigner(Protocol):
    """Signs requests where a provider wants more than a key in a header (AWS SigV4)."""

    async def authorizer(self) -> tuple[httpx.Auth, tuple[str, ...]]:
        """The `httpx.Auth` that signs one reply's requests, and the secret values to mask
        in what comes back. May read credentials (off the event loop); raises a
        `ProviderError` in words when there are none."""
        ...


def _unreachable(base_url: str, exc: httpx.ConnectError) -> str:
    """Why `base_url` could not be reached, as the cause says: a plain-HTTP server asked
    for TLS, a certificate refused, or nothing listening."""
    cause = exc.__cause__ or exc.__context__
    text = str(cause or exc)
    if "WRONG_VERSION_NUMBER" in text or "record layer failure" in text:
        return (
            f"{base_url} answered, but not over TLS: the server speaks plain HTTP. Use its "
            "http:// address instead of https://."
        )
    if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in text:
        return f"{base_url} did not show a certificate this computer trusts ({text})."
    return f"Could not reach {base_url}: is the server running?"


class HttpWireClient(ModelClient):
    """A hosted model reached over HTTP through one wire module (a `ProviderClient`);
    nothing to load, tokens estimated as `ModelClient` does."""

    def __init__(
        self,
        route: ModelRoute,
        wire_module: Wire,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        signer: RequestSigner | None = None,
        max_retries: int = MAX_RETRIES,
        retry_base_delay: float = RETRY_BASE_DELAY,
        deadline: float = REPLY_DEADLINE_S,
        max_event_chars: int = MAX_EVENT_CHARS,
        allow_plain_http: bool = False,
    ) -> None:
        self.route = route
        self._allow_plain_http = allow_plain_http  # a key over http:// off this computer
        self.wire = wire_module
        self.provider = route.provider
        self.model = route.model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._signer = signer  # used when there is no key to send
        self._max_retries = max_retries
        self._retry_base_delay = retry_base_delay
        self._deadline = deadline
        self._max_event_chars = max_event_chars
        info = route.info
        self.label = info.label if info.default_base_url else f"The server at {self.base_url}"
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._active: set[ReplyControl] = set()

    def __repr__(self) -> str:
        return (
            f"HttpWireClient({str(self.route)!r}, wire={self.wire.NAME!r}, "
            f"base_url={self.base_url!r})"
        )

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

    def _wait_s(self, request: LLMRequest) -> float:
        return request.timeout or self._timeout or DEFAULT_TIMEOUT

    @staticmethod
    def _http_timeout(budget: ReplyBudget, now: float) -> httpx.Timeout:
        # httpx's own limits stay a little behind the budget's: the budget tells
        # content from keep-alives, httpx only sees bytes.
        left = max(budget.first_by - now, 0.1)
        return httpx.Timeout(budget.timeout + 1.0, connect=min(left, CONNECT_TIMEOUT))

    def _retry_delay(self, attempt: int, error: ProviderError) -> float | None:
        if error.retry_after is not None:
            if error.retry_after > MAX_RETRY_AFTER:
                return None
            return error.retry_after + random.uniform(0.0, 0.1)
        return self._retry_base_delay * (2 ** (attempt - 1)) * random.uniform(0.5, 1.0)

    def _body_events(
        self, raw: bytes, content_type: str, emitter: EventEmitter, secrets: tuple[str | None, ...]
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
        self, response: httpx.Response, body: bytes, model: str, secrets: tuple[str | None, ...]
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
        control = ReplyControl()
        self._active.add(control)
        loop = asyncio.get_running_loop()
        budget = ReplyBudget(self._wait_s(request), self._deadline, loop.time())
        try:
            try:
                api_key = resolve_api_key(self.route, self._api_key)
                body = self.wire.to_wire(request, model=model, provider=self.provider)
                url = self.wire.endpoint(self.base_url, model, stream=streaming)
                check_key_transport(
                    url, key=bool(api_key), allowed=self._allow_plain_http, provider=self.provider
                )
                auth: httpx.Auth | None = None
                secrets: tuple[str | None, ...] = (api_key,)
                if self._signer is not None and not api_key:
                    auth, signing_secrets = await self._signer.authorizer()
                    secrets += signing_secrets
            except ProviderError as exc:
                yield emitter.failed(exc)
                return
            framing = self.wire.FRAMING
            headers = {**self.wire.headers(api_key), **self._headers}
            if isinstance(framing, SSEFraming) and framing.max_event_chars != self._max_event_chars:
                framing = SSEFraming(self._max_event_chars)
            headers["Accept"] = framing.media_type if streaming else "application/json"
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
                control.arm(budget.wait_until(loop.time()))
                try:
                    async with self._client().stream(
                        "POST",
                        url,
                        json=body,
                        headers=headers,
                        timeout=self._http_timeout(budget, loop.time()),
                        auth=auth,
                    ) as response:
                        content_type = response.headers.get("content-type", "")
                        if response.status_code >= 400:
                            raw = await read_body(response, MAX_ERROR_BODY_BYTES, cut=True)
                            error = self._http_error(response, raw, model, secrets)
                        elif not framing.matches(response):
                            if streaming and "json" not in content_type:
                                kind = content_type.partition(";")[0] or "no content type"
                                error = ModelResponseFailed(
                                    f"{self.label} did not answer with an event stream ({kind}).",
                                    provider=self.provider,
                                )
                            else:
                                # A whole JSON reply: asked for, or a server ignored `stream`.
                                raw = await read_body(response, MAX_BODY_BYTES)
                                control.waiting = False
                                control.disarm()
                                for event in self._body_events(raw, content_type, emitter, secrets):
                                    yield event
                                return
                        else:
                            # After the reply is complete the body is read to its end rather
                            # than left with `break`: httpcore's inner generators are then
                            # finished on this loop, not finalised later by the garbage
                            # collector (which warns under loops without async-generator
                            # hooks, such as qasync's).
                            completed = False
                            frames = framing.events(response)
                            async with contextlib.aclosing(frames):
                                async for name, data in frames:
                                    if completed:
                                        continue
                                    out = parser.feed_sse(name, data)
                                    if not out:
                                        continue
                                    control.waiting = False
                                    content = any(e.kind not in _NOT_CONTENT for e in out)
                                    budget.content = budget.content or content
                                    for event in out:
                                        yield event
                                    control.resume()
                                    if content:  # the wait for more starts now
                                        control.arm(budget.wait_until(loop.time()))
                                    if parser.terminated:
                                        control.disarm()
                                        if out[-1].kind != "response.completed":
                                            return
                                        completed = True
                                    if control.cancelled and not completed:
                                        control.waiting = False
                                        break
                            control.waiting = False
                            control.disarm()
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
                    if not control.take_timeout():
                        for event in parser.cancel():
                            yield event
                        return
                    error = ProviderTimeoutError(
                        budget.timed_out(self.label, loop.time()), provider=self.provider
                    )
                except httpx.TimeoutException:
                    error = ProviderTimeoutError(
                        budget.timed_out(self.label, loop.time()), provider=self.provider
                    )
                except StreamFramingError as exc:
                    control.waiting = False
                    if control.cancelled:
                        for event in parser.cancel():
                            yield event
                        return
                    error = ModelResponseFailed(f"{self.label} {exc}", provider=self.provider)
                except httpx.ConnectError as exc:
                    error = ProviderConnectionError(
                        _unreachable(self.base_url, exc), provider=self.provider
                    )
                except (SSEEventTooLarge, BodyTooLarge) as exc:
                    error = ModelResponseFailed(
                        f"{self.label} sent more than the app reads at once ({exc}); "
                        "the reply was stopped.",
                        provider=self.provider,
                        retryable=False,
                    )
                except (httpx.TransportError, httpx.StreamError, SSEError) as exc:
                    control.waiting = False
                    control.disarm()
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
                        f"The connection to {inside(self.label)} failed ({type(exc).__name__}).",
                        provider=self.provider,
                    )
                except Exception as exc:
                    # A wire module must never raise; if one does, the stream still ends
                    # in words instead of an exception in the caller's loop.
                    logger.exception("The %s wire could not handle a reply", self.wire.NAME)
                    error = ModelResponseFailed(
                        f"The reply from {inside(self.label)} could not be read "
                        f"({type(exc).__name__}).",
                        provider=self.provider,
                    )
                control.waiting = False
                control.disarm()
                assert error is not None
                if control.cancelled:
                    for event in parser.cancel(error):
                        yield event
                    return
                delay = None
                if error.retryable and not emitter.emitted and attempt < self._max_retries:
                    delay = self._retry_delay(attempt + 1, error)
                    if delay is not None and not budget.can_retry(loop.time(), delay):
                        delay = None
                if delay is None:
                    if error.retry_after is not None and error.retryable:
                        # Not waited for here: the user is told when it is worth trying.
                        error.message = f"{error.message} {when_to_retry(error.retry_after)}"
                    for event in parser.fail(error):
                        yield event
                    return
                attempt += 1
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
                budget.tries += 1
                emitter.next_attempt()
        finally:
            control.waiting = False
            control.disarm()
            self._active.discard(control)

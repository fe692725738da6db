"""Provider clients: one object per configured model that completes or streams requests.

`create_provider_client("anthropic/claude-sonnet-4-5")` picks the wire protocol from
the route: hosted models get an `HttpWireClient` over their wire module, `local/...`
the embedded llama.cpp model. Every client streams `ModelStreamEvent`s that end in
exactly one terminal event; `complete()` raises the typed error instead.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from app.llm.base import Progress
from app.llm.events import ModelStreamEvent, collect_response
from app.llm.http_client import HttpWireClient, load_wire
from app.llm.request import LLMRequest
from app.llm.response import LLMResponse
from app.llm.routing import ModelRoute, parse_model_route, wire_model_name

__all__ = [
    "CompletionProvider",
    "ProviderClient",
    "StreamingProvider",
    "collect_response",
    "create_provider_client",
    "wire_model_name",
]


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

    `cancel()` ends every stream in progress with `response.cancelled`. What a client
    may have nothing to do for (`load`, `aclose`, `estimate_input_tokens`,
    `read_ahead`, `needs_preparing`) is declared with its default in `ModelClient`,
    which every client built here inherits; `app.llm.adapted.model_client()` makes
    any other provider one.
    """

    provider: str
    model: str

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        """The reply as events; `aclose()` the generator to stop a reply early."""
        ...

    def estimate_input_tokens(self, request: LLMRequest) -> int: ...

    @property
    def needs_preparing(self) -> bool: ...

    async def load(self, progress: Progress | None = None) -> None:
        """Get ready to answer: the embedded model loads its weights; hosted ones return."""
        ...

    @property
    def reads_ahead(self) -> bool: ...

    @property
    def continues_replies(self) -> bool: ...

    async def read_ahead(self, request: LLMRequest) -> None: ...

    def cancel(self) -> None: ...

    async def aclose(self) -> None: ...


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
    gpu: Literal["auto", "off"] = "auto",
    aws_region: str | None = None,
    aws_profile: str | None = None,
    allow_plain_http: bool = False,
) -> ProviderClient:
    """The client for a `provider/model` route. Connects nothing yet.

    `api_style` (`responses` or `chat`) matters only for `openai/...` routes; the
    OpenAI-compatible ones (OpenRouter, DeepSeek, Ollama, `openai-compatible`) always
    speak Chat Completions. `model_path`, `n_threads`, `n_ctx` and `gpu` are only for
    `local/...` (the embedded llama.cpp model). `aws_region` and `aws_profile` are only
    for `bedrock/...`: without a key (a Bedrock API key) its requests are signed with
    the profile's (or the environment's) AWS credentials. Raises `ValueError` for a malformed
    route or base URL, `ValidationError` for a protocol this version lacks,
    `ModelNotInstalledError` for a missing local model. A missing API key is reported
    by the first request, in words; so is a key that would go over plain HTTP to a
    server off this computer, unless `allow_plain_http`.
    """
    if api_style not in ("responses", "chat"):
        raise ValueError(f"api_style must be 'responses' or 'chat', not {api_style!r}.")
    route = parse_model_route(model)
    info = route.info
    if info.wire == "local":
        from app.llm.wire.local import LocalModelClient

        return LocalModelClient(
            route, model_path=model_path, n_threads=n_threads, n_ctx=n_ctx, gpu=gpu
        )
    if info.wire == "bedrock":
        return _bedrock_client(route, api_key, base_url, timeout, headers, aws_region, aws_profile)
    url = base_url or info.default_base_url
    if not url or not url.startswith(("http://", "https://")):
        raise ValueError(
            f"{route} needs a base_url starting with http:// or https://, the address of the "
            "server's API, for example http://127.0.0.1:8080/v1."
        )
    wire = info.wire
    if route.provider == "openai" and api_style == "responses":
        wire = "openai_responses"
    extra = dict(headers or {})
    if route.provider == "openrouter":
        extra.setdefault("X-Title", "Companion")
    return HttpWireClient(
        route,
        load_wire(wire),
        url,
        api_key=api_key,
        timeout=timeout,
        headers=extra,
        allow_plain_http=allow_plain_http,
    )


def _bedrock_client(
    route: ModelRoute,
    api_key: str | None,
    base_url: str | None,
    timeout: float | None,
    headers: Mapping[str, str] | None,
    region: str | None,
    profile: str | None,
) -> HttpWireClient:
    """Bedrock in the configured region (an unknown region is reported by the first
    request, in words), signing with AWS credentials when there is no API key."""
    from app.llm.aws import AwsSigner, regional_url, resolve_region

    found = resolve_region(region, profile)
    url = base_url or (regional_url(found) if found else "")
    signer = AwsSigner(region=found, profile=profile)
    return HttpWireClient(
        route,
        load_wire("bedrock"),
        url,
        api_key=api_key,
        timeout=timeout,
        headers=headers,
        signer=signer,
    )

"""A short request to the chat model beside the conversation (the long-term memory's
extraction): no tools, no history, steady sampling, the whole reply as text.

`cache="none"` says it should not displace what the model keeps for the conversation:
a local model keeps the prompt it had evaluated, so the next turn does not read the
whole conversation again. A response format the provider refuses is dropped once.
"""

from __future__ import annotations

import logging
from typing import Any

from app.llm import LLMRequest, Msg, ProviderError, StreamingProvider

log = logging.getLogger(__name__)


async def side_request(
    provider: StreamingProvider, model: str, messages: list[Msg], *,
    response_format: dict[str, Any] | None = None, max_tokens: int = 300,
) -> str:
    """The reply's text; raises the `ProviderError` the model failed with."""
    request = LLMRequest(
        model=model, messages=messages, temperature=0.0, max_tokens=max_tokens,
        response_format=response_format, stream=True, cache="none",
    )
    text, error = await _text(provider, request)
    if error is not None and response_format is not None:
        log.info("the side request failed with a response format (%s); again without", error)
        text, error = await _text(provider, request.model_copy(update={"response_format": None}))
    if error is not None:
        raise error
    return text


async def _text(
    provider: StreamingProvider, request: LLMRequest
) -> tuple[str, ProviderError | None]:
    parts: list[str] = []
    events = provider.stream(request)
    try:
        async for event in events:
            if event.kind == "block.delta" and event.channel == "text":
                parts.append(event.delta)
            elif event.kind == "response.failed":
                return "".join(parts), event.error
    except ProviderError as exc:  # a provider that raises rather than reports
        return "".join(parts), exc
    finally:
        await events.aclose()  # stops a local model at once when the caller gives up
    return "".join(parts), None

"""The provider layer: neutral messages and requests in, stream events and replies out.

Everything the app needs is importable from here; `app.llm.wire` holds the wire
protocols behind it and is not imported by the rest of the app.

The client (and with it httpx and the wire protocols) is imported on first use of
one of its names, so `from app.llm import Msg` stays cheap on the way to the window.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from app.llm.catalogue import clamp_thinking_level
from app.llm.errors import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    ModelNotInstalledError,
    ModelResponseFailed,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    ValidationError,
    is_context_overflow,
)
from app.llm.events import (
    BlockCompleted,
    BlockDelta,
    BlockInfo,
    BlockStarted,
    ModelStreamEvent,
    ResponseCancelled,
    ResponseCompleted,
    ResponseFailed,
    ResponseStarted,
    StreamScope,
    UsageUpdated,
    collect_response,
)
from app.llm.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    ImageFileRef,
    Msg,
    NativeBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.llm.request import (
    CacheRetention,
    Conversation,
    LLMRequest,
    ThinkingLevel,
    ToolChoice,
    ToolSpec,
)
from app.llm.response import FinishReason, LLMResponse, Usage
from app.llm.routing import PROVIDERS, ModelRoute, ProviderInfo, parse_model_route

if TYPE_CHECKING:
    from app.llm.adapted import model_client
    from app.llm.base import ModelClient
    from app.llm.client import (
        CompletionProvider,
        ProviderClient,
        StreamingProvider,
        create_provider_client,
    )

# Names whose module is heavy to import: loaded when first asked for.
_LAZY = {
    "CompletionProvider": "app.llm.client",
    "ModelClient": "app.llm.base",
    "ProviderClient": "app.llm.client",
    "StreamingProvider": "app.llm.client",
    "create_provider_client": "app.llm.client",
    "model_client": "app.llm.adapted",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "PROVIDERS",
    "AudioBlock",
    "AuthenticationError",
    "BlockCompleted",
    "BlockDelta",
    "BlockInfo",
    "BlockStarted",
    "CacheRetention",
    "CompletionProvider",
    "ContentBlock",
    "ContextOverflowError",
    "Conversation",
    "FileBlock",
    "FinishReason",
    "ImageBlock",
    "ImageFileRef",
    "InvalidRequestError",
    "LLMRequest",
    "LLMResponse",
    "ModelClient",
    "ModelNotInstalledError",
    "ModelResponseFailed",
    "ModelRoute",
    "ModelStreamEvent",
    "Msg",
    "NativeBlock",
    "OverloadedError",
    "ProviderClient",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderInfo",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ResponseCancelled",
    "ResponseCompleted",
    "ResponseFailed",
    "ResponseStarted",
    "Role",
    "StreamScope",
    "StreamingProvider",
    "TextBlock",
    "ThinkingBlock",
    "ThinkingLevel",
    "ToolChoice",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "UsageUpdated",
    "ValidationError",
    "clamp_thinking_level",
    "collect_response",
    "create_provider_client",
    "is_context_overflow",
    "model_client",
    "parse_model_route",
]

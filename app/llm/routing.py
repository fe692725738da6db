"""Model routes: `provider/model` strings, and what each provider needs to be reached."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from app.llm.errors import AuthenticationError

__all__ = [
    "PROVIDERS",
    "ModelRoute",
    "ProviderInfo",
    "parse_model_route",
    "resolve_api_key",
    "wire_model_name",
]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """How to reach one provider. `wire` names the protocol module in `app.llm.wire`
    (OpenAI's Responses API is chosen by `api_style`); `other_key_envs` are further
    variables a key is read from when `api_key_env` is not set."""

    name: str
    label: str
    wire: str
    default_base_url: str | None
    api_key_env: str | None
    key_required: bool
    other_key_envs: tuple[str, ...] = ()


PROVIDERS: Mapping[str, ProviderInfo] = {
    info.name: info
    for info in [
        ProviderInfo(
            "openai", "OpenAI", "openai_chat", "https://api.openai.com/v1", "OPENAI_API_KEY", True
        ),
        ProviderInfo(
            "anthropic",
            "Anthropic",
            "anthropic",
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
            True,
        ),
        ProviderInfo(
            "gemini",
            "Google Gemini",
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta",
            "GEMINI_API_KEY",
            True,
            ("GOOGLE_API_KEY",),
        ),
        ProviderInfo(
            "openrouter",
            "OpenRouter",
            "openai_chat",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            True,
        ),
        ProviderInfo(
            "deepseek",
            "DeepSeek",
            "openai_chat",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            True,
        ),
        ProviderInfo(
            "mistral", "Mistral", "mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", True
        ),
        # Bedrock's address names the region (`app.llm.aws`); the key is optional, a
        # Bedrock API key sent as a bearer token: without one requests are signed with
        # SigV4 from the standard AWS credentials.
        ProviderInfo(
            "bedrock",
            "Amazon Bedrock",
            "bedrock",
            "https://bedrock-runtime.{region}.amazonaws.com",
            "AWS_BEARER_TOKEN_BEDROCK",
            False,
        ),
        # Local servers need no key; one is sent only if the user gives one. They get
        # their own variable so an OpenAI key is never sent to an arbitrary server.
        ProviderInfo(
            "ollama", "Ollama", "openai_chat", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", False
        ),
        ProviderInfo(
            "openai-compatible",
            "The OpenAI-compatible server",
            "openai_chat",
            None,
            "OPENAI_COMPATIBLE_API_KEY",
            False,
        ),
        ProviderInfo("local", "The embedded model", "local", None, None, False),
    ]
}

_ALIASES = {
    "openai_compatible": "openai-compatible",
    "google": "gemini",
    "embedded": "local",
    "amazon-bedrock": "bedrock",
    "aws": "bedrock",
    "mistralai": "mistral",
}


@dataclass(frozen=True, slots=True)
class ModelRoute:
    """`provider` is a key of `PROVIDERS`; `model` is the provider's own model id."""

    provider: str
    model: str

    @property
    def info(self) -> ProviderInfo:
        return PROVIDERS[self.provider]

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


def parse_model_route(model: str) -> ModelRoute:
    """Split `provider/model` (the model id may itself contain `/`)."""
    example = "openai/gpt-4o-mini, ollama/llama3.2 or local/qwen2.5-coder-1.5b"
    provider, sep, model_id = model.strip().partition("/")
    if not sep:
        raise ValueError(
            f"The model {model!r} does not say which provider serves it. "
            f"Write it as provider/model, for example {example}."
        )
    provider = _ALIASES.get(provider.lower(), provider.lower())
    if provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        raise ValueError(
            f"The model {model!r} names an unknown provider {provider!r}. "
            f"Known providers are {known}; for example {example}."
        )
    if not model_id.strip():
        raise ValueError(
            f"The model {model!r} has no model name after the provider. "
            f"Write it as provider/model, for example {example}."
        )
    return ModelRoute(provider, model_id.strip())


def resolve_api_key(route: ModelRoute, api_key: str | None) -> str | None:
    """The key to use: the explicit one, else the provider's environment variable.

    Raises `AuthenticationError` (in words, naming the variable) when the provider
    needs a key and there is none.
    """
    if api_key:
        return api_key
    info = route.info
    names = ((info.api_key_env,) if info.api_key_env else ()) + info.other_key_envs
    for name in names:
        env_key = os.environ.get(name, "").strip()
        if env_key:
            return env_key
    if info.key_required:
        variable = " or ".join(names)
        raise AuthenticationError(
            f"{info.label} needs an API key and none is set. Enter it in the settings "
            f"or set the environment variable {variable}.",
            provider=route.provider,
        )
    return None


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

"""What the common models can do: context window, output limit, vision and reasoning.

`model_info(provider, model)` looks a model up by the longest catalogue prefix of its
name; a model the catalogue does not know gets conservative defaults, and the user's
config can correct or extend any entry (`overrides`: model → the fields to change).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from app.llm.request import ThinkingLevel

__all__ = [
    "CATALOGUE",
    "UNKNOWN_MODEL",
    "CacheSupport",
    "ModelInfo",
    "ThinkingStyle",
    "clamp_thinking_level",
    "model_info",
]

# The longest prompt-cache retention a model's explicit cache points take on Amazon
# Bedrock (`cachePoint` blocks; "long" adds a one-hour ttl). Anthropic's own API caches
# every Claude model and OpenAI caches by itself: their wires do not ask.
CacheSupport = Literal["none", "short", "long"]

# How a provider takes the level: a token budget (Anthropic ≤ 4.5, Gemini 2.5), an
# effort word (OpenAI, Anthropic adaptive thinking), or a named level (Gemini 3).
ThinkingStyle = Literal["budget", "effort", "level"]

_ORDER = list(ThinkingLevel)


class ModelInfo(BaseModel):
    """One model's limits. `reasoning_levels` are the levels other than `off` it accepts
    (empty: it does not reason, or cannot be asked to); `thinking_style` says how its
    wire takes a level (None when there is nothing to set); `cache_points` what Bedrock's
    cache points accept for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context_window: int
    max_output: int
    vision: bool = False
    reasoning_levels: tuple[ThinkingLevel, ...] = ()
    thinking_style: ThinkingStyle | None = None
    cache_points: CacheSupport = "none"

    @field_validator("reasoning_levels")
    @classmethod
    def _in_order_without_off(cls, levels: tuple[ThinkingLevel, ...]) -> tuple[ThinkingLevel, ...]:
        # `off` is never a level to clamp to: asking for off always means off.
        return tuple(level for level in _ORDER if level in levels and level != ThinkingLevel.OFF)

    @property
    def reasoning(self) -> bool:
        return bool(self.reasoning_levels)

    def clamp(self, level: ThinkingLevel | str) -> ThinkingLevel:
        """The nearest level this model accepts: searched upward first, then downward.
        `off` stays off, and a model that does not reason always gets off."""
        wanted = ThinkingLevel(level)
        if wanted == ThinkingLevel.OFF or not self.reasoning_levels:
            return ThinkingLevel.OFF
        if wanted in self.reasoning_levels:
            return wanted
        start = _ORDER.index(wanted)
        for candidate in _ORDER[start + 1 :]:
            if candidate in self.reasoning_levels:
                return candidate
        for candidate in reversed(_ORDER[:start]):
            if candidate in self.reasoning_levels:
                return candidate
        return ThinkingLevel.OFF  # unreachable: reasoning_levels is not empty


UNKNOWN_MODEL = ModelInfo(context_window=8192, max_output=4096)

_L = ThinkingLevel
_EFFORT = (_L.LOW, _L.MEDIUM, _L.HIGH)
_BUDGET = (_L.MINIMAL, _L.LOW, _L.MEDIUM, _L.HIGH, _L.XHIGH)


def _info(
    context: int,
    output: int,
    *,
    vision: bool = True,
    levels: tuple[ThinkingLevel, ...] = (),
    style: ThinkingStyle | None = None,
    cache: CacheSupport = "none",
) -> ModelInfo:
    return ModelInfo(
        context_window=context,
        max_output=output,
        vision=vision,
        reasoning_levels=levels,
        thinking_style=style,
        cache_points=cache,
    )


# Keyed by model-name prefix (dated snapshots and `-latest` aliases match their family);
# the longest prefix wins. Figures from the providers' model pages.
CATALOGUE: Mapping[str, ModelInfo] = {
    # OpenAI
    "gpt-4o": _info(128_000, 16_384),
    "gpt-4o-mini": _info(128_000, 16_384),
    "chatgpt-4o": _info(128_000, 16_384),
    "gpt-4-turbo": _info(128_000, 4_096),
    "gpt-4.1": _info(1_047_576, 32_768),
    "gpt-4.1-mini": _info(1_047_576, 32_768),
    "gpt-4.1-nano": _info(1_047_576, 32_768),
    "o1": _info(200_000, 100_000, levels=_EFFORT, style="effort"),
    "o1-mini": _info(128_000, 65_536, vision=False),  # reasons, but takes no effort
    "o3": _info(200_000, 100_000, levels=_EFFORT, style="effort"),
    "o3-mini": _info(200_000, 100_000, vision=False, levels=_EFFORT, style="effort"),
    "o4-mini": _info(200_000, 100_000, levels=_EFFORT, style="effort"),
    "gpt-5": _info(400_000, 128_000, levels=(_L.MINIMAL, *_EFFORT), style="effort"),
    "gpt-5-chat": _info(128_000, 16_384),
    # From 5.1 reasoning can be switched off ("none"); 5.2 adds "xhigh".
    "gpt-5.1": _info(400_000, 128_000, levels=_EFFORT, style="effort"),
    "gpt-5.2": _info(400_000, 128_000, levels=(*_EFFORT, _L.XHIGH), style="effort"),
    # Anthropic (also on Bedrock as `anthropic.claude-…`, with cache points from 3.5 Haiku
    # and 3.7 Sonnet on, one-hour ones from the 4.5 models on)
    "claude-3-haiku": _info(200_000, 4_096),
    "claude-3-sonnet": _info(200_000, 4_096),
    "claude-3-opus": _info(200_000, 4_096),
    "claude-3-5-haiku": _info(200_000, 8_192, vision=False, cache="short"),  # text-only
    "claude-3-5-sonnet": _info(200_000, 8_192),
    "claude-3-7-sonnet": _info(200_000, 64_000, levels=_BUDGET, style="budget", cache="short"),
    "claude-sonnet-4": _info(200_000, 64_000, levels=_BUDGET, style="budget", cache="short"),
    "claude-opus-4": _info(200_000, 32_000, levels=_BUDGET, style="budget", cache="short"),
    "claude-opus-4-1": _info(200_000, 32_000, levels=_BUDGET, style="budget", cache="short"),
    "claude-sonnet-4-5": _info(200_000, 64_000, levels=_BUDGET, style="budget", cache="long"),
    "claude-haiku-4-5": _info(200_000, 64_000, levels=_BUDGET, style="budget", cache="long"),
    "claude-opus-4-5": _info(200_000, 64_000, levels=_BUDGET, style="budget", cache="long"),
    # The 4.6 models think adaptively: they take an effort, not a budget.
    "claude-opus-4-6": _info(
        200_000, 128_000, levels=(*_EFFORT, _L.XHIGH), style="effort", cache="long"
    ),
    "claude-sonnet-4-6": _info(
        200_000, 64_000, levels=(*_EFFORT, _L.XHIGH), style="effort", cache="long"
    ),
    # Amazon Nova (Bedrock: `amazon.nova-…`)
    "nova-micro": _info(128_000, 10_000, vision=False, cache="short"),
    "nova-lite": _info(300_000, 10_000, cache="short"),
    "nova-pro": _info(300_000, 10_000, cache="short"),
    "nova-premier": _info(1_000_000, 32_000, cache="short"),
    # Mistral (also on Bedrock as `mistral.…`). Magistral always reasons (its thinking
    # comes as content parts); Mistral Small takes `reasoning_effort`.
    "mistral-small": _info(128_000, 32_768, levels=(_L.HIGH,), style="effort"),
    "mistral-medium": _info(128_000, 32_768),
    "mistral-large": _info(128_000, 32_768),
    "pixtral-large": _info(128_000, 32_768),
    "magistral-small": _info(128_000, 40_000, levels=(_L.HIGH,)),
    "magistral-medium": _info(128_000, 40_000, levels=(_L.HIGH,)),
    "codestral": _info(256_000, 32_768, vision=False),
    "devstral": _info(128_000, 32_768, vision=False),
    "ministral-3b": _info(128_000, 32_768, vision=False),
    "ministral-8b": _info(128_000, 32_768, vision=False),
    "open-mistral-nemo": _info(128_000, 32_768, vision=False),
    # Google Gemini
    "gemini-2.0-flash": _info(1_048_576, 8_192),
    "gemini-2.5-flash": _info(1_048_576, 65_536, levels=_BUDGET, style="budget"),
    "gemini-2.5-pro": _info(1_048_576, 65_536, levels=_BUDGET, style="budget"),
    "gemini-3": _info(1_048_576, 65_536, levels=(_L.LOW, _L.HIGH), style="level"),
    "gemini-3-flash": _info(1_048_576, 65_536, levels=(_L.MINIMAL, *_EFFORT), style="level"),
    # DeepSeek: the reasoner always thinks and has no parameter for how hard.
    "deepseek-chat": _info(128_000, 8_192, vision=False),
    "deepseek-reasoner": _info(128_000, 64_000, vision=False, levels=(_L.HIGH,)),
    # The embedded models (also served by llama.cpp's server under these names).
    "qwen2-5-coder-1-5b": _info(32_768, 8_192, vision=False),
    "smollm2": _info(8_192, 2_048, vision=False),
}

# After a catalogue key comes the end of the name or a separator: `gpt-5` must match
# `gpt-5-mini` and `gpt-5-2025-08-07`, but not `gpt-50`.
_BOUNDARY = re.compile(r"[-:@_/]")


# Bedrock's model ids: an optional cross-region prefix, then the vendor, then the name
# (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `amazon.nova-pro-v1:0`).
_BEDROCK_PREFIX = re.compile(
    r"^(?:(?:us|us-gov|eu|apac|ap|jp|au|ca|global)\.)?"
    r"(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer|twelvelabs)\."
)


def _normalise(name: str) -> str:
    """Lower case, the last path part (`openai/gpt-4o` on OpenRouter, `models/gemini-…`,
    a Bedrock ARN), without Bedrock's region and vendor prefix, and a dot between digits
    as a dash, so `claude-3.5-sonnet` is `claude-3-5-sonnet`."""
    name = _BEDROCK_PREFIX.sub("", name.strip().lower().rsplit("/", 1)[-1])
    return re.sub(r"(?<=\d)\.(?=\d)", "-", name)


def _longest_prefix(name: str, keys: Mapping[str, Any]) -> str | None:
    matches = [
        key
        for key in keys
        if name.startswith(key) and (len(name) == len(key) or _BOUNDARY.match(name, len(key)))
    ]
    return max(matches, key=len, default=None)


_BY_PREFIX: dict[str, ModelInfo] = {_normalise(key): info for key, info in CATALOGUE.items()}


def model_info(
    provider: str,
    model: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> ModelInfo:
    """What `model` (served by `provider`) can do.

    `overrides` maps a model name, a `provider/model` route or a name prefix to the
    fields to change (`{"context_window": 32768}`); the most specific key wins. Raises
    pydantic's `ValidationError` (a `ValueError`) for an override field that is unknown
    or of the wrong type.
    """
    name = _normalise(model)
    key = _longest_prefix(name, _BY_PREFIX)
    info = _BY_PREFIX[key] if key is not None else UNKNOWN_MODEL
    if overrides:
        changes = _override_for(provider, model, overrides)
        if changes:
            info = ModelInfo.model_validate({**info.model_dump(), **changes})
    return info


def _override_for(
    provider: str, model: str, overrides: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    model = model.strip()
    for exact in (f"{provider}/{model}", model):
        if exact in overrides:
            return overrides[exact]
    by_prefix: dict[str, Mapping[str, Any]] = {}
    for key, changes in overrides.items():
        if provider and key.startswith(f"{provider}/"):
            key = key[len(provider) + 1 :]
        elif "/" in key and "/" not in model:
            continue  # `ollama/llama3` is not meant for another provider's `llama3`
        by_prefix[_normalise(key)] = changes
    best = _longest_prefix(_normalise(model), by_prefix)
    return by_prefix[best] if best is not None else None


def clamp_thinking_level(model: str, level: ThinkingLevel | str) -> ThinkingLevel:
    """The nearest level `model` supports, from the model catalogue: searched upward
    first, then downward. `off` stays off; a model that does not reason (or one the
    catalogue does not know) gets `off`. `model` may be a bare id or a route."""
    return model_info("", model).clamp(level)

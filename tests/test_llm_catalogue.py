"""The model catalogue: limits of the common models, config overrides, and thinking-level
clamping."""

from __future__ import annotations

import pytest

from app.llm import ThinkingLevel, clamp_thinking_level
from app.llm.catalogue import CATALOGUE, UNKNOWN_MODEL, ModelInfo, model_info

L = ThinkingLevel


@pytest.mark.parametrize(
    ("provider", "model", "context", "vision"),
    [
        ("openai", "gpt-4o", 128_000, True),
        ("openai", "gpt-4o-mini-2024-07-18", 128_000, True),
        ("openai", "gpt-4.1-nano", 1_047_576, True),
        ("openai", "o4-mini", 200_000, True),
        ("openai", "gpt-5-mini", 400_000, True),
        ("anthropic", "claude-sonnet-4-5-20250929", 200_000, True),
        ("anthropic", "claude-3-5-haiku-latest", 200_000, False),
        ("gemini", "gemini-2.5-flash", 1_048_576, True),
        ("gemini", "gemini-3-pro-preview", 1_048_576, True),
        ("deepseek", "deepseek-chat", 128_000, False),
        ("local", "smollm2", 8_192, False),
    ],
)
def test_common_models_are_known(provider: str, model: str, context: int, vision: bool) -> None:
    info = model_info(provider, model)
    assert info.context_window == context
    assert info.vision is vision
    assert info.max_output < info.context_window


def test_dated_snapshots_match_their_family_but_not_a_longer_name() -> None:
    assert model_info("openai", "gpt-5-2025-08-07") == CATALOGUE["gpt-5"]
    assert model_info("openai", "gpt-5-chat-latest") == CATALOGUE["gpt-5-chat"]
    assert model_info("openai", "gpt-50") == UNKNOWN_MODEL


def test_the_longest_prefix_wins() -> None:
    assert model_info("openai", "o3-mini-2025-01-31") == CATALOGUE["o3-mini"]
    assert model_info("openai", "o3") == CATALOGUE["o3"]
    assert model_info("anthropic", "claude-opus-4-1-20250805") == CATALOGUE["claude-opus-4-1"]
    assert model_info("anthropic", "claude-opus-4-20250514") == CATALOGUE["claude-opus-4"]


def test_router_and_dotted_names_find_the_same_model() -> None:
    assert model_info("openrouter", "anthropic/claude-3.5-sonnet") == CATALOGUE["claude-3-5-sonnet"]
    assert model_info("openrouter", "anthropic/claude-sonnet-4.5") == CATALOGUE["claude-sonnet-4-5"]
    assert model_info("openrouter", "openai/GPT-4o") == CATALOGUE["gpt-4o"]
    assert model_info("gemini", "models/gemini-2.5-pro") == CATALOGUE["gemini-2.5-pro"]


def test_an_unknown_model_gets_conservative_defaults() -> None:
    info = model_info("ollama", "llama3.2:3b")
    assert info == ModelInfo(context_window=8192, max_output=4096)
    assert not info.vision
    assert not info.reasoning
    assert info.thinking_style is None


def test_config_overrides_change_only_the_fields_given() -> None:
    overrides = {"llama3.2": {"context_window": 131_072, "vision": True}}
    info = model_info("ollama", "llama3.2:3b", overrides)
    assert info.context_window == 131_072
    assert info.vision
    assert info.max_output == UNKNOWN_MODEL.max_output


def test_an_override_can_give_an_unknown_model_reasoning_levels() -> None:
    overrides = {"my-reasoner": {"reasoning_levels": ["low", "high"], "thinking_style": "effort"}}
    info = model_info("openai-compatible", "my-reasoner", overrides)
    assert info.reasoning_levels == (L.LOW, L.HIGH)
    assert info.clamp("medium") == L.HIGH


def test_an_override_for_a_route_applies_only_to_that_provider() -> None:
    overrides = {"ollama/qwen3": {"context_window": 40_960}}
    assert model_info("ollama", "qwen3:8b", overrides).context_window == 40_960
    assert model_info("openai-compatible", "qwen3", overrides) == UNKNOWN_MODEL


def test_the_most_specific_override_wins() -> None:
    overrides = {
        "gpt-4o": {"max_output": 1000},
        "gpt-4o-mini": {"max_output": 2000},
        "openai/gpt-4o-mini": {"max_output": 3000},
    }
    assert model_info("openai", "gpt-4o-2024-08-06", overrides).max_output == 1000
    assert model_info("openrouter", "gpt-4o-mini-2024-07-18", overrides).max_output == 2000
    assert model_info("openai", "gpt-4o-mini", overrides).max_output == 3000


def test_an_override_with_an_unknown_field_is_refused() -> None:
    with pytest.raises(ValueError, match="context_windw"):
        model_info("openai", "gpt-4o", {"gpt-4o": {"context_windw": 1}})


def test_off_is_never_a_reasoning_level() -> None:
    info = ModelInfo(context_window=1, max_output=1, reasoning_levels=("off", "high", "low"))
    assert info.reasoning_levels == (L.LOW, L.HIGH)


def test_every_reasoning_model_says_how_its_level_is_set() -> None:
    for name, info in CATALOGUE.items():
        always_thinks = name in ("deepseek-reasoner", "magistral-small", "magistral-medium")
        if info.reasoning and not always_thinks:  # those have nothing to set
            assert info.thinking_style is not None, name
        if not info.reasoning:
            assert info.thinking_style is None, name


def test_thinking_styles_follow_each_providers_parameter() -> None:
    assert model_info("anthropic", "claude-sonnet-4-5").thinking_style == "budget"
    assert model_info("anthropic", "claude-opus-4-6").thinking_style == "effort"
    assert model_info("openai", "o3").thinking_style == "effort"
    assert model_info("gemini", "gemini-2.5-flash").thinking_style == "budget"
    assert model_info("gemini", "gemini-3-pro-preview").thinking_style == "level"


def test_off_stays_off() -> None:
    assert clamp_thinking_level("gpt-5-mini", "off") == L.OFF
    assert clamp_thinking_level("claude-sonnet-4-5", L.OFF) == L.OFF


def test_a_supported_level_is_kept() -> None:
    assert clamp_thinking_level("gpt-5", "minimal") == L.MINIMAL
    assert clamp_thinking_level("claude-sonnet-4-5", "xhigh") == L.XHIGH


def test_a_missing_level_is_searched_upward_first() -> None:
    assert clamp_thinking_level("gemini-3-pro-preview", "medium") == L.HIGH
    assert clamp_thinking_level("o3", "minimal") == L.LOW
    assert clamp_thinking_level("deepseek-reasoner", "low") == L.HIGH


def test_then_downward_when_nothing_above_is_supported() -> None:
    assert clamp_thinking_level("o3", "xhigh") == L.HIGH
    assert clamp_thinking_level("gemini-3-pro-preview", "xhigh") == L.HIGH


def test_a_model_without_reasoning_gets_off() -> None:
    assert clamp_thinking_level("gpt-4o", "high") == L.OFF
    assert clamp_thinking_level("deepseek-chat", "medium") == L.OFF
    assert clamp_thinking_level("smollm2", "low") == L.OFF
    assert clamp_thinking_level("some-new-model", "medium") == L.OFF


def test_clamping_accepts_a_route() -> None:
    assert clamp_thinking_level("openai/o4-mini", "xhigh") == L.HIGH
    assert clamp_thinking_level("openrouter/anthropic/claude-3.7-sonnet", "low") == L.LOW
    assert clamp_thinking_level("local/smollm2", "high") == L.OFF


@pytest.mark.parametrize(
    ("model", "window", "vision", "cache"),
    [
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000, True, "long"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", 200_000, True, "long"),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", 200_000, False, "short"),
        ("anthropic.claude-3-haiku-20240307-v1:0", 200_000, True, "none"),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0",
            300_000,
            True,
            "short",
        ),
        ("mistral.mistral-large-2407-v1:0", 128_000, True, "none"),
    ],
)
def test_bedrock_ids_find_their_family_past_region_and_vendor(model, window, vision, cache) -> None:
    info = model_info("bedrock", model)
    assert (info.context_window, info.vision, info.cache_points) == (window, vision, cache)


def test_mistral_models_are_known() -> None:
    assert model_info("mistral", "mistral-small-latest").clamp("low") == L.HIGH
    assert model_info("mistral", "magistral-medium-2509").reasoning
    assert not model_info("mistral", "codestral-latest").vision
    assert clamp_thinking_level("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "low") == L.LOW

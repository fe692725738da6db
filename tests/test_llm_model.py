"""The neutral model: messages, blocks, requests, replies, routing and error wording."""

from __future__ import annotations

import pytest

from app.llm import (
    PROVIDERS,
    AuthenticationError,
    CacheRetention,
    ContextOverflowError,
    Conversation,
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    LLMResponse,
    ModelRoute,
    Msg,
    ProviderError,
    Role,
    TextBlock,
    ThinkingBlock,
    ThinkingLevel,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    clamp_thinking_level,
    is_context_overflow,
    parse_model_route,
)
from app.llm.errors import parse_retry_after, redact
from app.llm.request import estimate_input_tokens
from app.llm.routing import resolve_api_key


def test_msg_factories_set_roles_and_text_joins_text_blocks() -> None:
    assert Msg.system("be kind").role == Role.SYSTEM
    assert Msg.user("hi").text == "hi"
    msg = Msg.assistant([TextBlock(text="a"), ToolUseBlock(name="t"), TextBlock(text="b")])
    assert msg.role == "assistant"
    assert msg.text == "a\nb"


def test_blocks_is_always_a_list() -> None:
    assert Msg.user("").blocks == []
    assert Msg.user("x").blocks == [TextBlock(text="x")]


def test_tool_calls_and_tool_results_are_picked_out() -> None:
    call = ToolUseBlock(id="c1", name="screenshot", input={"monitor": 1})
    assert Msg.assistant([TextBlock(text="looking"), call]).tool_calls == [call]
    result_msg = Msg.tool_result("c1", "done", name="screenshot")
    assert result_msg.role == Role.TOOL
    (result,) = result_msg.tool_results
    assert result.tool_use_id == "c1"
    assert result.text == "done"


def test_blocks_round_trip_through_json_by_kind(tmp_path) -> None:
    ref = ImageFileRef(path=tmp_path / "a.png", mime_type="image/png", width=2, height=2)
    msg = Msg.user(
        [
            TextBlock(text="see"),
            ImageBlock(original=ref, model=ref, name="p1"),
            ThinkingBlock(text="hmm", signature="sig", provider="anthropic"),
            ToolResultBlock(tool_use_id="c", content=[TextBlock(text="ok")], is_error=True),
        ]
    )
    again = Msg.model_validate_json(msg.model_dump_json())
    assert again == msg
    assert [b.kind for b in again.blocks] == ["text", "image", "thinking", "tool_result"]


def test_conversation_finds_system_prompt_and_last_message() -> None:
    conv = Conversation()
    conv.add(Msg.system("You are Mika."))
    conv.add_many([Msg.user("hi"), Msg.assistant("hello"), Msg.user("bye")])
    assert conv.system_prompt == "You are Mika."
    assert [m.text for m in conv.non_system_messages] == ["hi", "hello", "bye"]
    assert conv.last().text == "bye"
    assert conv.last(Role.ASSISTANT).text == "hello"
    assert len(conv) == 4


def test_request_from_conversation_carries_messages_and_options() -> None:
    conv = Conversation(messages=[Msg.user("hi")])
    request = conv.to_llm_request("openai/gpt-4o-mini", temperature=0.2, stream=True)
    assert request.messages[0].text == "hi"
    assert request.temperature == 0.2
    assert request.thinking == ThinkingLevel.OFF == "off"
    assert request.cache == CacheRetention.SHORT
    assert LLMRequest.from_conversation([Msg.user("x")], "m").messages[0].text == "x"


def test_named_tool_choice_needs_a_name() -> None:
    assert LLMRequest(model="m", tool_choice={"name": "look"}).tool_choice == {"name": "look"}
    with pytest.raises(ValueError):
        LLMRequest(model="m", tool_choice={"tool": "look"})


def test_usage_defaults_to_unknown_not_zero() -> None:
    usage = Usage()
    assert usage.input is None and usage.output is None and usage.total is None
    assert not usage.known


def test_response_to_msg_keeps_thinking_and_tool_calls() -> None:
    response = LLMResponse(
        provider="deepseek",
        id="r1",
        model="deepseek-reasoner",
        content=[ThinkingBlock(text="plan"), TextBlock(text="ok"), ToolUseBlock(name="t")],
        finish_reason="tool_use",
    )
    msg = response.to_msg()
    assert msg.role == Role.ASSISTANT
    assert msg.text == "ok"
    assert len(msg.tool_calls) == 1
    assert msg.metadata["response_id"] == "r1"


def test_clamp_thinking_level_searches_up_then_down() -> None:
    # "off" stays off; a supported level is kept; otherwise the nearest one above,
    # then below; models the catalogue does not know to reason get "off".
    assert clamp_thinking_level("gpt-5-mini", "off") == ThinkingLevel.OFF
    assert clamp_thinking_level("o3", "xhigh") == ThinkingLevel.HIGH
    assert clamp_thinking_level("gpt-4o", "high") == ThinkingLevel.OFF
    assert clamp_thinking_level("some-new-model", "medium") == ThinkingLevel.OFF


def test_estimate_counts_text_and_images_without_network(tmp_path) -> None:
    ref = ImageFileRef(path=tmp_path / "a.png", mime_type="image/png", width=1000, height=750)
    small = LLMRequest(model="m", messages=[Msg.user("x" * 400)])
    big = LLMRequest(model="m", messages=[Msg.user([ImageBlock(original=ref, model=ref)])])
    assert 100 <= estimate_input_tokens(small) <= 110
    assert estimate_input_tokens(big) >= 1000


def test_parse_model_route_splits_at_the_first_slash() -> None:
    assert parse_model_route("openai/gpt-4o-mini") == ModelRoute("openai", "gpt-4o-mini")
    assert (
        parse_model_route("openrouter/meta-llama/llama-3.1-8b").model == "meta-llama/llama-3.1-8b"
    )
    assert parse_model_route("local/smollm2").provider == "local"


def test_model_without_provider_says_which_form_to_use() -> None:
    with pytest.raises(ValueError, match="provider/model"):
        parse_model_route("gpt-4o-mini")
    with pytest.raises(ValueError, match="unknown provider"):
        parse_model_route("acme/model")


def test_every_provider_knows_its_key_variable() -> None:
    assert PROVIDERS["openai"].api_key_env == "OPENAI_API_KEY"
    assert PROVIDERS["anthropic"].api_key_env == "ANTHROPIC_API_KEY"
    assert PROVIDERS["gemini"].api_key_env == "GEMINI_API_KEY"
    assert PROVIDERS["openrouter"].api_key_env == "OPENROUTER_API_KEY"
    assert PROVIDERS["deepseek"].api_key_env == "DEEPSEEK_API_KEY"
    assert PROVIDERS["ollama"].default_base_url == "http://127.0.0.1:11434/v1"
    assert not PROVIDERS["ollama"].key_required
    assert not PROVIDERS["openai-compatible"].key_required


def test_missing_key_names_the_variable_to_set(monkeypatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="DEEPSEEK_API_KEY"):
        resolve_api_key(parse_model_route("deepseek/deepseek-chat"), None)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-env")
    assert resolve_api_key(parse_model_route("deepseek/deepseek-chat"), None) == "sk-from-env"
    assert resolve_api_key(parse_model_route("ollama/llama3"), None) is None


def test_redact_removes_the_key_and_key_looking_strings() -> None:
    text = "Incorrect API key provided: sk-" + "test-SECRETSECRETSECRET1234. Also AIza" + "x" * 30
    cleaned = redact(text, ["sk-" + "test-SECRETSECRETSECRET1234"])
    assert "SECRET" not in cleaned
    assert "AIza" not in cleaned
    assert redact("Bearer abcdefghijklmnop") == "Bearer ***"


def test_retry_after_reads_milliseconds_then_seconds() -> None:
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 197485 + 21333 > 200000",
        "This model's maximum context length is 4097 tokens. However, you requested 5000",
        "Your input exceeds the context window of this model.",
        "The input token count (1196265) exceeds the maximum number of tokens allowed",
        "the request exceeds the available context size, try increasing it",
        "Requested tokens (3000) exceed context window of 2048",
    ],
)
def test_context_overflow_wordings_are_recognised(message: str) -> None:
    assert is_context_overflow(ProviderError(message))
    assert is_context_overflow(message)


def test_context_overflow_by_type_and_by_usage() -> None:
    assert is_context_overflow(ContextOverflowError("too long"))
    assert not is_context_overflow(ProviderError("Internal server error"))
    reply = LLMResponse(provider="p", id="i", model="m", usage=Usage(input=8192))
    assert is_context_overflow(reply, context_window=8192)
    assert not is_context_overflow(reply, context_window=16384)

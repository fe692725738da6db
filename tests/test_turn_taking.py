"""Turn-taking through the real listening path: Silero VAD, Smart Turn v3.2 and whisper
tiny.en on espeak-ng speech (one sentence with a pause in its middle, questions apart),
a scripted chat server on loopback. Fed as fast as it goes, the listener waits for the
answers a pause's end depends on, so the outcome does not depend on the machine."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.agent.storage import InMemoryStorage
from app.audio.capture import ChunkListSource
from app.audio.format import FRAME_BYTES
from app.audio.playback import MemorySink
from app.audio.wav import read_wav_16k
from app.config import Settings
from app.events import AssistantSentence, EventHub, Notice, SessionEvent, UserTranscript
from app.session import TurnResult, VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer


def speak(text: str, path: Path, *, voice: str = "en-us", wpm: int = 160) -> bytes:
    """espeak-ng speech (SSML: a `<break>` keeps a sentence's intonation going on)."""
    raw = path.with_suffix(".raw.wav")
    espeak = ["espeak-ng", "-m", "-v", voice, "-s", str(wpm), "-w", str(raw), text]
    subprocess.run(espeak, check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(path)], check=True)
    return read_wav_16k(path)


def _now() -> float:
    import time

    return time.perf_counter()


def silence(seconds: float) -> bytes:
    return bytes(int(seconds * 16_000) * 2)


def chunks(pcm: bytes) -> list[bytes]:
    return [pcm[i : i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]


@pytest.fixture(scope="module")
def paused_sentence(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("paused")
    said = speak('I want to tell you about <break time="1200ms"/> my cat.', folder / "p.wav")
    return silence(0.3) + said + silence(3.0)


@pytest.fixture(scope="module")
def two_questions(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """Two questions 4 s apart, as the two stretches of audio around the second one's
    start (a test's source may hold the second until the first is answered)."""
    folder = tmp_path_factory.mktemp("two")
    first = speak("What is the weather like today?", folder / "a.wav")
    second = speak("Can you tell me a joke?", folder / "b.wav", voice="en-gb", wpm=150)
    return [silence(0.3) + first + silence(3.7), silence(0.3) + second + silence(3.0)]


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    replies = [Reply.text_stream([f"Answer {i}."], delay=0.01) for i in range(1, 6)]
    with ScriptedChatServer(replies) as srv:
        yield srv


class OneAtATime:
    """Stretches of audio as fast as they go, each after the session has answered what
    came before (read that fast, a question would otherwise come while it answers)."""

    def __init__(self, stretches: list[bytes], heard: Heard) -> None:
        self._stretches = stretches
        self._heard = heard

    async def chunks(self) -> AsyncIterator[bytes]:
        session = self._heard.session
        for stretch in self._stretches:
            async with asyncio.timeout(120):
                while session.host.working or session.host.companion_audible(_now()):
                    await asyncio.sleep(0.02)
            for chunk in chunks(stretch):
                yield chunk
                await asyncio.sleep(0)

    async def aclose(self) -> None:
        return None


class Heard:
    """A session on the scripted server, with what it emitted and the turns it ran."""

    def __init__(self, server: ScriptedChatServer, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        self.seen: list[SessionEvent] = []
        hub = EventHub()
        hub.subscribe(self.seen.append)
        self.storage = InMemoryStorage()
        self.session = VoiceSession(settings, sink=MemorySink(), storage=self.storage, events=hub)
        self.results: list[TurnResult] = []
        self.session.host.on_turn_result(self.results.append)

    async def listen(self, source: object) -> None:
        try:
            await self.session.load_models()
            await self.session.listen(source)  # type: ignore[arg-type]
            async with asyncio.timeout(120):
                await self.session.host.until_idle()
        finally:
            await self.session.aclose()

    def finals(self) -> list[UserTranscript]:
        return [e for e in self.seen if isinstance(e, UserTranscript) and e.final and e.text]

    def partials(self) -> list[UserTranscript]:
        return [e for e in self.seen if isinstance(e, UserTranscript) and not e.final]


def words(text: str) -> list[str]:
    return [w.strip(",.?!").lower() for w in text.split()]


async def test_a_sentence_with_a_pause_in_the_middle_is_one_turn(
    server: ScriptedChatServer, paused_sentence: bytes
) -> None:
    heard = Heard(server)
    await heard.listen(ChunkListSource(chunks(paused_sentence)))
    (final,) = heard.finals()
    said = words(final.text)
    # both halves, in one turn: the words before the pause and "my" after it (the last
    # word is the recognizer's to get right: tiny.en hears "my cat" as "my card" now
    # and then, in its short English window 10 syntheses of 48, in 30 s none)
    assert "tell" in said and "my" in said, final.text
    (result,) = heard.results
    assert result.user_words == final.text and result.endpointing["heard_while_speaking"]
    # While the user paused, the words so far were shown, under the same turn.
    assert any("tell" in words(p.text) for p in heard.partials())
    assert {p.turn_id for p in heard.partials()} == {final.turn_id}
    assert len(server.requests) == 1
    assert server.requests[0].json()["messages"][-1]["content"] == final.text


async def test_a_fixed_silence_cuts_the_same_sentence_in_two(
    server: ScriptedChatServer, paused_sentence: bytes
) -> None:
    settings = Settings()
    settings.turn.endpointing = "silence"
    heard = Heard(server, settings)
    # In real time: with a fixed silence nothing waits for the words, and the halves
    # would race each other through the recognizer.
    await heard.listen(ChunkListSource(chunks(paused_sentence), realtime=True))
    # The turn ended in the pause: what came after it is not part of it (whether it
    # becomes a turn of its own depends on what the companion is doing by then).
    first = heard.finals()[0]
    assert "tell" in words(first.text) and "my" not in words(first.text), first.text


async def test_two_questions_several_seconds_apart_are_two_turns(
    server: ScriptedChatServer, two_questions: list[bytes]
) -> None:
    heard = Heard(server)
    await heard.listen(OneAtATime(two_questions, heard))
    first, second = heard.finals()
    assert "weather" in words(first.text) and "joke" in words(second.text)
    assert first.turn_id != second.turn_id and len(server.requests) == 2
    history = heard.session.agent.history
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]


async def test_when_the_model_is_unsure_a_speculative_reply_is_used_once_confirmed(
    server: ScriptedChatServer, two_questions: list[bytes]
) -> None:
    settings = Settings()
    settings.turn.threshold = 1.0  # the turn model is never sure: the settle silence decides
    settings.turn.speculative_replies = "on"
    heard = Heard(server, settings)
    await heard.listen(OneAtATime(two_questions, heard))
    assert [r.endpointing.get("speculation") for r in heard.results] == ["used", "used"]
    settled = "finished words, then silence"
    assert [r.endpointing["ended_by"] for r in heard.results] == [settled, settled]
    stats = heard.session.host.figures().speculation
    assert (stats.started, stats.used, stats.discarded, stats.wasted_calls) == (2, 2, 0, 0)
    assert stats.model_calls == 2 and len(server.requests) == 2  # nothing asked twice
    replies = [e.display_text for e in heard.seen if isinstance(e, AssistantSentence)]
    assert replies == ["Answer 1.", "Answer 2."]
    saved = heard.storage.load("default", heard.storage.list_histories("default")[0])
    assert [m.text for m in saved] == [
        heard.finals()[0].text, "Answer 1.", heard.finals()[1].text, "Answer 2."
    ]


class HeldSource:
    """Chunks as fast as they go, except that chunk `at` waits until `ready()` (so a
    speculative reply can be finished before the user goes on)."""

    def __init__(self, pcm: bytes, at: int, ready: Callable[[], bool]) -> None:
        self._chunks = chunks(pcm)
        self._at = at
        self._ready = ready

    async def chunks(self) -> AsyncIterator[bytes]:
        for i, chunk in enumerate(self._chunks):
            if i == self._at:
                async with asyncio.timeout(60):
                    while not self._ready():
                        await asyncio.sleep(0.02)
                await asyncio.sleep(0.3)  # the scripted reply streams out in full
            yield chunk
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        return None


async def test_a_speculative_reply_is_thrown_away_without_a_trace_when_the_user_goes_on(
    server: ScriptedChatServer, tmp_path: Path
) -> None:
    ssml = 'Can you tell me a joke? <break time="2500ms"/> About cats, please.'
    said = speak(ssml, tmp_path / "j.wav")
    gap = np.nonzero(np.abs(np.frombuffer(said, "<i2")) > 300)[0]
    resume = int(gap[np.argmax(np.diff(gap))] + np.max(np.diff(gap)))  # the pause's end
    pcm = silence(0.3) + said + silence(3.0)
    settings = Settings()
    settings.turn.threshold = 1.0
    settings.turn.settle_ms = settings.turn.question_settle_ms = 4000  # never in the pause
    settings.turn.fallback_ms = 5000
    settings.turn.speculative_replies = "on"
    heard = Heard(server, settings)
    at = (int(0.3 * 16_000) + resume) * 2 // FRAME_BYTES
    source = HeldSource(pcm, at, lambda: bool(server.requests))
    await heard.listen(source)
    (final,) = heard.finals()
    assert "joke" in words(final.text) and "please" in words(final.text)
    stats = heard.session.host.figures().speculation
    assert stats.discarded >= 1 and stats.wasted_calls >= 1
    assert stats.started == stats.used + stats.discarded
    # The model was asked more than once: each answer to the sentence's first half was
    # thrown away and left no trace; only the answer to the whole of it was heard.
    asked = [r.json()["messages"][-1]["content"] for r in server.requests]
    assert "please" not in words(asked[0]) and asked[-1] == final.text
    answer = f"Answer {len(asked)}."
    replies = [e.display_text for e in heard.seen if isinstance(e, AssistantSentence)]
    assert replies == [answer]
    assert [m.text for m in heard.session.agent.history] == [final.text, answer]
    saved = heard.storage.load("default", heard.storage.list_histories("default")[0])
    assert [m.text for m in saved] == [final.text, answer]


async def test_without_the_turn_model_turns_end_after_a_silence_and_the_user_is_told(
    server: ScriptedChatServer, two_questions: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.audio.turn_model as turn_model

    def missing(*args: object, **kwargs: object) -> None:
        raise turn_model.TurnModelMissing("The turn model (Smart Turn) is not installed: pip …")

    monkeypatch.setattr(turn_model, "SmartTurn", missing)
    heard = Heard(server)
    await heard.listen(OneAtATime(two_questions, heard))
    notices = [e.message for e in heard.seen if isinstance(e, Notice)]
    assert any("Smart Turn" in n and "640 ms of silence instead" in n for n in notices)
    assert len(heard.finals()) == 2
    assert [r.endpointing["ended_by"] for r in heard.results] == ["silence", "silence"]


async def test_a_streaming_recognizer_hears_the_turn_as_it_is_spoken(
    server: ScriptedChatServer, tmp_path: Path
) -> None:
    from pydantic import SecretStr

    from tests.speech_servers import DashScopeServer

    said = speak("What is the weather like today?", tmp_path / "q.wav")
    sentence = "What is the weather like today?"
    async with DashScopeServer((sentence,), expected_bytes=len(said)) as speech:
        settings = Settings()
        settings.speech.adapter = "dashscope_funasr"
        settings.speech.endpoint = speech.url
        settings.speech.api_key = SecretStr(speech.api_key)
        heard = Heard(server, settings)
        # as a microphone delivers it: the words come back while the user still speaks
        spoken = chunks(silence(0.3) + said + silence(3.0))
        await heard.listen(ChunkListSource(spoken, realtime=True))
        assert not speech.errors
        assert len(speech.run_tasks) == 1  # one live stream for the whole turn
    (final,) = heard.finals()
    assert final.text == sentence and heard.results[0].endpointing["heard_while_speaking"]
    partial = [p.text for p in heard.partials()]
    assert partial and all(sentence.startswith(p) for p in partial)
    assert server.requests[-1].json()["messages"][-1]["content"] == sentence

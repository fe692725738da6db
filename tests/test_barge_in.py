"""Microphone modes (always-on, push-to-talk, muted) and barge-in, through the real
listening loop: real Silero VAD, real WebRTC AEC3, real whisper, a scripted chat
server on loopback. Barge-in runs in a simulated room (`app.audio.simulated_room.SimulatedRoom`)
whose speaker and microphone advance in lock-step on the microphone's sample clock,
so no outcome depends on how fast the machine is."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import wave
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.agent.storage import InMemoryStorage
from app.audio.capture import WavFileSource
from app.audio.echo import WebRtcEchoCanceller, create_echo_canceller
from app.audio.playback import AudioSink, MemorySink
from app.audio.simulated_room import SimulatedRoom
from app.audio.wav import read_wav_16k
from app.config import Settings
from app.events import EventHub, SessionEvent, TurnFinished, UserTranscript
from app.session import TurnResult, VoiceSession, build_speech
from app.speech import SpeechClient, TranscriptionEvent
from app.tts import SynthesizedAudio, TTSEngine, Voice
from tests.llm_servers import Reply, ScriptedChatServer


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(["Sure.", " Here you go."], delay=0.01)]) as srv:
        yield srv


def make_session(
    server: ScriptedChatServer,
    settings: Settings | None = None,
    sink: AudioSink | None = None,
    speech: SpeechClient | None = None,
    tts: TTSEngine | None = None,
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = settings or Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    # these tests count the chat requests; the memory's own are tested in test_memory_*
    settings.memory.learn = False
    seen: list[SessionEvent] = []
    hub = EventHub()
    hub.subscribe(seen.append)
    session = VoiceSession(
        settings,
        sink=sink or MemorySink(),
        storage=InMemoryStorage(),
        events=hub,
        speech=speech,
        tts=tts,
    )
    return session, seen


class ScriptedSource:
    """Chunks, with an action run before chunk `i` (a key pressed or released)."""

    def __init__(self, chunks: list[bytes], actions: dict[int, Callable[[], None]]) -> None:
        self._chunks = chunks
        self._actions = actions

    async def chunks(self) -> AsyncIterator[bytes]:
        for i, chunk in enumerate(self._chunks):
            if i in self._actions:
                self._actions[i]()
            yield chunk
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        return None


def wav_chunks(path: Path, trailing_silence_s: float) -> list[bytes]:
    return list(WavFileSource(path, trailing_silence_s=trailing_silence_s)._chunks)


async def wait_turn(seen: list[SessionEvent], timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not any(isinstance(e, TurnFinished) for e in seen):
            await asyncio.sleep(0.02)


def transcripts(seen: list[SessionEvent]) -> list[str]:
    """What the user said, turn by turn (the final words; partial ones come before)."""
    return [e.text for e in seen if isinstance(e, UserTranscript) and e.final]


async def test_push_to_talk_ignores_speech_while_the_key_is_up(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    session.set_mic_mode("push_to_talk")
    try:
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
        await asyncio.sleep(0.1)
    finally:
        await session.aclose()
    assert transcripts(seen) == [] and server.requests == []


async def test_releasing_push_to_talk_ends_the_utterance_at_once(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    session.set_mic_mode("push_to_talk")
    # No trailing silence: without the release, the VAD would never end this utterance.
    chunks = wav_chunks(question_wav, 0.1)
    source = ScriptedSource(
        chunks + [b"\0" * 1024] * 2,
        {
            0: lambda: session.set_push_to_talk(True),
            len(chunks): lambda: session.set_push_to_talk(False),
        },
    )
    try:
        await session.listen(source)
        await wait_turn(seen)
    finally:
        await session.aclose()
    heard = transcripts(seen)
    assert len(heard) == 1 and "weather" in heard[0].lower()


async def test_muted_mode_hears_nothing_and_unmuting_listens_again(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    session, seen = make_session(server)
    session.set_mic_mode("muted")
    assert session.mic_mode == "muted"
    try:
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
        assert transcripts(seen) == []
        session.set_mic_mode("always_on")
        await session.listen(WavFileSource(question_wav, trailing_silence_s=1.5))
        await wait_turn(seen)
    finally:
        await session.aclose()
    assert len(transcripts(seen)) == 1
    with pytest.raises(ValueError):
        session.set_mic_mode("loud")


# ----- barge-in -----------------------------------------------------------------
LONG_REPLY = [
    "This is the first sentence of a rather long answer about the sea.",
    " The second sentence goes on about waves, tides and the moon for a while.",
    " And a third one, which nobody should hear if they interrupt.",
]


class EspeakVoice:
    """The companion's voice from the espeak-ng program: real speech, and the same
    samples for the same text every time (the pyttsx3 binding's are not: a few
    samples more or less per sentence), so a room run is the same every run."""

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        def run() -> SynthesizedAudio:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "s.wav"
                args = ["espeak-ng", "-v", "en-us", "-s", "175", "-w", str(path), text.strip()]
                subprocess.run(args, check=True)
                with wave.open(str(path)) as wav:
                    return SynthesizedAudio(wav.readframes(wav.getnframes()), wav.getframerate())

        return await asyncio.to_thread(run)

    async def voices(self) -> list[Voice]:
        return []

    async def aclose(self) -> None:
        return None


def barge_settings() -> Settings:
    settings = Settings()
    settings.audio.barge_in = True
    settings.audio.echo_mode = "aec"
    return settings


def in_room(
    server: ScriptedChatServer,
    room: SimulatedRoom,
    speech: SpeechClient | None = None,
) -> tuple[VoiceSession, list[SessionEvent]]:
    """A session whose speaker and microphone are the room's, its echo canceller on the
    room's clock."""
    session, seen = make_session(server, barge_settings(), room.sink, speech, EspeakVoice())
    assert isinstance(session.echo, WebRtcEchoCanceller) and session.can_barge_in
    session.echo.clock = room.clock
    return session, seen


def voice(path: Path) -> np.ndarray:
    return np.frombuffer(read_wav_16k(path), "<i2").astype(np.float32)


async def settled(session: VoiceSession, seen: list[SessionEvent], turns: int) -> None:
    """Until `turns` turns have finished and nothing is left that could start another."""
    async with asyncio.timeout(120):
        while (
            sum(isinstance(e, TurnFinished) for e in seen) < turns
            or session.host.working
        ):
            await asyncio.sleep(0.05)


async def answered_in_room(
    session: VoiceSession, seen: list[SessionEvent], room: SimulatedRoom, turns: int
) -> TurnResult:
    """Ask by typing while the session listens in the room, until `turns` turns have
    settled; then close the session."""
    listener = asyncio.create_task(session.listen(room))
    try:
        result = await asyncio.wait_for(session.send_text("Tell me about the sea"), 60)
        await settled(session, seen, turns)
    finally:
        await session.aclose()
        listener.cancel()
    return result


async def test_speaking_over_the_companion_interrupts_it_and_becomes_the_next_turn(
    question_wav: Path,
) -> None:
    user = voice(question_wav)
    replies = [Reply.text_stream(LONG_REPLY, delay=0.01), Reply.text_stream(["Sunny."])]
    with ScriptedChatServer(replies) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        heard_by = Watched(build_speech(barge_settings()))
        session, seen = in_room(srv, room, speech=heard_by)
        # 1.6 s into the reply: after the canceller's warm-up (1.5 s of its voice).
        room.say(user, after_played_s=1.6)
        result = await answered_in_room(session, seen, room, 2)
    assert result.interrupted and session.barge.count == 1 and session.barge.resumes == 0
    # Barge-in needs 500 ms of speech: it came soon after the user started (room time).
    user_at = room.voices[0][0]
    assert len(room.stopped_at) >= 1
    assert 0.5 <= (room.stopped_at[0] - user_at) / 16_000 < 1.2
    # The model was told what was heard: the first sentence, cut, never the third.
    messages = srv.requests[1].json()["messages"]
    heard = messages[2]["content"]
    assert messages[2]["role"] == "assistant" and heard.startswith("This is")
    assert "nobody should hear" not in heard
    # The user's words, from their onset, are the next turn (one turn, not two): the
    # recognizer got all of the question, the part over the companion's voice too.
    assert len(srv.requests) == 2 and len(transcripts(seen)) == 2
    assert len(heard_by.audio) == 1 and len(heard_by.audio[0]) // 2 > user.size
    # Its first half second overlapped the companion's voice (double talk through
    # AEC3), where whisper may slip ("what if the weather..."); the rest was said
    # after the voice stopped and is transcribed from the raw microphone.
    got = [w.strip(",.?!") for w in transcripts(seen)[1].lower().split()]
    assert "today" in got and len(got) >= 4, got
    assert messages[-1]["content"] == transcripts(seen)[1]
    # The memory is told what the companion was saying as these words were heard (it
    # leaves out of them whatever was its own voice).
    stored = session.history_messages()
    assert stored[-2].role.value == "user"
    assert stored[-2].metadata["spoken_over"].startswith("This is")


async def test_the_companions_own_voice_and_a_short_cough_do_not_interrupt(
    question_wav: Path,
) -> None:
    cough = voice(question_wav)[int(0.1 * 16_000) : int(0.35 * 16_000)]  # 250 ms of speech
    with ScriptedChatServer([Reply.text_stream(LONG_REPLY[:2], delay=0.01)]) as srv:
        room = SimulatedRoom(delay_ms=40, attenuation_db=-6)  # loud speakers
        session, seen = in_room(srv, room)
        room.say(cough, after_played_s=2.0)
        result = await answered_in_room(session, seen, room, 1)
    assert len(room.voices) == 1  # the cough was there, over the voice
    assert not result.interrupted and session.barge.count == 0
    assert transcripts(seen) == ["Tell me about the sea"]
    # Both sentences were played to the end: the echo never stopped the speaker.
    assert room.stopped_at == [] and room.played_s > 6


def test_barge_in_is_on_by_default_and_needs_echo_cancellation_and_a_reference() -> None:
    settings = Settings()  # the defaults: always-on, barge-in, echo_mode auto -> AEC3
    assert isinstance(create_echo_canceller(settings.audio.echo_mode), WebRtcEchoCanceller)
    settings.chat.model = "openai-compatible/x"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    assert session.can_barge_in
    session.set_mic_mode("push_to_talk")
    assert not session.can_barge_in
    session.set_mic_mode("always_on")
    session.sink = None
    assert not session.can_barge_in
    half = Settings()
    half.chat.model = settings.chat.model
    half.chat.base_url = settings.chat.base_url
    half.audio.echo_mode = "half_duplex"
    half.audio.barge_in = True
    assert not VoiceSession(half, sink=MemorySink(), storage=InMemoryStorage()).can_barge_in


class NoWords:
    """A recognizer that hears no words (a cough, a laugh, the TV)."""

    async def load(self) -> None:
        return None

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        async for _ in audio:
            pass
        yield TranscriptionEvent(text="", is_final=True)


async def test_a_barge_in_without_words_resumes_where_it_stopped(question_wav: Path) -> None:
    with ScriptedChatServer([Reply.text_stream(LONG_REPLY[:2], delay=0.01)]) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = in_room(srv, room, speech=NoWords())
        room.say(voice(question_wav), after_played_s=1.6)
        result = await answered_in_room(session, seen, room, 1)
    assert session.barge.count == 1 and session.barge.resumes == 1
    assert not result.interrupted and len(room.stopped_at) == 1
    stored = session.agent.core.storage  # the whole reply was heard, nothing interrupted
    saved = stored.load("default", stored.list_histories("default")[0])
    assert "waves, tides and the moon" in saved[-1].text
    assert not saved[-1].metadata.get("interrupted")
    # Nothing was played twice: the first sentence was resumed where it stopped (the
    # second play() got only the rest of it), and all that was played is the two
    # sentences once (give or take the 40 ms slice dropped from the device buffer).
    sizes = room.sink.requested
    assert len(sizes) == 3 and sizes[1] < sizes[0]
    played = sum(chunk.size for chunk in room.sink.played)
    slice_n = 48_000 * 40 // 1000  # 40 ms at any TTS rate
    assert abs(played - (sizes[0] + sizes[2])) <= 3 * slice_n


class Watched:
    """The real recognizer, watched: what it was given and what it made of it. With
    `hold_until`, the first transcription waits until that is true (on the room's
    clock, so the wait is the same every run)."""

    def __init__(self, inner: SpeechClient, hold_until: Callable[[], bool] | None = None) -> None:
        self._inner = inner
        self._until = hold_until
        self.calls = 0
        self.audio: list[bytes] = []
        self.finals: list[str] = []

    async def load(self) -> None:
        await self._inner.load()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        self.calls += 1
        if self.calls == 1 and self._until is not None:
            async with asyncio.timeout(60):
                while not self._until():
                    await asyncio.sleep(0.01)
        pcm = b"".join([chunk async for chunk in audio])
        self.audio.append(pcm)

        async def one() -> AsyncIterator[bytes]:
            yield pcm

        async for event in self._inner.stream(one()):
            if event.is_final:
                self.finals.append(event.text.strip())
            yield event


async def test_two_utterances_in_one_barge_in_make_one_turn(
    question_wav: Path, tmp_path: Path
) -> None:
    from tests.conftest import speak_to_wav

    first = voice(question_wav)  # "What is the weather like today?"
    second = voice(speak_to_wav("And tell me about the moon.", tmp_path / "moon.wav"))
    pause = np.zeros(int(1.2 * 16_000), np.float32)  # longer than the end silence
    both = np.concatenate([first, pause, second])
    replies = [Reply.text_stream(LONG_REPLY, delay=0.01)] + [Reply.text_stream(["Sure."])] * 3
    with ScriptedChatServer(replies) as srv:
        room = SimulatedRoom(delay_ms=50, attenuation_db=-12)
        settings = barge_settings()
        held = Watched(
            build_speech(settings),
            lambda: bool(room.voices) and room.position > room.voices[0][0] + both.size + 16_000,
        )
        session, seen = in_room(srv, room, speech=held)
        room.say(both, after_played_s=1.6)
        result = await answered_in_room(session, seen, room, 2)
    assert result.interrupted and session.barge.count == 1
    # Both utterances were transcribed, into one turn: one more request, not two. (The
    # first one's words overlapped the companion's voice, so whisper may slip on them;
    # the second was said in silence.)
    assert held.calls == 2 and len(held.finals) == 2 and all(held.finals)
    assert len(srv.requests) == 2 and len(transcripts(seen)) == 2
    assert transcripts(seen)[1] == " ".join(held.finals)
    assert "moon" in held.finals[1].lower()


async def test_its_own_voice_through_a_canceller_that_fails_is_not_a_turn() -> None:
    # A speaker heard perfectly (no delay, no room) and a canceller that removes nothing
    # of it (AEC3 failed so on a zero-delay loopback): the voice itself is taken for
    # speech over it. Its words, transcribed, are the companion's own: not a barge-in
    # that stands, not a turn, nothing stored; the reply speaks on, and the rest of it is
    # not listened through.
    with ScriptedChatServer([Reply.text_stream(LONG_REPLY, delay=0.01)]) as srv:
        room = SimulatedRoom(delay_ms=0, attenuation_db=0)
        session, seen = in_room(srv, room)
        process = session.echo.process

        def leaks(chunk: bytes) -> bytes:
            process(chunk)  # the canceller runs (and keeps its state) ...
            return chunk  # ... and lets all of the voice through

        session.echo.process = leaks  # type: ignore[method-assign]
        result = await answered_in_room(session, seen, room, 1)
    assert session.barge.count >= 1 and session.barge.echoes == 1
    assert session.barge.resumes == session.barge.count  # every pause spoke on
    assert not result.interrupted
    assert transcripts(seen) == ["Tell me about the sea"]  # no turn from its own voice
    assert len(srv.requests) == 1
    spoken = [s.display_text for s in result.sentences]
    assert spoken[-1].startswith("And a third one")  # the whole reply was said
    stored = session.history_messages()
    assert [m.role.value for m in stored] == ["user", "assistant"]
    assert "interrupted" not in stored[-1].metadata

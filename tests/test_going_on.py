"""A user who pauses and goes on continues their turn (issue 36), through the real
listening loop: real Silero VAD, real WebRTC AEC3, real whisper on espeak-ng speech, a
scripted chat server on loopback, in the simulated room (`SimulatedRoom`: speaker and
microphone in lock-step on the microphone's sample clock, so the outcome does not depend
on how fast the machine is).

"Hello, my name is Priya. [pause] I work as a nurse at the city hospital." ends a turn
at the pause; the second sentence comes while the reply is prepared, or in its first
second of sound. The reply stops, nothing of it is stored, and both sentences are one
turn, answered as one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterable
from pathlib import Path

import numpy as np
import pytest

from app.agent.commit import TurnCommit
from app.audio.playback import MemorySink
from app.audio.simulated_room import SimulatedRoom
from app.config import AudioSettings, Settings
from app.events import HeardAside, ReplyWithdrawn, SessionEvent, TurnFinished, UserTranscript
from app.llm import Role
from app.session import VoiceSession, build_speech
from app.session.barge_in import BargeIns, BargeInWords, Before
from app.session.going_on import join_words, went_on_with
from app.session.speaking import (
    CompanionStartedSpeaking,
    CompanionStoppedSpeaking,
    ReplyOver,
    ReplyStarted,
    Signals,
    SpeakingView,
    UserSpeaking,
)
from app.session.strategies import FloorRules, HalfDuplex
from app.speech import SpeechClient, TranscriptionEvent
from tests.conftest import speak_to_wav
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_barge_in import EspeakVoice, barge_settings, make_session, voice

RATE = 16_000
FIRST = "Hello, my name is Priya."
SECOND = "I work as a nurse at the city hospital."
TYPED = "Tell me about the sea"
SEA = [
    "The sea covers most of the planet and it is never quite still.",
    " Its waves and tides follow the wind and the moon.",
]


def _trimmed(path: Path) -> np.ndarray:
    """The speech in `path`, without espeak-ng's leading and trailing silence."""
    samples = voice(path)
    loud = np.flatnonzero(np.abs(samples) > 300)
    return samples[loud[0] : loud[-1] + 1]


@pytest.fixture(scope="module")
def sentences(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, np.ndarray]:
    folder = tmp_path_factory.mktemp("going-on")
    first = _trimmed(speak_to_wav(FIRST, folder / "first.wav"))
    second = _trimmed(speak_to_wav(SECOND, folder / "second.wav"))
    return first, second


def _session(
    server: ScriptedChatServer, room: SimulatedRoom, speech: SpeechClient | None = None
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = barge_settings()
    settings.turn.speculative_replies = "off"  # the scripted replies come in order
    session, seen = make_session(server, settings, room.sink, speech, EspeakVoice())
    session.echo.clock = room.clock
    return session, seen


async def _until(condition: object, timeout: float = 120) -> None:
    assert callable(condition)
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def audio_tail_s(session: VoiceSession) -> float:
    return session.settings.audio.echo_tail_ms / 1000 + 0.2


def _finished(seen: list[SessionEvent]) -> int:
    return sum(isinstance(e, TurnFinished) for e in seen)


def _stored(session: VoiceSession) -> list[tuple[str, str]]:
    return [(m.role.value, m.text) for m in session.history_messages()]


def _user_contents(server: ScriptedChatServer) -> list[str]:
    """The last user message of each chat request."""
    found = []
    for request in server.requests:
        users = [m for m in request.json()["messages"] if m["role"] == Role.USER.value]
        content = users[-1]["content"]
        found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def _has_both(text: str) -> bool:
    # (tiny.en hears "I work as a nurse" from espeak-ng as "I wear cameras")
    words = text.lower()
    return "priya" in words and "hospital" in words


async def test_going_on_while_the_reply_is_prepared_is_one_turn(
    sentences: tuple[np.ndarray, np.ndarray],
) -> None:
    first, second = sentences
    # The first reply is slow to come: the user goes on while it is prepared.
    replies = [
        Reply.text_stream(["[joy] Nice to meet you, Priya!"], delay=1.5),
        Reply.text_stream(["[joy] Nurses do such important work."]),
    ]
    with ScriptedChatServer(replies) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = _session(srv, room)
        speaking: list[bool] = []
        session.signals.watch(
            lambda s: speaking.append(s.speaking) if isinstance(s, UserSpeaking) else None
        )
        pause = int(0.8 * RATE)
        room.say(np.concatenate([first, np.zeros(pause, np.float32), second]), at_s=0.3)
        second_starts = int(0.3 * RATE) + first.size + pause
        listener = asyncio.create_task(session.listen(room))
        try:
            await _until(lambda: session.user_turns.continued == 1 and _finished(seen) >= 1)
            await _until(lambda: not session.host.working)
        finally:
            await session.aclose()
            listener.cancel()
    # The first reply was asked for on the first sentence (it may not have reached the
    # server before it was withdrawn); the last request has both, as one user message.
    asked = _user_contents(srv)
    assert _has_both(asked[-1]) and all(_has_both(a) or "hospital" not in a for a in asked)
    stored = _stored(session)
    assert [role for role, _ in stored] == ["user", "assistant"], stored
    assert _has_both(stored[0][1]) and session.user_turns.continued == 1
    # One turn in the window: the words of the first sentence were replaced by both.
    finals = [e for e in seen if isinstance(e, UserTranscript) and e.final and e.text]
    assert len({e.turn_id for e in finals}) == 1 and _has_both(finals[-1].text)
    # The listener told when the user spoke: both sentences, and that they stopped.
    assert speaking.count(True) >= 2 and speaking[-1] is False, speaking
    # The withdrawn reply never sounded: the first sound is after the second sentence.
    played = np.flatnonzero(room._dry)
    assert played.size and played[0] > second_starts + second.size


async def test_going_on_in_the_replys_first_second_stops_it_within_300_ms(
    sentences: tuple[np.ndarray, np.ndarray],
) -> None:
    first, second = sentences
    replies = [
        Reply.text_stream(SEA, delay=0.01),  # a typed turn first: the canceller warms up
        Reply.text_stream(["[joy] Hello Priya, it is lovely to meet you, truly."]),
        Reply.text_stream(["[joy] Nurses do such important work."]),
    ]
    with ScriptedChatServer(replies) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = _session(srv, room)
        listener = asyncio.create_task(session.listen(room))
        try:
            await asyncio.wait_for(session.send_text(TYPED), 60)
            await _until(lambda: _finished(seen) >= 1 and not session.host.working)
            assert session.echo.ready
            # (the room runs ahead of the wall clock, which times the reply's echo tail)
            await asyncio.sleep(audio_tail_s(session))
            played_before = room.played_s
            room.say(first)
            # The second sentence starts 0.6 s into the reply to the first.
            room.say(second, after_played_s=played_before + 0.6)
            await _until(lambda: session.user_turns.continued == 1 and _finished(seen) >= 3)
            await _until(lambda: not session.host.working)
        finally:
            await session.aclose()
            listener.cancel()
    second_at = room.voices[-1][0]
    stops = [at for at in room.stopped_at if at >= second_at]
    assert stops and (stops[0] - second_at) / RATE <= 0.3, (stops, second_at)
    stored = _stored(session)
    assert [role for role, _ in stored] == ["user", "assistant", "user", "assistant"], stored
    # Nothing of the stopped reply is stored as said; the two sentences are one turn.
    assert not any("lovely to meet you" in text for _, text in stored), stored
    assert _has_both(stored[2][1]) and "Nurses" in stored[3][1]
    assert any(isinstance(e, ReplyWithdrawn) for e in seen)
    assert _has_both(_user_contents(srv)[-1])


class WordsOnce:
    """The real recognizer for the first utterance; after it, no words (a cough)."""

    def __init__(self, inner: SpeechClient) -> None:
        self._inner = inner
        self.calls = 0

    async def load(self) -> None:
        await self._inner.load()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        self.calls += 1
        if self.calls == 1:
            async for event in self._inner.stream(audio):
                yield event
            return
        async for _ in audio:
            pass
        yield TranscriptionEvent(text="", is_final=True)


async def test_a_sound_without_words_after_the_turn_lets_the_reply_go_on(
    sentences: tuple[np.ndarray, np.ndarray],
) -> None:
    first, second = sentences
    settings = barge_settings()
    settings.turn.live_transcript = False  # one transcription per utterance: countable
    replies = [Reply.text_stream(["[joy] Nice to meet you, Priya!"], delay=1.5)]
    with ScriptedChatServer(replies) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        heard = WordsOnce(build_speech(settings))
        session, seen = make_session(srv, settings, room.sink, heard, EspeakVoice())
        session.echo.clock = room.clock
        noise = second[: int(0.4 * RATE)]  # long enough to pause the reply, no words
        room.say(np.concatenate([first, np.zeros(int(0.8 * RATE), np.float32), noise]))
        listener = asyncio.create_task(session.listen(room))
        try:
            await _until(lambda: _finished(seen) >= 1 and heard.calls >= 2)
            await _until(lambda: not session.host.working)
        finally:
            await session.aclose()
            listener.cancel()
    assert session.barge.count == 1 and session.barge.resumes == 1
    assert session.user_turns.continued == 0 and len(srv.requests) == 1
    stored = _stored(session)
    assert [role for role, _ in stored] == ["user", "assistant"], stored
    assert "Nice to meet you, Priya!" in stored[1][1]


# ----- the parts ----------------------------------------------------------------------


class _Gate:
    mode = "always_on"


class _Echo:
    cancels = True


def test_speech_goes_on_with_a_spoken_turn_only_while_its_reply_is_young() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    rules = FloorRules(AudioSettings(), _Gate(), _Echo(), view, continue_within_s=2.0)
    assert not rules.continues(0.0)  # nothing in flight
    signals.emit(ReplyStarted(spoken=False))
    assert not rules.continues(0.0)  # a typed message is not gone on with by voice
    signals.emit(ReplyOver())
    signals.emit(ReplyStarted(spoken=True))
    assert rules.continues(0.0)  # prepared
    signals.emit(CompanionStartedSpeaking(1))
    started = view._voice_since
    assert started is not None
    assert rules.continues(started + 1.9) and not rules.continues(started + 2.1)
    signals.emit(CompanionStoppedSpeaking(1, "Hi Priya.", echo_until=0.0))
    assert view.voice_s > 0.0
    signals.emit(ReplyOver())
    assert not rules.continues(0.0)
    off = FloorRules(AudioSettings(), _Gate(), _Echo(), view, continue_within_s=0.0)
    signals.emit(ReplyStarted(spoken=True))
    assert not off.continues(0.0)


def test_half_duplex_hears_speech_while_the_reply_is_prepared_but_not_over_it() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    rule = HalfDuplex(view)
    signals.emit(ReplyStarted(spoken=True))
    assert rule.may_interrupt(0.0) and not rule.mutes(0.0)
    signals.emit(CompanionStartedSpeaking(1))
    assert rule.mutes(0.0) and not rule.may_interrupt(0.0)


def test_words_said_after_a_pause_join_the_words_before() -> None:
    assert join_words("Hello, I'm Priya.", "I work as a nurse.") == (
        "Hello, I'm Priya. I work as a nurse."
    )
    assert join_words("今天天气真好，", "你喜欢出去玩吗？") == "今天天气真好，你喜欢出去玩吗？"
    assert join_words("", "Hi.") == "Hi." and join_words("Hi.", " ") == "Hi."


def test_the_words_gone_on_with_are_those_after_the_first_parts() -> None:
    assert went_on_with("Hello, I'm Priya.", "Hello, I'm Priya. I work as a nurse.") == (
        "I work as a nurse."
    )
    # The first part heard differently in the whole: cut where its words end.
    assert went_on_with(
        "Welcome out yesterday.",
        "What about yesterday? Yesterday was the 13th, right? Yes, that is correct.",
    ) == ("Yesterday was the 13th, right? Yes, that is correct.")
    assert went_on_with("今天天气真好，", "今天天气真好，你喜欢出去玩吗？") == "你喜欢出去玩吗？"
    assert went_on_with("Hello, I'm Priya.", "Hello, I'm Priya. Okay.") == "Okay."
    assert went_on_with("Hello, I'm Priya.", "Hello, I'm Priya.") == ""  # nothing more
    assert went_on_with("Hello, I'm Priya.", "") == ""
    assert went_on_with("", "Hi there.") == "Hi there."


class _Heard:
    """A recognizer by audio length: each second of speech is one known sentence."""

    def __init__(self, sentences: dict[int, str]) -> None:
        self.sentences = sentences
        self.calls: list[int] = []

    async def __call__(self, pcm: bytes, *, hurry: bool = False) -> str:
        seconds = len(pcm) // (2 * RATE)
        self.calls.append(seconds)
        return self.sentences.get(seconds, "")


async def _going_on_words(
    heard: _Heard, said: str = "", first: str = "Hello, I'm Priya."
) -> tuple[BargeInWords | None, BargeIns]:
    """A going-on of 2 s after a turn of 1 s (`first`), heard by `heard`; `said`: what
    the companion has said of its reply."""
    signals = Signals()
    barge = BargeIns(signals, heard, resume_timeout_s=1.0)
    if said:
        signals.emit(CompanionStoppedSpeaking(1, said, echo_until=0.0))
    second = bytes(4 * RATE)
    assert barge.utterance_ended(second, 0.0, continues=True) and barge.going_on
    before = Before(bytes(2 * RATE), first)
    return await barge.words(second, 0.0, before), barge


async def test_a_going_on_is_heard_again_with_the_turn_as_a_whole() -> None:
    heard = _Heard({1: "Hello, I'm Priya.", 3: "Hello, I'm Priya. I work as a nurse."})
    words, _barge = await _going_on_words(heard)
    assert words is not None and words.continues
    assert words.whole == "Hello, I'm Priya. I work as a nurse."
    assert words.text == "I work as a nurse."  # its own words, for the checks
    assert heard.calls == [3]  # the whole only: the part alone is not heard as well
    assert len(words.pcm) == 4 * RATE  # its audio: a going-on after it is heard with it


async def test_a_whole_that_drops_the_going_on_hears_it_alone() -> None:
    heard = _Heard({3: "Hello, I'm Priya.", 2: "I work as a nurse."})
    words, _barge = await _going_on_words(heard)
    assert words is not None and heard.calls == [3, 2]
    assert words.whole == "Hello, I'm Priya. I work as a nurse."
    assert words.text == "I work as a nurse."
    nothing = _Heard({3: "Hello, I'm Priya."})  # a cough: no words either way
    words, barge = await _going_on_words(nothing)
    assert words is None and nothing.calls == [3, 2] and not barge.going_on


async def test_a_cut_in_the_wrong_place_never_makes_a_going_on_an_mm_hm() -> None:
    # The whole heard the first part's fillers as nothing: the cut lands near the end
    # and leaves "right?", an acknowledgement; heard alone, the going-on says more.
    first = "Um, uh, I will take the"
    heard = _Heard({3: "I will take the second one, right?", 2: "second one, right?"})
    words, barge = await _going_on_words(heard, first=first)
    assert words is not None and heard.calls == [3, 2] and barge.resumes == 0
    assert words.text == "second one, right?"
    assert words.whole == "I will take the second one, right?"


async def test_the_companions_own_voice_in_the_whole_is_not_a_going_on() -> None:
    said = "Nice to meet you, Priya! What do you do for a living?"
    first = "Hello, I'm Priya, a nurse."  # (the whole is not mostly the companion's words)
    echo = "Nice to meet you, Priya! What do you do?"
    heard = _Heard({3: f"{first} {echo}", 2: echo})
    words, barge = await _going_on_words(heard, said, first)
    assert words is None and barge.echoes == 1
    assert heard.calls == [3, 2]  # the going-on alone confirmed it: its own voice


def test_a_withdrawn_turn_is_never_recorded_even_once_confirmed() -> None:
    recorded: list[str | None] = []
    commit = TurnCommit(held=False, until_heard=True)
    assert commit.withdraw()
    commit.record(recorded.append)
    commit.settle("Nice to")
    assert recorded == []
    late = TurnCommit(held=False)
    late.record(recorded.append)  # recorded at once: too late to take back
    assert recorded == [None] and not late.withdraw()


def test_the_settings_default_to_going_on_within_two_seconds() -> None:
    turn = Settings().turn
    assert turn.continue_within_s == 2.0 and turn.continue_speech_ms < 300


async def test_words_too_short_to_stop_the_voice_are_shown_not_dropped(
    sentences: tuple[np.ndarray, np.ndarray],
) -> None:
    _, second = sentences
    short = second[: int(0.45 * RATE)]  # "I work as": under the 500 ms a barge-in needs
    with ScriptedChatServer([Reply.text_stream(SEA, delay=0.01)]) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = _session(srv, room)
        room.say(short, after_played_s=2.5)  # the canceller is warm; the window is over
        listener = asyncio.create_task(session.listen(room))
        try:
            result = await asyncio.wait_for(session.send_text(TYPED), 60)
            await _until(lambda: not session.host.working and len(room.voices) == 1)
            await _until(lambda: any(isinstance(e, HeardAside) for e in seen), 30)
        finally:
            await session.aclose()
            listener.cancel()
    assert session.barge.count == 0 and not result.interrupted
    aside = [e.text for e in seen if isinstance(e, HeardAside)]
    assert aside and aside[0].strip(), aside
    assert [role for role, _ in _stored(session)] == ["user", "assistant"]


async def test_going_on_twice_is_still_one_turn(
    sentences: tuple[np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    first, second = sentences
    third = _trimmed(speak_to_wav("I live near the river.", tmp_path / "third.wav"))
    slow = Reply.text_stream(["[joy] Nice to meet you!"], delay=1.5)
    with ScriptedChatServer([slow, slow, slow]) as srv:
        room = SimulatedRoom(delay_ms=60, attenuation_db=-10)
        session, seen = _session(srv, room)
        pause, longer = (np.zeros(int(s * RATE), np.float32) for s in (0.8, 1.6))
        room.say(np.concatenate([first, pause, second, longer, third]), at_s=0.3)
        listener = asyncio.create_task(session.listen(room))
        try:
            # (the room runs ahead of the wall clock: the third sentence may come while the
            # second's words are transcribed, and join them there)
            await _until(lambda: session.user_turns.continued >= 1 and _finished(seen) >= 1)
            await _until(lambda: not session.host.working)
        finally:
            await session.aclose()
            listener.cancel()
    stored = _stored(session)
    assert [role for role, _ in stored] == ["user", "assistant"], stored
    assert _has_both(stored[0][1]) and "river" in stored[0][1].lower(), stored


async def test_no_sound_starts_while_the_user_speaks() -> None:
    """A reply ready while the user speaks waits for them (a going-on's words then come
    whole, not under the voice); a sound that never stops holds it only a moment."""
    replies = [Reply.text_stream(["[joy] Hello there."]), Reply.text_stream(["[joy] Hi."])]
    with ScriptedChatServer(replies) as srv:
        session, _ = make_session(srv, barge_settings(), MemorySink(), None, EspeakVoice())
        order: list[str] = []

        def see(signal: object) -> None:
            if isinstance(signal, CompanionStartedSpeaking):
                order.append("voice")
            elif isinstance(signal, UserSpeaking):
                order.append(f"user {signal.speaking}")

        session.signals.watch(see)
        try:
            session.signals.emit(UserSpeaking(True))
            turn = asyncio.create_task(session.send_text("Hello!"))
            await _until(lambda: len(srv.requests) == 1)
            await asyncio.sleep(0.3)  # the reply is there; it is not heard yet
            session.signals.emit(UserSpeaking(False))
            await asyncio.wait_for(turn, 60)
            # A noise that goes on: the reply is heard anyway.
            session.signals.emit(UserSpeaking(True))
            await asyncio.wait_for(session.send_text("Are you there?"), 60)
        finally:
            await session.aclose()
    assert order[:3] == ["user True", "user False", "voice"], order
    assert order[3] == "user True" and "voice" in order[4:], order

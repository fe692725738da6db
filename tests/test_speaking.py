"""Who is speaking, told one way: the speaking signals, each part's view of them, the
interruption strategies that read a view, and the settings a running session keeps."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.capture import WavFileSource
from app.audio.playback import MemorySink
from app.config import AudioSettings, Settings
from app.events import EventHub, SessionEvent, UserTranscript
from app.session import VoiceSession
from app.session.speaking import (
    BargeInPaused,
    BargeInSettled,
    CompanionStartedSpeaking,
    CompanionStoppedSpeaking,
    EchoLeaked,
    OutputChanged,
    OutputLost,
    ReplyOver,
    ReplyStarted,
    Signals,
    SoundTestEnded,
    SpeakingView,
)
from app.session.strategies import BargeIn, FloorRules, HalfDuplex, PushToTalkPress
from tests.llm_servers import Reply, ScriptedChatServer


class Gate:
    def __init__(self, mode: str = "always_on") -> None:
        self.mode = mode


class Echo:
    def __init__(self, cancels: bool = True) -> None:
        self.cancels = cancels


class FarEndSink(MemorySink):
    """A sink that feeds the echo canceller (as the sound device's does)."""


def test_every_view_follows_the_signals_in_order() -> None:
    signals = Signals()
    first, second = SpeakingView(signals), SpeakingView(signals)
    signals.emit(ReplyStarted())
    signals.emit(CompanionStartedSpeaking(1))
    for view in (first, second):
        assert view.busy and view.speaking and view.over_voice(0.0)
    signals.emit(CompanionStoppedSpeaking(1, "Hello there.", echo_until=10.0))
    assert not first.speaking and first.over_voice(9.9) and not first.over_voice(10.0)
    signals.emit(BargeInPaused(500.0))
    assert first.barge_pending and second.barge_pending
    signals.emit(BargeInSettled(resumed=True))
    signals.emit(ReplyOver())
    assert not first.busy and not first.barge_pending and not second.busy


def test_an_echo_tail_never_moves_back() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    signals.emit(SoundTestEnded(echo_until=20.0))
    signals.emit(CompanionStoppedSpeaking(1, "", echo_until=5.0))
    assert view.over_voice(19.0)


def test_a_view_stops_following_when_told() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    view.stop()
    signals.emit(ReplyStarted())
    assert not view.busy


def test_a_failing_watcher_does_not_keep_the_signal_from_the_others() -> None:
    signals = Signals()

    def broken(_signal: object) -> None:
        raise RuntimeError("a bug in one part")

    signals.watch(broken)
    view = SpeakingView(signals)
    signals.emit(ReplyStarted())
    assert view.busy


def test_the_view_knows_whether_the_sink_feeds_the_canceller() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    assert not view.has_far_end
    sink = FarEndSink()
    signals.emit(OutputChanged(sink))
    assert not view.has_far_end  # no canceller connected to it yet
    sink.far_end = lambda _pcm, _rate, **_kw: None
    assert view.has_far_end
    signals.emit(OutputChanged(None))
    assert view.sink is None and not view.has_far_end


@pytest.mark.parametrize(
    ("barge_in", "mode", "cancels", "far_end", "expected"),
    [
        (True, "always_on", True, True, BargeIn),
        (False, "always_on", True, True, HalfDuplex),  # barge-in off in the settings
        (True, "push_to_talk", True, True, HalfDuplex),
        (True, "always_on", False, True, HalfDuplex),  # no echo canceller
        (True, "always_on", True, False, HalfDuplex),  # the sink does not feed it
    ],
)
def test_barge_in_is_the_strategy_only_when_it_can_work(
    barge_in: bool, mode: str, cancels: bool, far_end: bool, expected: type
) -> None:
    signals = Signals()
    view = SpeakingView(signals)
    sink = FarEndSink()
    if far_end:
        sink.far_end = lambda _pcm, _rate, **_kw: None
    signals.emit(OutputChanged(sink))
    rules = FloorRules(AudioSettings(barge_in=barge_in), Gate(mode), Echo(cancels), view)
    assert isinstance(rules.current(), expected)


def test_half_duplex_mutes_the_mic_while_the_voice_and_its_echo_last() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    rule = HalfDuplex(view)
    assert not rule.mutes(0.0)
    signals.emit(ReplyStarted())
    signals.emit(CompanionStartedSpeaking(1))
    assert rule.mutes(0.0) and not rule.may_interrupt(0.0) and not rule.cancels_echo()
    signals.emit(CompanionStoppedSpeaking(1, "Hi.", echo_until=5.0))
    assert rule.mutes(4.0) and not rule.mutes(5.0)


def test_barge_in_listens_through_the_voice_only_while_a_turn_runs() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    rule = BargeIn(view)
    signals.emit(CompanionStoppedSpeaking(1, "", echo_until=0.0))
    signals.emit(SoundTestEnded(echo_until=5.0))
    # Between turns the echo tail is dropped, as half-duplex does.
    assert rule.mutes(1.0) and not rule.cancels_echo() and not rule.may_interrupt(1.0)
    signals.emit(ReplyStarted())
    signals.emit(CompanionStartedSpeaking(2))
    assert not rule.mutes(1.0) and rule.cancels_echo() and rule.may_interrupt(1.0)
    signals.emit(BargeInPaused(600.0))  # paused: listening for words, not detecting again
    assert rule.cancels_echo() and not rule.may_interrupt(1.0)


def test_push_to_talk_interrupts_while_it_speaks_or_thinks() -> None:
    signals = Signals()
    press = PushToTalkPress(SpeakingView(signals))
    assert not press.interrupts_on_press()
    signals.emit(ReplyStarted())  # thinking
    assert press.interrupts_on_press()
    signals.emit(ReplyOver())
    signals.emit(CompanionStartedSpeaking(3))
    assert press.interrupts_on_press()


def make_session(server: ScriptedChatServer, settings: Settings | None = None) -> tuple[
    VoiceSession, list[SessionEvent]
]:
    settings = settings or Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    settings.memory.learn = False  # only the turns' own requests
    seen: list[SessionEvent] = []
    hub = EventHub()
    hub.subscribe(seen.append)
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    return session, seen


async def test_a_turn_tells_when_the_companion_speaks_and_what_it_said() -> None:
    with ScriptedChatServer([Reply.text_stream(["[joy] Hello there.", " How are you?"])]) as server:
        session, _seen = make_session(server)
        told: list[object] = []
        session.signals.watch(told.append)
        try:
            result = await session.send_text("Hi!")
        finally:
            await session.aclose()
    assert not result.interrupted and result.error is None
    kinds = [type(s).__name__ for s in told]
    assert kinds[0] == "ReplyStarted" and kinds[-1] == "ReplyOver"
    started = [s for s in told if isinstance(s, CompanionStartedSpeaking)]
    stopped = [s for s in told if isinstance(s, CompanionStoppedSpeaking)]
    assert len(started) == len(stopped) >= 1
    assert stopped[-1].heard_reply == "Hello there. How are you?"
    assert all(s.turn_id == result.turn_id for s in started)


async def test_a_sound_output_that_fails_is_let_go_by_every_part() -> None:
    class Broken(MemorySink):
        async def play(self, audio, *, on_level=None):  # type: ignore[no-untyped-def]
            from app.audio.playback import PlaybackError

            raise PlaybackError("the sound device went away")

    replies = [Reply.text_stream(["One.", " Two."]) for _ in range(2)]
    with ScriptedChatServer(replies) as server:
        session, _seen = make_session(server)
        session.sink = Broken()
        told: list[object] = []
        session.signals.watch(told.append)
        try:
            first = await session.send_text("Count")
            second = await session.send_text("Again")
        finally:
            await session.aclose()
    assert any(isinstance(s, OutputLost) for s in told)
    assert session.sink is None
    assert not session.host.companion_audible(time.perf_counter() + 10)  # nothing playing
    # The reply was shown instead, and the next turn is shown without trying the sink.
    assert [s.display_text for s in first.sentences] == ["One.", "Two."]
    assert [s.display_text for s in second.sentences] == ["One.", "Two."]
    assert sum(isinstance(s, OutputLost) for s in told) == 1


async def test_settings_saved_while_a_session_runs_apply_at_its_next_start(
    question_wav: Path,
) -> None:
    # Every part reads the settings the session started with, never half new ones.
    with ScriptedChatServer([Reply.text_stream(["[joy] It is sunny."])]) as server:
        settings = Settings()
        session, seen = make_session(server, settings)
        settings.vad.min_speech_ms = 60_000  # would ignore every utterance if read live
        settings.turn.endpointing = "silence"
        settings.tts.lookahead = 7
        try:
            await session.load_models()
            await session.listen(WavFileSource(question_wav, trailing_silence_s=3.0))
            await session.host.until_idle()
        finally:
            await session.aclose()
    finals = [e for e in seen if isinstance(e, UserTranscript) and e.final and e.text]
    assert len(finals) == 1  # heard with the settings it started with
    assert session.settings is settings  # the app's object, which the shell saves into


def test_after_its_voice_came_back_the_reply_is_not_listened_through() -> None:
    signals = Signals()
    view = SpeakingView(signals)
    rule = BargeIn(view)
    signals.emit(ReplyStarted())
    signals.emit(CompanionStartedSpeaking(1))
    assert not rule.mutes(1.0) and rule.may_interrupt(1.0)
    signals.emit(BargeInPaused(600.0))
    signals.emit(CompanionStoppedSpeaking(1, "How are you today?", echo_until=0.0))
    assert view.said == "How are you today?"
    signals.emit(EchoLeaked())  # what the barge-in heard was its own voice
    signals.emit(BargeInSettled(resumed=True))
    signals.emit(CompanionStartedSpeaking(1))
    assert rule.mutes(1.0) and not rule.may_interrupt(1.0)  # half-duplex for this reply
    signals.emit(CompanionStoppedSpeaking(1, "How are you today? Fine.", echo_until=0.0))
    signals.emit(ReplyOver())
    signals.emit(ReplyStarted())
    signals.emit(CompanionStartedSpeaking(2))
    assert not rule.mutes(1.0) and rule.may_interrupt(1.0)  # the next reply tries again

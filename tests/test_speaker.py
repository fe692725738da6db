"""The speaker on a real PulseAudio server: the session and the first-run guide agree on
it, and a speaker that was not there (or stopped working) is used again as soon as it
is back, without a restart (issue 15, item 1).

On the first start the guide's checks re-read PortAudio's device list (the
microphone's check re-initialises PortAudio) while the session looks for its
speaker; for that moment PortAudio lists nothing, and the session used to decide
"no sound output device" for good while the guide showed the speaker."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.capture import refresh_device_list
from app.audio.playback import PlaybackError, SoundDeviceSink
from app.checks import check_system
from app.config import Settings
from app.events import EventHub, Notice, SessionEvent
from app.session import VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer
from tests.pulse import MONITOR, SINK, MonitorTap, PulseServer, PulseUnavailable

pytestmark = pytest.mark.timeout(120)

REPLY = ["Hello there!", " It is a lovely day for a walk."]


def _reload_portaudio() -> None:
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


@pytest.fixture(scope="module")
def pulse() -> Iterator[PulseServer]:
    try:
        server = PulseServer().start()
    except PulseUnavailable as exc:
        pytest.fail(f"PulseAudio could not start, so no audio device exists: {exc}", False)
    env = pytest.MonkeyPatch()
    for key, value in server.env(base={}, PULSE_SINK=SINK, PULSE_SOURCE=MONITOR).items():
        env.setenv(key, value)
    try:
        _reload_portaudio()
        yield server
    finally:
        server.stop()
        env.undo()
        _reload_portaudio()


class Rereading:
    """Re-reads the device list over and over on a thread, as the guide's checks do."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.rereads = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            if refresh_device_list():
                self.rereads += 1

    def __enter__(self) -> Rereading:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_the_speaker_is_found_while_another_thread_rereads_the_device_list(
    pulse: PulseServer,
) -> None:
    missing: list[str] = []
    with Rereading() as rereading:
        for _ in range(60):
            try:
                SoundDeviceSink.check_available()
            except PlaybackError as exc:
                missing.append(str(exc))
            time.sleep(0.005)
    assert missing == []
    assert rereading.rereads > 0


def test_the_guide_finds_the_speaker_while_the_session_looks_too(pulse: PulseServer) -> None:
    """The guide's own checks, run while the device list is re-read, agree."""
    with Rereading():
        results = [check_system(Settings()) for _ in range(5)]
    speakers = [r for results_ in results for r in results_ if r.name == "Speaker"]
    assert speakers and all(r.ok for r in speakers), [r.text for r in speakers]


def _session(server: ScriptedChatServer) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    seen: list[SessionEvent] = []
    events = EventHub()
    events.subscribe(seen.append)
    return VoiceSession(settings, storage=InMemoryStorage(), events=events), seen


async def test_a_session_started_during_the_guides_checks_is_heard(
    pulse: PulseServer, tmp_path: Path
) -> None:
    with ScriptedChatServer([Reply.text_stream(REPLY, delay=0.01)]) as server:
        session, seen = _session(server)
        try:
            with Rereading():
                await session.start(listen=False)
            assert session.sink is not None, [e for e in seen if isinstance(e, Notice)]
            with MonitorTap(pulse, tmp_path / "heard.raw") as tap:
                result = await session.send_text("Hi!")
                await asyncio.sleep(0.5)
        finally:
            await session.aclose()
    assert result.error is None
    assert tap.loud_s() > 0.5


async def test_a_speaker_that_comes_back_is_used_without_a_restart(
    pulse: PulseServer, tmp_path: Path
) -> None:
    """No sound server at start (nothing listed): replies are shown; the server comes
    back: the session finds the speaker by itself and the next reply is heard."""
    replies = [Reply.text_stream(REPLY, delay=0.01) for _ in range(2)]
    with ScriptedChatServer(replies) as server:
        session, seen = _session(server)
        session.speaker.retry_s = 0.2
        pulse.kill()
        _reload_portaudio()  # as a process that started without a sound server
        try:
            await session.start(listen=False)
            assert session.sink is None
            first = await session.send_text("Hi!")
            pulse.restart()
            os.environ.update(pulse.client_env)
            deadline = time.monotonic() + 15
            while session.sink is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert session.sink is not None, "the speaker that came back was not found"
            with MonitorTap(pulse, tmp_path / "heard.raw") as tap:
                second = await session.send_text("And now?")
                await asyncio.sleep(0.5)
        finally:
            await session.aclose()
    notices = [e.message for e in seen if isinstance(e, Notice)]
    assert first.error is None and second.error is None
    assert any("No sound output device" in n for n in notices), notices
    assert any("replies are heard again" in n for n in notices), notices
    assert tap.loud_s() > 0.5

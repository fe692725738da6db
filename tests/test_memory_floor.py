"""While the user has the floor, the memory's side requests wait: on the embedded model
they share the two cores with the recognizer, and an extraction that started while the
user spoke made the transcript of their words come twice as late (measured: 0.96 s
instead of 0.4 s for two seconds of speech). They run after the turn instead."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings, data_dir
from app.events import EventHub, SessionEvent, TurnFinished, UserTranscript
from app.llm import LLMRequest
from app.session import VoiceSession
from tests.memory_models import MemoryScript
from tests.speech_servers import AudioSource
from tests.test_memory_session import note
from tests.test_speech_wer import synthesize

RATE = 16_000


@pytest.mark.slow
async def test_no_side_request_runs_while_the_user_speaks(tmp_path: Path) -> None:
    words = synthesize(
        "I have been thinking about my garden all week, and I would like to plant "
        "tomatoes, beans and a few sunflowers along the fence this spring.",
        tmp_path,
        voice="en-us",
        speed=150,
    )
    # a quarter second of room noise, the sentence, then silence until the turn ends
    noise = np.random.default_rng(3).normal(0, 30, RATE * 4).astype("<i2").tobytes()
    pcm = noise[: RATE // 2] + words + noise
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    script = MemoryScript(extractions=[note("The user's cat is called Luna.")] * 3)
    hub = EventHub()
    timeline: list[tuple[float, str]] = []

    def seen(event: SessionEvent) -> None:
        if isinstance(event, UserTranscript) and event.final and event.text:
            timeline.append((time.monotonic(), "spoken turn"))
        elif isinstance(event, TurnFinished):
            timeline.append((time.monotonic(), "turn finished"))

    hub.subscribe(seen)
    session = VoiceSession(
        settings,
        provider=script,
        sink=MemorySink(),
        storage=FileStorage(data_dir() / "history"),
        events=hub,
    )
    assert session.memory is not None
    writer = session.memory.writer
    writer.yields_to_turns = True  # as with the embedded model
    real_stream = script.stream

    def stream(request: LLMRequest) -> object:
        if request.cache == "none":
            timeline.append((time.monotonic(), "side request"))
        return real_stream(request)

    script.stream = stream  # type: ignore[method-assign]
    try:
        await session.load_models()
        writer.idle_s = 60.0  # the typed turn's extraction waits ...
        await session.send_text("My cat is called Luna.")
        timeline.clear()
        writer.idle_s = 1.5  # ... and is due while the user speaks (as by default)
        writer.activity()
        started = time.monotonic()
        await session.listen(AudioSource.from_pcm(pcm, chunk=1600, delay=0.1))
        for _ in range(500):
            if writer.pending == 0 and any(k == "side request" for _t, k in timeline):
                break
            await asyncio.sleep(0.02)
    finally:
        await session.aclose()
    spoken = [t for t, kind in timeline if kind == "spoken turn"]
    sides = [t for t, kind in timeline if kind == "side request"]
    shown = [(round(t - started, 2), k) for t, k in timeline]
    assert spoken, shown  # the words were heard and made a turn
    assert sides, shown  # and the extraction did run, after it
    # nothing ran beside the user's words: from their first word (half a second in)
    # until they were all in, no side request started
    assert not [t for t in sides if started + 0.5 <= t <= spoken[0]], shown

"""Lip sync from real speech: espeak-ng through the pyttsx3 engine, played into a
`MemorySink` whose levels drive the sprite avatar's mouth, one 40 ms chunk per frame."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import itertools
import random
from collections.abc import AsyncIterator

import pytest
from PySide6.QtWidgets import QApplication

from app.audio.playback import CHUNK_MS, MemorySink
from app.tts import SynthesizedAudio
from app.tts.pyttsx3_engine import Pyttsx3Engine
from app.ui import AvatarWidget

TEXT = "Hello there. I am so happy to see you again, my friend!"


class NoBlinks(random.Random):
    def random(self) -> float:
        return 0.99

    def uniform(self, a: float, b: float) -> float:
        return 1e9


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
async def speech() -> AsyncIterator[SynthesizedAudio]:
    engine = Pyttsx3Engine()
    try:
        yield await engine.synthesize(TEXT)
    finally:
        await engine.aclose()


async def test_the_mouth_opens_and_closes_with_a_real_voice(
    qapp: QApplication, speech: SynthesizedAudio
) -> None:
    widget = AvatarWidget(rng=NoBlinks())
    frames: list[tuple[float, str]] = []  # (the level just played, the mouth shown after it)

    def on_level(level: float) -> None:
        widget.set_mouth_level(level)
        widget.step(CHUNK_MS / 1000)
        frames.append((level, widget.mouth_state))

    report = await MemorySink().play(speech, on_level=on_level)
    assert report.played_s > 1.0
    *talking, (last_level, after_stop) = frames
    states = [s for _, s in talking]

    # The mouth follows the syllables: it changes shape again and again ...
    changes = sum(1 for a, b in itertools.pairwise(states) if a != b)
    assert changes >= 8, states
    assert {"closed", "half", "open"} <= set(states)
    # ... the louder the chunk, the wider it is ...
    mean = {
        state: sum(level for level, s in talking if s == state) / states.count(state)
        for state in ("closed", "half", "open")
    }
    assert mean["closed"] < mean["half"] < mean["open"], mean
    # ... shut in the silences between sentences ...
    silent = [s for level, s in talking if level == 0.0]
    assert silent and all(s == "closed" for s in silent)
    # ... and playback ending closes it on the very next frame.
    assert last_level == 0.0 and after_stop == "closed"


async def test_the_mouth_is_shut_before_the_voice_starts(qapp: QApplication) -> None:
    widget = AvatarWidget(rng=NoBlinks())
    for _ in range(10):
        widget.step(CHUNK_MS / 1000)
    assert widget.mouth_state == "closed" and widget.mouth_openness == 0.0

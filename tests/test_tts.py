"""pyttsx3 on its own thread: real espeak-ng audio, in order, with stdout left clean."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from app.tts import TTSError
from app.tts.pyttsx3_engine import Pyttsx3Engine


async def test_sentences_become_non_silent_pcm(capsys: pytest.CaptureFixture[str]) -> None:
    engine = Pyttsx3Engine()
    try:
        short, long = await asyncio.gather(
            engine.synthesize("Hi."), engine.synthesize("This sentence is quite a lot longer.")
        )
    finally:
        await engine.aclose()
    for audio in (short, long):
        samples = np.frombuffer(audio.pcm, "<i2")
        assert audio.sample_rate > 8000 and np.abs(samples).max() > 2000
    assert long.duration_s > short.duration_s * 1.5  # each job got its own text
    assert "Audio saved" not in capsys.readouterr().out


async def test_empty_text_is_an_error_not_a_hang() -> None:
    engine = Pyttsx3Engine()
    try:
        with pytest.raises(TTSError):
            await engine.synthesize("   ")
    finally:
        await engine.aclose()


async def test_voices_are_listed() -> None:
    engine = Pyttsx3Engine()
    try:
        voices = await engine.voices()
    finally:
        await engine.aclose()
    assert voices and all(v.id for v in voices)

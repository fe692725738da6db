"""Voices start at once: the silence a voice pads its clips with is cut to a little
(hibari padded each clause with 0.3 s before and 0.4-0.6 s after: heard as a slow
first word and long gaps between sentences)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from app.tts.engine import LEAD_KEPT_S, TAIL_KEPT_S, SynthesizedAudio, trim_silence

RATE = 24_000


def clip(*parts: tuple[float, float]) -> SynthesizedAudio:
    """(seconds, amplitude) parts of a 220 Hz tone (amplitude 0: silence)."""
    pieces = []
    for seconds, amplitude in parts:
        t = np.arange(int(seconds * RATE)) / RATE
        pieces.append(amplitude * np.sin(2 * np.pi * 220 * t))
    samples = np.concatenate(pieces)
    return SynthesizedAudio(samples.astype("<i2").tobytes(), RATE)


def edges(audio: SynthesizedAudio, threshold: float = 100.0) -> tuple[float, float]:
    """Seconds of quiet before the first and after the last loud 10 ms."""
    samples = np.frombuffer(audio.pcm, "<i2").astype(np.float32)
    frame = audio.sample_rate // 100
    blocks = samples[: len(samples) // frame * frame].reshape(-1, frame)
    loud = np.nonzero(np.sqrt(np.mean(blocks**2, axis=1)) > threshold)[0]
    return loud[0] / 100, (len(blocks) - loud[-1] - 1) / 100


@pytest.mark.parametrize("lead, tail", [(0.35, 0.6), (0.1, 0.1), (1.0, 0.25), (0.3, 0.0)])
def test_the_padding_is_cut_to_a_little_and_the_sound_kept(lead: float, tail: float) -> None:
    audio = clip((lead, 0), (0.8, 8000), (tail, 0))
    trimmed = trim_silence(audio)
    before, after = edges(trimmed)
    assert before == pytest.approx(min(lead, LEAD_KEPT_S), abs=0.011)
    assert after == pytest.approx(min(tail, TAIL_KEPT_S), abs=0.011)
    # all of the sound is still there
    assert trimmed.duration_s == pytest.approx(0.8 + before + after, abs=0.011)


def test_a_soft_start_is_sound_not_silence() -> None:
    # a breathy first consonant 30 dB under the vowel is kept whole
    trimmed = trim_silence(clip((0.3, 0), (0.1, 250), (0.5, 8000), (0.3, 0)))
    before, _after = edges(trimmed, threshold=60)
    assert before == pytest.approx(LEAD_KEPT_S, abs=0.011)
    assert trimmed.duration_s >= 0.6


def test_a_pause_inside_is_left_alone() -> None:
    audio = clip((0.2, 0), (0.4, 8000), (0.5, 0), (0.4, 8000), (0.2, 0))
    trimmed = trim_silence(audio)
    assert trimmed.duration_s == pytest.approx(1.3 + LEAD_KEPT_S + TAIL_KEPT_S, abs=0.011)


@pytest.mark.parametrize("audio", [clip((0.5, 0)), clip((0.5, 20)), SynthesizedAudio(b"", RATE)])
def test_a_clip_without_sound_is_given_back_as_it_is(audio: SynthesizedAudio) -> None:
    assert trim_silence(audio) == audio


@pytest.mark.slow
def test_the_neural_voice_starts_at_once_and_ends_soon() -> None:
    pytest.importorskip("hibari")
    from app.tts.hibari_engine import HibariEngine

    async def speak() -> list[SynthesizedAudio]:
        engine = HibariEngine()
        try:
            return [
                await engine.synthesize(text)
                for text in ("Hi Tomas!", "12 plus 7 is 19.", "That sounds lovely, doesn't it?")
            ]
        finally:
            await engine.aclose()

    for audio in asyncio.run(speak()):
        before, after = edges(audio, threshold=300)
        assert before <= 0.1 and after <= 0.35, (before, after)

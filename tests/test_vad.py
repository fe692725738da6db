"""Silero VAD endpointing on real speech."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.audio.vad import Endpointer, EndpointerConfig, SileroVad, VadEventKind, frames
from app.audio.wav import read_wav_16k


def run(pcm: bytes, config: EndpointerConfig | None = None) -> list[tuple[int, object]]:
    vad, ep = SileroVad(), Endpointer(config or EndpointerConfig())
    out: list[tuple[int, object]] = []
    for i, frame in enumerate(frames(pcm)):
        event, utterance = ep.push(frame, vad.probability(frame))
        if event is not None:
            out.append((i, utterance if event is VadEventKind.SPEECH_ENDED else event))
    return out


def test_speech_followed_by_silence_ends_one_utterance(question_wav: Path) -> None:
    speech = read_wav_16k(question_wav)
    events = run(b"\0" * 16_000 + speech + b"\0" * 32_000)
    assert events[0][1] is VadEventKind.SPEECH_STARTED
    ended = [u for _, u in events if not isinstance(u, VadEventKind)]
    assert len(ended) == 1 and ended[0] is not None
    # The utterance holds the speech (plus pad and end silence), not the leading second.
    seconds = len(ended[0].pcm) / 32_000  # type: ignore[attr-defined]
    assert len(speech) / 32_000 <= seconds + 0.2 < len(speech) / 32_000 + 1.5


def test_the_turn_ends_only_after_the_configured_silence(question_wav: Path) -> None:
    speech = read_wav_16k(question_wav) + b"\0" * 64_000
    short = run(speech, EndpointerConfig(end_silence_ms=300))
    long = run(speech, EndpointerConfig(end_silence_ms=1200))
    end_short = next(i for i, u in short if not isinstance(u, VadEventKind))
    end_long = next(i for i, u in long if not isinstance(u, VadEventKind))
    assert 20 <= end_long - end_short <= 35  # 900 ms / 32 ms frames


def test_silence_and_noise_are_not_speech() -> None:
    rng = np.random.default_rng(1)
    noise = (rng.normal(0, 300, 16_000 * 2)).astype("<i2").tobytes()
    assert run(b"\0" * 32_000 + noise) == []


def test_a_click_is_shorter_than_the_minimum_speech(question_wav: Path) -> None:
    blip = read_wav_16k(question_wav)[: 16_000 // 5 * 2]  # 200 ms of the word "What"
    events = run(blip + b"\0" * 32_000, EndpointerConfig(min_speech_ms=400))
    assert all(u is None for _, u in events if not isinstance(u, VadEventKind))

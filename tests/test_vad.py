"""Silero VAD endpointing on real speech."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from app.audio.vad import (
    FRAME_SAMPLES,
    Endpointer,
    EndpointerConfig,
    GateConfig,
    SileroVad,
    Utterance,
    VadEventKind,
    frames,
)
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


# ----- the room-noise gate in front of Silero -------------------------------------------


def room(seconds: float, dbfs: float, seed: int = 0) -> np.ndarray:
    """A quiet room: steady noise at `dbfs` RMS (float samples, full scale 32768)."""
    rng = np.random.default_rng(seed)
    return rng.normal(0, 32768 * 10 ** (dbfs / 20), int(seconds * 16_000))


def speech_at(pcm: bytes, dbfs: float) -> np.ndarray:
    """Speech scaled so that its voiced part has an RMS of `dbfs`."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    voiced = samples[np.abs(samples) > 100]
    return samples / np.sqrt(np.mean(voiced**2)) * 32768 * 10 ** (dbfs / 20)


def to_pcm(samples: np.ndarray) -> bytes:
    return np.clip(np.rint(samples), -32768, 32767).astype("<i2").tobytes()


def listen(pcm: bytes, gate: bool) -> tuple[list[tuple[int, object]], SileroVad]:
    vad, ep = SileroVad(gate=GateConfig(enabled=gate)), Endpointer()
    out: list[tuple[int, object]] = []
    for i, frame in enumerate(frames(pcm)):
        event, utterance = ep.push(frame, vad.probability(frame))
        if event is not None:
            out.append((i, utterance if event is VadEventKind.SPEECH_ENDED else event))
    return out, vad


def test_the_gate_skips_the_model_on_room_noise() -> None:
    signal = room(30, -60.0)
    for at in (4.0, 11.5, 19.0, 26.2):  # a few clicks: a door, a keyboard
        i = int(at * 16_000)
        signal[i : i + 40] += 12_000 * np.hanning(40)
    pcm = to_pcm(signal)
    count = len(frames(pcm))
    gated_events, gated = listen(pcm, gate=True)
    plain_events, plain = listen(pcm, gate=False)
    print(f"\nmodel calls on 30 s of -60 dBFS room: {gated.model_calls} of {count} frames")
    assert gated_events == plain_events == []
    assert plain.model_calls == count  # without the gate the model hears every frame
    # With it: the first frames (until the model has said "quiet" for a while) and a
    # few around each click.
    assert gated.model_calls < 0.1 * count
    assert gated.noise_floor_dbfs is not None and -62 < gated.noise_floor_dbfs < -59


def test_the_gate_follows_a_room_that_gets_louder() -> None:
    """A fan starts (-60 → -50 dBFS): the model runs until the floor has caught up."""
    pcm = to_pcm(np.concatenate([room(5, -60.0, 1), room(25, -50.0, 2)]))
    events, vad = listen(pcm, gate=True)
    assert events == []
    floor = vad.noise_floor_dbfs
    assert floor is not None and -52 < floor < -49
    before = vad.model_calls
    for frame in frames(to_pcm(room(10, -50.0, 3))):
        assert vad.probability(frame) == 0.0
    assert vad.model_calls - before < 10  # the new floor is skipped too


@pytest.mark.parametrize(
    ("voice", "text"),
    [
        ("en-us", "What is the weather like today?"),
        ("en-gb+f3", "Fine, thanks. Shall we go for a walk?"),
    ],
)
@pytest.mark.parametrize("speech_dbfs", [-45.0, -52.0])
def test_quiet_speech_over_room_noise_is_still_heard(
    voice: str, text: str, speech_dbfs: float, tmp_path: Path
) -> None:
    """Speech only 8-15 dB over a -60 dBFS room: the same utterance, onset included,
    with the gate as without it, and far fewer model calls."""
    raw = tmp_path / "raw.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", str(raw), text], check=True)
    speech = speech_at(read_wav_16k(raw), speech_dbfs)
    at = 6 * 16_000
    signal = room(10 + speech.size / 16_000, -60.0, 7)
    signal[at : at + speech.size] += speech
    pcm = to_pcm(signal)

    gated_events, gated = listen(pcm, gate=True)
    plain_events, plain = listen(pcm, gate=False)
    print(
        f"\n{speech_dbfs} dBFS: gated {gated_events[:1]} {gated.model_calls} calls, "
        f"plain {plain_events[:1]} {plain.model_calls} calls"
    )
    for events in (gated_events, plain_events):
        assert [type(e) for _, e in events] == [VadEventKind, Utterance]
    # The turn starts on the same frame (±1) and the utterance holds the first syllable.
    assert abs(gated_events[0][0] - plain_events[0][0]) <= 1
    utterance = gated_events[1][1]
    assert isinstance(utterance, Utterance)
    first_sound = int(np.flatnonzero(np.abs(speech) > 10 ** (speech_dbfs / 20) * 3276)[0])
    start = (gated_events[1][0] + 1) * FRAME_SAMPLES - len(utterance.pcm) // 2
    end_of_pad = gated_events[0][0] * FRAME_SAMPLES
    assert start <= at + first_sound, "the pre-speech pad lost the onset"
    assert end_of_pad > at  # (the pad is not just the noise before it)
    assert gated.model_calls < 0.6 * plain.model_calls


# ----- damaged input: a DC offset, clipping ---------------------------------------------


@pytest.mark.parametrize("dc", [3000, -8000])
def test_a_dc_offset_neither_makes_speech_nor_defeats_the_gate(question_wav: Path, dc: int) -> None:
    """A cheap microphone's DC offset (-21 and -12 dBFS of it) is not sound: the quiet
    room still scores no speech with the model mostly off, and speech in it is heard
    on the same frame as without the offset."""
    quiet = room(20, -60.0, 11)
    events, vad = listen(to_pcm(quiet + dc), gate=True)
    assert events == []
    assert vad.model_calls < 0.05 * len(frames(to_pcm(quiet)))

    speech = np.frombuffer(read_wav_16k(question_wav), dtype="<i2").astype(np.float64)
    talk = quiet.copy()
    talk[3 * 16_000 : 3 * 16_000 + speech.size] += speech
    with_dc, _ = listen(to_pcm(talk + dc), gate=True)
    without, _ = listen(to_pcm(talk), gate=True)
    assert [type(e) for _, e in with_dc] == [VadEventKind, Utterance]
    assert abs(with_dc[0][0] - without[0][0]) <= 1
    assert abs(with_dc[1][0] - without[1][0]) <= 2


def test_clipped_speech_is_one_utterance_that_keeps_its_onset(question_wav: Path) -> None:
    """Speech 30 dB too loud for the input (7 % of its samples clipped)."""
    speech = np.frombuffer(read_wav_16k(question_wav), dtype="<i2").astype(np.float64) * 30
    at = 3 * 16_000
    signal = room(10, -60.0, 12)
    signal[at : at + speech.size] += speech
    assert np.mean(np.abs(signal[at : at + speech.size]) > 32767) > 0.05
    events, _ = listen(to_pcm(signal), gate=True)
    assert [type(e) for _, e in events] == [VadEventKind, Utterance]
    utterance = events[1][1]
    assert isinstance(utterance, Utterance) and utterance.speech_ms > 1000
    first_sound = at + int(np.flatnonzero(np.abs(speech) > 3000)[0])
    start = (events[1][0] + 1) * FRAME_SAMPLES - len(utterance.pcm) // 2
    assert start <= first_sound, "the pre-speech pad lost the onset"


def test_the_endpointer_config_comes_from_the_voice_settings() -> None:
    from dataclasses import fields

    from app.config import VadSettings

    vad = VadSettings(
        start_threshold=0.6,
        stop_threshold=0.3,
        end_silence_ms=900,
        pre_speech_pad_ms=200,
        min_speech_ms=100,
        max_utterance_s=12.0,
    )
    config = EndpointerConfig.from_settings(vad)
    assert {f.name: getattr(config, f.name) for f in fields(config)} == {
        f.name: getattr(vad, f.name) for f in fields(config)
    }
    trimmed = EndpointerConfig.from_settings(vad, min_speech_ms=0, max_utterance_s=10_000)
    assert (trimmed.min_speech_ms, trimmed.max_utterance_s) == (0, 10_000)
    assert trimmed.end_silence_ms == 900
    assert EndpointerConfig.from_settings(VadSettings()) == EndpointerConfig()

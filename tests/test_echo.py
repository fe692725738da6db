"""Echo handling on a simulated room: the companion's real TTS (pyttsx3) played,
heard back by the microphone delayed, attenuated and reverberated with noise, and
a real user (espeak-ng, another voice) speaking over it. Counts self-interruptions
with WebRTC AEC3 and without it; the figures are printed by bench/bench_barge_in.py,
here only generous ratio bounds are asserted. Also: the reference lined up with the
microphone by the clock, and the raw microphone used once the echo has ended."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.audio.echo import FarEndBuffer, HalfDuplex, WebRtcEchoCanceller, create_echo_canceller
from app.audio.resample import resample
from app.audio.simulated_room import SimulatedRoom, room_barge_ins, room_echo, run_room
from app.audio.vad import FRAME_MS, BargeInDetector, SileroVad
from app.audio.wav import read_wav_16k
from app.config import TTSSettings
from app.tts import SynthesizedAudio, create_tts_engine

SENTENCES = [
    "Hello there, it is nice to see you again today.",
    "The weather looks sunny, so maybe we could go for a walk later.",
    "Did you know that octopuses have three hearts?",
    "I was reading about the history of tea, and it is fascinating.",
    "Let me think about that for a second, okay?",
    "Honestly, I think you are doing a great job with your project.",
]
USER_AT_S = 0.8


@pytest.fixture(scope="module")
def replies() -> list[SynthesizedAudio]:
    async def synth() -> list[SynthesizedAudio]:
        engine = create_tts_engine(TTSSettings())
        try:
            return [await engine.synthesize(s) for s in SENTENCES]
        finally:
            await engine.aclose()

    return asyncio.run(synth())


@pytest.fixture(scope="module")
def user_voice(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    path = tmp_path_factory.mktemp("user") / "user.wav"
    text = "Wait, stop, I have a question about that."
    subprocess.run(["espeak-ng", "-v", "en-gb+f3", "-s", "160", "-w", str(path), text], check=True)
    return np.frombuffer(read_wav_16k(path), "<i2").astype(np.float32)


def simulate(
    replies: list[SynthesizedAudio],
    user: np.ndarray | None,
    *,
    aec: bool,
    attenuation_db: float,
) -> int:
    """Sentences in which barge-in fired (after the user started, when there is one)."""
    vad = SileroVad()
    count = 0
    for i, reply in enumerate(replies):
        played = np.frombuffer(reply.pcm, "<i2")
        mic = room_echo(
            resample(played, reply.sample_rate),
            delay_ms=30 + (i * 10) % 50,
            attenuation_db=attenuation_db,
            seed=i,
        )
        if user is not None:
            at = int(16_000 * USER_AT_S)
            n = min(user.size, mic.size - at)
            mic[at : at + n] += user[:n] * 0.7
        canceller = WebRtcEchoCanceller() if aec else HalfDuplex()
        vad.reset()
        fired = run_room(
            played, reply.sample_rate, mic, canceller, vad.probability, BargeInDetector(500)
        )
        if user is None:
            count += bool(fired)
        else:
            count += bool(fired) and fired[0] > USER_AT_S  # the first one stops playback
    return count


@pytest.mark.parametrize("attenuation_db", [-6, -20])
def test_aec_keeps_the_companion_from_interrupting_itself(
    replies: list[SynthesizedAudio], attenuation_db: float
) -> None:
    false_with_aec = simulate(replies, None, aec=True, attenuation_db=attenuation_db)
    assert false_with_aec <= len(replies) // 5
    # Without cancellation the same room makes it interrupt itself in most sentences:
    # this is why the fallback ignores the mic while speaking.
    false_without = simulate(replies, None, aec=False, attenuation_db=attenuation_db)
    assert false_without >= len(replies) // 2


def test_a_user_speaking_over_the_companion_is_detected_through_aec(
    replies: list[SynthesizedAudio], user_voice: np.ndarray
) -> None:
    detected = simulate(replies, user_voice, aec=True, attenuation_db=-10)
    assert detected >= len(replies) * 2 // 3


def test_the_far_end_queue_is_bounded_and_zero_filled() -> None:
    buf = FarEndBuffer()
    assert not buf.active
    for _ in range(100):  # 4 s "played" at once: the oldest is dropped
        buf.push(np.full(640, 1000, np.int16), 16_000)
    assert buf.dropped > 0 and buf.active
    got = buf.take(160)
    assert got.size == 160 and np.all(got == 1000)
    buf.clear()
    assert np.all(buf.take(160) == 0)


def test_modes_pick_the_canceller() -> None:
    assert create_echo_canceller("half_duplex").name == "half_duplex"
    assert create_echo_canceller("aec").cancels
    assert create_echo_canceller("auto").cancels  # pywebrtc-audio is installed
    with pytest.raises(ValueError):
        create_echo_canceller("loud")


def test_a_short_false_start_does_not_barge_in() -> None:
    detector = BargeInDetector(min_speech_ms=500)
    cough = [0.9] * int(200 / FRAME_MS) + [0.05] * int(400 / FRAME_MS)
    assert not any(detector.push(p) for p in cough * 3)
    speech = [0.9] * int(600 / FRAME_MS)
    fired = [detector.push(p) for p in speech]
    assert fired.count(True) == 1
    assert fired.index(True) * FRAME_MS + FRAME_MS >= 500


def test_the_canceller_accepts_any_chunk_size(tmp_path: Path) -> None:
    canceller = WebRtcEchoCanceller()
    out = b"".join(canceller.process(b"\0" * n) for n in (1024, 300, 20, 1024))
    assert len(out) % 320 == 0 and len(out) <= 2368


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_reference_is_placed_by_the_clock_not_by_how_late_the_mic_is() -> None:
    """A sentence starts playing while the microphone side is late (a busy loop): its
    reference still goes to the microphone samples of the moment it was played."""
    clock = Clock()
    buf = FarEndBuffer(clock)
    old = FarEndBuffer(clock, by_clock=False)
    for b in (buf, old):  # 2 s of microphone read on time: the clock's origin is known
        for i in range(100):
            clock.t = 100.0 + (i + 1) * 0.02
            assert not np.any(b.take(320))
    t_mic = 102.0  # everything up to here was read
    clock.t = t_mic + 0.1  # playback starts 100 ms later; the mic side has not read that yet
    tone = np.full(1600, 1000, np.int16)
    for b in (buf, old):
        b.push(tone, 16_000)
    clock.t = t_mic + 0.2  # the mic side catches up: 200 ms read at once
    got, got_old = buf.take(3200), old.take(3200)
    first = int(np.argmax(got != 0))
    assert abs(first - 1600) <= 1  # at 100 ms: when it was played
    assert got_old[0] == 1000  # the old way: wherever the reading had got to
    assert buf.end_index == 2 * 16_000 + 1600 + 1600


def test_a_resampled_reference_is_placed_by_the_clock_despite_the_resamplers_delay() -> None:
    """The speaker's 22.05 kHz reference comes out of soxr in blocks, tens of ms after
    its input: each sentence still starts on the microphone sample of the moment it was
    played, and the tail soxr owed of the first goes where it belonged, not in front of
    the second."""
    clock = Clock()
    buf = FarEndBuffer(clock)
    for i in range(100):  # 2 s of microphone read on time: the clock's origin is known
        clock.t = 100.0 + (i + 1) * 0.02
        buf.take(320)
    rate, step = 22_050, 220  # 10 ms slices, as the sound device sink publishes them
    t = np.arange(rate // 2) / rate  # 0.5 s, then 0.2 s (within the 1 s backlog)
    first = (np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16)
    second = (np.sin(2 * np.pi * 660 * t[: rate // 5]) * 8000).astype(np.int16)
    # The first sentence starts playing 100 ms after the mic read, a slice every 10 ms
    # (the mic side is late meanwhile).
    for start in range(0, first.size, step):
        clock.t = 102.1 + start / rate
        buf.push(first[start : start + step], rate)
    clock.t = 102.6
    got = [buf.take(3200)]  # the microphone reads 200 ms (to 2.2 s): the tail is ahead
    for start in range(0, second.size, step):  # the second, 300 ms after the first's end
        clock.t = 102.9 + start / rate
        buf.push(second[start : start + step], rate)
    clock.t = 104.0
    got.append(buf.take(16_000))  # to 3.2 s
    heard = np.concatenate(got).astype(np.int32)  # microphone samples from 2.0 s on

    def placed(signal: np.ndarray, at: int) -> np.ndarray:
        ref = np.clip(resample(signal, rate), -32768, 32767).astype(np.int32)
        return heard[at - 32_000 : at - 32_000 + ref.size] - ref

    assert not np.any(heard[:1600])  # nothing before 2.1 s
    assert np.max(np.abs(placed(first, 33_600))) <= 1  # all of it, tail included
    assert not np.any(heard[41_600 - 32_000 : 46_400 - 32_000])  # silence between
    owed = buf._resampler.pending if buf._resampler else 0
    assert np.max(np.abs(placed(second, 46_400)[: 3200 - owed])) <= 1  # at 2.9 s
    assert buf.end_index == 46_400 + 3200


def test_after_the_echo_the_raw_microphone_is_used() -> None:
    canceller = WebRtcEchoCanceller(clock=Clock())
    rng = np.random.default_rng(3)
    played = (rng.normal(0, 3000, 16_000)).astype(np.int16)
    mic = (rng.normal(0, 500, 32_000)).astype("<i2")
    canceller.far_end(played, 16_000)  # one second of voice, then it stopped
    out = b"".join(canceller.process(mic[i : i + 512].tobytes()) for i in range(0, 32_000, 512))
    n = len(out) // 2
    assert canceller.output_samples == n
    mixed = canceller.after_echo(out, n, tail_s=0.2)
    cut = 16_000 + 3200
    assert mixed[: cut * 2] == out[: cut * 2]  # the canceller's output while it echoed
    assert mixed[cut * 2 :] == mic[cut:n].tobytes()  # the raw microphone after
    assert canceller.after_echo(out[: 2000 * 2], 2000) == out[: 2000 * 2]  # all echo
    # Counting without processing keeps the output index, and passes audio on.
    assert canceller.advance(mic[:512].tobytes()) == mic[:480].tobytes()
    assert canceller.output_samples == n + 480


def lagging_room_barge_ins(replies: list[SynthesizedAudio], *, by_clock: bool) -> int:
    """Sentences with a barge-in, each on its own cold canceller, in a room whose
    microphone reaches the canceller 300 ms late when the sentence starts and then
    catches up (a busy machine)."""
    vad = SileroVad()
    count = 0
    for i, reply in enumerate(replies):
        room = SimulatedRoom(
            delay_ms=40 + 10 * i, attenuation_db=-6, seed=i, lag=stalled(QUIET_S, 0.3)
        )
        canceller = WebRtcEchoCanceller(clock=room.clock, align_by_clock=by_clock)
        vad.reset()
        detector = BargeInDetector(500)
        fired = asyncio.run(
            room_barge_ins(room, reply, canceller, vad.probability, detector, quiet_s=QUIET_S)
        )
        count += bool(fired)
    return count


QUIET_S = 2.0


def stalled(at_s: float, lag_s: float) -> Callable[[int], float]:
    """A listening loop on time until `at_s` (when the companion starts speaking), that
    then stalls for `lag_s` and catches up at half the speed of time."""

    def lag(position: int) -> float:
        if position < at_s * 16_000:
            return 0.0
        return max(0.0, lag_s - (position / 16_000 - at_s) * 0.5)

    return lag


def test_a_late_listening_loop_does_not_make_the_companion_interrupt_itself(
    replies: list[SynthesizedAudio],
) -> None:
    """Lined up by the clock, the echo is cancelled however late the microphone path
    is when a sentence starts. (Lined up by what had been read, the old way, the same
    rooms made it interrupt itself in 4 of the 6 sentences.)"""
    assert lagging_room_barge_ins(replies, by_clock=True) == 0


def test_after_the_device_ran_dry_the_reference_starts_again_by_the_clock() -> None:
    """A busy machine let the speaker's buffer run dry between two slices: the second
    plays later than right after the first. Told so (`after_gap`), its reference goes
    to the microphone samples of the moment it was handed over; not told, it would
    follow the first at once and the canceller would look for an echo that is not
    there yet (measured on the real path: bench/bench_echo_path.py --load 3)."""
    clock = Clock()
    told, untold = FarEndBuffer(clock), FarEndBuffer(clock)
    for b in (told, untold):  # 2 s of microphone read on time: the clock's origin is known
        for i in range(100):
            clock.t = 100.0 + (i + 1) * 0.02
            b.take(320)
    tone = np.full(800, 1000, np.int16)  # 50 ms
    clock.t = 102.0
    for b in (told, untold):
        b.push(tone, 16_000)
    # The mic side is late (nothing read since 102.0); the device ran dry, and the
    # next slice is handed over 15 ms after the first one ended (less than a resync).
    clock.t = 102.065
    told.push(tone * 2, 16_000, after_gap=True)
    untold.push(tone * 2, 16_000)
    clock.t = 102.3
    got, got_untold = told.take(3200), untold.take(3200)
    assert int(np.argmax(got == 2000)) == 1040  # at 65 ms: when it was handed over
    assert int(np.argmax(got_untold == 2000)) == 800  # right after the first slice


def test_before_the_voice_began_the_raw_microphone_is_used() -> None:
    """A user who went on as the reply began: what they said before its first sample is
    the raw microphone's too, only the stretch under the voice is the canceller's."""
    canceller = WebRtcEchoCanceller(clock=Clock())
    rng = np.random.default_rng(5)
    mic = (rng.normal(0, 500, 32_000)).astype("<i2")
    head = b"".join(canceller.process(mic[i : i + 480].tobytes()) for i in range(0, 9_600, 480))
    played = (rng.normal(0, 3000, 4_800)).astype(np.int16)
    canceller.far_end(played, 16_000)  # 300 ms of voice from 0.6 s, then it was paused
    rest = b"".join(
        canceller.process(mic[i : i + 480].tobytes()) for i in range(9_600, 32_000, 480)
    )
    out = head + rest
    mixed = canceller.after_echo(out, canceller.output_samples, tail_s=0.2)
    voice = slice(9_600 * 2, (9_600 + 4_800 + 3_200) * 2)
    assert mixed[: voice.start] == mic[:9_600].tobytes()
    assert mixed[voice] == out[voice]
    assert mixed[voice.stop :] == mic[voice.stop // 2 :].tobytes()

"""A simulated room for tests and benchmarks: a speaker and a microphone that advance in
lock-step on the microphone's sample clock (no real time), so measuring
self-interruptions and barge-in gives the same samples on every run.

`SimulatedRoom` (with its speaker `RoomSink`) runs the whole listening loop;
`room_echo`/`run_room` do the same for a whole recording at once, and
`room_barge_ins` plays one reply in a room through a canceller and a barge-in detector.
Only tests/ and bench/ import this module.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import numpy as np

from app.audio.echo import RATE, EchoCanceller
from app.audio.resample import resample
from app.audio.vad import FRAME_BYTES, FRAME_SAMPLES, BargeInDetector

if TYPE_CHECKING:
    from app.audio.playback import PlaybackReport
    from app.tts import SynthesizedAudio


def room_response(rng: np.random.Generator) -> np.ndarray:
    """A short room response: the direct path, then a few decaying reflections (60 ms)."""
    taps = np.zeros(int(RATE * 0.06), dtype=np.float32)
    taps[0] = 1.0
    for _ in range(12):
        k = int(rng.integers(int(RATE * 0.003), taps.size))
        taps[k] += float(rng.uniform(-0.3, 0.3)) * np.exp(-k / (RATE * 0.02))
    return taps


def room_echo(
    played16k: np.ndarray,
    *,
    delay_ms: float = 50.0,
    attenuation_db: float = -10.0,
    noise_dbfs: float = -55.0,
    seed: int = 0,
) -> np.ndarray:
    """What a microphone hears of `played16k` (int16, 16 kHz) in a room: delayed,
    attenuated, smeared by a short decaying reverb tail, plus background noise."""
    rng = np.random.default_rng(seed)
    x = played16k.astype(np.float32)
    delay = int(RATE * delay_ms / 1000)
    taps = room_response(rng)
    wet = np.convolve(x, taps)[: x.size] * (10 ** (attenuation_db / 20))
    out = np.zeros(x.size + delay, dtype=np.float32)
    out[delay:] = wet
    out += rng.normal(0.0, 32768 * 10 ** (noise_dbfs / 20), out.size).astype(np.float32)
    return out


def run_room(
    played: np.ndarray,
    played_rate: int,
    mic: np.ndarray,
    canceller: EchoCanceller,
    probability: object,
    detector: object,
    *,
    lead_ms: float = 40.0,
) -> list[float]:
    """Feed a simulated microphone (float or int16 at 16 kHz) through `canceller` and
    the barge-in `detector` (a `vad.BargeInDetector`; `probability` a VAD's
    `probability(frame)`) while `played` is played in 40 ms slices, each published
    to the canceller `lead_ms` ahead of the microphone (the output buffer). Returns
    the times (s) at which barge-in fired."""
    assert isinstance(detector, BargeInDetector)
    prob = probability  # a callable: frame bytes -> float
    now = [0.0]  # the simulation's clock: the reference is lined up on it
    if hasattr(canceller, "clock"):
        canceller.clock = lambda: now[0]
    mic16 = np.clip(mic, -32768, 32767).astype("<i2")
    slice_n = played_rate * 40 // 1000
    played_at = 0  # samples of `played` published so far
    pending = bytearray()
    fired: list[float] = []
    done = 0
    for start in range(0, mic16.size - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        t_end = (start + FRAME_SAMPLES) / RATE
        now[0] = start / RATE
        while played_at < played.size and played_at / played_rate < t_end + lead_ms / 1000:
            canceller.far_end(played[played_at : played_at + slice_n], played_rate)
            played_at += slice_n
        now[0] = t_end
        pending += canceller.process(mic16[start : start + FRAME_SAMPLES].tobytes())
        while len(pending) >= FRAME_BYTES:
            frame = bytes(pending[:FRAME_BYTES])
            del pending[:FRAME_BYTES]
            done += FRAME_SAMPLES
            if detector.push(prob(frame)):  # type: ignore[operator]
                fired.append(done / RATE)
    return fired


class SimulatedRoom:
    """A speaker and a microphone in one simulated room, in lock-step, for tests and
    benchmarks of the whole listening loop without real-time scheduling.

    `sink` is an `AudioSink` whose "device" plays on the microphone's sample clock:
    it keeps `lead_ms` of audio buffered ahead of the microphone (the output
    buffer), publishes each 40 ms slice to its `far_end` as it hands it over, and
    waits for the microphone to advance before it hands over more. `chunks()` is the
    microphone (an `AudioSource`): 32 ms chunks of what the speaker played, delayed
    by `delay_ms`, attenuated and reverberated, plus noise and any scheduled voice.
    `clock()` is the time on that sample clock (plus `lag`, a microphone path that is
    late by a varying amount: `lag(samples)` in seconds, never decreasing faster than
    time passes). Nothing depends on how fast the machine runs: a voice scheduled
    with `say(voice, after_played_s=0.8)` starts 0.8 s into the played audio, always
    on the same sample. `hangover_s` after the last sound (the speaker or a voice)
    the microphone pauses until something sounds again, so the time the session
    spends thinking, synthesizing or transcribing never shows up as a varying
    number of noise chunks: the same script gives the same samples every run.
    """

    CHUNK = FRAME_SAMPLES

    def __init__(
        self,
        *,
        delay_ms: float = 50.0,
        attenuation_db: float = -10.0,
        noise_dbfs: float = -55.0,
        lead_ms: float = 80.0,
        seed: int = 0,
        lag: Callable[[int], float] | None = None,
        hangover_s: float = 1.5,
    ) -> None:
        rng = np.random.default_rng(seed)
        self._taps = room_response(rng) * np.float32(10 ** (attenuation_db / 20))
        self._noise_rng = rng
        self._noise = 32768 * 10 ** (noise_dbfs / 20)
        self._delay = int(RATE * delay_ms / 1000)
        self.lead = int(RATE * lead_ms / 1000)
        self._lag = lag
        self._hangover = int(hangover_s * RATE)
        self._active_until = 0
        self._wake: asyncio.Event | None = None
        self._dry = np.zeros(RATE * 10, dtype=np.float32)  # the speaker, on the mic's clock
        self.position = 0  # microphone samples produced
        self.write_pos = 0  # the speaker's buffered audio ends here
        self.played_s = 0.0  # seconds of audio handed to the speaker
        self.voices: list[tuple[int, np.ndarray]] = []
        self._due: list[tuple[float, np.ndarray]] = []
        self.stopped_at: list[int] = []  # microphone positions of each sink.stop()
        self._tick: asyncio.Event | None = None
        self.closed = False
        self.sink = RoomSink(self)

    # ----- the clock ---------------------------------------------------------
    def clock(self) -> float:
        lag = self._lag(self.position) if self._lag is not None else 0.0
        return self.position / RATE + lag

    @property
    def wall_position(self) -> int:
        """The sample the speaker is playing now (the microphone may lag behind it)."""
        return round(self.clock() * RATE)

    async def wait_tick(self) -> None:
        if self._tick is None:
            self._tick = asyncio.Event()
        await self._tick.wait()

    # ----- what the microphone hears ------------------------------------------
    def say(
        self, voice: np.ndarray, *, at_s: float | None = None, after_played_s: float | None = None
    ) -> None:
        """Someone speaks: at `at_s` on the microphone's clock (now by default), or once
        the speaker has played `after_played_s` seconds in all."""
        samples = voice.astype(np.float32)
        if after_played_s is not None:
            self._due.append((after_played_s, samples))
            self._due.sort(key=lambda d: d[0])
            return
        start = self.position if at_s is None else int(at_s * RATE)
        self.voices.append((start, samples))
        self._rouse()

    def listen_for(self, seconds: float) -> None:
        """Keep the microphone going for `seconds` more even if nothing sounds."""
        self._active_until = max(self._active_until, self.position + int(seconds * RATE))
        self._rouse()

    def _rouse(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _ensure(self, end: int) -> None:
        if end > self._dry.size:
            grown = np.zeros(max(end, self._dry.size * 2), dtype=np.float32)
            grown[: self._dry.size] = self._dry
            self._dry = grown

    def play16k(self, start: int, samples16: np.ndarray, played_s: float) -> None:
        """The speaker sounds `samples16` from microphone sample `start`."""
        self._ensure(start + samples16.size)
        self._dry[start : start + samples16.size] += samples16
        self.write_pos = start + samples16.size
        self._rouse()
        before = self.played_s
        self.played_s += played_s
        while self._due and self._due[0][0] <= self.played_s:
            due_s, voice = self._due.pop(0)
            offset = round((due_s - before) * RATE)
            self.voices.append((start + max(0, offset), voice))

    def stop_speaker(self) -> int:
        """The device buffer is dropped: what had not sounded yet never will. Returns
        how many samples (16 kHz) were dropped."""
        now = max(self.position, self.wall_position)
        self.stopped_at.append(now)
        dropped = max(0, self.write_pos - now)
        if dropped:
            self._dry[now : self.write_pos] = 0.0
            self.write_pos = now
        return dropped

    def echo(self, start: int, n: int) -> np.ndarray:
        taps = self._taps
        lo = start - self._delay - taps.size + 1
        hi = start - self._delay + n
        self._ensure(max(hi, 0))
        window = np.zeros(hi - lo, dtype=np.float32)
        src_lo = max(lo, 0)
        if hi > 0:
            window[src_lo - lo :] = self._dry[src_lo:hi]
        return np.convolve(window, taps, mode="valid").astype(np.float32)

    def mic(self, start: int, n: int) -> np.ndarray:
        out = self.echo(start, n)
        out += self._noise_rng.normal(0.0, self._noise, n).astype(np.float32)
        for at, voice in self.voices:
            lo, hi = max(start, at), min(start + n, at + voice.size)
            if lo < hi:
                out[lo - start : hi - start] += voice[lo - at : hi - at]
        return out

    @property
    def sounding(self) -> bool:
        """Whether the speaker or a voice can still be heard at the microphone."""
        return self._sounding()

    def _sounding(self) -> bool:
        end = self.write_pos + self._delay + self._taps.size
        speaking = self.write_pos > 0 and end > self.position
        return speaking or any(at + v.size > self.position for at, v in self.voices)

    async def chunks(self) -> AsyncIterator[bytes]:
        while not self.closed:
            if self._sounding():
                self._active_until = self.position + self._hangover
            if self.position >= self._active_until:  # quiet: wait for the next sound
                self._wake = asyncio.Event()
                await self._wake.wait()
                self._wake = None
                continue
            chunk = self.mic(self.position, self.CHUNK)
            self.position += self.CHUNK
            if self._tick is not None:  # the speaker may hand over its next slice
                self._tick.set()
                self._tick = asyncio.Event()
            for _ in range(3):
                await asyncio.sleep(0)
            yield np.clip(chunk, -32768, 32767).astype("<i2").tobytes()

    async def aclose(self) -> None:
        self.closed = True
        self._rouse()


class RoomSink:
    """The speaker of a `SimulatedRoom` (an `AudioSink` with a far-end tap)."""

    def __init__(self, room: SimulatedRoom) -> None:
        self.room = room
        self.far_end: Callable[[np.ndarray, int], None] | None = None
        self._stopped = False
        self._playing = False
        self._dropped16 = 0
        self.played: list[np.ndarray] = []  # what was handed to the device, slice by slice
        self.requested: list[int] = []  # the samples of each play() call

    async def play(self, audio: SynthesizedAudio, *, on_level: object = None) -> PlaybackReport:
        from app.audio.playback import Heard, PlaybackReport

        self._stopped = False
        self._dropped16 = 0
        samples = np.frombuffer(audio.pcm, dtype="<i2")
        rate = audio.sample_rate
        self.requested.append(samples.size)
        self._playing = True
        try:
            played = await self._play(samples, rate)
        finally:
            self._playing = False
        # What was still in the device buffer when it stopped was not heard.
        played = max(0, played - round(self._dropped16 * rate / RATE))
        heard = Heard.FULL if played >= samples.size else Heard.PARTIAL if played else Heard.NONE
        return PlaybackReport(heard, played / rate, samples.size / rate)

    async def _play(self, samples: np.ndarray, rate: int) -> int:
        from app.audio.playback import CHUNK_MS

        room = self.room
        step = max(1, rate * CHUNK_MS // 1000)
        # What the speaker sounds, at the room's rate: the whole sentence at once, so no
        # resampler's block delay shifts it; sliced in step with the chunks.
        sounded = resample(samples, rate, RATE)
        played = 0
        for start in range(0, samples.size, step):
            while not self._stopped and room.write_pos - room.wall_position >= room.lead:
                await room.wait_tick()
            if self._stopped or room.closed:
                break
            chunk = samples[start : start + step]
            if self.far_end is not None:
                self.far_end(chunk, rate)
            lo = start * RATE // rate
            hi = sounded.size if start + step >= samples.size else (start + step) * RATE // rate
            room.play16k(
                max(room.write_pos, room.wall_position), sounded[lo:hi], chunk.size / rate
            )
            self.played.append(chunk)
            played += chunk.size
        return played

    def stop(self) -> None:
        self._stopped = True
        if self._playing:  # (a stop with nothing playing is not a silencing)
            self._dropped16 += self.room.stop_speaker()

    async def aclose(self) -> None:
        await self.room.aclose()


async def room_barge_ins(
    room: SimulatedRoom,
    reply: SynthesizedAudio,
    canceller: EchoCanceller,
    probability: Callable[[bytes], float],
    detector: object,
    *,
    quiet_s: float = 0.0,
) -> list[float]:
    """Play `reply` in `room` through its sink (after `quiet_s` of a quiet room), with
    `canceller` as the far-end tap, and feed the room's microphone through the
    canceller and the barge-in `detector` (a `vad.BargeInDetector`) until the reply
    and its echo are over. Returns the room times (s) at which barge-in fired."""
    assert isinstance(detector, BargeInDetector)
    room.sink.far_end = canceller.far_end
    fired: list[float] = []
    play: asyncio.Task[PlaybackReport] | None = None
    pending = b""
    room.listen_for(quiet_s + 0.1)
    try:
        async for chunk in room.chunks():
            if play is None and room.position >= quiet_s * RATE:
                play = asyncio.create_task(room.sink.play(reply))
            pending += canceller.process(chunk)
            while len(pending) >= FRAME_BYTES:
                frame, pending = pending[:FRAME_BYTES], pending[FRAME_BYTES:]
                if detector.push(probability(frame)):
                    fired.append(room.position / RATE)
            if play is not None and play.done() and not room.sounding:
                break
    finally:
        await room.aclose()
        if play is not None:
            await play
    return fired

"""Echo handling: the companion must not hear itself through the speakers.

Two implementations of `EchoCanceller`:

- `WebRtcEchoCanceller`: WebRTC's AEC3 (the `pywebrtc-audio` package) on 10 ms
  frames at 16 kHz. Its far-end reference is the exact audio the sink plays
  (`far_end(samples, rate)`, called by the sink for every slice it writes),
  resampled to 16 kHz and queued in playing order; each 10 ms microphone frame
  is processed with the 10 ms of reference that was played at the same time.
  AEC3 estimates the remaining delay (device buffers, the room) itself.
- `HalfDuplex`: the fallback when echo cancellation is unavailable. It passes
  the microphone through unchanged; the session then ignores the microphone
  while the companion speaks (or, with barge-in on, asks for a higher bar).

`create_echo_canceller(mode)` picks one: `aec`, `half_duplex` or `auto` (AEC
when pywebrtc-audio can be imported).

The reference is lined up with the microphone by the clock (`FarEndBuffer`), so
a listening loop that runs late by a varying amount does not change the echo delay
AEC3 sees. After a barge-in, what the user said once the echo had ended is taken
from the raw microphone (`after_echo`): AEC3's double-talk suppression garbles it.

For tests and benchmarks, `SimulatedRoom` is a speaker and a microphone in one
room that advance in lock-step on the microphone's sample clock (no real time),
`room_echo`/`run_room` the same for a whole recording at once.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from app.audio.playback import PlaybackReport
    from app.tts import SynthesizedAudio

log = logging.getLogger(__name__)

RATE = 16_000
FRAME = RATE // 100  # 10 ms: what WebRTC's audio processing works on
# More reference than this waiting means the player ran ahead of the microphone
# (a sink that does not keep real time): the oldest is dropped.
MAX_BACKLOG_S = 1.0
# The reference counts as "playing" for this long after its last sample was due.
ACTIVE_TAIL_S = 0.3
# Played audio that starts this long after the queued reference ends is placed by the
# clock again (a new sentence, a player that fell behind), not appended to it.
RESYNC_S = 0.02
# The microphone's sample clock is the earliest `now - samples / rate` seen over this
# window: long enough to catch a moment when the listening loop was not late, short
# enough to follow dropped input blocks and clock drift.
ORIGIN_WINDOW_S = 5.0
# AEC3 starts from nothing: until it has heard this much of the companion's voice its
# filter has not converged and echo leaks through (measured: most of the first
# second of the first sentence), so barge-in waits for it.
WARMUP_S = 1.5
# After a barge-in the words the user said once the companion's voice had stopped are
# transcribed from the raw microphone, not from the canceller's output: AEC3 keeps
# suppressing for a while after double talk, which garbled them (measured on the
# simulated room: word error rate of the overlapping question 0.36 from the AEC
# output alone, 0.25 with the raw microphone after the echo; bench/bench_barge_in.py).
# The echo lasts this long after the last played sample (device buffer, room).
ECHO_TAIL_S = 0.15
# Raw microphone kept for that (a little more than the longest utterance).
RAW_KEEP_S = 32.0


@runtime_checkable
class EchoCanceller(Protocol):
    """Removes the companion's own voice from the microphone signal."""

    name: str
    cancels: bool  # False for the half-duplex fallback

    def far_end(self, samples: np.ndarray, sample_rate: int) -> None:
        """The exact samples (int16 mono) being played now, at their own rate.
        Thread-safe: a sink calls it from its playing thread."""
        ...

    def process(self, near: bytes) -> bytes:
        """16 kHz s16le microphone audio in, echo-cancelled audio out (may lag by <10 ms)."""
        ...

    @property
    def far_active(self) -> bool:
        """Whether the companion's voice is (or was just) playing."""
        ...

    @property
    def ready(self) -> bool:
        """Whether the cancellation can be trusted (the filter has converged)."""
        ...

    def advance(self, near: bytes) -> bytes:
        """Microphone audio that goes unprocessed: counted (the reference stays lined
        up) and returned as is, with the same lag as `process`."""
        ...

    @property
    def output_samples(self) -> int:
        """Samples of output so far (`process` and `advance` alike)."""
        ...

    def after_echo(self, pcm: bytes, end: int, tail_s: float = ECHO_TAIL_S) -> bytes:
        """`pcm`, the output samples up to `end`, with the part from `tail_s` after the
        last played sample onwards taken from the raw microphone (unchanged when it
        cannot be)."""
        ...

    def reset(self) -> None: ...


class StreamResampler:
    """Linear-interpolation resampling of a stream cut into arbitrary chunks, with no
    seams between chunks (the fractional phase and the last sample carry over)."""

    def __init__(self, from_rate: int, to_rate: int = RATE) -> None:
        self.from_rate, self.to_rate = from_rate, to_rate
        self._step = from_rate / to_rate
        self._pos = 0.0  # position of the next output sample, in input samples from `_prev`
        self._prev: np.ndarray = np.zeros(0, dtype=np.float32)

    def push(self, samples: np.ndarray) -> np.ndarray:
        x = samples.astype(np.float32)
        if self.from_rate == self.to_rate:
            return x
        if self._step > 1.5:  # going down: a short box low-pass keeps most aliasing out
            width = round(self._step)
            kernel = np.ones(width, dtype=np.float32) / width
            x = np.convolve(x, kernel, mode="same").astype(np.float32)
        buf = np.concatenate([self._prev, x])
        if buf.size < 2:
            self._prev = buf
            return np.zeros(0, dtype=np.float32)
        last = buf.size - 1
        count = int(np.floor((last - self._pos) / self._step)) + 1 if self._pos <= last else 0
        idx = self._pos + self._step * np.arange(count)
        out = np.interp(idx, np.arange(buf.size), buf).astype(np.float32)
        next_pos = self._pos + self._step * count
        keep = int(np.floor(next_pos))
        keep = min(keep, last)
        self._prev = buf[keep:]
        self._pos = next_pos - keep
        return out


class FarEndBuffer:
    """The played audio at 16 kHz, lined up with the microphone's samples.

    The microphone side takes the reference sample by sample (`take`), in step with
    the microphone samples it processes. Where a stretch of played audio goes on that
    line is decided by the clock, not by how much the microphone side happened to
    have read when it arrived: the microphone's sample clock is estimated as the
    earliest time each sample could have been captured (a sliding minimum of
    `now - samples / rate` over `ORIGIN_WINDOW_S`), and audio that starts playing
    (the first slice after the reference ran dry, or after a gap of `RESYNC_S`)
    is placed at the microphone sample of the moment it was handed to the device;
    the rest follows it contiguously. So a microphone path that lags by a varying
    amount (a busy event loop, a queue) no longer changes the echo delay from one
    sentence to the next, which made AEC3 re-converge at the start of each.
    """

    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, *, by_clock: bool = True
    ) -> None:
        self.clock = clock
        self.by_clock = by_clock  # False: the old way, in step with what was read so far
        self._lock = threading.Lock()
        self._queue: collections.deque[np.ndarray] = collections.deque()
        self._queued = 0
        self._resampler: StreamResampler | None = None
        self._last_played = -1e9
        self._read = 0  # microphone samples taken so far
        self._origins: collections.deque[tuple[float, float]] = collections.deque()
        self.dropped = 0
        self.end_index = 0  # the microphone sample after the last reference pushed

    def _origin(self) -> float | None:
        return self._origins[0][1] if self._origins else None

    def push(self, samples: np.ndarray, sample_rate: int) -> None:
        if samples.size == 0:
            return
        now = self.clock()
        with self._lock:
            if self._resampler is None or self._resampler.from_rate != sample_rate:
                self._resampler = StreamResampler(sample_rate)
            out = np.clip(self._resampler.push(samples), -32768, 32767).astype(np.int16)
            if out.size == 0:
                return
            origin = self._origin()
            end = self._read + self._queued  # the microphone sample after the queued reference
            if origin is not None and self.by_clock:
                target = round((now - origin) * RATE)
                gap = target - end
                if gap > 0 and (self._queued == 0 or gap > RESYNC_S * RATE):
                    gap = min(gap, int(MAX_BACKLOG_S * RATE))
                    self._queue.append(np.zeros(gap, dtype=np.int16))
                    self._queued += gap
            self._queue.append(out)
            self._queued += out.size
            self.end_index = self._read + self._queued
            while self._queued > MAX_BACKLOG_S * RATE and len(self._queue) > 1:
                old = self._queue.popleft()
                self._queued -= old.size
                self._read += old.size
                self.dropped += old.size
            self._last_played = now + self._queued / RATE

    def take(self, n: int) -> np.ndarray:
        """The reference for the next `n` microphone samples (zeros where nothing played)."""
        now = self.clock()
        out = np.zeros(n, dtype=np.int16)
        filled = 0
        with self._lock:
            self._read += n
            origin = now - self._read / RATE
            while self._origins and self._origins[-1][1] >= origin:
                self._origins.pop()
            self._origins.append((now, origin))
            while self._origins[0][0] < now - ORIGIN_WINDOW_S:
                self._origins.popleft()
            while filled < n and self._queue:
                head = self._queue[0]
                k = min(n - filled, head.size)
                out[filled : filled + k] = head[:k]
                filled += k
                if k == head.size:
                    self._queue.popleft()
                else:
                    self._queue[0] = head[k:]
                self._queued -= k
        return out

    @property
    def active(self) -> bool:
        return self._queued > 0 or self.clock() < self._last_played + ACTIVE_TAIL_S

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._queued = 0
            self._resampler = None


class WebRtcEchoCanceller:
    """WebRTC AEC3 (pywebrtc-audio) with the played audio as its far-end reference.

    One instance lives as long as the session, so the filter it learned for the
    room carries over from reply to reply: only the first 1.5 s of the companion's
    voice ever counts as warm-up. Between replies the microphone is only counted
    (`advance`), which keeps the reference lined up without the cost of processing.
    """

    name = "aec"
    cancels = True

    def __init__(
        self,
        *,
        noise_suppression: bool = False,
        stream_delay_ms: int = 0,
        clock: Callable[[], float] = time.perf_counter,
        align_by_clock: bool = True,
    ) -> None:
        import pywebrtc_audio

        self._ns = noise_suppression
        self._delay = stream_delay_ms
        self._apm = pywebrtc_audio.AudioProcessor(
            sample_rate=RATE,
            echo_cancellation=True,
            high_pass_filter=True,
            noise_suppression=noise_suppression,
            stream_delay_ms=stream_delay_ms,
        )
        self._far = FarEndBuffer(clock, by_clock=align_by_clock)
        self._near = np.zeros(0, dtype=np.int16)
        self._far_heard = 0  # samples of non-silent reference processed
        self._out = 0  # output samples so far
        self._raw = np.zeros(int(RAW_KEEP_S * RATE), dtype=np.int16)  # a ring, by index

    @property
    def clock(self) -> Callable[[], float]:
        return self._far.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._far.clock = clock

    def far_end(self, samples: np.ndarray, sample_rate: int) -> None:
        self._far.push(samples, sample_rate)

    def _whole(self, near: bytes) -> np.ndarray:
        samples = np.frombuffer(near, dtype="<i2")
        if self._near.size:
            samples = np.concatenate([self._near, samples])
        whole = samples.size - samples.size % FRAME
        self._near = samples[whole:].copy()
        head = samples[:whole]
        if whole:  # the raw microphone, kept by output index (output k is input k)
            keep = head[-self._raw.size :]
            at = (self._out + whole - keep.size) % self._raw.size
            first = min(keep.size, self._raw.size - at)
            self._raw[at : at + first] = keep[:first]
            self._raw[: keep.size - first] = keep[first:]
            self._out += whole
        return head

    def process(self, near: bytes) -> bytes:
        samples = self._whole(near)
        if samples.size == 0:
            return b""
        far = self._far.take(samples.size)
        if self._far_heard < WARMUP_S * RATE and np.any(far):
            self._far_heard += samples.size
        out = self._apm.process(np.ascontiguousarray(samples), far)
        return np.asarray(out, dtype="<i2").tobytes()

    def advance(self, near: bytes) -> bytes:
        """Microphone audio that is not processed (nobody listens through the voice now):
        counted, so the reference stays lined up with the microphone, and passed on."""
        samples = self._whole(near)
        if samples.size:
            self._far.take(samples.size)
        return np.ascontiguousarray(samples, dtype="<i2").tobytes()

    @property
    def output_samples(self) -> int:
        return self._out

    def after_echo(self, pcm: bytes, end: int, tail_s: float = ECHO_TAIL_S) -> bytes:
        n = len(pcm) // 2
        start = end - n
        if n == 0 or end > self._out or start < self._out - self._raw.size:
            return pcm
        cut = min(n, max(0, self._far.end_index + int(tail_s * RATE) - start))
        if cut == n:
            return pcm
        idx = np.arange(start + cut, end) % self._raw.size
        return pcm[: cut * 2] + self._raw[idx].astype("<i2").tobytes()

    @property
    def far_active(self) -> bool:
        return self._far.active

    @property
    def ready(self) -> bool:
        return self._far_heard >= WARMUP_S * RATE

    def reset(self) -> None:
        self._apm.reset()
        self._far.clear()
        self._near = np.zeros(0, dtype=np.int16)
        self._far_heard = 0


class HalfDuplex:
    """No cancellation: the microphone passes unchanged; the session gates it instead."""

    name = "half_duplex"
    cancels = False

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._far = FarEndBuffer(clock)
        self._out = 0

    @property
    def clock(self) -> Callable[[], float]:
        return self._far.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._far.clock = clock

    def far_end(self, samples: np.ndarray, sample_rate: int) -> None:
        # Only the timing matters here: whether the companion is playing.
        self._far._last_played = max(
            self._far._last_played, self.clock() + samples.size / sample_rate
        )

    def process(self, near: bytes) -> bytes:
        self._out += len(near) // 2
        return near

    def advance(self, near: bytes) -> bytes:
        self._out += len(near) // 2
        return near

    @property
    def output_samples(self) -> int:
        return self._out

    def after_echo(self, pcm: bytes, end: int, tail_s: float = ECHO_TAIL_S) -> bytes:
        return pcm

    @property
    def ready(self) -> bool:
        return False

    @property
    def far_active(self) -> bool:
        return self._far.active

    def reset(self) -> None:
        self._far.clear()


def aec_available() -> bool:
    try:
        import pywebrtc_audio  # noqa: F401
    except Exception:
        return False
    return True


def create_echo_canceller(mode: str = "auto") -> EchoCanceller:
    """`aec`, `half_duplex` or `auto`; `aec` without pywebrtc-audio falls back (logged)."""
    if mode not in ("aec", "half_duplex", "auto"):
        raise ValueError(f"unknown echo mode {mode!r}")
    if mode != "half_duplex":
        try:
            return WebRtcEchoCanceller()
        except Exception as exc:
            if mode == "aec":
                log.warning("echo cancellation unavailable (%s): half-duplex instead", exc)
    return HalfDuplex()


# ----- a simulated room: measuring self-interruptions ------------------------------
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
    from app.audio.vad import FRAME_BYTES, FRAME_SAMPLES, BargeInDetector

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

    CHUNK = 512

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
        resampler = StreamResampler(rate)
        played = 0
        for start in range(0, samples.size, step):
            while not self._stopped and room.write_pos - room.wall_position >= room.lead:
                await room.wait_tick()
            if self._stopped or room.closed:
                break
            chunk = samples[start : start + step]
            if self.far_end is not None:
                self.far_end(chunk, rate)
            room.play16k(
                max(room.write_pos, room.wall_position), resampler.push(chunk), chunk.size / rate
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
    from app.audio.vad import FRAME_BYTES, BargeInDetector

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

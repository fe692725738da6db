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
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Protocol, runtime_checkable

import numpy as np

log = logging.getLogger(__name__)

RATE = 16_000
FRAME = RATE // 100  # 10 ms: what WebRTC's audio processing works on
# More reference than this waiting means the player ran ahead of the microphone
# (a sink that does not keep real time): the oldest is dropped.
MAX_BACKLOG_S = 1.0
# The reference counts as "playing" for this long after its last sample was due.
ACTIVE_TAIL_S = 0.3
# AEC3 starts from nothing: until it has heard this much of the companion's voice its
# filter has not converged and echo leaks through (measured: most of the first
# second of the first sentence), so barge-in waits for it.
WARMUP_S = 1.5


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
    """The played audio at 16 kHz, queued in playing order for the microphone side."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: collections.deque[np.ndarray] = collections.deque()
        self._queued = 0
        self._resampler: StreamResampler | None = None
        self._last_played = 0.0
        self.dropped = 0

    def push(self, samples: np.ndarray, sample_rate: int) -> None:
        if samples.size == 0:
            return
        with self._lock:
            if self._resampler is None or self._resampler.from_rate != sample_rate:
                self._resampler = StreamResampler(sample_rate)
            out = np.clip(self._resampler.push(samples), -32768, 32767).astype(np.int16)
            if out.size:
                self._queue.append(out)
                self._queued += out.size
            while self._queued > MAX_BACKLOG_S * RATE and len(self._queue) > 1:
                old = self._queue.popleft()
                self._queued -= old.size
                self.dropped += old.size
            self._last_played = time.perf_counter() + self._queued / RATE

    def take(self, n: int) -> np.ndarray:
        """The next `n` samples of reference (zeros where nothing was played)."""
        out = np.zeros(n, dtype=np.int16)
        filled = 0
        with self._lock:
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
        return self._queued > 0 or time.perf_counter() < self._last_played + ACTIVE_TAIL_S

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._queued = 0
            self._resampler = None


class WebRtcEchoCanceller:
    """WebRTC AEC3 (pywebrtc-audio) with the played audio as its far-end reference."""

    name = "aec"
    cancels = True

    def __init__(self, *, noise_suppression: bool = False, stream_delay_ms: int = 0) -> None:
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
        self._far = FarEndBuffer()
        self._near = np.zeros(0, dtype=np.int16)
        self._far_heard = 0  # samples of non-silent reference processed

    def far_end(self, samples: np.ndarray, sample_rate: int) -> None:
        self._far.push(samples, sample_rate)

    def process(self, near: bytes) -> bytes:
        samples = np.frombuffer(near, dtype="<i2")
        if self._near.size:
            samples = np.concatenate([self._near, samples])
        whole = samples.size - samples.size % FRAME
        self._near = samples[whole:].copy()
        if whole == 0:
            return b""
        far = self._far.take(whole)
        if self._far_heard < WARMUP_S * RATE and np.any(far):
            self._far_heard += whole
        out = self._apm.process(np.ascontiguousarray(samples[:whole]), far)
        return np.asarray(out, dtype="<i2").tobytes()

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

    def __init__(self) -> None:
        self._far = FarEndBuffer()

    def far_end(self, samples: np.ndarray, sample_rate: int) -> None:
        # Only the timing matters here: whether the companion is playing.
        self._far._last_played = max(
            self._far._last_played, time.perf_counter() + samples.size / sample_rate
        )

    def process(self, near: bytes) -> bytes:
        return near

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
    # A short room response: the direct path, then a few decaying reflections.
    taps = np.zeros(int(RATE * 0.06), dtype=np.float32)
    taps[0] = 1.0
    for _ in range(12):
        k = int(rng.integers(int(RATE * 0.003), taps.size))
        taps[k] += float(rng.uniform(-0.3, 0.3)) * np.exp(-k / (RATE * 0.02))
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
    mic16 = np.clip(mic, -32768, 32767).astype("<i2")
    slice_n = played_rate * 40 // 1000
    played_at = 0  # samples of `played` published so far
    pending = bytearray()
    fired: list[float] = []
    done = 0
    for start in range(0, mic16.size - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        t_end = (start + FRAME_SAMPLES) / RATE
        while played_at < played.size and played_at / played_rate < t_end + lead_ms / 1000:
            canceller.far_end(played[played_at : played_at + slice_n], played_rate)
            played_at += slice_n
        pending += canceller.process(mic16[start : start + FRAME_SAMPLES].tobytes())
        while len(pending) >= FRAME_BYTES:
            frame = bytes(pending[:FRAME_BYTES])
            del pending[:FRAME_BYTES]
            done += FRAME_SAMPLES
            if detector.push(prob(frame)):  # type: ignore[operator]
                fired.append(done / RATE)
    return fired

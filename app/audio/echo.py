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
from the raw microphone (`after_echo`), and so is what they said before it began:
AEC3's double-talk suppression garbles it. Where the microphone does not hear the
voice at all (headphones: `app.audio.echo_path`), nothing is cancelled.

The reference is resampled to 16 kHz by soxr (`app.audio.resample`), whose output
comes out in blocks, up to 40 ms after the input it belongs to: where it goes is
decided when its input is pushed, so that lag moves nothing.

For tests and benchmarks, `app.audio.simulated_room` is a speaker and a microphone
in one room that advance in lock-step on the microphone's sample clock.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from app.audio.echo_path import EchoPath
from app.audio.format import SAMPLE_RATE
from app.audio.resample import StreamResampler

log = logging.getLogger(__name__)

RATE = SAMPLE_RATE
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
# After a barge-in the words the user said before the companion's voice started and
# once it had stopped are transcribed from the raw microphone, not from the canceller's
# output: AEC3 keeps suppressing for a while after double talk, which garbled them
# (measured on the simulated room: word error rate of the overlapping question 0.36
# from the AEC output alone, 0.25 with the raw microphone after the echo;
# bench/bench_barge_in.py).
# The echo lasts this long after the last played sample (device buffer, room).
ECHO_TAIL_S = 0.15
# Raw microphone kept for that (a little more than the longest utterance).
RAW_KEEP_S = 32.0


@runtime_checkable
class EchoCanceller(Protocol):
    """Removes the companion's own voice from the microphone signal."""

    name: str
    cancels: bool  # False for the half-duplex fallback

    def far_end(self, samples: np.ndarray, sample_rate: int, *, after_gap: bool = False) -> None:
        """The exact samples (int16 mono) being played now, at their own rate.
        `after_gap`: the device ran dry before them (an underrun on a busy machine), so
        they start later than the samples before them ended. Thread-safe: a sink calls
        it from its playing thread."""
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
        """`pcm`, the output samples up to `end`, taken from the raw microphone wherever
        no voice played in the `tail_s` before (unchanged when it cannot be)."""
        ...

    def reset(self) -> None: ...


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
        # The microphone sample where the resampler's next output goes.
        self._at: int | None = None
        self._last_played = -1e9
        self._read = 0  # microphone samples taken so far
        self._origins: collections.deque[tuple[float, float]] = collections.deque()
        self.dropped = 0
        self.end_index = 0  # the microphone sample after the last reference pushed

    def _origin(self) -> float | None:
        return self._origins[0][1] if self._origins else None

    def push(self, samples: np.ndarray, sample_rate: int, *, after_gap: bool = False) -> None:
        """Queue played samples; `after_gap` (the device ran dry before them) places
        them by the clock, as a new stretch, not right after the ones before."""
        if samples.size == 0:
            return
        now = self.clock()
        with self._lock:
            resampler = self._resampler
            if resampler is None or resampler.from_rate != sample_rate:
                resampler = self._resampler = StreamResampler(sample_rate)
                self._at = None
            if self._at is None:
                self._at = self._read + self._queued
            # The reference pushed so far ends here (soxr still owes `pending` of it).
            pushed_end = self._at + resampler.pending
            ran_dry = after_gap or pushed_end <= self._read
            end = max(pushed_end, self._read)
            gap = 0
            origin = self._origin()
            if origin is not None and self.by_clock:
                gap = round((now - origin) * RATE) - end
            if ran_dry or gap > RESYNC_S * RATE:
                # A new stretch: what soxr owed of the last one goes where it belonged
                # (nowhere if the microphone has passed it); this one starts by the clock.
                self._place(resampler.flush())
                self._at = max(self._at, self._read) + min(max(gap, 0), int(MAX_BACKLOG_S * RATE))
            self._place(resampler.push(samples))
            self.end_index = self._at + resampler.pending
            while self._queued > MAX_BACKLOG_S * RATE and len(self._queue) > 1:
                old = self._queue.popleft()
                self._queued -= old.size
                self._read += old.size
                self.dropped += old.size
            self._last_played = now + (self._queued + resampler.pending) / RATE

    def _place(self, reference: np.ndarray) -> None:
        """Queue resampled reference for the microphone samples from `_at` on."""
        assert self._at is not None
        at, self._at = self._at, self._at + reference.size
        out = np.clip(reference, -32768, 32767).astype(np.int16)
        queue_end = self._read + self._queued
        if at < queue_end:  # the microphone has passed it: too late to be of use
            self.dropped += min(out.size, queue_end - at)
            out = out[queue_end - at :]
        elif at > queue_end:
            self._queue.append(np.zeros(at - queue_end, dtype=np.int16))
            self._queued += at - queue_end
        if out.size:
            self._queue.append(out)
            self._queued += out.size

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
            self._at = None


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
        self._voiced = np.zeros(self._raw.size, dtype=bool)  # ... and where a voice played
        self.path = EchoPath()  # no echo at all (headphones): nothing to cancel

    @property
    def clock(self) -> Callable[[], float]:
        return self._far.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._far.clock = clock

    def far_end(self, samples: np.ndarray, sample_rate: int, *, after_gap: bool = False) -> None:
        self._far.push(samples, sample_rate, after_gap=after_gap)

    def _whole(self, near: bytes) -> tuple[np.ndarray, np.ndarray]:
        """The whole 10 ms frames of microphone audio so far, and the reference played
        with them; both kept by output index (output k is input k)."""
        samples = np.frombuffer(near, dtype="<i2")
        if self._near.size:
            samples = np.concatenate([self._near, samples])
        whole = samples.size - samples.size % FRAME
        self._near = samples[whole:].copy()
        head = samples[:whole]
        far = self._far.take(whole) if whole else np.zeros(0, dtype=np.int16)
        if whole:
            self._keep(self._raw, head)
            self._keep(self._voiced, far != 0)
            self._out += whole
        return head, far

    def _keep(self, ring: np.ndarray, samples: np.ndarray) -> None:
        keep = samples[-ring.size :]
        at = (self._out + samples.size - keep.size) % ring.size
        first = min(keep.size, ring.size - at)
        ring[at : at + first] = keep[:first]
        ring[: keep.size - first] = keep[first:]

    def process(self, near: bytes) -> bytes:
        samples, far = self._whole(near)
        if samples.size == 0:
            return b""
        if self._far_heard < WARMUP_S * RATE and np.any(far):
            self._far_heard += samples.size
        self.path.push(samples, far)
        out = self._apm.process(np.ascontiguousarray(samples), far)
        if self.path.absent:  # its double-talk suppression would only garble the user
            return np.ascontiguousarray(samples, dtype="<i2").tobytes()
        return np.asarray(out, dtype="<i2").tobytes()

    def advance(self, near: bytes) -> bytes:
        """Microphone audio that is not processed (nobody listens through the voice now):
        counted, so the reference stays lined up with the microphone, and passed on."""
        samples, _ = self._whole(near)
        return np.ascontiguousarray(samples, dtype="<i2").tobytes()

    @property
    def output_samples(self) -> int:
        return self._out

    def after_echo(self, pcm: bytes, end: int, tail_s: float = ECHO_TAIL_S) -> bytes:
        n = len(pcm) // 2
        start = end - n
        if n == 0 or end > self._out or start < self._out - self._raw.size:
            return pcm
        # A sample is echo when the voice played within `tail_s` before it (where no
        # voice played, the raw microphone is the user's words as they were said).
        tail = int(tail_s * RATE)
        lead = min(tail, start - max(0, self._out - self._raw.size))
        played = self._voiced[np.arange(start - lead, end) % self._voiced.size]
        sums = np.concatenate([[0], np.cumsum(played, dtype=np.int64)])
        upto = np.arange(lead, lead + n) + 1
        echo = sums[upto] - sums[np.maximum(0, upto - tail - 1)] > 0
        if echo.all():
            return pcm
        raw = self._raw[np.arange(start, end) % self._raw.size].astype("<i2")
        out = np.where(echo, np.frombuffer(pcm, dtype="<i2"), raw).astype("<i2")
        return out.tobytes()

    @property
    def far_active(self) -> bool:
        return self._far.active

    @property
    def ready(self) -> bool:
        return self._far_heard >= WARMUP_S * RATE or self.path.absent

    def reset(self) -> None:
        self._apm.reset()
        self.path.reset()
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

    def far_end(self, samples: np.ndarray, sample_rate: int, *, after_gap: bool = False) -> None:
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

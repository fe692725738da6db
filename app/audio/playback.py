"""Playing speech: in chunks of at most 40 ms, so `stop()` silences within one chunk.

Each `play()` reports how much of the sentence was actually heard, and the
RMS level of every chunk (the avatar's mouth follows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from app.audio.capture import describe_missing_device, portaudio_lock
from app.tts.engine import SynthesizedAudio

log = logging.getLogger(__name__)

CHUNK_MS = 40
# The device buffer. PortAudio's "low" latency (9 ms through PulseAudio) underran several
# times a sentence, audible gaps, whenever another Python thread kept the interpreter
# busy (as the recognizer and chat model do); 40 ms still underran now and then on a
# loaded machine, 80 ms did not. A bigger buffer delays neither the first sound (it
# starts as soon as it is written) nor `stop()`, which drops the buffer.
OUTPUT_LATENCY_S = 0.08
# Each chunk is written in slices, and `stop()` is checked before each: a blocking write
# returns only once its data fits in the buffer, so whole 40 ms writes made a stop wait
# up to 40 ms before it could drop the buffer (measured 1-41 ms to silence; with 10 ms
# slices, up to about 20 ms).
WRITE_SLICE_MS = 10
LevelCallback = Callable[[float], None]
# Receives the exact samples (int16 mono, at their own rate) as they are played: the
# far-end reference for echo cancellation (`app.audio.echo`). Called from the playing
# thread; it must not block.
class FarEndCallback(Protocol):
    """Told each slice a sink hands to its device (`EchoCanceller.far_end`)."""

    def __call__(self, samples: np.ndarray, sample_rate: int, *, after_gap: bool = False) -> None:
        ...


class PlaybackError(Exception):
    """No sound can be played (no output device); the message says so in words."""


class Heard(enum.Enum):
    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"


@dataclass(slots=True, frozen=True)
class PlaybackReport:
    heard: Heard
    played_s: float
    total_s: float

    @property
    def fraction(self) -> float:
        return self.played_s / self.total_s if self.total_s else 0.0


def chunk_level(chunk: np.ndarray) -> float:
    """Mouth openness 0..1 from a chunk's RMS (speech sits around -30..-10 dBFS)."""
    if chunk.size == 0:
        return 0.0
    rms = math.sqrt(float(np.mean(np.square(chunk.astype(np.float32) / 32768.0))))
    if rms <= 1e-4:
        return 0.0
    db = 20 * math.log10(rms)
    return min(1.0, max(0.0, (db + 45.0) / 35.0))


@runtime_checkable
class AudioSink(Protocol):
    """Where speech goes: a sound device, a WAV file, a test."""

    async def play(
        self, audio: SynthesizedAudio, *, on_level: LevelCallback | None = None
    ) -> PlaybackReport: ...

    def stop(self) -> None: ...

    async def aclose(self) -> None: ...


@dataclass
class MemorySink:
    """Collects what is played (for `companion turn --out` and tests); can keep real time."""

    realtime: bool = False
    sample_rate: int | None = None
    chunks: list[bytes] = field(default_factory=list)
    first_sample_at: float | None = None
    far_end: FarEndCallback | None = None
    _stopped: bool = False

    async def play(
        self, audio: SynthesizedAudio, *, on_level: LevelCallback | None = None
    ) -> PlaybackReport:
        self._stopped = False
        if self.sample_rate is None:
            self.sample_rate = audio.sample_rate
        pcm = audio.pcm
        if audio.sample_rate != self.sample_rate:
            from app.audio.resample import resample
            from app.audio.wav import float_to_pcm16, pcm16_to_float

            pcm = float_to_pcm16(resample(pcm16_to_float(pcm), audio.sample_rate, self.sample_rate))
        samples = np.frombuffer(pcm, dtype="<i2")
        step = max(1, self.sample_rate * CHUNK_MS // 1000)
        played = 0
        for start in range(0, samples.size, step):
            if self._stopped:
                break
            chunk = samples[start : start + step]
            if self.first_sample_at is None and np.any(chunk):
                self.first_sample_at = time.perf_counter()
            self.chunks.append(chunk.tobytes())
            if self.far_end is not None:
                self.far_end(chunk, self.sample_rate)
            played += chunk.size
            if on_level is not None:
                on_level(chunk_level(chunk))
            if self.realtime:
                await asyncio.sleep(chunk.size / self.sample_rate)
        if on_level is not None:
            on_level(0.0)
        total_s = samples.size / self.sample_rate
        played_s = played / self.sample_rate
        heard = Heard.FULL if played >= samples.size else Heard.PARTIAL if played else Heard.NONE
        return PlaybackReport(heard, played_s, total_s)

    def stop(self) -> None:
        self._stopped = True

    @property
    def pcm(self) -> bytes:
        return b"".join(self.chunks)

    async def aclose(self) -> None:
        return None


class SoundDeviceSink:
    """Speech through sounddevice/PortAudio, written 40 ms at a time from a worker thread."""

    def __init__(self, device: str | int | None = None, volume: float = 1.0) -> None:
        self._device = device
        self._volume = volume
        self._stream: Any = None
        self._rate: int | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.far_end: FarEndCallback | None = None

    @staticmethod
    def check_available(device: str | int | None = None) -> str:
        """The output device's name, or `PlaybackError` in words when there is none.

        Under `portaudio_lock`: another thread re-reading the device list (the
        microphone's check re-initialises PortAudio) would otherwise make PortAudio
        look empty for a moment, and a speaker that is there be reported missing."""
        with portaudio_lock:
            try:
                import sounddevice as sd

                info = sd.query_devices(device, kind="output")
            except Exception as exc:
                reason = describe_missing_device("sound output device", "output", device, exc)
                raise PlaybackError(
                    f"{reason} Replies are shown but not heard; connect speakers or pick "
                    "a device in the settings."
                ) from exc
        return str(info["name"])

    def _open(self, rate: int) -> Any:
        import sounddevice as sd

        if self._stream is not None and self._rate == rate:
            return self._stream
        self._close_stream()
        try:
            # Never while the device list is being refreshed (PortAudio re-initialised).
            with portaudio_lock:
                stream = sd.OutputStream(
                    samplerate=rate,
                    channels=1,
                    dtype="int16",
                    device=self._device,
                    latency=OUTPUT_LATENCY_S,
                )
            stream.start()
        except Exception as exc:
            raise PlaybackError(f"The sound output device cannot be opened ({exc})") from exc
        self._stream, self._rate = stream, rate
        return stream

    def probe(self) -> None:
        """Open the device once and close it: `PlaybackError` if it cannot play."""
        with self._lock:
            try:
                import sounddevice as sd

                with portaudio_lock:
                    info = sd.query_devices(self._device, kind="output")
                self._open(round(float(info["default_samplerate"])) or 48_000)
            except PlaybackError:
                raise
            except Exception as exc:
                raise PlaybackError(f"The sound output device cannot be opened ({exc})") from exc
            finally:
                self._close_stream()

    def _close_stream(self) -> None:
        if self._stream is not None:
            try:
                self._stream.abort()
                self._stream.close()
            except Exception:
                log.debug("closing the output stream failed", exc_info=True)
        self._stream, self._rate = None, None

    def _play_sync(self, audio: SynthesizedAudio, on_level: LevelCallback | None) -> PlaybackReport:
        with self._lock:
            try:
                return self._write_all(audio, on_level)
            except PlaybackError:
                raise
            except Exception as exc:  # the device went away mid-sentence
                log.debug("playback failed", exc_info=True)
                self._close_stream()  # the next sentence opens it afresh
                raise PlaybackError(
                    "The sound output stopped working: the device may have been unplugged, "
                    f"or the sound system stopped ({exc})."
                ) from exc
            finally:
                if on_level is not None:
                    on_level(0.0)

    def _write_all(self, audio: SynthesizedAudio, on_level: LevelCallback | None) -> PlaybackReport:
        stream = self._open(audio.sample_rate)
        samples = np.frombuffer(audio.pcm, dtype="<i2")
        if self._volume != 1.0:
            samples = np.clip(samples.astype(np.float32) * self._volume, -32768, 32767).astype(
                "<i2"
            )
        step = max(1, audio.sample_rate * CHUNK_MS // 1000)
        piece = max(1, audio.sample_rate * WRITE_SLICE_MS // 1000)
        written = 0
        for start in range(0, samples.size, step):
            chunk = samples[start : start + step]
            if on_level is not None and not self._stop.is_set():
                on_level(chunk_level(chunk))
            for offset in range(0, chunk.size, piece):
                if self._stop.is_set():
                    break
                part = chunk[offset : offset + piece]
                # Written first: the device says whether it ran dry before this slice
                # (a busy machine), and then the canceller's reference starts again
                # where the slice really plays, not right after the last one.
                underflowed = stream.write(part.reshape(-1, 1))
                if self.far_end is not None:
                    self.far_end(part, audio.sample_rate, after_gap=bool(underflowed))
                written += part.size
            if self._stop.is_set():
                stream.abort()  # drop what is queued: silent at once
                stream.start()
                break
        total_s = samples.size / audio.sample_rate
        # What is still in the device buffer was not heard yet if we stopped.
        latency = float(getattr(stream, "latency", 0.0) or 0.0)
        played_s = max(0.0, written / audio.sample_rate - (latency if self._stop.is_set() else 0))
        if written >= samples.size and not self._stop.is_set():
            return PlaybackReport(Heard.FULL, total_s, total_s)
        return PlaybackReport(Heard.PARTIAL if played_s > 0 else Heard.NONE, played_s, total_s)

    async def play(
        self, audio: SynthesizedAudio, *, on_level: LevelCallback | None = None
    ) -> PlaybackReport:
        self._stop.clear()
        level: LevelCallback | None = None
        if on_level is not None:
            # Levels are reported on the event loop's thread, as `MemorySink` does:
            # listeners need not be thread-safe.
            loop = asyncio.get_running_loop()
            callback = on_level

            def post(value: float) -> None:
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(callback, value)

            level = post
        return await asyncio.to_thread(self._play_sync, audio, level)

    def stop(self) -> None:
        self._stop.set()

    async def aclose(self) -> None:
        self._stop.set()
        await asyncio.to_thread(self._close_locked)

    def _close_locked(self) -> None:
        with self._lock:
            self._close_stream()

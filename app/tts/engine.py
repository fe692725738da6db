"""The TTS engine protocol and its data types.

An engine turns one sentence into mono s16le PCM. `rate` is words per minute, the
pyttsx3 convention every setting uses; `NORMAL_RATE` (175) is each engine's own
normal pace, so neural engines turn it into a speed factor with `speed_for_rate`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

NORMAL_RATE = 175


class TTSError(Exception):
    """One sentence failed to synthesise; the message is for the user."""


class TTSUnavailableError(TTSError):
    """The engine cannot run on this machine; the message says what to install."""


@dataclass(slots=True, frozen=True)
class Voice:
    """A voice an engine offers. `languages` are BCP-47-style tags ("en-us"); empty when
    the engine does not say."""

    id: str
    name: str
    languages: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class SynthesizedAudio:
    """Mono s16le PCM at `sample_rate`."""

    pcm: bytes
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate if self.sample_rate else 0.0


@runtime_checkable
class TTSEngine(Protocol):
    """What the session needs from a speech engine.

    `voice=None` and `rate=None` mean the engine's configured defaults. Every failure
    to produce a sentence's audio is a `TTSError` whose message can be shown as is.
    """

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio: ...

    async def voices(self) -> list[Voice]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class LoadingTTSEngine(TTSEngine, Protocol):
    """An engine with something to get ready before its first sentence (a voice model
    to load, a speech program to start): the session loads it ahead, with the other
    models. An engine without it is ready as it is."""

    async def load(self) -> None: ...


@runtime_checkable
class StreamingTTSEngine(TTSEngine, Protocol):
    """An engine that can hand out a sentence's audio in pieces as they are ready.

    Every chunk has the same sample rate; an error after some chunks is still a
    `TTSError`. Call `stream_speech` to get chunks from any engine.
    """

    def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]: ...


async def stream_speech(
    engine: TTSEngine, text: str, voice: str | None = None, rate: int | None = None
) -> AsyncIterator[SynthesizedAudio]:
    """A sentence's audio in chunks: the engine's own `stream` where it has one, else
    the whole clip as one chunk."""
    if isinstance(engine, StreamingTTSEngine):
        async for chunk in engine.stream(text, voice, rate):
            yield chunk
        return
    yield await engine.synthesize(text, voice, rate)


def join_chunks(chunks: list[SynthesizedAudio]) -> SynthesizedAudio:
    """One clip from streamed chunks (all at one sample rate)."""
    if not chunks:
        raise TTSError("the speech engine produced no audio")
    return SynthesizedAudio(b"".join(c.pcm for c in chunks), chunks[0].sample_rate)


def speed_for_rate(rate: int | None, *, low: float, high: float) -> float:
    """Words per minute as a speed factor (175 wpm = 1.0), kept within what the engine takes."""
    if not rate:
        return 1.0
    return float(min(high, max(low, rate / NORMAL_RATE)))


def float_to_pcm(samples: np.ndarray) -> bytes:
    """Float samples in [-1, 1] as s16le bytes."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2").tobytes()


# Silence kept around a clip's sound: enough for a soft first consonant and a clause's
# natural pause, not the third of a second a neural voice pads each side with (hibari:
# 310-350 ms before, 430-610 ms after), which was heard as a slow start and long gaps.
LEAD_KEPT_S = 0.02
TAIL_KEPT_S = 0.2
_SILENT_BELOW_DB = -45.0  # below the clip's loudest 10 ms by this much: silence
_FLOOR = 60.0  # and never louder than this (s16 RMS): dither, not speech


def trim_silence(
    audio: SynthesizedAudio, lead_s: float = LEAD_KEPT_S, tail_s: float = TAIL_KEPT_S
) -> SynthesizedAudio:
    """`audio` without the silence before and after its sound beyond `lead_s` and
    `tail_s`; a clip with no sound is returned as it is."""
    samples = np.frombuffer(audio.pcm, dtype="<i2")
    frame = max(1, audio.sample_rate // 100)
    frames = len(samples) // frame
    if frames == 0:
        return audio
    blocks = samples[: frames * frame].astype(np.float32).reshape(frames, frame)
    rms = np.sqrt(np.mean(blocks * blocks, axis=1))
    peak = float(rms.max())
    threshold = max(_FLOOR, peak * 10 ** (_SILENT_BELOW_DB / 20))
    loud = np.nonzero(rms > threshold)[0]
    if peak <= _FLOOR or len(loud) == 0:
        return audio
    start = max(0, int(loud[0]) * frame - int(lead_s * audio.sample_rate))
    end = min(len(samples), (int(loud[-1]) + 1) * frame + int(tail_s * audio.sample_rate))
    if start == 0 and end == len(samples):
        return audio
    return SynthesizedAudio(samples[start:end].tobytes(), audio.sample_rate)

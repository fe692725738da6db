"""Where the user's voice comes from: the microphone, a WAV file, a list of chunks.

Every source yields 16 kHz s16le mono PCM chunks. The microphone callback never
blocks: it drops into a bounded queue and counts overruns.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from app.audio.wav import SAMPLE_RATE, read_wav_16k

log = logging.getLogger(__name__)


class MicrophoneUnavailable(Exception):
    """No microphone can be opened; the message says so in words."""


@runtime_checkable
class AudioSource(Protocol):
    def chunks(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class ChunkListSource:
    """Chunks from memory, optionally paced as a microphone would deliver them."""

    def __init__(self, chunks: Sequence[bytes], *, realtime: bool = False) -> None:
        self._chunks = list(chunks)
        self._realtime = realtime

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            if self._realtime:
                await asyncio.sleep(len(chunk) / 2 / SAMPLE_RATE)
            yield chunk

    async def aclose(self) -> None:
        return None


class WavFileSource(ChunkListSource):
    """A WAV file (any rate, mono or stereo) as 32 ms chunks, then `trailing_silence_s` of zeros."""

    def __init__(
        self, path: Path | str, *, realtime: bool = False, trailing_silence_s: float = 1.0
    ) -> None:
        pcm = read_wav_16k(path) + b"\0\0" * int(SAMPLE_RATE * trailing_silence_s)
        step = 1024
        super().__init__([pcm[i : i + step] for i in range(0, len(pcm), step)], realtime=realtime)


class MicrophoneSource:
    """The microphone through sounddevice at 16 kHz mono (PortAudio/PulseAudio convert rates)."""

    def __init__(self, device: str | int | None = None, *, queue_size: int = 200) -> None:
        self._device = device
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=queue_size)
        self._stream: Any = None
        self.overruns = 0

    @staticmethod
    def check_available(device: str | int | None = None) -> str:
        """The input device's name, or `MicrophoneUnavailable` in words."""
        try:
            import sounddevice as sd

            info = sd.query_devices(device, kind="input")
        except Exception as exc:
            raise MicrophoneUnavailable(
                f"No microphone was found ({exc}). Connect one, or type your messages."
            ) from exc
        return str(info["name"])

    def open(self) -> None:
        import sounddevice as sd

        loop = asyncio.get_running_loop()
        queue = self._queue

        def put(data: bytes) -> None:
            try:
                queue.put_nowait(data)
            except asyncio.QueueFull:
                self.overruns += 1
                if self.overruns in (1, 10, 100) or self.overruns % 1000 == 0:
                    log.warning("microphone queue overrun (%d so far)", self.overruns)

        def callback(indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
            if status:
                log.debug("microphone status: %s", status)
            loop.call_soon_threadsafe(put, bytes(indata))

        try:
            self._stream = sd.InputStream(
                samplerate=SAMPLE_RATE,
                channels=1,
                dtype="int16",
                blocksize=512,
                device=self._device,
                callback=callback,
            )
            self._stream.start()
        except Exception as exc:
            self._stream = None
            raise MicrophoneUnavailable(f"The microphone cannot be opened ({exc})") from exc

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._stream is None:
            self.open()
        while True:
            yield await self._queue.get()

    async def aclose(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            try:
                await asyncio.to_thread(stream.close)
            except Exception:
                log.debug("closing the microphone failed", exc_info=True)

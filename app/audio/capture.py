"""Where the user's voice comes from: the microphone, a WAV file, a list of chunks.

Every source yields 16 kHz s16le mono PCM chunks. The microphone callback never
blocks: it drops into a bounded queue and counts overruns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
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


def _device_names(kind: str) -> list[str]:
    """Names of the devices of `kind` ("input"/"output") PortAudio lists; [] when it cannot."""
    try:
        import sounddevice as sd

        return [str(d["name"]) for d in sd.query_devices() if d[f"max_{kind}_channels"] > 0]
    except Exception:
        return []


def describe_missing_device(what: str, kind: str, device: str | int | None, exc: Exception) -> str:
    """Why `device` cannot be used, in words; PortAudio's own wording only as a detail."""
    if isinstance(exc, OSError) and "PortAudio" in str(exc):
        return (
            f"Sound support is missing on this computer ({exc}); install PortAudio "
            "(libportaudio2 on Debian and Ubuntu)."
        )
    names = _device_names(kind)
    if not names:
        return f"No {what} was found on this computer."
    listed = ", ".join(repr(n) for n in names[:6]) + (", ..." if len(names) > 6 else "")
    if device is None:
        return f"There is no default {what} (found {listed})."
    return f"The {what} {device!r} was not found (found {listed}; {exc})."


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class MicrophoneSource:
    """The microphone through sounddevice at 16 kHz mono (PortAudio/PulseAudio convert rates).

    `chunks()` opens the device and yields 512-sample chunks. When the device goes
    away (unplugged, the sound server died) it raises `MicrophoneUnavailable`
    instead of waiting forever: PortAudio's `finished_callback` reports a stream
    that ended by itself, and a watchdog notices a stream that went silent, with no
    callback at all for `STALL_TIMEOUT_S` once sound has flowed, or for
    `FIRST_CHUNK_TIMEOUT_S` after opening (a sound server that hangs).
    `aclose()` ends a running `chunks()` normally.
    """

    STALL_TIMEOUT_S = 2.0  # a microphone delivers every 32 ms
    FIRST_CHUNK_TIMEOUT_S = 5.0  # some devices (Bluetooth) take a while to start
    CLOSE_TIMEOUT_S = 2.0

    def __init__(self, device: str | int | None = None, *, queue_size: int = 200) -> None:
        self._device = device
        self._queue_size = queue_size
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=queue_size)
        self._stream: Any = None
        self._closing = False
        self._lost: str | None = None
        self._pending_close: asyncio.Future[None] | None = None
        self.overruns = 0

    @staticmethod
    def check_available(device: str | int | None = None) -> str:
        """The input device's name, or `MicrophoneUnavailable` in words."""
        try:
            import sounddevice as sd

            info = sd.query_devices(device, kind="input")
        except Exception as exc:
            reason = describe_missing_device("microphone", "input", device, exc)
            raise MicrophoneUnavailable(
                f"{reason} Connect a microphone, or type your messages."
            ) from exc
        return str(info["name"])

    def open(self) -> None:
        """Open and start the input stream; call on the event loop's thread."""
        self._open(asyncio.get_running_loop())

    def _open(self, loop: asyncio.AbstractEventLoop) -> None:
        import sounddevice as sd

        # A fresh queue per stream: nothing stale from an earlier one is delivered.
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=self._queue_size)
        self._queue = queue
        self._closing = False
        self._lost = None

        def put(data: bytes) -> None:
            try:
                queue.put_nowait(data)
            except asyncio.QueueFull:
                self.overruns += 1
                if self.overruns in (1, 10, 100) or self.overruns % 1000 == 0:
                    log.warning("microphone queue overrun (%d so far)", self.overruns)

        def ended() -> None:
            if not self._closing and self._lost is None:
                self._lost = "The microphone stopped: its device went away"
            if queue.full():  # the end marker must get in; drop the oldest chunk
                queue.get_nowait()
            queue.put_nowait(None)

        def to_loop(fn: Any, *args: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
                loop.call_soon_threadsafe(fn, *args)

        def callback(indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
            if status:
                log.debug("microphone status: %s", status)
            to_loop(put, indata.tobytes())

        def finished() -> None:
            to_loop(ended)

        try:
            stream = sd.InputStream(
                samplerate=SAMPLE_RATE,
                channels=1,
                dtype="int16",
                blocksize=512,
                device=self._device,
                callback=callback,
                finished_callback=finished,
            )
        except Exception as exc:
            raise MicrophoneUnavailable(f"The microphone cannot be opened ({exc})") from exc
        try:
            stream.start()
        except Exception as exc:
            stream.close(ignore_errors=True)
            raise MicrophoneUnavailable(f"The microphone cannot be started ({exc})") from exc
        self._stream = stream

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._stream is None:
            # Opening talks to the sound server: off the event loop, so a hung one cannot
            # freeze the app.
            await asyncio.to_thread(self._open, asyncio.get_running_loop())
        queue = self._queue
        wait_s = self.FIRST_CHUNK_TIMEOUT_S
        while True:
            try:
                async with asyncio.timeout(wait_s):
                    chunk = await queue.get()
            except TimeoutError:
                if self._closing:
                    return
                self._lost = (
                    f"The microphone sent no sound for {wait_s:g} s; it may have been "
                    "unplugged, or the sound system stopped"
                )
                chunk = None
            if chunk is not None:
                wait_s = self.STALL_TIMEOUT_S
                yield chunk
                continue
            if self._closing or self._lost is None:
                return
            # Not awaited: closing a stream whose sound server hangs would hang too.
            self._close_stream()
            raise MicrophoneUnavailable(f"{self._lost}. Reconnect it, or type your messages.")

    def _close_stream(self) -> asyncio.Future[None] | None:
        """Close the stream on a daemon thread; the future resolves when it is closed."""
        stream, self._stream = self._stream, None
        if stream is None:
            return None
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def close() -> None:
            try:
                stream.close(ignore_errors=True)
            except Exception:
                log.debug("closing the microphone failed", exc_info=True)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, done)

        threading.Thread(target=close, name="microphone-close", daemon=True).start()
        self._pending_close = done
        return done

    async def aclose(self) -> None:
        self._closing = True
        self._close_stream()
        # Also a close begun when the device went away: PortAudio must not be shut down
        # (at exit) while a stream is still closing.
        done, self._pending_close = self._pending_close, None
        if done is not None and not done.done():
            try:
                await asyncio.wait_for(asyncio.shield(done), self.CLOSE_TIMEOUT_S)
            except TimeoutError:
                log.warning("the microphone did not close within %g s", self.CLOSE_TIMEOUT_S)
        # Wake a `chunks()` that is waiting, so it ends.
        if self._queue.full():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

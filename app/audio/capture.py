"""Where the user's voice comes from: the microphone, a WAV file, a list of chunks.

Every source yields 16 kHz s16le mono PCM chunks. The microphone is opened at its
own rate and channel count and converted in the stream's callback, which never
blocks: it drops 512-sample chunks into a bounded queue and counts overruns.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from app.audio.format import FRAME_BYTES, FRAME_SAMPLES, SAMPLE_RATE, SAMPLE_WIDTH, pcm_bytes
from app.audio.resample import StreamResampler
from app.audio.wav import read_wav_16k

log = logging.getLogger(__name__)


class MicrophoneUnavailable(Exception):
    """No microphone can be opened; the message says so in words."""


@runtime_checkable
class AudioSource(Protocol):
    def chunks(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class CapturedSource(Protocol):
    """A source that knows when its chunks were captured (a microphone does; a file does
    not): `captured_at` is the perf_counter() moment the last sample of the chunk
    `chunks()` last yielded was heard, so a listener that fell behind (a busy machine)
    still knows what the room held at that moment."""

    @property
    def captured_at(self) -> float | None: ...


def heard_at(source: object, now: float) -> float:
    """When the chunk `source` just gave was heard: `now`, or earlier when the source
    knows it was captured earlier."""
    at = source.captured_at if isinstance(source, CapturedSource) else None
    return now if at is None else min(now, at)


class ChunkListSource:
    """Chunks from memory, optionally paced as a microphone would deliver them."""

    def __init__(self, chunks: Sequence[bytes], *, realtime: bool = False) -> None:
        self._chunks = list(chunks)
        self._realtime = realtime

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            if self._realtime:
                await asyncio.sleep(len(chunk) / SAMPLE_WIDTH / SAMPLE_RATE)
            yield chunk

    async def aclose(self) -> None:
        return None


class WavFileSource(ChunkListSource):
    """A WAV file (any rate, mono or stereo) as 32 ms chunks, then `trailing_silence_s` of zeros."""

    def __init__(
        self, path: Path | str, *, realtime: bool = False, trailing_silence_s: float = 1.0
    ) -> None:
        pcm = read_wav_16k(path) + bytes(pcm_bytes(trailing_silence_s))
        step = FRAME_BYTES
        super().__init__([pcm[i : i + step] for i in range(0, len(pcm), step)], realtime=realtime)


def device_names(kind: str) -> list[str]:
    """Names of the devices of `kind` ("input"/"output") PortAudio lists; [] when it cannot."""
    try:
        import sounddevice as sd

        with portaudio_lock:  # not while another thread re-reads the list
            devices = sd.query_devices()
        return [str(d["name"]) for d in devices if d[f"max_{kind}_channels"] > 0]
    except Exception:
        return []


def describe_missing_device(what: str, kind: str, device: str | int | None, exc: Exception) -> str:
    """Why `device` cannot be used, in words; PortAudio's own wording only as a detail."""
    if isinstance(exc, OSError) and "PortAudio" in str(exc):
        return (
            f"Sound support is missing on this computer ({exc}); install PortAudio "
            "(libportaudio2 on Debian and Ubuntu)."
        )
    names = device_names(kind)
    if not names:
        return f"No {what} was found on this computer."
    listed = ", ".join(repr(n) for n in names[:6]) + (", ..." if len(names) > 6 else "")
    if device is None:
        return f"There is no default {what} (found {listed})."
    return f"The {what} {device!r} was not found (found {listed}; {exc})."


# ----- PortAudio's device list -------------------------------------------------------
#
# PortAudio lists the devices once, when it is initialised: a microphone plugged in
# later is not in the list, and one unplugged still is. The only refresh is to
# terminate and re-initialise it, and `Pa_Terminate` closes every open stream under
# its owner's feet (its next call on that stream would crash). So the rule is: the
# list is re-read only while no sounddevice stream of this process is open, and
# never while one is being opened or closed.
#
# * Open streams are counted by asking the garbage collector for the live instances
#   of sounddevice's stream classes whose PortAudio pointer is not NULL (sounddevice
#   sets it to NULL in `close()`). That counts ours and anyone else's, such as the
#   speaker's stream that playback keeps open between sentences, and it cannot drift
#   the way a hand-kept counter can when an owner forgets to close.
# * `portaudio_lock` is held while the count is taken and PortAudio re-initialised,
#   and while this module creates a stream, so no stream of ours is half-made then.
#   (Closing needs no lock: the pointer stays set until `Pa_CloseStream` returns.)
#   Other code that creates streams should hold it too; code that does not can only
#   collide by creating one during the ~50 ms of a refresh, and refreshes happen
#   only in `MicrophoneSource.check_available` (at start, and while the microphone
#   is missing).

portaudio_lock = threading.RLock()
REFRESH_LOCK_TIMEOUT_S = 1.0


def _stream_classes(sd: Any) -> list[type]:
    found: list[type] = []
    pending: list[type] = [sd._StreamBase]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def open_sounddevice_streams() -> int:
    """How many sounddevice streams of this process PortAudio holds open."""
    try:
        import sounddevice as sd
    except Exception:
        return 0
    live = 0
    for obj in gc.get_referrers(*_stream_classes(sd)):
        if isinstance(obj, sd._StreamBase):
            ptr = getattr(obj, "_ptr", None)
            if ptr is not None and ptr != sd._ffi.NULL:
                live += 1
    return live


def refresh_device_list() -> bool:
    """Re-read the devices (re-initialise PortAudio) if no stream is open.

    True when the list was re-read; False when a stream is open (the cached list
    stays) or sounddevice is missing.
    """
    try:
        import sounddevice as sd
    except Exception:
        return False
    # Bounded: a stream being opened on a hung sound server holds the lock.
    if not portaudio_lock.acquire(timeout=REFRESH_LOCK_TIMEOUT_S):
        log.debug("device list not refreshed: a sound stream is being opened")
        return False
    try:
        if sd._initialized and open_sounddevice_streams():
            log.debug("device list not refreshed: a sound stream is open")
            return False
        if sd._initialized:
            sd._terminate()
        sd._initialize()  # if this raises, the next refresh initialises it again
    finally:
        portaudio_lock.release()
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class MicrophoneSource:
    """The microphone through sounddevice, delivered as 16 kHz mono s16le.

    The stream is opened at the device's own default rate and up to two of its
    channels (or `samplerate`/`channels` when given), as the device delivers best;
    the callback mixes to mono, resamples to 16 kHz (`StreamResampler`, soxr) and
    queues 512-sample chunks without ever blocking: a full queue drops the chunk and
    counts it in `overruns` (logged at the 1st, 10th, 100th and every 1000th), and
    a failing conversion is counted in `errors`, never raised in PortAudio's thread.

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
    CHUNK_SAMPLES = FRAME_SAMPLES
    MAX_CHANNELS = 2

    def __init__(
        self,
        device: str | int | None = None,
        *,
        queue_size: int = 200,
        samplerate: int | None = None,
        channels: int | None = None,
    ) -> None:
        self._device = device
        self._queue_size = queue_size
        self._queue: asyncio.Queue[tuple[bytes, float] | None]
        self._queue = asyncio.Queue(maxsize=queue_size)
        self._stream: Any = None
        self._closing = False
        self._lost: str | None = None
        self._pending_close: asyncio.Future[None] | None = None
        self._want_rate = samplerate
        self._want_channels = channels
        self.overruns = 0
        self.errors = 0
        self.samplerate: int | None = None  # the device's rate and channels, once open
        # perf_counter() when the last sample of the chunk `chunks()` last yielded was
        # captured: behind the clock by as much as the listener lags behind the room.
        self.captured_at: float | None = None
        self.channels: int | None = None

    @staticmethod
    def check_available(device: str | int | None = None) -> str:
        """The input device's name, or `MicrophoneUnavailable` in words.

        The device list is re-read first when no sound stream is open, so a
        microphone plugged in (or out) since the app started is seen as it is.
        """
        try:
            import sounddevice as sd

            refresh_device_list()
            with portaudio_lock:  # not while another thread re-reads the list
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

    def _format(self, sd: Any) -> tuple[int, int]:
        """The rate and channel count to open the device with."""
        rate, channels = self._want_rate, self._want_channels
        if rate is None or channels is None:
            info = sd.query_devices(self._device, kind="input")
            if rate is None:
                rate = round(float(info["default_samplerate"])) or SAMPLE_RATE
            if channels is None:
                channels = max(1, min(self.MAX_CHANNELS, int(info["max_input_channels"])))
        return rate, channels

    def _open(self, loop: asyncio.AbstractEventLoop) -> None:
        import sounddevice as sd

        # A fresh queue per stream: nothing stale from an earlier one is delivered.
        queue: asyncio.Queue[tuple[bytes, float] | None]
        queue = asyncio.Queue(maxsize=self._queue_size)
        self._queue = queue
        self._closing = False
        self._lost = None

        def put(data: bytes, captured_at: float) -> None:
            try:
                queue.put_nowait((data, captured_at))
            except asyncio.QueueFull:
                self.overruns += 1
                if self.overruns in (1, 10, 100) or self.overruns % 1000 == 0:
                    log.warning("microphone queue overrun (%d so far)", self.overruns)

        def failed(exc: BaseException) -> None:
            if self.errors in (1, 10, 100) or self.errors % 1000 == 0:
                log.warning(
                    "microphone audio could not be converted (%d so far): %r", self.errors, exc
                )

        def ended() -> None:
            if not self._closing and self._lost is None:
                self._lost = "The microphone stopped: its device went away"
            if queue.full():  # the end marker must get in; drop the oldest chunk
                queue.get_nowait()
            queue.put_nowait(None)

        def to_loop(fn: Any, *args: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
                loop.call_soon_threadsafe(fn, *args)

        try:
            with portaudio_lock:  # not while another thread re-reads the device list
                rate, channels = self._format(sd)
        except Exception as exc:
            raise MicrophoneUnavailable(f"The microphone cannot be opened ({exc})") from exc
        # soxr hands its output out in blocks: at 44.1 or 48 kHz the chunks come about
        # 22 ms (at most 40) after the sound; at 16 kHz nothing is resampled.
        resampler = StreamResampler(rate, SAMPLE_RATE)
        step = self.CHUNK_SAMPLES
        carry = np.zeros(0, dtype=np.float32)

        def callback(indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
            nonlocal carry
            now = time.perf_counter()  # the block's last sample was captured about now
            try:
                mono = indata[:, 0] if indata.shape[1] == 1 else indata.mean(axis=1)
                out = resampler.push(mono)
                if carry.size:
                    out = np.concatenate([carry, out])
                whole = out.size - out.size % step
                if whole:
                    pcm = np.clip(np.rint(out[:whole] * 32768.0), -32768, 32767).astype("<i2")
                    for start in range(0, whole, step):
                        ahead_s = (whole - start - step) / SAMPLE_RATE  # later samples
                        to_loop(put, pcm[start : start + step].tobytes(), now - ahead_s)
                carry = out[whole:]
            except Exception as exc:  # never into PortAudio's thread: that ends the stream
                self.errors += 1
                to_loop(failed, exc)

        def finished() -> None:
            to_loop(ended)

        if not portaudio_lock.acquire(timeout=self.FIRST_CHUNK_TIMEOUT_S):
            raise MicrophoneUnavailable(
                "The microphone cannot be opened: the sound system does not answer"
            )
        try:
            try:
                stream = sd.InputStream(
                    samplerate=rate,
                    channels=channels,
                    dtype="float32",
                    blocksize=max(1, round(step * rate / SAMPLE_RATE)),
                    device=self._device,
                    callback=callback,
                    finished_callback=finished,
                )
            except Exception as exc:
                raise MicrophoneUnavailable(f"The microphone cannot be opened ({exc})") from exc
        finally:
            portaudio_lock.release()
        try:
            stream.start()
        except Exception as exc:
            stream.close(ignore_errors=True)
            raise MicrophoneUnavailable(f"The microphone cannot be started ({exc})") from exc
        self.samplerate, self.channels = rate, channels
        log.info("microphone %r open at %d Hz, %d channel(s)", self._device, rate, channels)
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
                self.captured_at = chunk[1]
                yield chunk[0]
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
                # Not under `portaudio_lock`: a hung sound server would hang it for all.
                # Until it returns, the stream's pointer is set, so no refresh happens.
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

"""pyttsx3 (espeak-ng, SAPI5, NSSS) on one dedicated thread that owns the engine.

The engine is never used with `say()`: each sentence is saved to a file and read
back as PCM. A watchdog abandons an engine that stops answering (the known
`runAndWait` hangs) and starts a fresh one on a new thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, TextIO

from app.tts.engine import SynthesizedAudio, TTSError, TTSUnavailableError, Voice

log = logging.getLogger(__name__)


class _QuietStream:
    """A stdout that drops pyttsx3's "Audio saved to <our temp file>" lines.

    The espeak driver prints them from espeak's own callback thread, so the
    filter goes by content (our private temp folder), not by thread.
    """

    def __init__(self, inner: TextIO, marker: str) -> None:
        self.inner = inner
        self.markers = {marker}
        self._drop_newline = False

    def write(self, text: str) -> int:
        if text.startswith("Audio saved to ") and any(m in text for m in self.markers):
            self._drop_newline = not text.endswith("\n")
            return len(text)
        if self._drop_newline and text == "\n":
            self._drop_newline = False
            return len(text)
        self._drop_newline = False
        return self.inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _quiet_stdout(marker: str) -> None:
    stream = sys.stdout
    if stream is None:  # windowed builds have no stdout
        return
    if isinstance(stream, _QuietStream):
        stream.markers.add(marker)
    else:
        sys.stdout = _QuietStream(stream, marker)


def _read_audio_file(path: Path) -> SynthesizedAudio:
    """Read what the engine wrote. macOS writes AIFF whatever the extension says."""
    import wave

    import numpy as np

    blob = path.read_bytes()
    if not blob:
        raise TTSError("the speech engine wrote no audio")
    if blob[:4] == b"FORM":
        import aifc

        with aifc.open(str(path)) as aiff:
            rate, channels, width = aiff.getframerate(), aiff.getnchannels(), aiff.getsampwidth()
            raw = aiff.readframes(aiff.getnframes())
        data = np.frombuffer(raw, dtype=">i2" if width == 2 else ">i4")
    else:
        with wave.open(str(path)) as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            raw = wav.readframes(wav.getnframes())
        data = np.frombuffer(raw, dtype="<i2" if width == 2 else "<i4")
    if width == 4:
        data = (data >> 16).astype(np.int16)
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return SynthesizedAudio(data.astype("<i2").tobytes(), rate)


class Pyttsx3Engine:
    """`TTSEngine` over pyttsx3. Jobs run in order on the engine's own thread."""

    def __init__(
        self, *, timeout_s: float = 15.0, voice: str | None = None, rate: int = 175
    ) -> None:
        self._timeout_s = timeout_s
        self._default_voice = voice
        self._default_rate = rate
        self._jobs: queue.Queue[tuple[Any, concurrent.futures.Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._tmpdir = Path(tempfile.mkdtemp(prefix="companion-tts-"))
        self._counter = 0
        self._start_lock = threading.Lock()
        self._closed = False
        _quiet_stdout(str(self._tmpdir))

    def _ensure_thread(self) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._jobs = queue.Queue()
                self._thread = threading.Thread(
                    target=self._run, args=(self._jobs,), name="tts-pyttsx3", daemon=True
                )
                self._thread.start()

    def _run(self, jobs: queue.Queue[tuple[Any, concurrent.futures.Future[Any]] | None]) -> None:
        engine: Any = None
        while True:
            item = jobs.get()
            if item is None:
                break
            job, future = item
            if future.cancelled():
                continue
            try:
                if engine is None:
                    engine = self._init_engine()
                future.set_result(job(engine))
            except BaseException as exc:
                if not future.cancelled():
                    future.set_exception(exc)

    @staticmethod
    def _init_engine() -> Any:
        try:
            import pyttsx3

            return pyttsx3.init()
        except Exception as exc:
            raise TTSUnavailableError(
                f"The system speech engine could not start ({exc}). On Linux install "
                "espeak-ng (sudo apt-get install espeak-ng)."
            ) from exc

    async def _submit(self, job: Any) -> Any:
        if self._closed:
            raise TTSError("the speech engine is closed")
        self._ensure_thread()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((job, future))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
        except TimeoutError:
            # The engine hung: abandon its thread (daemon) and start afresh next time.
            log.warning("pyttsx3 did not answer in %.0f s; restarting the engine", self._timeout_s)
            with self._start_lock:
                self._thread = None
            raise TTSError("the speech engine stopped answering; it has been restarted") from None

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        if not text.strip():
            raise TTSError("nothing to say")
        self._counter += 1
        path = self._tmpdir / f"s{self._counter}.wav"
        voice = voice or self._default_voice
        rate = rate or self._default_rate

        def job(engine: Any) -> SynthesizedAudio:
            if voice:
                engine.setProperty("voice", voice)
            engine.setProperty("rate", rate)
            engine.save_to_file(text, str(path))
            engine.runAndWait()
            try:
                return _read_audio_file(path)
            except FileNotFoundError:
                raise TTSError("the speech engine wrote no audio file") from None
            finally:
                path.unlink(missing_ok=True)

        result: SynthesizedAudio = await self._submit(job)
        return result

    async def voices(self) -> list[Voice]:
        def job(engine: Any) -> list[Voice]:
            found = []
            for v in engine.getProperty("voices"):
                langs = tuple(
                    lang.decode("utf-8", "ignore") if isinstance(lang, bytes) else str(lang)
                    for lang in (getattr(v, "languages", None) or [])
                )
                found.append(Voice(id=str(v.id), name=str(v.name), languages=langs))
            return found

        result: list[Voice] = await self._submit(job)
        return result

    async def aclose(self) -> None:
        self._closed = True
        if self._thread is not None and self._thread.is_alive():
            self._jobs.put(None)
            await asyncio.to_thread(self._thread.join, 2.0)
        for leftover in self._tmpdir.glob("*"):
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self._tmpdir.rmdir()

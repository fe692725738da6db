"""The system voice (espeak-ng, SAPI5, NSSS via pyttsx3) on one thread that owns it.

Never `say()`: each sentence becomes PCM. On Linux that is libespeak-ng through
pyttsx3's ctypes binding in synchronous mode (pyttsx3's own espeak driver loses
audio, see `_EspeakBackend`); elsewhere pyttsx3 saves to a file that is read back
(AIFF on macOS whatever the extension). A watchdog abandons an engine that stops
answering (the known `runAndWait` hang) and starts a fresh one on a new thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
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


Job = Any  # a callable taking the pyttsx3 engine


class _EngineOwner:
    """The one thread that owns pyttsx3's engine.

    The drivers wrap process-wide singletons (libespeak keeps one callback, SAPI5
    and NSSS want one owning thread), so there is exactly one owner per process,
    shared by every `Pyttsx3Engine`; it lives as long as the process.
    """

    _current: _EngineOwner | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.jobs: queue.Queue[tuple[Job, concurrent.futures.Future[Any]]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="tts-pyttsx3", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> _EngineOwner:
        with cls._lock:
            if cls._current is None or not cls._current.thread.is_alive():
                cls._current = cls()
            return cls._current

    @classmethod
    def abandon(cls, owner: _EngineOwner) -> None:
        """The owner hung: the next job starts a new thread with a new engine."""
        with cls._lock:
            if cls._current is owner:
                cls._current = None

    def _run(self) -> None:
        engine: Any = None
        while True:
            job, future = self.jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                if engine is None:
                    engine = _new_engine()
                future.set_result(job(engine))
            except BaseException as exc:
                future.set_exception(exc)


class _EspeakBackend:
    """Linux: libespeak-ng through pyttsx3's own ctypes binding, in synchronous mode.

    pyttsx3's espeak driver runs espeak asynchronously and polls for the end every
    10 ms from a command queue that its callback thread also pumps; measured here,
    about one sentence in six came back empty, and the last buffer of the others was
    dropped. Synchronous mode returns from `Synth` with every sample delivered.
    """

    _sample_rate: int | None = None

    def __init__(self) -> None:
        from pyttsx3.drivers import _espeak

        self._espeak = _espeak
        if _EspeakBackend._sample_rate is None:  # libespeak initialises once per process
            rate = _espeak.Initialize(_espeak.AUDIO_OUTPUT_SYNCHRONOUS, 0)
            if rate <= 0:
                raise TTSUnavailableError(
                    "espeak-ng could not start; install it with: sudo apt-get install espeak-ng"
                )
            _EspeakBackend._sample_rate = int(rate)
        self.sample_rate = _EspeakBackend._sample_rate
        self._chunks: list[bytes] = []
        self._callback = _espeak.SetSynthCallback(self._on_samples)
        self._voice: str | None = None

    def _on_samples(self, wav: Any, numsamples: int, events: Any) -> int:
        if numsamples > 0:
            self._chunks.append(ctypes.string_at(wav, numsamples * 2))
        return 0

    def synthesize(self, text: str, voice: str | None, rate: int) -> SynthesizedAudio:
        e = self._espeak
        if voice and voice != self._voice:
            if e.SetVoiceByName(voice.encode("utf-8")) != 0:
                raise TTSError(f"espeak-ng has no voice called {voice!r}")
            self._voice = voice
        e.SetParameter(e.RATE, int(rate), 0)
        self._chunks = []
        if e.Synth(text, flags=e.CHARS_UTF8 | e.ENDPAUSE) != 0:
            raise TTSError("espeak-ng refused the sentence")
        e.Synchronize()
        return SynthesizedAudio(b"".join(self._chunks), self.sample_rate)

    def voices(self) -> list[Voice]:
        found = []
        for v in self._espeak.ListVoices(None):
            lang = v.languages[1:].decode("utf-8", "ignore") if v.languages else ""
            found.append(
                Voice(
                    id=v.identifier.decode("utf-8", "ignore").lower(),
                    name=v.name.decode("utf-8", "ignore"),
                    languages=(lang,) if lang else (),
                )
            )
        return found


class _Pyttsx3FileBackend:
    """Windows (SAPI5) and macOS (NSSS): pyttsx3's `save_to_file` + `runAndWait`."""

    def __init__(self, tmpdir: Path) -> None:
        try:
            import pyttsx3.engine

            # Not pyttsx3.init(): it hands back a cached engine, even a hung one.
            self._engine: Any = pyttsx3.engine.Engine()
        except Exception as exc:
            raise TTSUnavailableError(f"The system speech engine could not start ({exc}).") from exc
        self._tmpdir = tmpdir
        _quiet_stdout(str(tmpdir))
        self._counter = 0

    def synthesize(self, text: str, voice: str | None, rate: int) -> SynthesizedAudio:
        self._counter += 1
        path = self._tmpdir / f"s{self._counter}.wav"
        if voice:
            self._engine.setProperty("voice", voice)
        self._engine.setProperty("rate", rate)
        self._engine.save_to_file(text, str(path))
        self._engine.runAndWait()
        try:
            return _read_audio_file(path)
        except FileNotFoundError:
            raise TTSError("the speech engine wrote no audio file") from None
        finally:
            path.unlink(missing_ok=True)

    def voices(self) -> list[Voice]:
        found = []
        for v in self._engine.getProperty("voices"):
            langs = tuple(
                lang.decode("utf-8", "ignore") if isinstance(lang, bytes) else str(lang)
                for lang in (getattr(v, "languages", None) or [])
            )
            found.append(Voice(id=str(v.id), name=str(v.name), languages=langs))
        return found


def _new_engine() -> Any:
    if sys.platform.startswith("linux"):
        try:
            return _EspeakBackend()
        except (OSError, ImportError, AttributeError) as exc:
            raise TTSUnavailableError(
                f"espeak-ng is not available ({exc}); install it with: "
                "sudo apt-get install espeak-ng"
            ) from exc
    return _Pyttsx3FileBackend(Path(tempfile.mkdtemp(prefix="companion-tts-")))


class Pyttsx3Engine:
    """`TTSEngine` over pyttsx3. Jobs run in order on the process's engine thread."""

    def __init__(
        self, *, timeout_s: float = 15.0, voice: str | None = None, rate: int = 175
    ) -> None:
        self._timeout_s = timeout_s
        self._default_voice = voice
        self._default_rate = rate
        self._closed = False

    async def _submit(self, job: Job) -> Any:
        if self._closed:
            raise TTSError("the speech engine is closed")
        owner = _EngineOwner.get()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        owner.jobs.put((job, future))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
        except TimeoutError:
            # The engine hung (pyttsx3's known runAndWait hang): leave its daemon thread
            # behind and let the next sentence start a fresh one.
            log.warning("the speech engine hung for %.0f s; restarting it", self._timeout_s)
            _EngineOwner.abandon(owner)
            raise TTSError("the speech engine stopped answering; it has been restarted") from None

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        if not text.strip():
            raise TTSError("nothing to say")
        chosen_voice = voice or self._default_voice
        chosen_rate = rate or self._default_rate

        def job(engine: Any) -> SynthesizedAudio:
            audio: SynthesizedAudio = engine.synthesize(text, chosen_voice, chosen_rate)
            if not audio.pcm:
                raise TTSError("the speech engine produced no audio")
            return audio

        result: SynthesizedAudio = await self._submit(job)
        return result

    async def voices(self) -> list[Voice]:
        def job(engine: Any) -> list[Voice]:
            found: list[Voice] = engine.voices()
            return found

        result: list[Voice] = await self._submit(job)
        return result

    async def aclose(self) -> None:
        """This handle is done; the shared engine thread stays for the process."""
        self._closed = True

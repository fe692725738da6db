"""The system voice (espeak-ng, SAPI5, NSSS via pyttsx3) on one thread that owns it.

Never `say()`: each sentence becomes PCM. On Linux that is libespeak-ng through
pyttsx3's ctypes binding in synchronous mode (pyttsx3's own espeak driver loses
audio, see `_EspeakBackend`); elsewhere pyttsx3 saves to a file that is read back
(AIFF on macOS whatever the extension). A watchdog abandons an engine thread that
stops answering (the known `runAndWait` hang) and moves the sentences queued behind
it to a fresh thread with a fresh engine.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import ctypes
import logging
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from app.tts.audio_files import decode_audio
from app.tts.engine import (
    NORMAL_RATE,
    SynthesizedAudio,
    TTSError,
    TTSUnavailableError,
    Voice,
    trim_silence,
)
from app.tts.mandarin import (
    PINYIN_PACE,
    PINYIN_PITCH,
    PINYIN_VOICE,
    PINYIN_WORD_GAP,
    espeak_parts,
)

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
    return decode_audio(path.read_bytes())


@dataclass(eq=False)
class _Job:
    """One call into the engine. `owner` is the thread it is queued on (it moves when
    that thread is abandoned); `started_at` (monotonic) is set when the owner begins it."""

    run: Callable[[Any], Any]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    owner: _EngineOwner | None = None
    started_at: float | None = None


class _EngineOwner:
    """The one thread that owns pyttsx3's engine.

    The drivers wrap process-wide singletons (libespeak keeps one callback, SAPI5
    and NSSS want one owning thread), so there is exactly one live owner per process,
    shared by every `Pyttsx3Engine`. An owner that hangs is abandoned (its daemon
    thread is left behind) and the next one starts a new engine.
    """

    _current: _EngineOwner | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: collections.deque[_Job] = collections.deque()
        self.busy: _Job | None = None
        self.abandoned = False
        self.thread = threading.Thread(target=self._run, name="tts-pyttsx3", daemon=True)
        self.thread.start()

    @classmethod
    def submit(cls, job: _Job) -> None:
        with cls._lock:
            cls._queue_locked([job])

    @classmethod
    def _queue_locked(cls, jobs: list[_Job]) -> None:
        if cls._current is None or not cls._current.thread.is_alive():
            cls._current = cls()
        owner = cls._current
        with owner._cond:
            for job in jobs:
                job.owner = owner
                owner._pending.append(job)
            owner._cond.notify()

    @classmethod
    def abandon_if_hung(cls, owner: _EngineOwner, job: _Job) -> bool:
        """Abandon `owner` if it is still busy with `job`, and hand its queued jobs, in
        order, to a fresh owner. False when the job has finished meanwhile."""
        with cls._lock:
            with owner._cond:
                if owner.busy is not job or owner.abandoned:
                    return owner.abandoned
                owner.abandoned = True
                queued = list(owner._pending)
                owner._pending.clear()
                owner._cond.notify()
            if cls._current is owner:
                cls._current = None
            if queued:
                cls._queue_locked(queued)
        return True

    def _next_job(self) -> _Job | None:
        with self._cond:
            while True:
                while not self._pending and not self.abandoned:
                    self._cond.wait()
                if self.abandoned:
                    return None
                job = self._pending.popleft()
                if job.future.set_running_or_notify_cancel():  # False: its waiter gave up
                    job.started_at = time.monotonic()
                    self.busy = job
                    return job

    def _run(self) -> None:
        engine: Any = None
        while (job := self._next_job()) is not None:
            try:
                if engine is None:
                    engine = _new_engine()
                job.future.set_result(job.run(engine))
            except BaseException as exc:
                job.future.set_exception(exc)
            finally:
                with self._cond:
                    self.busy = None


_WORDGAP = 7  # espeak-ng's espeakWORDGAP parameter (pyttsx3's binding predates it)
_NORMAL_PITCH = 50  # espeak-ng's own default


class _EspeakBackend:
    """Linux: libespeak-ng through pyttsx3's own ctypes binding, in synchronous mode.

    pyttsx3's espeak driver runs espeak asynchronously and polls for the end every
    10 ms from a command queue that its callback thread also pumps; measured here,
    about one sentence in six came back empty, and the last buffer of the others was
    dropped. Synchronous mode returns from `Synth` with every sample delivered.

    libespeak is one per process, so calls into it take a process-wide lock: a thread
    the watchdog abandoned that later wakes up cannot talk over the fresh one.
    """

    _sample_rate: int | None = None
    _voice: str | None = None  # the library's current voice, like the library one per process
    _listener: _EspeakBackend | None = None  # whose callback the library calls
    _library_lock = threading.Lock()
    _lock_wait_s = 10.0

    def __init__(self) -> None:
        from pyttsx3.drivers import _espeak

        self._espeak = _espeak
        with self._locked():
            if _EspeakBackend._sample_rate is None:  # libespeak initialises once per process
                rate = _espeak.Initialize(_espeak.AUDIO_OUTPUT_SYNCHRONOUS, 0)
                if rate <= 0:
                    raise TTSUnavailableError(
                        "espeak-ng could not start; install it with: sudo apt-get install espeak-ng"
                    )
                _EspeakBackend._sample_rate = int(rate)
        self.sample_rate = _EspeakBackend._sample_rate
        self._chunks: list[bytes] = []

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if not self._library_lock.acquire(timeout=self._lock_wait_s):
            raise TTSError("espeak-ng is still busy with a sentence that stopped answering")
        try:
            yield
        finally:
            self._library_lock.release()

    def _on_samples(self, wav: Any, numsamples: int, events: Any) -> int:
        if numsamples > 0:
            self._chunks.append(ctypes.string_at(wav, numsamples * 2))
        return 0

    def synthesize(self, text: str, voice: str | None, rate: int) -> SynthesizedAudio:
        """`text` in `voice`; a Chinese sentence as pinyin run by run (`app.tts.mandarin`)."""
        e = self._espeak
        parts = espeak_parts(text, voice)
        with self._locked():
            if _EspeakBackend._listener is not self:  # a newer backend may have taken it
                e.SetSynthCallback(self._on_samples)
                _EspeakBackend._listener = self
            self._chunks = []
            for index, (part, part_voice) in enumerate(parts):
                self._use_voice(part_voice or "en")
                pinyin = part_voice == PINYIN_VOICE
                e.SetParameter(e.RATE, round(rate * (PINYIN_PACE if pinyin else 1)), 0)
                e.SetParameter(_WORDGAP, PINYIN_WORD_GAP if pinyin else 0, 0)
                e.SetParameter(e.PITCH, PINYIN_PITCH if pinyin else _NORMAL_PITCH, 0)
                last = index == len(parts) - 1
                if e.Synth(part, flags=e.CHARS_UTF8 | (e.ENDPAUSE if last else 0)) != 0:
                    raise TTSError("espeak-ng refused the sentence")
                e.Synchronize()
            return SynthesizedAudio(b"".join(self._chunks), self.sample_rate)

    def _use_voice(self, wanted: str) -> None:
        e = self._espeak
        if wanted != _EspeakBackend._voice:
            if e.SetVoiceByName(wanted.encode("utf-8")) != 0:
                raise TTSError(f"espeak-ng has no voice called {wanted!r}")
            _EspeakBackend._voice = wanted

    def voices(self) -> list[Voice]:
        with self._locked():
            listed = self._espeak.ListVoices(None)
            found = []
            for v in listed:
                # `languages` is a priority byte then the tag; ctypes stops at the first NUL
                lang = v.languages[1:].decode("utf-8", "ignore").lower() if v.languages else ""
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
                (lang.decode("utf-8", "ignore") if isinstance(lang, bytes) else str(lang))
                .lstrip("\x05")
                .replace("_", "-")
                .lower()
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
    """`TTSEngine` over pyttsx3. Jobs run in order on the process's engine thread.

    `timeout_s` is how long one sentence may take on the engine thread before the
    watchdog gives up on that thread. `before_sentence` runs on the engine thread
    before each sentence, with its text (tests use it to force a hang).
    """

    def __init__(
        self,
        *,
        timeout_s: float = 15.0,
        voice: str | None = None,
        rate: int = NORMAL_RATE,
        before_sentence: Callable[[str], None] | None = None,
    ) -> None:
        self._timeout_s = timeout_s
        self._default_voice = voice
        self._default_rate = rate
        self._before_sentence = before_sentence
        self._closed = False

    async def load(self) -> None:
        """Start the engine thread and its engine ahead of the first sentence."""
        await self._submit(lambda engine: None)

    async def _submit(self, run: Callable[[Any], Any]) -> Any:
        if self._closed:
            raise TTSError("the speech engine is closed")
        job = _Job(run)
        _EngineOwner.submit(job)
        waiter = asyncio.wrap_future(job.future)
        try:
            while True:
                done, _ = await asyncio.wait({waiter}, timeout=self._next_check(job))
                if done:
                    return waiter.result()
                owner = job.owner
                busy = owner.busy if owner is not None else None
                if owner is None or busy is None or busy.started_at is None:
                    continue
                if time.monotonic() - busy.started_at < self._timeout_s:
                    continue
                if _EngineOwner.abandon_if_hung(owner, busy):
                    log.warning("the speech engine hung for %.0f s; restarting it", self._timeout_s)
                if busy is job:
                    raise TTSError("the speech engine stopped answering; it has been restarted")
        except asyncio.CancelledError:
            job.future.cancel()  # still queued: never run it
            raise

    def _next_check(self, job: _Job) -> float:
        """Seconds until the job its owner is on would count as hung."""
        owner = job.owner
        busy = owner.busy if owner is not None else None
        if owner is None or owner.abandoned or busy is None or busy.started_at is None:
            return min(0.25, self._timeout_s)
        return max(0.02, busy.started_at + self._timeout_s - time.monotonic())

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        if not text.strip():
            raise TTSError("nothing to say")
        chosen_voice = voice or self._default_voice
        chosen_rate = rate or self._default_rate
        hook = self._before_sentence

        def job(engine: Any) -> SynthesizedAudio:
            if hook is not None:
                hook(text)
            audio: SynthesizedAudio = engine.synthesize(text, chosen_voice, chosen_rate)
            if not audio.pcm:
                raise TTSError("the speech engine produced no audio")
            return audio

        result: SynthesizedAudio = await self._submit(job)
        return trim_silence(result)

    async def voices(self) -> list[Voice]:
        def job(engine: Any) -> list[Voice]:
            found: list[Voice] = engine.voices()
            return found

        result: list[Voice] = await self._submit(job)
        return result

    async def aclose(self) -> None:
        """This handle is done; the shared engine thread stays for the process."""
        self._closed = True

"""Hearing the user while they speak: the turn is transcribed at its pauses and every so
often while it goes on, through the public `SpeechClient`, so that partial words reach
the window and, when the turn ends, a transcript of all of it is ready or nearly so.

`Snapshots` suits a recognizer with a fixed cost per call that reads a whole
recording (whisper): each `Snapshot` of the turn so far is transcribed on its own,
one at a time; while one runs, only the newest pause waits its turn (an interval
snapshot is dropped). Interval snapshots keep the recognizer busy at most a third of
the time, and are left out while one transcription takes more than a third of the
interval (a slow or busy computer), so that the one that matters, at the pause where
the user stops, seldom has to wait for one: then the words show at pauses only.
`Streamed` suits a recognizer that streams (the cloud ones):
the turn's audio goes to one live stream and its partial text is passed on. Results
come out of `take()`; `wake` is set while some are waiting to be taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from app.session.endpointing import Snapshot
from app.session.listen_events import FinalWords
from app.speech import SpeechClient, SpeechError

log = logging.getLogger(__name__)

_STEP = 32_000  # bytes per chunk handed to the recognizer for a whole recording


@dataclass(frozen=True, slots=True)
class Transcribed:
    """A transcript of the turn's first `speech_bytes` of speech (`failed`: the
    recognizer could not say; `text` is then "")."""

    speech_bytes: int
    text: str
    at_pause: bool
    failed: bool = False
    turn: int = 0  # which turn it is about (`begin()` counts them)


async def _chunks(pcm: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(pcm), _STEP):
        yield pcm[i : i + _STEP]


async def transcribe(speech: SpeechClient, pcm: bytes) -> str:
    """The words in 16 kHz s16le `pcm`, handed over all at once (the final transcript)."""
    text = ""
    async for event in speech.stream(_chunks(pcm)):
        text = event.text
    return text


class _Transcriber:
    """What both ways of hearing share: the results waiting to be taken, the event set
    while there are some, which turn is being heard, and what it cost."""

    def __init__(self, wake: asyncio.Event | None) -> None:
        self._results: list[Transcribed] = []
        self.wake = wake or asyncio.Event()
        self.turn = 0  # `begin()` counts the turns
        self.calls = 0  # recognitions started
        self.busy_s = 0.0  # time spent transcribing (the CPU cost of hearing)

    def _put(self, heard: Transcribed) -> None:
        self._results.append(heard)
        self.wake.set()

    def take(self) -> list[Transcribed]:
        results, self._results = self._results, []
        self.wake.clear()
        return results


class Snapshots(_Transcriber):
    """Transcribes snapshots of the turn, one at a time."""

    streams = False

    def __init__(
        self, speech: SpeechClient, wake: asyncio.Event | None = None, *, interval_s: float = 1.0
    ) -> None:
        super().__init__(wake)
        self._speech = speech
        self._interval_s = interval_s
        self._running: asyncio.Task[str] | None = None
        self._running_covers = -1
        self._next: Snapshot | None = None
        self._texts: dict[int, str] = {}  # speech_bytes -> text, this turn
        self._idle_since = 0.0  # perf_counter() when the last transcription ended
        self._last_s = 0.0  # how long it took

    def begin(self) -> None:
        """A new turn: nothing heard of it yet (a transcription still running finishes
        on its own; its result is about another turn's speech)."""
        self.turn += 1
        self._next = None
        self._texts.clear()

    def offer(self, snapshot: Snapshot) -> bool:
        """Transcribe `snapshot` now or after the running one; False when it is dropped
        (an interval snapshot on a busy recognizer: it will hear none of it)."""
        if self._running is None:
            rested = time.perf_counter() - self._idle_since >= 2 * self._last_s
            quick = self._last_s <= self._interval_s / 3
            if snapshot.at_pause or (rested and quick):
                self._start(snapshot)
                return True
            return False
        if snapshot.at_pause:
            self._next = snapshot  # the newest pause only: older ones are stale by then
            return True
        return False

    def feed(self, chunk: bytes) -> None:
        """Audio as it arrives: not needed here (snapshots carry the audio)."""

    def resumed(self) -> None:
        """The user speaks again: a pause still waiting its turn is stale, and would only
        delay the transcription of the next one."""
        self._next = None

    def _start(self, snapshot: Snapshot) -> None:
        self.calls += 1
        self._running_covers = snapshot.speech_bytes
        started, turn = time.perf_counter(), self.turn
        task = asyncio.ensure_future(transcribe(self._speech, snapshot.pcm))
        self._running = task
        task.add_done_callback(lambda t: self._finished(snapshot, t, started, turn))

    def _finished(
        self, snapshot: Snapshot, task: asyncio.Task[str], started: float, turn: int
    ) -> None:
        self._idle_since = time.perf_counter()
        self._last_s = self._idle_since - started
        self.busy_s += self._last_s
        log.debug(
            "transcribed %.2f s (%s) in %.0f ms",
            len(snapshot.pcm) / 32_000,
            "pause" if snapshot.at_pause else "interval",
            (time.perf_counter() - started) * 1000,
        )
        self._running, self._running_covers = None, -1
        if task.cancelled():
            return
        failed = task.exception() is not None
        if failed:
            log.info("a transcription while the user spoke failed: %r", task.exception())
        text = "" if failed else task.result()
        if not failed and turn == self.turn:
            self._texts[snapshot.speech_bytes] = text
        self._put(Transcribed(snapshot.speech_bytes, text, snapshot.at_pause, failed, turn))
        following, self._next = self._next, None
        if following is not None:
            self._start(following)

    @property
    def busy(self) -> bool:
        return self._running is not None

    def final_for(self, pcm: bytes, speech_bytes: int) -> FinalWords:
        """How to get the transcript of the turn that just ended (`pcm`, its speech
        ending at `speech_bytes`), fixed now, whatever the next turn does: the
        transcription of its last pause if one runs, else one of the whole turn. It
        gives (text, whether it was heard while the user spoke)."""
        known = self._texts.get(speech_bytes)
        covering = self._running if self._running_covers == speech_bytes else None
        if self._next is not None and self._next.speech_bytes == speech_bytes:
            self._next = None  # waiting its turn: the final transcription is that one

        async def final() -> tuple[str, bool]:
            if known is not None:
                return known, True
            if covering is not None:
                with contextlib.suppress(Exception):
                    return await asyncio.shield(covering), True
            return await transcribe(self._speech, pcm), False

        return final

    def close(self) -> None:
        # A transcription already running is left to finish (a whisper call cannot be
        # stopped, and the turn that just ended may be waiting for it).
        self._next = None


class Streamed(_Transcriber):
    """One live recognition stream per turn; its partial text is passed on."""

    streams = True

    def __init__(self, speech: SpeechClient, wake: asyncio.Event | None = None) -> None:
        super().__init__(wake)
        self._speech = speech
        self._audio: asyncio.Queue[bytes | None] | None = None
        self._task: asyncio.Task[str] | None = None

    def begin(self) -> None:
        self.close()
        self.turn += 1
        self._audio = asyncio.Queue()
        self.calls += 1
        self._task = asyncio.ensure_future(self._run(self._audio, self.turn))

    async def _run(self, audio: asyncio.Queue[bytes | None], turn: int) -> str:
        async def chunks() -> AsyncIterator[bytes]:
            while (chunk := await audio.get()) is not None:
                yield chunk

        text = ""
        async for event in self._speech.stream(chunks()):
            text = event.text
            if not event.is_final:
                self._put(Transcribed(-1, text, at_pause=False, turn=turn))
        return text

    def offer(self, snapshot: Snapshot) -> bool:
        """Snapshots are not needed: the stream hears the audio as it comes."""
        return True

    def feed(self, chunk: bytes) -> None:
        if self._audio is not None and chunk:
            self._audio.put_nowait(chunk)

    def resumed(self) -> None:
        """The stream hears the audio as it comes: nothing to drop."""

    @property
    def busy(self) -> bool:
        return False

    def final_for(self, pcm: bytes, speech_bytes: int) -> FinalWords:
        """How to get the transcript of the turn that just ended: its stream, told
        now that the audio is over, and taken from this hearing (the next turn gets a
        stream of its own); the whole turn once more if the stream broke."""
        task, audio = self._task, self._audio
        self._task = self._audio = None
        if audio is not None:
            audio.put_nowait(None)

        async def final() -> tuple[str, bool]:
            if task is None:
                return await transcribe(self._speech, pcm), False
            try:
                text = await task
                log.debug("the live stream's final words: %r", text)
                return text, True
            except SpeechError:
                raise
            except Exception as exc:
                log.info("the live recognition stream failed (%r); transcribing the turn", exc)
                return await transcribe(self._speech, pcm), False

        return final

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task.add_done_callback(_consume)
        if self._audio is not None:
            self._audio.put_nowait(None)
        self._task = self._audio = None


def _consume(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()


Hearing = Snapshots | Streamed
STREAMING_ADAPTERS = frozenset({"doubao_asr", "dashscope_funasr"})


def hearing_for(
    speech: SpeechClient, adapter: str, wake: asyncio.Event, *, interval_s: float
) -> Hearing:
    """Streamed for recognizers that stream, snapshots (every `interval_s` of speech
    at most) for the others."""
    if adapter in STREAMING_ADAPTERS:
        return Streamed(speech, wake)
    return Snapshots(speech, wake, interval_s=interval_s)

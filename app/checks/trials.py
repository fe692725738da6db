"""Trying the parts for real: one short request to a chat model, a few seconds from
the microphone played back, a sample sentence in the configured voice. All async:
a UI runs them as tasks on its loop; every failure is a `CheckFailed` in words (no
secret ever goes into one)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.agent.reply_guard import ReplyGuard, has_words
from app.audio.capture import AudioSource, MicrophoneSource, MicrophoneUnavailable
from app.audio.playback import (
    AudioSink,
    PlaybackError,
    PlaybackReport,
    SoundDeviceSink,
    chunk_level,
)
from app.audio.wav import SAMPLE_RATE
from app.checks.outcome import CheckFailed, Words, in_words
from app.config import Settings
from app.llm import LLMRequest, Msg
from app.tts import SynthesizedAudio, TTSEngine, TTSError, create_tts_engine

MODEL_PROMPT = "Say hello in five words or fewer."
MIC_TEST_S = 3.0
SOUND_LEVEL = 0.05  # a chunk level (0..1) above this is more than room noise
SAMPLE = Words("Hello! This is how I sound when I talk to you.")

LevelCallback = Callable[[float], None]


# -- the chat model ---------------------------------------------------------------------


async def ask(provider: Any, request: LLMRequest) -> str:
    """`request` to `provider` (loaded first, closed after, whatever happens): the
    answer's text as it came. Failures are the provider's own exceptions."""
    try:
        await provider.load()
        response = await provider.complete(request)
    finally:
        with contextlib.suppress(Exception):
            await provider.aclose()
    return str(response.text)


async def ask_model(settings: Settings, *, prompt: str = MODEL_PROMPT, provider: Any = None) -> str:
    """One short request to the configured chat model; its answer, or `CheckFailed`."""
    if provider is None:
        from app.session import build_provider

        try:
            provider = build_provider(settings)
        except Exception as exc:
            raise CheckFailed(in_words(exc)) from exc
    chat = settings.chat
    request = LLMRequest(
        model=chat.model,
        messages=[Msg.user(prompt)],
        max_tokens=32,
        temperature=chat.temperature,
        timeout=chat.timeout_s,
    )
    from app.session.masking import session_redactor

    redact = session_redactor(settings)  # a model may repeat a key it was sent
    try:
        text = redact(" ".join((await ask(provider, request)).split()))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise CheckFailed(redact(in_words(exc))) from exc
    if not text:
        raise CheckFailed(Words("The model answered, but with no text."))
    problem = judge_answer(text, prompt)
    if problem is not None:
        raise CheckFailed(problem)
    return text


# What a reply that is not an answer looks like: the chat template's own markers (the
# model runs with the wrong template), an error page or error object passed on as text.
_CONTROL_TEXT = re.compile(
    r"<\|[a-z_]+\|>|</?s>|\[/?INST\]|<\|?(?:im_start|im_end|endoftext)", re.IGNORECASE
)
_ERROR_TEXT = re.compile(
    r"^\s*(?:\{\s*\"error\"|<!doctype|<html|traceback \(most recent call last\)|"
    r"(?:internal server )?error\b[:\s]|exception\b[:\s])",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[^\W\d_]")


def judge_answer(text: str, prompt: str = MODEL_PROMPT) -> Words | None:
    """Why `text` is not a real answer to `prompt` (in words), or None when it is one:
    an answer has words, is no error message, no leaked chat-template markers, no loop,
    and is not the question said back."""
    if not has_words(text) or not _LETTER.search(text):
        return Words("The model answered, but with no words: “{answer}”.", {"answer": text})
    if _CONTROL_TEXT.search(text):
        return Words(
            "The model's answer holds its control text (“{answer}”): it may be run with the "
            "wrong chat template; try another model file.",
            {"answer": text},
        )
    if _ERROR_TEXT.search(text):
        return Words("The server sent an error as the answer: “{answer}”.", {"answer": text})
    guard = ReplyGuard(max_sentences=0)
    guard.feed(text)
    guard.finished(cut_by_length=False)
    if guard.cut == "loop":
        return Words(
            "The model repeats itself instead of answering (“{answer}”): it may be too "
            "small or set up wrongly.",
            {"answer": text},
        )
    if _plain_words(text) == _plain_words(prompt):
        return Words("The model only said the question back.")
    return None


def _plain_words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


# -- the microphone ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MicTestResult:
    """What the microphone test recorded and how its playback went."""

    pcm: bytes
    peak_level: float
    playback: PlaybackReport

    @property
    def recorded_s(self) -> float:
        return len(self.pcm) / 2 / SAMPLE_RATE

    @property
    def heard_sound(self) -> bool:
        return self.peak_level >= SOUND_LEVEL


async def record(
    source: AudioSource, seconds: float, on_level: LevelCallback | None = None
) -> tuple[bytes, float]:
    """Up to `seconds` of 16 kHz PCM from `source` and its peak level (0..1)."""
    need = int(seconds * SAMPLE_RATE) * 2
    buffer = bytearray()
    peak = 0.0
    try:
        async with contextlib.aclosing(source.chunks()) as chunks:  # type: ignore[type-var]
            async for chunk in chunks:
                part = chunk[: need - len(buffer)]
                buffer += part
                level = chunk_level(np.frombuffer(part, dtype="<i2"))
                peak = max(peak, level)
                if on_level is not None:
                    on_level(level)
                if len(buffer) >= need:
                    break
    except MicrophoneUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    finally:
        await source.aclose()
        if on_level is not None:
            on_level(0.0)
    return bytes(buffer), peak


def _speaker(settings: Settings) -> AudioSink:
    audio = settings.audio
    return SoundDeviceSink(audio.output_device, audio.volume)


async def _play(
    sink: AudioSink, audio: SynthesizedAudio, on_level: LevelCallback | None
) -> PlaybackReport:
    try:
        return await sink.play(audio, on_level=on_level)
    except PlaybackError as exc:
        raise CheckFailed(str(exc)) from exc


async def record_and_play_back(
    settings: Settings,
    *,
    seconds: float = MIC_TEST_S,
    source: AudioSource | None = None,
    sink: AudioSink | None = None,
    on_level: LevelCallback | None = None,
    on_playing: Callable[[], None] | None = None,
) -> MicTestResult:
    """Record `seconds` from the configured microphone (levels to `on_level` for a
    meter), then play them back through the configured output device."""
    mic = source if source is not None else MicrophoneSource(settings.audio.input_device)
    pcm, peak = await record(mic, seconds, on_level)
    if not pcm:
        raise CheckFailed(Words("The microphone sent no sound at all."))
    if on_playing is not None:
        on_playing()
    out = sink if sink is not None else _speaker(settings)
    try:
        report = await _play(out, SynthesizedAudio(pcm, SAMPLE_RATE), on_level)
    finally:
        await out.aclose()
    return MicTestResult(pcm, peak, report)


# -- the voice --------------------------------------------------------------------------


async def synthesize(engine: TTSEngine, text: str) -> SynthesizedAudio:
    """`text` in `engine`'s voice; the engine is closed after, whatever happens."""
    try:
        return await engine.synthesize(text)
    finally:
        with contextlib.suppress(Exception):
            await engine.aclose()


async def speak_sample(
    settings: Settings,
    *,
    text: str = str(SAMPLE),
    engine: TTSEngine | None = None,
    sink: AudioSink | None = None,
    on_level: LevelCallback | None = None,
) -> PlaybackReport:
    """Say a sample sentence with the configured voice through the configured output."""
    if engine is None:
        try:
            engine = create_tts_engine(settings.tts)
        except Exception as exc:
            raise CheckFailed(in_words(exc)) from exc
    out = sink if sink is not None else _speaker(settings)
    try:
        try:
            audio = await synthesize(engine, text)
        except TTSError as exc:
            raise CheckFailed(str(exc)) from exc
        if not audio.pcm:
            raise CheckFailed(Words("The voice made no sound."))
        return await _play(out, audio, on_level)
    finally:
        with contextlib.suppress(Exception):
            await out.aclose()

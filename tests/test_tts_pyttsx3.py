"""pyttsx3 hardening: real espeak-ng, many sentences in a row, a hang the watchdog recovers from."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from app.tts import SynthesizedAudio, TTSError, TTSUnavailableError
from app.tts.pyttsx3_engine import Pyttsx3Engine

SENTENCES = [
    f"Sentence number {n} is here{', with a few more words to say' * (n % 3)}." for n in range(50)
]
HANG_AT = 25


def loud(audio: SynthesizedAudio) -> bool:
    samples = np.frombuffer(audio.pcm, "<i2")
    return audio.sample_rate > 8000 and len(samples) > 0 and int(np.abs(samples).max()) > 2000


async def test_fifty_sentences_in_a_row_survive_a_hang_on_a_fresh_engine_thread() -> None:
    """Sentences go ahead two at a time, as the session's look-ahead sends them; the 26th
    hangs the engine thread, the watchdog gives up on it after `timeout_s`, and every
    other sentence (including the ones queued behind the hang) comes back as speech."""
    release = threading.Event()
    ran_on: dict[str, threading.Thread] = {}

    def before_sentence(text: str) -> None:
        ran_on[text] = threading.current_thread()
        if text == SENTENCES[HANG_AT]:
            release.wait(60)  # the forced hang

    engine = Pyttsx3Engine(timeout_s=1.0, before_sentence=before_sentence)
    results: list[SynthesizedAudio | BaseException] = []
    hang_released_before_failure: bool | None = None
    try:
        tasks = [asyncio.create_task(engine.synthesize(s)) for s in SENTENCES[:3]]
        for n in range(len(SENTENCES)):
            try:
                results.append(await tasks[n])
            except TTSError as exc:
                results.append(exc)
                hang_released_before_failure = release.is_set()
            if n + 3 < len(SENTENCES):
                tasks.append(asyncio.create_task(engine.synthesize(SENTENCES[n + 3])))
    finally:
        release.set()
        await engine.aclose()

    failed = [n for n, r in enumerate(results) if isinstance(r, BaseException)]
    assert failed == [HANG_AT]
    assert "stopped answering" in str(results[HANG_AT])
    # The forced hang is released only after every result is in: the failure came from
    # the watchdog, not from the hang ending.
    assert hang_released_before_failure is False
    audio = [r for r in results if isinstance(r, SynthesizedAudio)]
    assert len(audio) == 49 and all(loud(a) for a in audio)
    # each result is its own sentence: the long ones (n % 3 == 2) outlast the short ones
    short = [results[n].duration_s for n in range(0, 50, 3) if n != HANG_AT]  # type: ignore[union-attr]
    long = [results[n].duration_s for n in range(2, 50, 3) if n != HANG_AT]  # type: ignore[union-attr]
    assert min(long) > max(short)
    before = {ran_on[s] for s in SENTENCES[:HANG_AT]}
    after = {ran_on[s] for s in SENTENCES[HANG_AT + 1 :]}
    assert len(before) == 1 and len(after) == 1 and before != after
    assert ran_on[SENTENCES[HANG_AT]] in before


async def test_a_sentence_cancelled_while_queued_never_runs() -> None:
    started = threading.Event()
    release = threading.Event()
    ran: list[str] = []

    def before_sentence(text: str) -> None:
        ran.append(text)
        if text == "first":
            started.set()
            release.wait(10)

    engine = Pyttsx3Engine(before_sentence=before_sentence)
    try:
        first = asyncio.create_task(engine.synthesize("first"))
        await asyncio.to_thread(started.wait, 10)
        second = asyncio.create_task(engine.synthesize("second"))
        await asyncio.sleep(0.05)
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        release.set()
        assert loud(await first)
        assert loud(await engine.synthesize("third"))
    finally:
        release.set()
        await engine.aclose()
    assert ran == ["first", "third"]


async def test_voices_are_listed_with_their_languages() -> None:
    engine = Pyttsx3Engine()
    try:
        voices = await engine.voices()
    finally:
        await engine.aclose()
    by_id = {v.id: v for v in voices}
    assert len(voices) > 20 and all(v.name and v.languages for v in voices)
    english = [v for v in voices if any(lang.startswith("en") for lang in v.languages)]
    assert english
    assert by_id["gmw/en-us"].languages == ("en-us",)


async def test_a_listed_voice_can_be_chosen_and_changes_the_speech() -> None:
    engine = Pyttsx3Engine()
    try:
        voices = {v.id for v in await engine.voices()}
        assert {"gmw/en-us", "roa/fr"} <= voices
        text = "Bonjour, comment allez-vous aujourd'hui?"
        english = await engine.synthesize(text, voice="gmw/en-us")
        french = await engine.synthesize(text, voice="roa/fr")
        again = await engine.synthesize(text, voice="gmw/en-us")
    finally:
        await engine.aclose()
    # espeak-ng is not sample-exact from one call to the next, but its timing is
    assert abs(english.duration_s - again.duration_s) < 0.01
    assert abs(french.duration_s - english.duration_s) > 0.1


async def test_an_unknown_voice_is_an_error_in_words() -> None:
    engine = Pyttsx3Engine(voice="no-such-voice")
    try:
        with pytest.raises(TTSError, match="no voice called 'no-such-voice'"):
            await engine.synthesize("Hello.")
        assert loud(await engine.synthesize("Hello.", voice="en"))
    finally:
        await engine.aclose()


async def test_the_rate_changes_the_pace() -> None:
    engine = Pyttsx3Engine()
    try:
        slow = await engine.synthesize("This is a sentence at some pace.", rate=120)
        fast = await engine.synthesize("This is a sentence at some pace.", rate=300)
    finally:
        await engine.aclose()
    assert slow.duration_s > fast.duration_s * 1.7


async def test_a_closed_engine_refuses_work() -> None:
    engine = Pyttsx3Engine()
    await engine.load()
    await engine.aclose()
    with pytest.raises(TTSError, match="closed"):
        await engine.synthesize("Hello.")
    assert not issubclass(TTSError, TTSUnavailableError)

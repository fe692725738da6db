"""The offline neural voice (hibari-tts): real synthesis from the model in its wheel, no network."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import read_wav_16k, write_wav
from app.speech import SpeechConfig, create_speech_client
from app.tts import StreamingTTSEngine, SynthesizedAudio, TTSError, TTSUnavailableError
from app.tts.hibari_engine import HibariEngine

pytest.importorskip("hibari")


@pytest.fixture(autouse=True)
def empty_voice_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No downloaded voices: only what the wheel ships."""
    monkeypatch.setenv("HIBARI_HOME", str(tmp_path / "hibari-cache"))


@pytest.fixture(scope="module")
def engine() -> Iterator[HibariEngine]:
    """One engine for the module: it loads its model once (about a second)."""
    tts = HibariEngine()
    yield tts
    asyncio.run(tts.aclose())


def voiced(audio: SynthesizedAudio) -> bool:
    samples = np.frombuffer(audio.pcm, "<i2")
    return audio.sample_rate == 24_000 and int(np.abs(samples).max()) > 3000


@pytest.mark.slow
async def test_a_sentence_is_heard_as_its_words(engine: HibariEngine, tmp_path: Path) -> None:
    """The recognizer the app ships (whisper tiny.en) understands what hibari says."""
    audio = await engine.synthesize("Hi there! It's sunny today, so let's go for a walk.")
    assert voiced(audio) and 2.0 < audio.duration_s < 6.0
    wav = tmp_path / "hibari.wav"
    write_wav(wav, audio.pcm, audio.sample_rate)
    client = create_speech_client(SpeechConfig(enabled=True))
    assert client is not None

    async def pcm() -> AsyncIterator[bytes]:
        yield read_wav_16k(wav)

    events = [e async for e in client.stream(pcm())]
    heard = events[-1].text.lower()
    assert all(word in heard for word in ("sunny", "today", "walk")), heard


async def test_stream_hands_out_each_sentence_as_it_is_ready(engine: HibariEngine) -> None:
    assert isinstance(engine, StreamingTTSEngine)
    chunks = [c async for c in engine.stream("Hello there. This is the second part of it.")]
    assert len(chunks) == 2 and all(voiced(c) for c in chunks)
    assert chunks[1].duration_s > chunks[0].duration_s


async def test_the_rate_changes_the_pace(engine: HibariEngine) -> None:
    text = "This sentence is read at two different speeds."
    normal = await engine.synthesize(text)
    fast = await engine.synthesize(text, rate=262)  # 1.5 x the normal 175 words a minute
    assert 1.3 < normal.duration_s / fast.duration_s < 1.7


async def test_loading_happens_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = HibariEngine()
    release = threading.Event()
    loading = threading.Event()
    real_warm_up = engine._warm_up

    def blocking_warm_up() -> None:
        loading.set()
        release.wait(30)  # held until the event loop has shown it keeps running
        real_warm_up()

    monkeypatch.setattr(engine, "_warm_up", blocking_warm_up)
    load = asyncio.create_task(engine.load())
    ticks = 0
    while not (loading.is_set() and ticks >= 20):  # the loop runs while the load blocks
        await asyncio.sleep(0.005)
        ticks += 1
    assert not load.done()
    release.set()
    await load
    assert engine._models  # the real model did load, after the loop had ticked through it
    await engine.aclose()


async def test_only_voices_on_this_computer_are_listed(engine: HibariEngine) -> None:
    voices = await engine.voices()
    assert [v.id for v in voices] == ["heart"]
    assert voices[0].languages == ("en-us",)


async def test_a_voice_that_would_need_a_download_is_refused_in_words() -> None:
    engine = HibariEngine(voice="emma")
    try:
        with pytest.raises(TTSUnavailableError, match="not on this computer"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_unknown_voice_and_empty_text_are_errors(engine: HibariEngine) -> None:
    with pytest.raises(TTSUnavailableError, match="no voice called 'en-us'"):
        await engine.synthesize("Hello.", voice="en-us")
    with pytest.raises(TTSError, match="nothing to say"):
        await engine.synthesize("  ")


async def test_a_missing_model_file_says_which(tmp_path: Path) -> None:
    engine = HibariEngine(model_path=tmp_path / "voice.onnx")
    try:
        with pytest.raises(TTSUnavailableError, match="does not exist"):
            await engine.load()
    finally:
        await engine.aclose()

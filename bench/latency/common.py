"""What both systems share: the question, how it is fed, and the arithmetic.

This module imports only the standard library and numpy, because the Pipecat
runner imports it too, from its own environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
import time
import wave
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 16_000
CHUNK_SAMPLES = 512  # 32 ms, as a microphone callback would deliver them
CHUNK_MS = CHUNK_SAMPLES * 1000 / SAMPLE_RATE
LEAD_SILENCE_S = 0.3
TAIL_SILENCE_S = 1.2
QUESTION = "Hey, what is the weather like today? Should I take a jacket?"
TYPED_QUESTION = "What is the weather like today?"
SCREEN_QUESTION = "What is on my screen right now?"

OUT_DIR = Path(__file__).resolve().parents[1] / "out"


def make_question_wav(path: Path, text: str = QUESTION) -> Path:
    """espeak-ng speech resampled to 16 kHz mono s16le (sox), written to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(path)], check=True)
    raw.unlink()
    return path


def read_pcm16k(path: Path) -> bytes:
    with wave.open(str(path), "rb") as w:
        assert w.getframerate() == SAMPLE_RATE and w.getnchannels() == 1 and w.getsampwidth() == 2
        return w.readframes(w.getnframes())


def speech_end_sample(pcm: bytes) -> int:
    """The end of the last 10 ms frame with speech energy (above 2 % of the loudest
    frame's RMS, and above -60 dBFS): where the speaker stopped."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    n = samples.size // 160
    rms = np.sqrt((samples[: n * 160].reshape(n, 160) ** 2).mean(axis=1))
    threshold = max(0.02 * float(rms.max()), 32.0)
    loud = np.nonzero(rms > threshold)[0]
    return int((loud[-1] + 1) * 160) if loud.size else samples.size


@dataclass
class Stimulus:
    """The microphone's whole input for one turn: silence, the question, silence."""

    pcm: bytes
    speech_end: int  # sample index in `pcm` where the speech ends

    @classmethod
    def from_wav(cls, path: Path) -> Stimulus:
        speech = read_pcm16k(path)
        lead = b"\0\0" * int(SAMPLE_RATE * LEAD_SILENCE_S)
        tail = b"\0\0" * int(SAMPLE_RATE * TAIL_SILENCE_S)
        return cls(lead + speech + tail, len(lead) // 2 + speech_end_sample(speech))

    def chunks(self) -> list[bytes]:
        step = CHUNK_SAMPLES * 2
        return [self.pcm[i : i + step] for i in range(0, len(self.pcm), step)]

    @property
    def speech_s(self) -> float:
        return self.speech_end / SAMPLE_RATE - LEAD_SILENCE_S


@dataclass
class PacedFeed:
    """Delivers the stimulus as a microphone does: chunk i (samples [512 i, 512 (i+1)))
    becomes available when its last sample has been captured, on an absolute clock so
    delays do not add up. `speech_end_at` is the perf_counter() time at which the last
    speech sample was captured; `late_ms` the worst delivery lag behind that clock."""

    stimulus: Stimulus
    started_at: float = 0.0
    late_ms: float = 0.0
    on_chunk: Callable[[bytes], Any] | None = None
    delivered: list[float] = field(default_factory=list)

    @property
    def speech_end_at(self) -> float:
        return self.started_at + self.stimulus.speech_end / SAMPLE_RATE

    async def chunks(self) -> AsyncIterator[bytes]:
        self.started_at = time.perf_counter()
        for i, chunk in enumerate(self.stimulus.chunks()):
            due = self.started_at + (i + 1) * CHUNK_SAMPLES / SAMPLE_RATE
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            now = time.perf_counter()
            self.late_ms = max(self.late_ms, (now - due) * 1000)
            yield chunk

    async def aclose(self) -> None:
        return None


def pct(values: list[float], q: float) -> float:
    """Nearest-rank-by-interpolation percentile (numpy's default)."""
    return (
        float(np.percentile(np.asarray(values, dtype=float), q * 100)) if values else float("nan")
    )


def summarize(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": pct(values, 0.5),
        "p95": pct(values, 0.95),
        "min": min(values) if values else float("nan"),
        "max": max(values) if values else float("nan"),
    }


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    os_name = platform.platform()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"') + f" ({platform.release()})"
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "os": os_name,
        "python": platform.python_version(),
        "sound_card": "none (memory sinks; timestamps at the first non-silent sample)",
    }


def dump(obj: Any) -> str:
    return json.dumps(obj, default=str)

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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 16_000
CHUNK_SAMPLES = 512  # 32 ms, as a microphone callback would deliver them
CHUNK_MS = CHUNK_SAMPLES * 1000 / SAMPLE_RATE
LEAD_SILENCE_S = 0.3
# A question the turn model hears as finished even in espeak-ng's voice, and with no
# pause inside it long enough for a 0.2 s VAD stop, so that Pipecat's recommended
# turn-taking works at its best on it. `--question` picks the others: "doubted" (the
# bench's earlier question, whose end Smart Turn hears as unfinished in espeak's voice),
# "hello" (the one of the first try with Pipecat's turn-taking: both traps) and
# "comma" (a pause after "Hey there," that splits Pipecat's whisper segments).
QUESTIONS = {
    "default": "Can you tell me what the weather will be like tomorrow?",
    "doubted": "Hey, what is the weather like today? Should I take a jacket?",
    "hello": "Hello there, can you tell me what's on my screen right now?",
    "comma": "Hey there, could you remind me to call my mother tomorrow?",
}
QUESTION = QUESTIONS["default"]
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
    """What is said into the microphone for one turn: a little silence, then the
    question (the microphone goes on after it, with silence)."""

    pcm: bytes
    speech_end: int  # sample index in `pcm` where the speech ends

    @classmethod
    def from_wav(cls, path: Path) -> Stimulus:
        speech = read_pcm16k(path)
        lead = b"\0\0" * int(SAMPLE_RATE * LEAD_SILENCE_S)
        return cls(lead + speech, len(lead) // 2 + speech_end_sample(speech))

    def chunks(self) -> list[bytes]:
        step = CHUNK_SAMPLES * 2
        pcm = self.pcm + bytes(-len(self.pcm) % step)  # whole chunks, as a microphone's
        return [pcm[i : i + step] for i in range(0, len(pcm), step)]

    @property
    def speech_s(self) -> float:
        return self.speech_end / SAMPLE_RATE - LEAD_SILENCE_S


class LiveMic:
    """A microphone that never stops: 32 ms chunks on an absolute clock, silence unless
    someone is speaking into it (`say`). Both systems listen to one from start to end,
    as they would to a real microphone, so no turn ends because the input ran out."""

    def __init__(self) -> None:
        self._queue: list[bytes] = []
        self._said: asyncio.Future[float] | None = None
        self._speech_end = 0
        self._closed = False
        self.started_at = 0.0
        self.late_ms = 0.0

    def say(self, stimulus: Stimulus) -> asyncio.Future[float]:
        """Speak `stimulus` from the next chunk on; the future gives the perf_counter()
        time at which its last speech sample is captured."""
        self._queue = stimulus.chunks()
        self._speech_end = stimulus.speech_end
        self._said = asyncio.get_running_loop().create_future()
        return self._said

    @property
    def speaking(self) -> bool:
        return bool(self._queue)

    async def chunks(self) -> AsyncIterator[bytes]:
        self.started_at = time.perf_counter()
        silence = bytes(CHUNK_SAMPLES * 2)
        i = 0
        while not self._closed:
            i += 1
            due = self.started_at + i * CHUNK_SAMPLES / SAMPLE_RATE
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            self.late_ms = max(self.late_ms, (time.perf_counter() - due) * 1000)
            if not self._queue:
                yield silence
                continue
            if self._said is not None and not self._said.done():
                # The stimulus's first sample was captured one chunk before `due`.
                start = due - CHUNK_SAMPLES / SAMPLE_RATE
                self._said.set_result(start + self._speech_end / SAMPLE_RATE)
            yield self._queue.pop(0)

    async def aclose(self) -> None:
        self._closed = True


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

"""English decoding set-ups of the embedded recognizer, side by side: word error rate
and time per utterance on the conversation bench's questions and the phrase sets.

    python bench/bench_asr_decoding.py [--setups tiny-b1,tiny-b5,...] [--threads 2]
                                       [--only questions,phrases,noise-only] [--names]

Each set-up is a model (tiny.en, or the multilingual base forced to English) and the
English decoding options of app/speech/adapters/whisper_local.py (`ENGLISH_BEAM_SIZE`,
`ENGLISH_PATIENCE`, `ENGLISH_PROMPT`, and the encoder's window: `ENCODER_TAIL_FRAMES`,
`ENCODER_MIN_FRAMES`; the set-ups ending in -w read a short one), set for the run; audio
goes through the adapter as the session hands it over (the whole utterance at once), int8,
`--threads` threads.

Speech (espeak-ng, resampled by sox to 16 kHz mono s16le):
- questions: the 12 questions of bench/bench_conversation.py, each in all six of its
  voices, at its speed (150 wpm);
- phrases: tests/test_speech_wer.py's phrases over its voice x speed grid, and the
  twelve name sentences of tests/asr_phrases.py in its six voices;
each clean and with white noise at 10 dB SNR. Numbers are compared as words ("8" and
"eight" are the same word). `--names` passes the known names as hotwords, as the app
does once it has learnt them.
- noise-only: 2 s of white noise at three levels, which should be heard as nothing (a
  prompt must not leak its words into the transcript).

Printed per set-up: mean WER per set and condition, the mean and p95 time per
utterance (ms; the machine's load shows in it: run twice) and the CPU time the
process spent per utterance (less affected by other work on the machine), the
questions heard wrong in their own voice (clean), and what the noise was heard as.
It asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.speech import SpeechClient, SpeechConfig
from app.speech.adapters import whisper_local
from app.speech.adapters.whisper_local import WhisperLocalAdapter
from tests.asr_phrases import (
    CONVERSATION_QUESTIONS,
    CONVERSATION_SPEED,
    CONVERSATION_VOICES,
    KNOWN_NAMES,
    NAME_SENTENCES,
    NAME_VOICES,
    question_wer,
)
from tests.test_speech_wer import FULL_GRID, PHRASES, mix_at_snr, synthesize, white_noise

# A neutral sentence of everyday conversational English, with a question in it.
PROMPT = "Hello, how are you today? I'm fine, thanks. What would you like to talk about?"


@dataclass(frozen=True)
class Setup:
    model: str
    beam_size: int
    patience: float = 1.0
    prompt: str | None = None
    # The encoder's window (`whisper_local.ENCODER_TAIL_FRAMES`/`ENCODER_MIN_FRAMES`):
    # None = whisper's whole 30 s.
    tail: int | None = None
    min_frames: int = 1500


SETUPS = {
    "tiny-b1": Setup("tiny.en", 1),
    "tiny-b3": Setup("tiny.en", 3),
    "tiny-b5": Setup("tiny.en", 5),
    "tiny-b5-p2": Setup("tiny.en", 5, patience=2.0),
    "tiny-b1-prompt": Setup("tiny.en", 1, prompt=PROMPT),
    "tiny-b5-prompt": Setup("tiny.en", 5, prompt=PROMPT),
    "base-b1": Setup("base", 1),
    "base-b5": Setup("base", 5),
    "base-b5-prompt": Setup("base", 5, prompt=PROMPT),
    # the app's English window (utterance + 1 s, at least 15 s), and others
    "tiny-b1-w": Setup("tiny.en", 1, tail=100, min_frames=1500),
    "tiny-b5-w": Setup("tiny.en", 5, tail=100, min_frames=1500),
    "tiny-b5-w10s": Setup("tiny.en", 5, tail=100, min_frames=1000),
    "tiny-b5-w20s": Setup("tiny.en", 5, tail=100, min_frames=2000),
    "tiny-b5-w5s": Setup("tiny.en", 5, tail=100, min_frames=500),
    "tiny-b5-w5s-tail3s": Setup("tiny.en", 5, tail=300, min_frames=500),
    "base-b1-w": Setup("base", 1, tail=100, min_frames=1500),
    "base-b5-w": Setup("base", 5, tail=100, min_frames=1500),
    "base-b5-w10s": Setup("base", 5, tail=100, min_frames=1000),
    "base-b5-w5s": Setup("base", 5, tail=100, min_frames=500),
}
SECTIONS = ("questions", "phrases", "noise-only")


@dataclass(frozen=True)
class Clip:
    group: str  # "questions" or "phrases"
    text: str
    voice: str
    own_voice: bool  # the voice the conversation bench says it in
    pcm: bytes


def make_clips(folder: Path, sections: set[str]) -> list[Clip]:
    clips: list[Clip] = []
    if "questions" in sections:
        for text, own in CONVERSATION_QUESTIONS:
            for voice in CONVERSATION_VOICES:
                pcm = synthesize(text, folder, voice=voice, speed=CONVERSATION_SPEED)
                clips.append(Clip("questions", text, voice, voice == own, pcm))
    if "phrases" in sections:
        for i, (voice, speed) in enumerate(FULL_GRID):
            text = PHRASES[i % len(PHRASES)]
            clips.append(
                Clip(
                    "phrases",
                    text,
                    voice,
                    False,
                    synthesize(text, folder, voice=voice, speed=speed),
                )
            )
        for i, (text, _names) in enumerate(NAME_SENTENCES):
            voice = NAME_VOICES[i % len(NAME_VOICES)]
            clips.append(
                Clip(
                    "phrases", text, voice, False, synthesize(text, folder, voice=voice, speed=160)
                )
            )
    return clips


def noise_clips() -> list[tuple[str, bytes]]:
    out = []
    for level in (100.0, 1000.0, 5000.0):  # -50, -30 and -16 dBFS rms
        noise = white_noise(32000, seed=int(level)) * level
        out.append(
            (f"white noise rms {level:g}", np.clip(noise, -32768, 32767).astype("<i2").tobytes())
        )
    return out


async def heard(client: SpeechClient, pcm: bytes) -> tuple[str, float, float]:
    """The final text, the wall time and the CPU time of this process (ms)."""

    async def once() -> AsyncIterator[bytes]:
        yield pcm

    start, cpu = time.perf_counter(), time.process_time()
    text = ""
    async for event in client.stream(once()):
        text = event.text
    return text, (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def apply(setup: Setup) -> None:
    whisper_local.ENGLISH_BEAM_SIZE = setup.beam_size
    whisper_local.ENGLISH_PATIENCE = setup.patience
    whisper_local.ENGLISH_PROMPT = setup.prompt
    whisper_local.ENCODER_TAIL_FRAMES = setup.tail
    whisper_local.ENCODER_MIN_FRAMES = setup.min_frames


async def run_setup(
    name: str, setup: Setup, clips: list[Clip], threads: int, names: bool, sections: set[str]
) -> None:
    apply(setup)
    adapter = WhisperLocalAdapter(
        SpeechConfig(enabled=True, model=setup.model, language="en", threads=threads)
    )
    adapter.set_known_words((*KNOWN_NAMES, "Tomas") if names else ())
    client = SpeechClient(adapter)
    await client.load()
    await heard(client, clips[0].pcm if clips else noise_clips()[0][1])  # warm-up
    scores: dict[str, list[float]] = {}
    times: list[float] = []
    cpu_times: list[float] = []
    wrong: list[str] = []
    for i, clip in enumerate(clips):
        for snr in (None, 10.0):
            pcm = clip.pcm
            if snr is not None:
                pcm = mix_at_snr(pcm, white_noise(len(pcm) // 2, seed=300 + i), snr)
            text, ms, cpu = await heard(client, pcm)
            times.append(ms)
            cpu_times.append(cpu)
            score = question_wer(clip.text, text)
            label = f"{clip.group} {'clean' if snr is None else '10 dB'}"
            scores.setdefault(label, []).append(score)
            if clip.own_voice and snr is None and score > 0:
                wrong.append(f"{score:.2f} [{clip.voice}] {clip.text!r} -> {text!r}")
    biased = ", names biased" if names else ""
    print(
        f"\n=== {name}: {setup.model}, beam {setup.beam_size}, patience {setup.patience:g}, "
        f"prompt {'yes' if setup.prompt else 'no'}, encoder window "
        f"{'30 s' if setup.tail is None else f'sound + {setup.tail} frames, ≥ {setup.min_frames}'}"
        f"{biased}"
    )
    for label, values in scores.items():
        print(f"  {label:<18} WER {statistics.mean(values):.3f}  (n={len(values)})")
    if times:
        ordered = sorted(times)
        print(
            f"  time/utterance mean {statistics.mean(times):.0f} ms, "
            f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:.0f} ms; "
            f"CPU time/utterance mean {statistics.mean(cpu_times):.0f} ms"
        )
    if "questions" in sections:
        print(f"  questions wrong in their own voice, clean: {len(wrong)}/12")
        for line in wrong:
            print(f"    {line}")
    if "noise-only" in sections:
        for label, pcm in noise_clips():
            text, _ms, _cpu = await heard(client, pcm)
            print(f"  {label}: heard {text!r}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setups", default=",".join(SETUPS), help=", ".join(SETUPS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument("--names", action="store_true", help="pass the known names")
    args = parser.parse_args()
    sections = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        clips = make_clips(Path(tmp), sections)
        print(f"{len(clips)} clips x (clean, 10 dB white noise); {args.threads} threads, int8")
        for name in args.setups.split(","):
            await run_setup(name, SETUPS[name], clips, args.threads, args.names, sections)


if __name__ == "__main__":
    asyncio.run(main())

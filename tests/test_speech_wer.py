"""Word error rate of the embedded recognizer on real speech: espeak-ng phrases in
several voices and speeds, clean and mixed with white or pink noise at 20 and 10 dB
SNR; clipped and DC-shifted input too. `pytest -s` prints the table;
`bench/bench_asr.py` prints the same figures over a larger grid.

The helpers here (speech, noise, mixing, WER) are shared with the bench.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import read_wav_16k
from app.speech import SpeechClient, SpeechConfig
from app.speech.adapters.whisper_local import WhisperLocalAdapter

PHRASES = (
    "please turn on the lights in the kitchen",
    "what is the weather going to be like tomorrow",
    "remind me to call my mother this evening",
    "can you read the first line on my screen",
    "play some quiet music while I work",
    "how long does it take to boil an egg",
)
VOICES = ("en-us", "en-gb", "en+f3")
SPEEDS = (130, 170)
# Every voice and speed (the bench); the test keeps to four clips to stay fast on 2 cores.
FULL_GRID = tuple((voice, speed) for voice in VOICES for speed in SPEEDS)
TEST_GRID = (("en-us", 130), ("en-gb", 170), ("en+f3", 130), ("en+f3", 170))
SNRS: tuple[float | None, ...] = (None, 20.0, 10.0)  # None = clean
# Sensible bounds for tiny.en on synthetic speech (mean WER per condition).
WER_BOUNDS = {None: 0.15, 20.0: 0.3, 10.0: 0.5}


# ------------------------------------------------------------------ word error rate


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: "Turn on the lights." → turn on the lights."""
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Substitutions + deletions + insertions from `a` to `b` (words, or characters)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(
                previous[j] + 1,  # deletion
                current[j - 1] + 1,  # insertion
                previous[j - 1] + (x != y),  # substitution or match
            )
        previous = current
    return previous[-1]


def wer(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / reference words, by edit distance."""
    ref, hyp = words(reference), words(hypothesis)
    if not ref:
        return float(bool(hyp))
    return edit_distance(ref, hyp) / len(ref)


# ------------------------------------------------------------------ test speech


def synthesize(text: str, folder: Path, *, voice: str, speed: int) -> bytes:
    """Real speech from espeak-ng, resampled by sox to 16 kHz mono s16le PCM."""
    if shutil.which("espeak-ng") is None or shutil.which("sox") is None:
        pytest.fail("espeak-ng and sox are needed: run scripts/setup.sh")
    name = f"{voice.replace('+', '_')}-{speed}-{abs(hash(text)) % 10**8}"
    raw, wav = folder / f"{name}.raw.wav", folder / f"{name}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(wav)], check=True)
    return read_wav_16k(wav)


def white_noise(samples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(samples)


def pink_noise(samples: int, seed: int) -> np.ndarray:
    """1/f noise: white noise shaped in the frequency domain (power falls 3 dB per octave)."""
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(samples))
    freqs = np.fft.rfftfreq(samples)
    freqs[0] = freqs[1]
    pink = np.fft.irfft(spectrum / np.sqrt(freqs), n=samples)
    return pink / np.std(pink)


def mix_at_snr(pcm: bytes, noise: np.ndarray, snr_db: float) -> bytes:
    """Speech plus noise scaled so that speech power / noise power = `snr_db` over the clip."""
    speech = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    noise = noise[: speech.size]
    scale = np.sqrt(np.mean(speech**2) / (np.mean(noise**2) * 10 ** (snr_db / 10)))
    mixed = speech + noise * scale
    return np.clip(mixed, -32768, 32767).astype("<i2").tobytes()


def clipped(pcm: bytes, gain: float = 8.0) -> bytes:
    """Overdriven input: amplified until most peaks flatten at full scale."""
    speech = np.frombuffer(pcm, dtype="<i2").astype(np.float64) * gain
    return np.clip(speech, -32768, 32767).astype("<i2").tobytes()


def dc_shifted(pcm: bytes, offset: float = 0.25) -> bytes:
    """Input riding on a constant offset (a quarter of full scale), as cheap sound cards give."""
    speech = np.frombuffer(pcm, dtype="<i2").astype(np.float64) + offset * 32768
    return np.clip(speech, -32768, 32767).astype("<i2").tobytes()


@dataclass(frozen=True)
class Clip:
    text: str
    voice: str
    speed: int
    pcm: bytes


def make_clips(folder: Path, grid: tuple[tuple[str, int], ...]) -> list[Clip]:
    """One clip per (voice, speed) of `grid`, each saying the next phrase."""
    clips = []
    for i, (voice, speed) in enumerate(grid):
        text = PHRASES[i % len(PHRASES)]
        clips.append(Clip(text, voice, speed, synthesize(text, folder, voice=voice, speed=speed)))
    return clips


def noisy(clip: Clip, snr: float | None, kind: str, seed: int) -> bytes:
    if snr is None:
        return clip.pcm
    samples = len(clip.pcm) // 2
    noise = white_noise(samples, seed) if kind == "white" else pink_noise(samples, seed)
    return mix_at_snr(clip.pcm, noise, snr)


def snr_label(snr: float | None) -> str:
    return "clean" if snr is None else f"{snr:g} dB"


# ------------------------------------------------------------------ tests


@pytest.fixture(scope="module")
def recognizer() -> SpeechClient:
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True))
    whisper._load_sync()
    return SpeechClient(whisper)


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> list[Clip]:
    return make_clips(tmp_path_factory.mktemp("wer"), TEST_GRID)


async def transcribe(client: SpeechClient, pcm: bytes) -> str:
    async def whole() -> object:
        yield pcm

    events = [e async for e in client.stream(whole())]  # type: ignore[arg-type]
    assert [e.is_final for e in events] == [True]
    return events[0].text


def test_wer_counts_substitutions_deletions_and_insertions() -> None:
    assert wer("turn on the lights", "Turn on the lights.") == 0.0
    assert wer("turn on the lights", "turn off the lights") == 0.25
    assert wer("turn on the lights", "turn the lights") == 0.25
    assert wer("turn on the lights", "please turn on all the lights") == 0.5
    assert wer("a b", "") == 1.0


def test_pink_noise_has_more_power_in_the_lows() -> None:
    noise = pink_noise(16000, seed=1)
    power = np.abs(np.fft.rfft(noise)) ** 2
    assert power[10:100].mean() > 10 * power[5000:6000].mean()
    mixed = np.frombuffer(mix_at_snr(np.full(16000, 1000, "<i2").tobytes(), noise, 20.0), "<i2")
    assert abs(np.mean((mixed - 1000.0) ** 2) - 1000.0**2 / 100) < 0.05 * 1000.0**2 / 100


async def test_word_error_rate_stays_within_bounds_per_snr(
    recognizer: SpeechClient, clips: list[Clip]
) -> None:
    rows: list[tuple[str, str, int, str, float, str]] = []
    by_snr: dict[float | None, list[float]] = {snr: [] for snr in SNRS}
    for i, clip in enumerate(clips):
        for snr in SNRS:
            kind = "white" if (i + SNRS.index(snr)) % 2 else "pink"
            heard = await transcribe(recognizer, noisy(clip, snr, kind, seed=100 + i))
            score = wer(clip.text, heard)
            by_snr[snr].append(score)
            label = snr_label(snr) + ("" if snr is None else f" {kind}")
            rows.append((label, clip.voice, clip.speed, clip.text, score, heard))
    print("\nWER, whisper_local (tiny.en), espeak-ng speech")
    for label, voice, speed, text, score, heard in rows:
        print(f"  {label:<14} {voice:<6} {speed}  WER {score:.2f}  {text!r} -> {heard!r}")
    for snr, scores in by_snr.items():
        print(f"  mean WER {snr_label(snr):<6} {statistics.mean(scores):.3f}  (n={len(scores)})")
    for snr, scores in by_snr.items():
        assert statistics.mean(scores) <= WER_BOUNDS[snr], (snr_label(snr), scores)


@pytest.mark.parametrize("damage", ["clipping", "dc offset"])
async def test_damaged_input_is_still_transcribed(
    recognizer: SpeechClient, clips: list[Clip], damage: str
) -> None:
    clip = clips[0]
    pcm = clipped(clip.pcm) if damage == "clipping" else dc_shifted(clip.pcm)
    heard = await transcribe(recognizer, pcm)
    print(f"\n{damage}: {clip.text!r} -> {heard!r}  WER {wer(clip.text, heard):.2f}")
    assert wer(clip.text, heard) <= 0.25

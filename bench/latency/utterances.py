"""The false cut-off set: espeak-ng utterances in several voices and speeds, some
complete questions and some sentences with a pause in the middle.

A system that ends the turn inside the pause has cut the speaker off; on a complete
question, how long after the end of speech it ends the turn is its end-of-turn delay.
Only the standard library and numpy (the Pipecat runner imports this module too).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import wave
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000

COMPLETE = (
    "What is the weather like on the moon today?",
    "Can you tell me a joke?",
    "How far away is the sun?",
    "What time is it in Tokyo right now?",
    "Could you remind me to call my mother tomorrow?",
    "Hello there, can you tell me what's on my screen right now?",
    "Why is the sky blue?",
    "What should I cook for dinner tonight?",
    "Do you know any good books about space?",
    "How do I make a cup of green tea?",
    "Please turn the music down a little.",
    "Thanks, that was really helpful.",
    "What's the capital of Australia?",
    "Can you read me the news?",
    "I'd like to hear a story about dragons.",
    "Is it going to rain this weekend?",
    "How many legs does a spider have?",
    "Good morning, how are you today?",
    "What did we talk about yesterday?",
    "Could you explain how rainbows form?",
    "Play something relaxing, please.",
    "What's a good name for a goldfish?",
    "Tell me something interesting about octopuses.",
    "Where is the nearest train station?",
)
# (before the pause, after it): the speaker is not done at the pause.
PAUSED = (
    ("I want to tell you about", "my cat."),
    ("Can you help me with", "the report?"),
    ("I was thinking that maybe", "we could go to the park."),
    ("What do you think about", "the new movie?"),
    ("Could you remind me to", "buy some milk?"),
    ("My favourite colour is", "blue."),
    ("Tomorrow I have to", "finish my homework."),
    ("Tell me something about", "the history of Rome."),
    ("I need to", "send an email to my boss."),
    ("The best thing about summer is", "the long evenings."),
    ("Can you find me a recipe for", "chocolate cake?"),
    ("So the problem is that", "my computer keeps crashing."),
    ("Yesterday I went to", "the museum with my sister."),
    ("How do I", "change the password?"),
    ("What I really want is", "a quiet weekend."),
    ("Remind me what", "the doctor said."),
    ("I'm looking for", "a birthday present for my dad."),
    ("Could you tell me", "how long it takes to boil an egg?"),
    ("The thing I like most about you is", "your voice."),
    ("Let me think, I would like", "a cup of coffee."),
    ("Show me", "the photos from last summer."),
    ("Why does my phone", "get so hot?"),
    ("Before we start, can you", "check my calendar?"),
    ("I don't know if", "I should go out tonight."),
)
PAUSES_S = (0.4, 0.6, 0.8, 1.0, 1.2, 1.5)
# espeak-ng voices (and variants) with words-per-minute: several voices and speeds.
VOICES = (
    ("en-us", 160),
    ("en-gb", 150),
    ("en-us+f3", 175),
    ("en-gb-scotland", 140),
    ("en-029", 165),
    ("en-us-nyc", 185),
    ("en-gb-x-rp+f2", 155),
    ("en-us+m3", 145),
)
LEAD_S = 0.5  # silence before the speech
TAIL_S = 4.0  # after it: longer than any system's fallback, as a microphone keeps going


@dataclass(frozen=True)
class Utterance:
    """One stimulus: `wav` holds lead silence, speech (with `pause_s` in the middle for
    a paused sentence) and tail silence. Sample offsets are from the file's start."""

    name: str
    text: str
    kind: str  # "complete" or "paused"
    voice: str
    wpm: int
    wav: str
    speech_end: int  # where the speaker finished
    pause_start: int | None = None  # a paused sentence: where the pause begins ...
    pause_end: int | None = None  # ... and ends

    @property
    def speech_end_s(self) -> float:
        return self.speech_end / SAMPLE_RATE


def _espeak(text: str, voice: str, wpm: int, path: Path) -> np.ndarray:
    """`text` (SSML: a paused sentence is one sentence with a `<break>`, so its first
    half keeps the intonation of a sentence that goes on) spoken, 16 kHz mono."""
    raw = path.with_suffix(".raw.wav")
    subprocess.run(
        ["espeak-ng", "-m", "-v", voice, "-s", str(wpm), "-w", str(raw), text], check=True
    )
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(path)], check=True)
    raw.unlink()
    with wave.open(str(path), "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    path.unlink()
    return pcm


def _loud_frames(pcm: np.ndarray) -> np.ndarray:
    """Indices of the 10 ms frames with speech energy (above 2 % of the loudest
    frame's RMS, and above -60 dBFS)."""
    samples = pcm.astype(np.float32)
    n = samples.size // 160
    rms = np.sqrt((samples[: n * 160].reshape(n, 160) ** 2).mean(axis=1))
    return np.nonzero(rms > max(0.02 * float(rms.max()), 32.0))[0]


def _trim(pcm: np.ndarray) -> np.ndarray:
    """The speech without espeak's own leading and trailing silence."""
    loud = _loud_frames(pcm)
    return pcm[loud[0] * 160 : (loud[-1] + 1) * 160] if loud.size else pcm


def _longest_gap(pcm: np.ndarray) -> tuple[int, int]:
    """The longest silence inside trimmed speech: (start, end) sample offsets."""
    loud = _loud_frames(pcm)
    gaps = np.diff(loud)
    i = int(np.argmax(gaps))
    return int((loud[i] + 1) * 160), int(loud[i + 1] * 160)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SAMPLE_RATE), dtype="<i2")


def _write(path: Path, pcm: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(pcm.astype("<i2").tobytes())


def build(folder: Path) -> list[Utterance]:
    """Make (or reuse) every stimulus under `folder`; the list is also written to
    `folder/utterances.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    made: list[Utterance] = []
    plan: list[tuple[str, str, tuple[str, ...], float | None]] = [
        ("complete", text, (text,), None) for text in COMPLETE
    ]
    plan += [
        ("paused", f"{a} … {b}", (a, b), PAUSES_S[i % len(PAUSES_S)])
        for i, (a, b) in enumerate(PAUSED)
    ]
    for i, (kind, text, parts, pause_s) in enumerate(plan):
        voice, wpm = VOICES[i % len(VOICES)]
        key = hashlib.sha1(f"{text}|{voice}|{wpm}|{pause_s}".encode()).hexdigest()[:8]
        name = f"{kind}-{i:02d}-{key}"
        wav, meta = folder / f"{name}.wav", folder / f"{name}.json"
        if wav.exists() and meta.exists():
            made.append(Utterance(**json.loads(meta.read_text())))
            continue
        lead = _silence(LEAD_S)
        pause_start = pause_end = None
        if pause_s is None:
            speech = _trim(_espeak(parts[0], voice, wpm, folder / f"{name}.part.wav"))
        else:
            # espeak's pause is not exactly the break asked for: ask again, corrected.
            break_ms = pause_s * 1000
            for _ in range(3):
                ssml = f'{parts[0]} <break time="{max(0, round(break_ms))}ms"/> {parts[1]}'
                speech = _trim(_espeak(ssml, voice, wpm, folder / f"{name}.part.wav"))
                start, end = _longest_gap(speech)
                error_ms = (end - start) / SAMPLE_RATE * 1000 - pause_s * 1000
                if abs(error_ms) < 30:
                    break
                break_ms -= error_ms
            pause_start, pause_end = lead.size + start, lead.size + end
        _write(wav, np.concatenate([lead, speech, _silence(TAIL_S)]))
        utterance = Utterance(
            name=name,
            text=text,
            kind=kind,
            voice=voice,
            wpm=wpm,
            wav=str(wav),
            speech_end=lead.size + speech.size,
            pause_start=pause_start,
            pause_end=pause_end,
        )
        meta.write_text(json.dumps(asdict(utterance)))
        made.append(utterance)
    (folder / "utterances.json").write_text(json.dumps([asdict(u) for u in made], indent=1))
    return made


def load(folder: Path) -> list[Utterance]:
    return [Utterance(**u) for u in json.loads((folder / "utterances.json").read_text())]

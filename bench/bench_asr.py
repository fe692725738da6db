"""Embedded speech recognition (whisper_local): latency, word and character error
rates, by model and language, with and without the names the companion knows.

    python bench/bench_asr.py [--models tiny.en,base] [--threads 2] [--runs 5]
                              [--only latency,wer,questions,names,chinese]

For each model (int8, `--threads` threads):
1. latency: speech end → final transcript for a ~3 s espeak-ng utterance, p50/p95
   over `--runs` runs, two ways:
   - whole utterance: the audio handed over at once after endpointing (how
     `VoiceSession` calls it); measured from the call to the final event;
   - live stream: 50 ms chunks in real time with partials on (1 s interval),
     followed by the 640 ms of trailing silence the endpointer waits for;
     measured from the last chunk to the final event.
2. wer: every voice and speed of tests/test_speech_wer.py, clean and with white and
   pink noise at 20 and 10 dB SNR, plus clipped and DC-shifted input.
3. questions: the 12 questions of bench/bench_conversation.py (tests/asr_phrases.py),
   each in all six of its espeak-ng voices at its speed, clean and with 10 dB white
   noise: WER (numbers as words: "8" = "eight"), the questions heard wrong in their own
   voice, and the mean time per utterance. English decoding is the adapter's
   (`ENGLISH_BEAM_SIZE`; bench/bench_asr_decoding.py compares the set-ups).
4. names: twelve sentences holding names (tests/asr_phrases.py), each in one of six
   espeak-ng voices, clean and with 10 dB white noise, without and with the known
   names passed as hotwords (`set_known_words`): WER, names heard as written, and
   the mean time per utterance; plus the plain phrases of (2) with the names passed
   (what biasing costs where no name is said).
Then for the multilingual model:
5. chinese: 22 Chinese phrases said by espeak-ng's tone-numbered pinyin voice
   (pypinyin), with speech.language = zh and with auto (windows in Chinese):
   character error rate and time per utterance.

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
from tests.asr_phrases import (
    CHINESE_PHRASES,
    CONVERSATION_QUESTIONS,
    CONVERSATION_SPEED,
    CONVERSATION_VOICES,
    KNOWN_NAMES,
    NAME_SENTENCES,
    NAME_VOICES,
    cer,
    names_heard,
    question_wer,
    speak_chinese,
)
from tests.test_speech_wer import (
    FULL_GRID,
    SNRS,
    Clip,
    clipped,
    dc_shifted,
    make_clips,
    mix_at_snr,
    noisy,
    snr_label,
    synthesize,
    wer,
    white_noise,
)

UTTERANCE = "Hey, could you open my calendar and tell me about today?"
TRAILING_SILENCE_S = 0.64
SECTIONS = ("latency", "wer", "questions", "names", "chinese")


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


def recognizer(model: str, threads: int, **config: object) -> SpeechClient:
    settings = {"enabled": True, "model": model, "threads": threads, "partial_interval_s": 1.0}
    settings.update(config)
    return SpeechClient(WhisperLocalAdapter(SpeechConfig(**settings)))  # type: ignore[arg-type]


async def latency(client: SpeechClient, folder: Path, runs: int) -> None:
    pcm = synthesize(UTTERANCE, folder, voice="en-us", speed=165)
    print(f"\nSpeech end → final transcript, {len(pcm) / 32000:.1f} s utterance: {UTTERANCE!r}")
    await whole_utterance_ms(client, pcm)  # warm-up
    whole = []
    text = ""
    for _ in range(runs):
        ms, text = await whole_utterance_ms(client, pcm)
        whole.append(ms)
    report("whole utterance (the session's path)", whole)
    print(f"    heard: {text!r}  WER {wer(UTTERANCE, text):.2f}")
    results = [await live_stream_ms(client, pcm) for _ in range(runs)]
    report("live stream, last chunk → final", [r[0] for r in results])
    partials = [r[2] for r in results]
    print(f"    partial events per utterance: mean {statistics.mean(partials):.1f}")


async def wer_table(client: SpeechClient, folder: Path) -> None:
    clips = make_clips(folder, FULL_GRID)
    print("\nWord error rate on espeak-ng speech")
    print(f"  {len(clips)} clips: voices x speeds {', '.join(f'{v}@{s}' for v, s in FULL_GRID)}")
    table: dict[str, list[float]] = {}

    async def score(label: str, clip: Clip, pcm: bytes) -> None:
        _ms, text = await whole_utterance_ms(client, pcm)
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


async def questions_table(client: SpeechClient, folder: Path) -> None:
    print(
        f"\nConversation questions: {len(CONVERSATION_QUESTIONS)} x voices "
        f"{', '.join(CONVERSATION_VOICES)} at {CONVERSATION_SPEED} wpm"
    )
    wrong: list[str] = []
    for snr in (None, 10.0):
        scores, times = [], []
        for i, (text, own) in enumerate(CONVERSATION_QUESTIONS):
            for j, voice in enumerate(CONVERSATION_VOICES):
                pcm = synthesize(text, folder, voice=voice, speed=CONVERSATION_SPEED)
                if snr is not None:
                    pcm = mix_at_snr(pcm, white_noise(len(pcm) // 2, seed=300 + 10 * i + j), snr)
                ms, heard = await whole_utterance_ms(client, pcm)
                times.append(ms)
                scores.append(question_wer(text, heard))
                if snr is None and voice == own and scores[-1] > 0:
                    wrong.append(f"{scores[-1]:.2f} [{voice}] {text!r} -> {heard!r}")
        print(
            f"  {snr_label(snr):<8} mean WER {statistics.mean(scores):.3f}; "
            f"time/utterance mean {statistics.mean(times):.0f} ms, p95 {pct(times, 0.95):.0f} ms"
        )
    print(f"  heard wrong in their own voice (clean): {len(wrong)}/{len(CONVERSATION_QUESTIONS)}")
    for line in wrong:
        print(f"    {line}")


async def names_table(client: SpeechClient, folder: Path) -> None:
    clips = [
        (text, names, synthesize(text, folder, voice=NAME_VOICES[i % len(NAME_VOICES)], speed=160))
        for i, (text, names) in enumerate(NAME_SENTENCES)
    ]
    total_names = sum(len(names) for _, names, _ in clips)
    print(
        f"\nNames: {len(clips)} sentences, voices {', '.join(NAME_VOICES)} in turn; "
        f"{len(KNOWN_NAMES)} known names passed when biased"
    )
    print(f"  {'condition':<18} {'biased':<7} {'mean WER':>8} {'names heard':>12} {'ms/utt':>7}")
    misheard: list[str] = []
    for snr in (None, 10.0):
        for biased in (False, True):
            adapter = client.adapter
            assert isinstance(adapter, WhisperLocalAdapter)
            adapter.set_known_words(KNOWN_NAMES if biased else ())
            scores, heard_names, times = [], 0, []
            for i, (text, names, pcm) in enumerate(clips):
                if snr is not None:
                    pcm = mix_at_snr(pcm, white_noise(len(pcm) // 2, seed=200 + i), snr)
                ms, heard = await whole_utterance_ms(client, pcm)
                times.append(ms)
                scores.append(wer(text, heard))
                found = names_heard(names, heard)
                heard_names += found
                if snr is None and found < len(names):
                    misheard.append(f"{'biased' if biased else 'plain '}: {text!r} -> {heard!r}")
            print(
                f"  {snr_label(snr):<18} {'yes' if biased else 'no':<7} "
                f"{statistics.mean(scores):8.3f} {heard_names:>6}/{total_names:<5} "
                f"{statistics.mean(times):7.0f}"
            )
    plain = make_clips(folder, FULL_GRID)
    for biased in (False, True):
        adapter = client.adapter
        assert isinstance(adapter, WhisperLocalAdapter)
        adapter.set_known_words(KNOWN_NAMES if biased else ())
        scores = [wer(c.text, (await whole_utterance_ms(client, c.pcm))[1]) for c in plain]
        print(
            f"  {'no names, clean':<18} {'yes' if biased else 'no':<7} "
            f"{statistics.mean(scores):8.3f} {'-':>12} {'':>7}"
        )
    client.adapter.set_known_words(())  # type: ignore[attr-defined]
    print("  names missed (clean):")
    for line in misheard:
        print(f"    {line}")


async def chinese_table(model: str, threads: int, folder: Path) -> None:
    print(
        f"\nChinese: {len(CHINESE_PHRASES)} phrases, espeak-ng cmn-latn-pinyin (pypinyin "
        "tone numbers); CER = character edits / reference characters, punctuation not counted"
    )
    for speed, label, config in (
        (120, "zh", {"language": "zh"}),
        (120, "auto, windows in Chinese", {"language": "auto", "ui_language": "zh_CN"}),
        (150, "zh", {"language": "zh"}),
    ):
        clips = [(text, speak_chinese(text, folder, speed=speed)) for text in CHINESE_PHRASES]
        seconds = statistics.mean(len(pcm) / 32000 for _, pcm in clips)
        client = recognizer(model, threads, **config)
        await client.load()
        scores, times, languages = [], [], []
        examples = []
        for text, pcm in clips:

            async def once(pcm: bytes = pcm) -> AsyncIterator[bytes]:
                yield pcm

            start = time.perf_counter()
            events = [e async for e in client.stream(once())]
            times.append((time.perf_counter() - start) * 1000)
            scores.append(cer(text, events[-1].text))
            languages.append(events[-1].language)
            examples.append(f"{scores[-1]:.2f}  {text} -> {events[-1].text}")
        in_chinese = sum(language == "zh" for language in languages)
        print(
            f"  {label:<26} espeak -s {speed} ({seconds:.1f} s/phrase): CER mean "
            f"{statistics.mean(scores):.3f}, median {statistics.median(scores):.3f}; "
            f"heard as zh {in_chinese}/{len(clips)}; time/utterance mean "
            f"{statistics.mean(times):.0f} ms, p95 {pct(times, 0.95):.0f} ms"
        )
        if speed == 120 and config["language"] == "zh":
            for line in examples:
                print(f"    {line}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="tiny.en,base")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default=",".join(SECTIONS))
    args = parser.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for model in args.models.split(","):
            print(f"\n=== {model} (int8, {args.threads} threads)")
            client = recognizer(model, args.threads, language="en")
            start = time.perf_counter()
            await client.load()
            print(f"model load {1000 * (time.perf_counter() - start):.0f} ms")
            if "latency" in only:
                await latency(client, folder, args.runs)
            if "wer" in only:
                await wer_table(client, folder)
            if "questions" in only:
                await questions_table(client, folder)
            if "names" in only:
                await names_table(client, folder)
            if "chinese" in only and not model.endswith(".en"):
                await chinese_table(model, args.threads, folder)


if __name__ == "__main__":
    asyncio.run(main())

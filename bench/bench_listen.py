"""Listening figures: CPU of always-on listening, barge-in → silence, false interruptions.

    python bench/bench_listen.py [--seconds 20] [--sentences 12] [--no-pulse]

1. CPU: process CPU time while `VoiceSession.listen` hears `--seconds` of real-time
   silence (digital zeros, then a quiet room at -60 dBFS), as a % of one core
   (budget ≤ 2 %), with the VAD's room-noise gate off and on; then while someone talks
   (espeak-ng phrases in that room): the whole listening path with the words heard
   while they speak (whisper at pauses and intervals, the turn model) and without
   (whisper once per turn, after it), the difference being what hearing ahead costs;
   then `SileroVad` + `Endpointer` alone (CPU s per audio s) on silence, the room, and
   the talking, with the model calls the gate saved.
2. Barge-in decision → playback silent: `sink.stop()` while a sentence plays, to the
   last chunk leaving `MemorySink(realtime=True)`, and to `play()` returning on a
   `SoundDeviceSink` on a PulseAudio null sink (budget ≤ 50 ms).
3. False interruptions on a simulated room: the companion's real TTS (pyttsx3)
   heard back delayed (30-80 ms), attenuated (-6..-20 dB), reverberated, with noise;
   barge-in counted with WebRTC AEC3, without cancellation at the normal bar, and
   without cancellation at a "higher bar" (p ≥ 0.8 for 1 s); then a real user
   (espeak-ng, another voice) speaking over it, and how often it is detected.

Prints only; nothing is asserted (tests/test_echo.py holds the ratio bounds).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.agent.storage import InMemoryStorage  # noqa: E402
from app.audio.capture import ChunkListSource  # noqa: E402
from app.audio.echo import HalfDuplex, WebRtcEchoCanceller  # noqa: E402
from app.audio.playback import MemorySink, SoundDeviceSink  # noqa: E402
from app.audio.resample import resample  # noqa: E402
from app.audio.simulated_room import room_echo, run_room  # noqa: E402
from app.audio.vad import BargeInDetector, Endpointer, GateConfig, SileroVad  # noqa: E402
from app.audio.wav import read_wav_16k  # noqa: E402
from app.config import Settings, TTSSettings  # noqa: E402
from app.tts import SynthesizedAudio, create_tts_engine  # noqa: E402

SENTENCES = [
    "Hello there, it is nice to see you again today.",
    "The weather looks sunny, so maybe we could go for a walk later.",
    "Did you know that octopuses have three hearts?",
    "I was reading about the history of tea, and it is fascinating.",
    "Let me think about that for a second, okay?",
    "Honestly, I think you are doing a great job with your project.",
    "Mm, that is a tricky question, but I will try my best to answer it.",
    "Ha ha, you always make me laugh when you say things like that!",
    "First, open the settings. Then pick the microphone you want to use.",
    "Three point one four is the start of pi, which never ends.",
    "Oh no, I'm sorry to hear that. Do you want to talk about it?",
    "Right, so the plan is: breakfast, a short walk, and then some reading.",
]
USER_LINES = [
    ("en-gb+f3", "Wait, stop, I have a question about that."),
    ("en-us+m3", "Hold on, can you say that again please?"),
    ("en-gb+m7", "Actually, no, I meant something else."),
]
USER_AT_S = 0.8


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# ----- 1. CPU of always-on listening -------------------------------------------------
def room_chunks(seconds: float, noise_dbfs: float | None, seed: int = 0) -> list[bytes]:
    """512-sample chunks of digital silence (None) or steady noise at `noise_dbfs`."""
    n = int(seconds * 16_000 / 512)
    if noise_dbfs is None:
        return [b"\0" * 1024] * n
    rng = np.random.default_rng(seed)
    sigma = 32768 * 10 ** (noise_dbfs / 20)
    samples = np.clip(rng.normal(0, sigma, n * 512), -32768, 32767).astype("<i2").tobytes()
    return [samples[i * 1024 : (i + 1) * 1024] for i in range(n)]


def talk_chunks(seconds: float, noise_dbfs: float = -60.0) -> list[bytes]:
    """Someone talking in the quiet room: espeak phrases at about -26 dBFS, 0.4-1 s apart."""
    rng = np.random.default_rng(1)
    lines = [espeak(voice, text) for voice, text in USER_LINES]
    out = rng.normal(0, 32768 * 10 ** (noise_dbfs / 20), int(seconds * 16_000))
    at = 0
    while at < out.size:
        line = lines[int(rng.integers(len(lines)))]
        n = min(line.size, out.size - at)
        out[at : at + n] += line[:n] * 0.7
        at += n + int(rng.uniform(0.4, 1.0) * 16_000)
    pcm = np.clip(np.rint(out), -32768, 32767).astype("<i2").tobytes()
    return [pcm[i : i + 1024] for i in range(0, len(pcm) - 1023, 1024)]


def vad_path_cpu(chunks: list[bytes], gate: bool) -> tuple[float, int]:
    """% of one core (CPU s per audio s) of `SileroVad` + `Endpointer` alone, and the
    model calls, as fast as it goes (no pacing, no session)."""
    vad, endpointer = SileroVad(gate=GateConfig(enabled=gate)), Endpointer()
    for chunk in chunks[:20]:  # the model's first runs are not the steady state
        vad.probability(chunk)
    vad.reset()
    calls0, cpu0 = vad.model_calls, time.process_time()
    for chunk in chunks:
        endpointer.push(chunk, vad.probability(chunk))
    cpu = time.process_time() - cpu0
    return 100 * cpu / (len(chunks) * 512 / 16_000), vad.model_calls - calls0


async def listen_cpu(
    seconds: float,
    noise_dbfs: float | None,
    gate: bool = True,
    *,
    chunks: list[bytes] | None = None,
    hearing: bool = True,
) -> tuple[float, dict[str, float]]:
    """% of one core while `VoiceSession.listen` hears `chunks` (default: the room) in
    real time, and what the turn-taking did meanwhile."""
    from app.session import VoiceSession, listening

    if not gate:  # the listener makes its own SileroVad: one without the gate
        gateless = partial(SileroVad, gate=GateConfig(enabled=False))
        listening.SileroVad = gateless  # type: ignore[assignment,misc]
    settings = Settings()
    settings.chat.model = "openai-compatible/none"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    settings.turn.live_transcript = hearing
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    chunks = chunks if chunks is not None else room_chunks(seconds, noise_dbfs)
    # Load the models first: the figure is the steady state, not the model load.
    await session.load_models()
    await session.listen(ChunkListSource(room_chunks(0.5, noise_dbfs)))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await session.listen(ChunkListSource(chunks, realtime=True))
    await session.host.until_idle()  # the last turn's words, if any
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    figures = session.host.figures()
    done = {
        "transcriptions": float(figures.transcriptions),
        "transcribing_s": figures.transcribing_s,
        "turn_model_calls": float(figures.turn_model_calls),
        "turns": float(figures.turns),
    }
    await session.aclose()
    listening.SileroVad = SileroVad  # type: ignore[misc]
    return 100 * cpu / wall, done


# ----- 2. barge-in decision → silence ------------------------------------------------
async def stop_to_silence_memory(audio: SynthesizedAudio, runs: int) -> list[float]:
    delays = []
    for _ in range(runs):
        sink = MemorySink(realtime=True)
        play = asyncio.create_task(sink.play(audio))
        await asyncio.sleep(0.3 + np.random.default_rng().uniform(0, 0.04))
        t0 = time.perf_counter()
        sink.stop()
        await play  # returns when the chunk already handed out has played to its end
        delays.append((time.perf_counter() - t0) * 1000)
    return delays


async def stop_to_silence_pulse(audio: SynthesizedAudio, runs: int) -> list[float] | str:
    try:
        import sounddevice as sd

        from tests.pulse import MONITOR, SINK, PulseServer
    except Exception as exc:
        return f"skipped ({exc})"
    import os

    server = PulseServer()
    try:
        server.start()
    except Exception as exc:
        return f"skipped (PulseAudio did not start: {exc})"
    saved = dict(os.environ)
    try:
        os.environ.update(server.env(base={}, PULSE_SINK=SINK, PULSE_SOURCE=MONITOR))
        sd._terminate()
        sd._initialize()
        sink = SoundDeviceSink("pulse")
        delays = []
        for _ in range(runs):
            play = asyncio.create_task(sink.play(audio))
            await asyncio.sleep(0.4 + np.random.default_rng().uniform(0, 0.04))
            t0 = time.perf_counter()
            sink.stop()
            await play
            delays.append((time.perf_counter() - t0) * 1000)
        await sink.aclose()
        return delays
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()
        sd._terminate()
        sd._initialize()


# ----- 3. false interruptions on a simulated room -------------------------------------
def room_counts(
    replies: list[SynthesizedAudio],
    users: list[np.ndarray],
    *,
    mode: str,
    attenuation_db: float,
    delays_ms: tuple[float, ...] = (30, 50, 80),
) -> tuple[int, int, int, int]:
    """(false barge-ins, sentences) with echo only; (detected, trials) with a user."""
    vad = SileroVad()
    false_, trials, detected, user_trials = 0, 0, 0, 0
    for i, reply in enumerate(replies):
        played = np.frombuffer(reply.pcm, "<i2")
        played16 = resample(played, reply.sample_rate)
        for delay in delays_ms:
            mic = room_echo(played16, delay_ms=delay, attenuation_db=attenuation_db, seed=i)
            for user in [None, users[i % len(users)]]:
                m = mic.copy()
                if user is not None:
                    at = int(16_000 * USER_AT_S)
                    n = min(user.size, m.size - at)
                    m[at : at + n] += user[:n] * 0.7
                if mode == "aec":
                    canceller: WebRtcEchoCanceller | HalfDuplex = WebRtcEchoCanceller()
                    detector = BargeInDetector(500)
                elif mode == "raw":
                    canceller, detector = HalfDuplex(), BargeInDetector(500)
                else:  # "higher bar" without cancellation
                    canceller = HalfDuplex()
                    detector = BargeInDetector(1000, threshold=0.8, stop_threshold=0.6)
                vad.reset()
                fired = run_room(played, reply.sample_rate, m, canceller, vad.probability, detector)
                if user is None:
                    trials += 1
                    false_ += bool(fired)
                    echo_fired = bool(fired) and fired[0] <= USER_AT_S + 1.0
                else:
                    # Only the first barge-in counts (it stops playback), and only when
                    # the echo alone would not have fired by then.
                    user_trials += 1
                    detected += bool(fired) and fired[0] > USER_AT_S and not echo_fired
    return false_, trials, detected, user_trials


async def synth(texts: list[str]) -> list[SynthesizedAudio]:
    engine = create_tts_engine(TTSSettings())
    try:
        return [await engine.synthesize(t) for t in texts]
    finally:
        await engine.aclose()


def espeak(voice: str, text: str) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "u.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", str(path), text], check=True)
        return np.frombuffer(read_wav_16k(path), "<i2").astype(np.float32)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    parser.add_argument("--no-pulse", action="store_true")
    parser.add_argument("--cpu-only", action="store_true", help="only the CPU figures")
    args = parser.parse_args()

    print("== always-on listening CPU (budget <= 2 % of one core) ==")
    print(f"  VoiceSession.listen, {args.seconds:g} s fed in real time (% of one core):")
    print("                         gate off   gate on")
    for label, noise in (("digital silence", None), ("quiet room -60 dBFS", -60.0)):
        off, _ = await listen_cpu(args.seconds, noise, gate=False)
        on, _ = await listen_cpu(args.seconds, noise, gate=True)
        print(f"  {label:22s} {off:6.2f} %  {on:6.2f} %")
    talk = talk_chunks(60.0)
    speaking = talk[: int(args.seconds * 16_000 / 512)]
    print(f"  while someone talks in that room ({args.seconds:g} s; % of one core):")
    for label, hearing in (("words heard ahead", True), ("words heard after", False)):
        cpu, done = await listen_cpu(args.seconds, -60.0, chunks=speaking, hearing=hearing)
        print(
            f"  {label:22s} {cpu:6.1f} %   ({done['turns']:.0f} turns, "
            f"{done['transcriptions']:.0f} transcriptions ahead taking "
            f"{done['transcribing_s']:.1f} s, {done['turn_model_calls']:.0f} turn-model calls)"
        )
    print("  SileroVad + Endpointer alone, 60 s of audio (% of one core; model calls):")
    for label, chunks in (
        ("digital silence", room_chunks(60.0, None)),
        ("quiet room -60 dBFS", room_chunks(60.0, -60.0)),
        ("talking in that room", talk),
    ):
        (off, off_calls), (on, on_calls) = vad_path_cpu(chunks, False), vad_path_cpu(chunks, True)
        print(
            f"  {label:22s} {off:6.2f} %  {on:6.2f} %   "
            f"({off_calls} -> {on_calls} of {len(chunks)} frames)"
        )

    if args.cpu_only:
        return
    replies = await synth(SENTENCES[: args.sentences])
    print("\n== barge-in decision -> playback silent (budget <= 50 ms) ==")
    mem = await stop_to_silence_memory(replies[1], 20)
    print(
        f"  MemorySink(realtime)    p50 {statistics.median(mem):5.1f} ms"
        f"  p95 {pct(mem, 95):5.1f} ms  max {max(mem):5.1f} ms  (n={len(mem)})"
    )
    if not args.no_pulse:
        dev = await stop_to_silence_pulse(replies[1], 20)
        if isinstance(dev, str):
            print(f"  SoundDeviceSink (pulse) {dev}")
        else:
            print(
                f"  SoundDeviceSink (pulse) p50 {statistics.median(dev):5.1f} ms"
                f"  p95 {pct(dev, 95):5.1f} ms  max {max(dev):5.1f} ms  (n={len(dev)};"
                " stop() to the buffer dropped)"
            )

    users = [espeak(v, t) for v, t in USER_LINES]
    print("\n== simulated room: barge-in >= 500 ms, delays 30/50/80 ms ==")
    print("  mode            atten   false barge-ins (echo only)   user detected")
    for attenuation in (-6, -12, -20):
        for mode, label in (
            ("aec", "AEC3"),
            ("raw", "no AEC"),
            ("bar", "no AEC, high bar"),
        ):
            t0 = time.perf_counter()
            f, n, d, u = room_counts(replies, users, mode=mode, attenuation_db=attenuation)
            print(
                f"  {label:16s} {attenuation:4d} dB  {f:3d}/{n:<3d} ({100 * f / n:5.1f} %)"
                f"            {d:3d}/{u:<3d} ({100 * d / u:5.1f} %)"
                f"   [{time.perf_counter() - t0:.1f} s]"
            )
    print("  half-duplex gate (the fallback): 0 false barge-ins, 0 detected, by construction")


if __name__ == "__main__":
    asyncio.run(main())

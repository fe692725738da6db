"""Barge-in figures on the simulated room (`app.audio.simulated_room.SimulatedRoom`).

1. False barge-ins: the companion's real TTS (pyttsx3 with the default voice), many
   sentences, played into a room (delay 30/55/80 ms, attenuation -6/-12/-20 dB,
   a 60 ms reverb tail, noise at -55 dBFS) and heard back by the microphone; every
   sentence on a cold canceller with barge-in allowed from its first sample, so
   the warm-up is in every count (the session itself waits 1.5 s of the first reply).
   Counted with WebRTC AEC3, with no cancellation at the same bar (why the fallback
   is needed), and for the half-duplex fallback (the mic is gated while speaking:
   0 by construction, and no user is ever detected).
2. An overlapping user: the same sentences with a user (espeak-ng, three voices)
   starting 0.8 s into the sentence: detected when barge-in fires while they speak
   and the echo alone did not fire first.
3. A late listening loop: the microphone reaches the canceller 300 ms late when a
   sentence starts, then catches up; the reference lined up by the clock (now)
   against lined up by what had been read (before).
4. The whole session in the room (real Silero VAD, AEC3, whisper tiny.en, a scripted
   chat server on loopback): the word error rate of the user's overlapping question
   transcribed from the canceller's output only / the canceller's output with the
   raw microphone once the echo ended (what the session does) / the raw microphone
   only; user onset -> barge-in decision and decision -> speaker silent, in room time.
   (The real device's stop -> silence is in bench/bench_listen.py.)

Prints only. `python bench/bench_barge_in.py [--sentences N] [--sessions N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.audio.echo import RATE, EchoCanceller, HalfDuplex, WebRtcEchoCanceller  # noqa: E402
from app.audio.simulated_room import SimulatedRoom, room_barge_ins  # noqa: E402
from app.audio.vad import BargeInDetector, SileroVad  # noqa: E402
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
    "The train leaves at seven fifteen, so we should pack tonight.",
    "Cats sleep for about sixteen hours a day, which sounds lovely.",
    "If you water the plants on Monday, they will be fine until Friday.",
    "I remember you said you liked jazz, especially the old records.",
    "Sure! Here is a quick recipe: pasta, garlic, olive oil and lemon.",
    "That sounds like a wonderful idea for the weekend.",
    "Well, the answer depends on how much time you have.",
    "Octopuses can also change colour in a fraction of a second.",
    "Do not forget to drink some water and take a little break.",
    "The museum opens at ten and closes at six in the evening.",
    "My favourite season is autumn, because of the colours of the leaves.",
    "Let us try again, slowly this time, one step after another.",
    "You could write the report first and then answer the emails.",
    "There are about eight billion people living on the planet now.",
    "Good morning! Did you sleep well last night?",
    "I think the blue one looks nicer, but it is your choice.",
    "When the rain stops, the streets smell of wet stone and grass.",
    "Okay, I have set a reminder for your meeting at three o'clock.",
    "A long time ago, sailors used the stars to find their way home.",
    "That is a great question, and many scientists still argue about it.",
    "Maybe we can listen to some music while you work.",
    "The library has a new section with books about space travel.",
    "Try to breathe in slowly for four seconds, then breathe out.",
    "Chess is a game of patience, planning and a little bit of luck.",
]
USERS = [
    ("en-us", "What is the weather like today?"),
    ("en-gb+f3", "Wait, stop, I have a question about that."),
    ("en-us+m3", "Hold on, can you say that again please?"),
    ("en-gb+m7", "Actually, no, I meant something else."),
]
DELAYS_MS = (30, 55, 80)
ATTENUATIONS_DB = (-6, -12, -20)
USER_AT_S = 0.8
USER_GAIN = 0.7


def espeak(voice: str, text: str) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "u.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", str(path), text], check=True)
        return np.frombuffer(read_wav_16k(path), "<i2").astype(np.float32)


async def synth(texts: list[str]) -> list[SynthesizedAudio]:
    engine = create_tts_engine(TTSSettings())
    try:
        return [await engine.synthesize(t) for t in texts]
    finally:
        await engine.aclose()


# ----- 1-3. the echo alone, and a user over it ------------------------------------------
def one_room(
    reply: SynthesizedAudio,
    *,
    seed: int,
    delay_ms: float,
    attenuation_db: float,
    make: Callable[[SimulatedRoom], EchoCanceller],
    vad: SileroVad,
    user: np.ndarray | None = None,
    lag: Callable[[int], float] | None = None,
    quiet_s: float = 0.0,
) -> tuple[list[float], SimulatedRoom]:
    room = SimulatedRoom(delay_ms=delay_ms, attenuation_db=attenuation_db, seed=seed, lag=lag)
    if user is not None:
        room.say(user * USER_GAIN, after_played_s=USER_AT_S)
    vad.reset()
    settings = Settings()
    v = settings.vad
    detector = BargeInDetector(v.barge_in_ms, v.start_threshold, v.stop_threshold)
    fired = asyncio.run(
        room_barge_ins(room, reply, make(room), vad.probability, detector, quiet_s=quiet_s)
    )
    return fired, room


def aec(room: SimulatedRoom) -> EchoCanceller:
    return WebRtcEchoCanceller(clock=room.clock)


def none(room: SimulatedRoom) -> EchoCanceller:
    return HalfDuplex(clock=room.clock)  # passes the microphone through unchanged


def room_counts(
    replies: list[SynthesizedAudio],
    users: list[np.ndarray],
    attenuation_db: float,
    make: Callable[[SimulatedRoom], EchoCanceller],
) -> tuple[int, int, int, int, list[float]]:
    """(false, sentences, detected, trials, onset -> decision delays)."""
    vad = SileroVad()
    false_ = trials = detected = 0
    onsets: list[float] = []
    for i, reply in enumerate(replies):
        for delay in DELAYS_MS:
            kw: dict[str, Any] = dict(
                seed=i, delay_ms=delay, attenuation_db=attenuation_db, make=make, vad=vad
            )
            echo_fired, _ = one_room(reply, **kw)
            false_ += bool(echo_fired)
            user = users[(i + delay) % len(users)]
            fired, room = one_room(reply, user=user, **kw)
            trials += 1
            if not room.voices:
                continue
            start = room.voices[0][0] / RATE
            end = start + user.size / RATE
            first_echo = echo_fired[0] if echo_fired else 1e9
            hit = [t for t in fired if start < t <= end]
            if hit and hit[0] < first_echo:
                detected += 1
                onsets.append((hit[0] - start) * 1000)
    return false_, trials, detected, trials, onsets


def going_on_counts(
    replies: list[SynthesizedAudio],
    users: list[np.ndarray],
    attenuation_db: float,
    *,
    warm: bool = True,
) -> tuple[int, int, int, int, list[float]]:
    """The bar for a user who goes on (`turn.continue_speech_ms`, over the first
    `turn.continue_within_s` of a reply's sound) on a canceller warmed by the reply
    before, as the session's is after its first reply (`warm`), or cold, as at the
    session's first reply: (false, replies, detected, trials, onset -> decision delays)."""
    turn, v = Settings().turn, Settings().vad
    vad = SileroVad()
    false_ = trials = detected = 0
    onsets: list[float] = []
    gap = np.zeros(RATE, dtype="<i2").tobytes()  # a second between the two replies
    for i, reply in enumerate(replies):
        before = _at_16k(replies[i - 1]) + gap if warm else b""
        both = SynthesizedAudio(before + _at_16k(reply), RATE)
        starts = len(before) / 2 / RATE
        window = (starts, starts + turn.continue_within_s)
        for delay in DELAYS_MS:
            for user in (None, users[(i + delay) % len(users)]):
                room = SimulatedRoom(delay_ms=delay, attenuation_db=attenuation_db, seed=i)
                if user is not None:
                    room.say(user * USER_GAIN, at_s=starts + 0.3)
                vad.reset()
                detector = BargeInDetector(
                    turn.continue_speech_ms, v.start_threshold, v.stop_threshold
                )
                canceller = WebRtcEchoCanceller(clock=room.clock)
                fired = asyncio.run(
                    room_barge_ins(room, both, canceller, vad.probability, detector)
                )
                early = [t for t in fired if window[0] <= t <= window[1]]
                if user is None:
                    false_ += bool(early)
                    continue
                trials += 1
                start = room.voices[0][0] / RATE
                hit = [t for t in early if t > start]
                if hit:
                    detected += 1
                    onsets.append((hit[0] - start) * 1000)
    return false_, len(replies) * len(DELAYS_MS), detected, trials, onsets


def _at_16k(audio: SynthesizedAudio) -> bytes:
    from app.audio.resample import resample

    samples = np.frombuffer(audio.pcm, "<i2").astype(np.float32)
    out = resample(samples, audio.sample_rate, RATE)
    return np.clip(out, -32768, 32767).astype("<i2").tobytes()


def stalled(at_s: float, lag_s: float) -> Callable[[int], float]:
    def lag(position: int) -> float:
        if position < at_s * RATE:
            return 0.0
        return max(0.0, lag_s - (position / RATE - at_s) * 0.5)

    return lag


def lagging_counts(replies: list[SynthesizedAudio], by_clock: bool) -> tuple[int, int]:
    vad = SileroVad()
    false_ = n = 0
    for i, reply in enumerate(replies):
        for delay in DELAYS_MS:
            fired, _ = one_room(
                reply,
                seed=i,
                delay_ms=delay,
                attenuation_db=-6,
                vad=vad,
                make=lambda room: WebRtcEchoCanceller(clock=room.clock, align_by_clock=by_clock),
                lag=stalled(2.0, 0.3),
                quiet_s=2.0,
            )
            false_ += bool(fired)
            n += 1
    return false_, n


# ----- 4. the session in the room -----------------------------------------------------
def words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]", " ", text.lower()).split()


def wer(reference: str, hypothesis: str) -> float:
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            cur = min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
            prev, row[j] = row[j], cur
    return row[len(hyp)] / max(1, len(ref))


async def session_run(
    user: np.ndarray, text: str, *, delay_ms: float, attenuation_db: float, mode: str
) -> tuple[str, float | None, None]:
    """(transcript of the barge-in, user onset -> decision ms, speaker samples heard
    after the decision)."""
    from app.agent.storage import InMemoryStorage
    from app.events import EventHub, SessionEvent, TurnFinished, UserTranscript
    from app.session import VoiceSession
    from tests.llm_servers import Reply, ScriptedChatServer
    from tests.test_barge_in import LONG_REPLY, EspeakVoice

    replies = [Reply.text_stream(LONG_REPLY, delay=0.01), Reply.text_stream(["Sure."])]
    with ScriptedChatServer(replies) as srv:
        settings = Settings()
        settings.audio.barge_in = True
        settings.audio.echo_mode = "aec"
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = srv.base_url
        room = SimulatedRoom(delay_ms=delay_ms, attenuation_db=attenuation_db)
        seen: list[SessionEvent] = []
        hub = EventHub()
        hub.subscribe(seen.append)
        session = VoiceSession(
            settings, sink=room.sink, storage=InMemoryStorage(), events=hub, tts=EspeakVoice()
        )
        canceller = session.echo
        assert isinstance(canceller, WebRtcEchoCanceller)
        canceller.clock = room.clock
        if mode == "aec":  # the canceller's output only
            canceller.after_echo = lambda pcm, end, tail_s=0.0: pcm  # type: ignore[method-assign]
        elif mode == "raw":  # the raw microphone for all of it
            after = canceller.after_echo
            canceller.after_echo = lambda pcm, end, tail_s=0.0: after(  # type: ignore[method-assign]
                pcm, end, -100.0
            )
        room.say(user * USER_GAIN, after_played_s=1.6)  # after the first reply's warm-up
        listener = asyncio.create_task(session.listen(room))
        try:
            await asyncio.wait_for(session.send_text("Tell me about the sea"), 60)
            async with asyncio.timeout(120):
                while not any(isinstance(e, TurnFinished) for e in seen) or session.host.working:
                    await asyncio.sleep(0.05)
        finally:
            await session.aclose()
            listener.cancel()
    heard = [e.text for e in seen if isinstance(e, UserTranscript) and e.final][1:]
    onset = None
    if room.stopped_at and room.voices:
        onset = (room.stopped_at[0] - room.voices[0][0]) / RATE * 1000
    return (heard[0] if heard else ""), onset, None


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def session_figures(sessions: int) -> None:
    users = [(espeak(v, t), t) for v, t in USERS]
    trials = [
        (users[k % len(users)], DELAYS_MS[k % 3], ATTENUATIONS_DB[(k // 4) % 3])
        for k in range(sessions)
    ]
    print("  transcript of the overlapping question        mean WER   (trials)")
    for mode, label in (
        ("aec", "AEC3 output only"),
        ("after", "AEC3 output, raw mic after the echo (now)"),
        ("raw", "raw microphone only"),
    ):
        scores: list[float] = []
        onsets: list[float] = []
        t0 = time.perf_counter()
        for (user, text), delay, att in trials:
            heard, onset, _ = await session_run(
                user, text, delay_ms=delay, attenuation_db=att, mode=mode
            )
            scores.append(wer(text, heard))
            if onset is not None:
                onsets.append(onset)
        print(
            f"  {label:44s} {statistics.mean(scores):5.2f}    ({len(scores)})"
            f"  [{time.perf_counter() - t0:.0f} s]"
        )
    print(
        f"  user onset -> barge-in decision (room time): p50 {statistics.median(onsets):.0f} ms,"
        f" max {max(onsets):.0f} ms (n={len(onsets)})"
    )


async def device_figures(runs: int) -> None:
    """Barge-in decision (sink.stop()) -> silent, with the real sinks (bench_listen)."""
    from bench_listen import stop_to_silence_memory, stop_to_silence_pulse

    audio = (await synth([SENTENCES[1]]))[0]
    mem = await stop_to_silence_memory(audio, runs)
    print(f"  MemorySink(realtime)    p50 {statistics.median(mem):5.1f} ms  max {max(mem):5.1f} ms")
    dev = await stop_to_silence_pulse(audio, runs)
    if isinstance(dev, str):
        print(f"  SoundDeviceSink (pulse) {dev}")
    else:
        print(
            f"  SoundDeviceSink (pulse) p50 {statistics.median(dev):5.1f} ms"
            f"  p95 {pct(dev, 95):5.1f} ms  max {max(dev):5.1f} ms  (n={len(dev)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--skip-room", action="store_true")
    parser.add_argument("--skip-session", action="store_true")
    parser.add_argument("--skip-going-on", action="store_true")
    parser.add_argument("--device-runs", type=int, default=20, help="0: skip")
    args = parser.parse_args()

    replies = asyncio.run(synth(SENTENCES[: args.sentences]))
    if not args.skip_room:
        users = [espeak(v, t) for v, t in USERS]
        n = len(replies) * len(DELAYS_MS)
        print(f"== simulated room: {len(replies)} sentences x delays {DELAYS_MS} ms = {n} ==")
        print("  (cold canceller every sentence, barge-in allowed from its first sample)")
        print("  mode              atten   false barge-ins     user detected     onset->decision")
        for attenuation in ATTENUATIONS_DB:
            for make, label in ((aec, "AEC3"), (none, "no AEC, same bar")):
                t0 = time.perf_counter()
                f, s, d, u, onsets = room_counts(replies, users, attenuation, make)
                median = f"{statistics.median(onsets):4.0f} ms" if onsets else "   -   "
                print(
                    f"  {label:17s} {attenuation:4d} dB  {f:3d}/{s:<3d} ({100 * f / s:5.1f} %)"
                    f"   {d:3d}/{u:<3d} ({100 * d / u:5.1f} %)   p50 {median}"
                    f"  [{time.perf_counter() - t0:.0f} s]"
                )
        print("  half-duplex (fallback)      0 false barge-ins, 0 users detected: mic gated")
        print("\n== a late listening loop (300 ms late when a sentence starts), -6 dB ==")
        for by_clock, label in (
            (True, "reference lined up by the clock (now)"),
            (False, "lined up by what had been read (before)"),
        ):
            f, s = lagging_counts(replies, by_clock)
            print(f"  {label:42s} false barge-ins {f:3d}/{s:<3d}")
    if not args.skip_going_on:
        users = [espeak(v, t) for v, t in USERS]
        turn = Settings().turn
        print(
            f"\n== a user going on: {turn.continue_speech_ms} ms of speech in the first "
            f"{turn.continue_within_s:.0f} s of a reply, the canceller warmed by the reply "
            "before =="
        )
        for attenuation, warm in [(a, w) for w in (True, False) for a in ATTENUATIONS_DB]:
            t0 = time.perf_counter()
            f, s, d, u, onsets = going_on_counts(replies, users, attenuation, warm=warm)
            median = f"{statistics.median(onsets):4.0f} ms" if onsets else "   -   "
            label = "AEC3 (warm)" if warm else "AEC3 (cold)"
            print(
                f"  {label:17s} {attenuation:4d} dB  {f:3d}/{s:<3d} ({100 * f / s:5.1f} %)"
                f"   {d:3d}/{u:<3d} ({100 * d / max(u, 1):5.1f} %)   p50 {median}"
                f"  [{time.perf_counter() - t0:.0f} s]"
            )
    if not args.skip_session:
        print(f"\n== the session in the room ({args.sessions} barge-ins per row) ==")
        asyncio.run(session_figures(args.sessions))
    if args.device_runs:
        print("\n== barge-in decision -> playback silent (budget <= 50 ms) ==")
        sys.path.insert(0, str(ROOT / "bench"))
        asyncio.run(device_figures(args.device_runs))


if __name__ == "__main__":
    main()

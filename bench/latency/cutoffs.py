"""False cut-offs: how often each system ends the user's turn before they finished, and
how soon it ends it when they have.

    python -m bench.latency.cutoffs [--limit N] [--no-pipecat] [--out bench/out]

The set (`bench/latency/utterances.py`): 24 complete questions and 24 sentences with a
0.4-1.5 s pause in the middle ("I want to tell you about … my cat"), espeak-ng in eight
voices and speeds. Each is said into a microphone that never stops, in real time, to:
ours (the turn model, the default), ours with a fixed 640 ms silence, Pipecat at its
best (Smart Turn v3, VAD stop 0.2 s) and Pipecat configured like our fixed silence;
one utterance at a time, the systems in turn. A turn that ends before the speaker's
last word, or an utterance split into more than one turn, is a cut-off; on the
others, the end-of-turn delay is from the end of speech to the turn's end (for ours,
when its words are in hand too, as Pipecat's turn end waits for them).
Writes OUT/cutoffs.json, OUT/cutoffs.txt, OUT/cutoffs.png.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.latency.common import (
    OUT_DIR,
    SAMPLE_RATE,
    LiveMic,
    Stimulus,
    machine,
    pct,
    read_pcm16k,
)
from bench.latency.server import BenchChatServer, ModelScript
from bench.latency.utterances import Utterance, build

WAIT_S = 6.0  # after the end of speech: longer than every system's longest wait
SYSTEMS = ("ours", "ours_silence_640", "pipecat_best", "pipecat_like_us")
LABELS = {
    "ours": "ours (turn model)",
    "ours_silence_640": "ours, fixed 640 ms silence",
    "pipecat_best": "Pipecat, Smart Turn (stop 0.2 s)",
    "pipecat_like_us": "Pipecat, 640 ms silence",
}


def stimulus_of(u: Utterance) -> Stimulus:
    pcm = read_pcm16k(Path(u.wav))
    return Stimulus(pcm[: (u.speech_end + SAMPLE_RATE // 5) * 2], u.speech_end)


class OurListener:
    """Our session on a live microphone, with every turn end it decided."""

    def __init__(self, chat: Any, **turn: Any) -> None:
        from app.agent.storage import InMemoryStorage
        from app.audio.playback import MemorySink
        from app.events import EventHub, UserTranscript
        from app.session import VoiceSession
        from bench.latency.ours import _settings

        self.settings = _settings(chat.base_url, **turn)
        self.hub = EventHub()
        self.session = VoiceSession(
            self.settings, sink=MemorySink(), storage=InMemoryStorage(), events=self.hub
        )
        self.mic = LiveMic()
        self.ends: list[tuple[float, str]] = []  # (perf_counter(), why)
        self.words: list[tuple[float, str]] = []

        def tapped(event: Any) -> None:  # each end of speech, as the session gets it
            if event.pcm is not None:
                self.ends.append((event.ended_at, str(event.reason)))

        self.session.host.on_user_stopped(tapped)
        self.hub.subscribe(
            lambda e: self.words.append((time.perf_counter(), e.text))
            if isinstance(e, UserTranscript) and e.final and e.text
            else None
        )
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.session.load_models()
        self._task = asyncio.create_task(self.session.listen(self.mic))

    async def say(self, u: Utterance) -> dict[str, Any]:
        s = self.session
        async with asyncio.timeout(60):
            while s.host.working or s.host.in_user_turn:
                await asyncio.sleep(0.05)
        s.agent.history.clear()
        self.ends.clear()
        self.words.clear()
        speech_end = await self.mic.say(stimulus_of(u))
        await asyncio.sleep(max(0.0, speech_end + WAIT_S - time.perf_counter()))
        async with asyncio.timeout(60):  # the words of the last turn, if still coming
            while s.host.working and len(self.words) < len(self.ends):
                await asyncio.sleep(0.05)
        return {
            "turn_stops_ms": [(t - speech_end) * 1000 for t, _ in self.ends],
            "ended_by": [why for _, why in self.ends],
            "words_ms": [(t - speech_end) * 1000 for t, _ in self.words],
            "transcripts": [text for _, text in self.words],
        }

    async def aclose(self) -> None:
        await self.mic.aclose()
        if self._task is not None:
            self._task.cancel()
        await self.session.aclose()


def judge(u: Utterance, heard: dict[str, Any]) -> dict[str, Any]:
    """Cut off (a turn ended before the last word was said, or the utterance was split
    into more than one turn: a turn decided late, after a slow transcription, may still
    hold only the words before the pause), and the delay of the first turn end after
    the speech (None when none came within the wait)."""
    stops = heard["turn_stops_ms"]
    cut = any(t < 0 for t in stops) or len(stops) > 1
    after = [t for t in stops if t >= 0]
    words = [t for t in heard.get("words_ms", []) if t >= 0]
    return {
        "name": u.name,
        "kind": u.kind,
        "text": u.text,
        "voice": f"{u.voice} {u.wpm} wpm",
        "cut_off": cut,
        "delay_ms": after[0] if after else None,
        "with_words_ms": max(after[0], words[0]) if after and words else None,
        **heard,
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    paused = [r for r in rows if r["kind"] == "paused"]
    complete = [r for r in rows if r["kind"] == "complete"]
    delays = [r["delay_ms"] for r in complete if not r["cut_off"] and r["delay_ms"] is not None]
    ready = [r["with_words_ms"] for r in complete if not r["cut_off"] and r["with_words_ms"]]
    missed = [r for r in complete if not r["cut_off"] and r["delay_ms"] is None]
    return {
        "n": len(rows),
        "cut_off": sum(r["cut_off"] for r in rows),
        "cut_off_rate": sum(r["cut_off"] for r in rows) / len(rows) if rows else None,
        "paused_cut_off": sum(r["cut_off"] for r in paused),
        "paused_n": len(paused),
        "complete_cut_off": sum(r["cut_off"] for r in complete),
        "complete_n": len(complete),
        "delay_ms": {"p50": pct(delays, 0.5), "p95": pct(delays, 0.95), "n": len(delays)},
        "with_words_ms": {"p50": pct(ready, 0.5), "p95": pct(ready, 0.95), "n": len(ready)},
        "no_end_within_wait": len(missed),
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    from bench.latency.pipecat_side import PipecatWorker

    out: Path = args.out
    made = build(out / "cutoff_set")
    complete = [u for u in made if u.kind == "complete"]
    paused = [u for u in made if u.kind == "paused"]
    # Alternately, so that `--limit` keeps both kinds.
    utterances = [u for pair in zip(complete, paused, strict=False) for u in pair]
    utterances = utterances[: args.limit or None]
    results: dict[str, Any] = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "set": {
            "n": len(utterances),
            "complete": sum(u.kind == "complete" for u in utterances),
            "paused": sum(u.kind == "paused" for u in utterances),
            "voices": sorted({f"{u.voice} {u.wpm}" for u in utterances}),
            "wait_after_speech_s": WAIT_S,
        },
        "rows": {system: [] for system in SYSTEMS},
        "errors": {},
    }
    with BenchChatServer.chat(ModelScript()) as chat:
        ours = OurListener(chat)
        fixed = OurListener(chat, endpointing="silence")
        for listener in (ours, fixed):
            await listener.start()
        workers: dict[str, PipecatWorker] = {}
        if not args.no_pipecat:
            question = Path(utterances[0].wav)
            for system, mode in (("pipecat_best", "best"), ("pipecat_like_us", "like-us")):
                worker = PipecatWorker(
                    chat.base_url, question, out / f"cutoffs_{system}.log", mode=mode
                )
                try:
                    await worker.start()
                    workers[system] = worker
                except Exception as exc:
                    results["errors"][system] = f"{type(exc).__name__}: {exc}"
                    with contextlib.suppress(Exception):
                        await worker.aclose()
        for i, u in enumerate(utterances):
            line = f"{i + 1:2}/{len(utterances)} {u.kind:8} {u.text[:44]:44}"
            for system, listener in (("ours", ours), ("ours_silence_640", fixed)):
                row = judge(u, await listener.say(u))
                results["rows"][system].append(row)
                line += f" {'CUT' if row['cut_off'] else '   '}"
            for system, worker in workers.items():
                row = judge(u, await worker.say(Path(u.wav), u.speech_end, WAIT_S))
                results["rows"][system].append(row)
                line += f" {'CUT' if row['cut_off'] else '   '}"
            print(line, flush=True)
        results["speculation"] = ours.session.host.figures().speculation.to_json()
        for worker in workers.values():
            await worker.aclose()
        for listener in (ours, fixed):
            await listener.aclose()
    results["summary"] = {s: summary(rows) for s, rows in results["rows"].items() if rows}
    return results


def write_outputs(results: dict[str, Any], out: Path) -> None:
    lines = [
        "False cut-offs (bench/latency/cutoffs.py)",
        f"machine: {results['machine']}",
        f"set: {results['set']['complete']} complete questions, {results['set']['paused']} "
        f"sentences with a 0.4-1.5 s pause inside; voices: {', '.join(results['set']['voices'])}",
        "",
        f"  {'system':<34}{'cut off':>12}{'paused':>9}{'complete':>10}"
        f"{'delay p50':>11}{'p95':>7}{'+words p50':>12}{'p95':>7}",
    ]
    for system, s in results["summary"].items():
        lines.append(
            f"  {LABELS[system]:<34}{s['cut_off']:>4}/{s['n']:<3} {100 * s['cut_off_rate']:3.0f}%"
            f"{s['paused_cut_off']:>5}/{s['paused_n']:<3}{s['complete_cut_off']:>5}/"
            f"{s['complete_n']:<4}{s['delay_ms']['p50']:>10.0f}{s['delay_ms']['p95']:>7.0f}"
            f"{s['with_words_ms']['p50']:>12.0f}{s['with_words_ms']['p95']:>7.0f}"
        )
    lines += [
        "",
        "delay: end of speech -> the turn's end, on complete questions not cut off (ms);",
        "+words: ... and its words in hand (Pipecat's turn end waits for them already)",
    ]
    spec = results.get("speculation")
    if spec:
        lines.append(
            f"ours, speculative replies over the set: {spec['started']} started, {spec['used']} "
            f"used, {spec['discarded']} thrown away; model calls {spec['model_calls']}, "
            f"wasted {spec['wasted_calls']}"
        )
    for system, error in results["errors"].items():
        lines.append(f"{system}: not measured: {error}")
    try:
        plot(results, out / "cutoffs.png")
        lines.append(f"plot: {out / 'cutoffs.png'}")
    except ImportError:
        lines.append("no plot: matplotlib is missing (pip install -e '.[bench]')")
    text = "\n".join(lines) + "\n"
    (out / "cutoffs.txt").write_text(text)
    (out / "cutoffs.json").write_text(json.dumps(results, indent=1, default=str))
    print(text)


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = list(results["summary"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.7 * len(systems) + 1.8))
    rates = [100 * results["summary"][s]["cut_off_rate"] for s in systems]
    left.barh(range(len(systems)), rates, color="tab:red")
    for i, (s, rate) in enumerate(zip(systems, rates, strict=True)):
        sm = results["summary"][s]
        left.text(rate + 1, i, f"{sm['cut_off']}/{sm['n']}", va="center", fontsize=8)
    left.set_yticks(range(len(systems)), [LABELS[s] for s in systems])
    left.invert_yaxis()
    left.set_xlabel("% of utterances cut off before the speaker finished")
    delays = [
        [r["delay_ms"] for r in results["rows"][s]
         if r["kind"] == "complete" and not r["cut_off"] and r["delay_ms"] is not None]
        for s in systems
    ]
    right.boxplot([d or [0.0] for d in delays], vert=False, widths=0.5, showfliers=True)
    for i, d in enumerate(delays, start=1):
        if d:
            right.text(statistics.median(d), i + 0.35, f"p50 {statistics.median(d):.0f} ms",
                       ha="center", fontsize=8)
    right.set_yticks(range(1, len(systems) + 1), ["" for _ in systems])
    right.invert_yaxis()
    right.set_xlabel("end of speech -> turn ended, complete questions (ms)")
    fig.suptitle("False cut-offs and end-of-turn delay, espeak-ng set", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=0, help="only the first N utterances")
    parser.add_argument("--no-pipecat", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = asyncio.run(bench(args))
    write_outputs(results, args.out)


if __name__ == "__main__":
    main()

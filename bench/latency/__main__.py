"""Voice-to-voice latency, ours and Pipecat's (at its best, and configured like our
fixed-silence endpointer), on identical work; runs interleaved.

    python -m bench.latency [--runs 20] [--typed-runs 20] [--tool-runs 20]
        [--question default|doubted|comma] [--ttft-ms 300] [--tokens-per-s 50]
        [--no-pipecat] [--out bench/out]

Writes OUT/latency.json, OUT/latency.txt and OUT/latency_*.png; prints the summary.
The false cut-off bench is `python -m bench.latency.cutoffs`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.latency import report
from bench.latency.common import (
    CHUNK_MS,
    LEAD_SILENCE_S,
    OUT_DIR,
    QUESTIONS,
    SCREEN_QUESTION,
    TYPED_QUESTION,
    Stimulus,
    machine,
    make_question_wav,
    summarize,
)
from bench.latency.server import BenchChatServer, ModelScript

SIDES = ("pipecat_best", "pipecat_like_us")
MODES = {"pipecat_best": "best", "pipecat_like_us": "like-us"}


@contextlib.contextmanager
def xvfb() -> Any:
    """A private X server for the screenshot turn; stopped by its pid."""
    number = next(n for n in range(91, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    proc = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{number}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    try:
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)
        if old is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = old


def closest_to_median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "total_ms" in r]
    median = statistics.median(r["total_ms"] for r in ok)
    return min(ok, key=lambda r: abs(r["total_ms"] - median))


def pairs(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> dict[str, Any]:
    both = [
        (a["total_ms"], b["total_ms"])
        for a, b in zip(ours, theirs, strict=False)
        if "total_ms" in a and "total_ms" in b
    ]
    return {
        "n": len(both),
        "ratios": [a / b for a, b in both],
        "ratio_median": statistics.median(a / b for a, b in both) if both else None,
        "difference_ms_median": statistics.median(a - b for a, b in both) if both else None,
    }


async def start_pipecat(
    side: str, base_url: str, wav: Path, out: Path, results: dict[str, Any]
) -> Any:
    from bench.latency.pipecat_side import PipecatWorker

    worker = PipecatWorker(base_url, wav, out / f"{side}_runner.log", mode=MODES[side])
    try:
        await worker.start()
        results["settings"][side] = worker.settings
        results["settings"][side]["load_ms"] = round(worker.load_ms)
        warm = await worker.run()  # the first inference of each model is slow
        if "error" in warm:
            raise RuntimeError(f"the warm-up turn failed: {warm['error']}")
        print(f"{side}: ready; warmed up", flush=True)
        return worker
    except Exception as exc:  # keep the other sides complete whatever happens here
        results["pipecat_error"][side] = f"{type(exc).__name__}: {exc}"
        print(f"{side} unavailable: {results['pipecat_error'][side]}", flush=True)
        with contextlib.suppress(Exception):
            await worker.aclose()
        return None


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    from bench.latency.ours import OurApp

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    question = QUESTIONS[args.question]
    wav = make_question_wav(out / "question.wav", question)
    stimulus = Stimulus.from_wav(wav)
    script = ModelScript(args.ttft_ms, args.tokens_per_s)
    results: dict[str, Any] = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "stimulus": {
            "question": question,
            "question_kind": args.question,
            "wav": str(wav),
            "speech_s": round(stimulus.speech_s, 3),
            "lead_silence_s": LEAD_SILENCE_S,
            "after": "a microphone that never stops: silence until the next question",
            "chunk_ms": CHUNK_MS,
            "speech_end": "last 10 ms frame above 2 % of the peak RMS (energy), from the file",
            "typed_question": TYPED_QUESTION,
            "screen_question": SCREEN_QUESTION,
        },
        "model_script": script.describe(),
        "settings": {},
        "runs": {
            "ours_voice": [],
            **{f"{side}_voice": [] for side in SIDES},
            "ours_typed": [],
            "ours_tool": [],
        },
        "pipecat_error": {},
    }
    runs = results["runs"]
    with (
        xvfb() as display,
        BenchChatServer.chat(script) as chat,
        BenchChatServer.tool_first(script) as tools,
    ):
        results["display"] = display
        ours = OurApp(chat, tools)
        results["settings"]["ours"] = ours.describe()
        load_ms = await ours.start(stimulus)  # loads, and warms every kind of turn up once
        results["settings"]["ours"]["load_ms"] = round(load_ms)
        print(f"ours: models loaded in {load_ms:.0f} ms; warmed up", flush=True)
        workers: dict[str, Any] = {}
        if not args.no_pipecat:
            for side in SIDES:
                worker = await start_pipecat(side, chat.base_url, wav, out, results)
                if worker is not None:
                    workers[side] = worker
        spoken_before = ours.session.host.figures().speculation.to_json()
        for i in range(args.runs):  # interleaved: ours, Pipecat at its best, like us, ...
            a = await ours.voice_run(stimulus)
            runs["ours_voice"].append(a)
            line = f"voice {i + 1:2}/{args.runs}: ours {a['total_ms']:7.1f} ms"
            for side, worker in workers.items():
                b = await worker.run()
                runs[f"{side}_voice"].append(b)
                line += f"   {side} {b.get('total_ms', float('nan')):7.1f} ms"
            print(line, flush=True)
        spoken_after = ours.session.host.figures().speculation.to_json()
        results["speculation"] = {k: spoken_after[k] - spoken_before[k] for k in spoken_after}
        for worker in workers.values():
            await worker.aclose()
        for _ in range(args.typed_runs):
            runs["ours_typed"].append(await ours.typed_run())
        for _ in range(args.tool_runs):
            runs["ours_tool"].append(await ours.tool_run())
        await ours.aclose()
    results["pairs"] = {side: pairs(runs["ours_voice"], runs[f"{side}_voice"]) for side in SIDES}
    medians = {
        side: statistics.median(r["total_ms"] for r in runs[f"{side}_voice"] if "total_ms" in r)
        for side in SIDES
        if any("total_ms" in r for r in runs[f"{side}_voice"])
    }
    results["faster_pipecat_side"] = min(medians, key=medians.__getitem__) if medians else None
    results["summary"] = {
        name: {
            "total_ms": summarize([r["total_ms"] for r in rs if "total_ms" in r]),
            "overhead_ms": summarize([r["overhead_ms"] for r in rs if "overhead_ms" in r]),
        }
        for name, rs in runs.items()
        if rs
    }
    return results


TITLES = {
    "ours": "OURS (turn model, words heard while speaking, speculative replies)",
    "pipecat_best": "PIPECAT AT ITS BEST (Smart Turn v3, VAD stop 0.2 s)",
    "pipecat_like_us": "PIPECAT CONFIGURED LIKE OUR FIXED SILENCE (VAD stop 0.64 s, no turn model)",
}
SHORT = {
    "ours": "ours",
    "pipecat_best": "Pipecat, Smart Turn",
    "pipecat_like_us": "Pipecat, 0.64 s",
}


def goal_lines(results: dict[str, Any]) -> list[str]:
    """The two latency goals, met or by how much not."""
    ours = [r["total_ms"] for r in results["runs"]["ours_voice"] if "total_ms" in r]
    lines = []
    if ours:
        p50 = statistics.median(ours)
        met = "met" if p50 <= 800 else f"not met by {p50 - 800:.0f} ms"
        lines.append(f"goal: end of speech -> first audio <= 800 ms p50: {p50:.0f} ms ({met})")
    side = results.get("faster_pipecat_side")
    if side and results["pairs"][side]["n"]:
        ratio = results["pairs"][side]["ratio_median"]
        met = "met" if ratio <= 0.8 else f"not met by {ratio - 0.8:.3f}"
        lines.append(
            f"goal: ours / the faster Pipecat side ({SHORT[side]}) <= 0.8, pairwise median: "
            f"{ratio:.3f} ({met})"
        )
    return lines


def write_outputs(results: dict[str, Any], out: Path) -> list[str]:
    runs = results["runs"]
    stim = results["stimulus"]
    lines = [
        "Voice-to-voice latency (bench/latency)",
        f"machine: {results['machine']}",
        f"question: {stim['question']!r} ({stim['speech_s']} s of espeak-ng speech, said into "
        f"a microphone that never stops, {stim['chunk_ms']:.0f} ms chunks in real time)",
        f"model: scripted, TTFT {results['model_script']['ttft_ms']:.0f} ms, "
        f"{results['model_script']['tokens_per_s']:.0f} tokens/s, "
        f"{results['model_script']['reply_tokens']} tokens",
        "",
        "settings:",
    ]
    for system, s in results["settings"].items():
        lines.append(f"  {system}: {json.dumps(s)}")
    lines.append("")
    for system in ("ours", *SIDES):
        rs = runs[f"{system}_voice"]
        if rs:
            title = f"{TITLES[system]}, spoken turn (ms from the end of speech)"
            lines += report.stage_table(rs, title)
    for side, error in results["pipecat_error"].items():
        lines += [f"{side}: not measured: {error}", ""]
    spec = results.get("speculation")
    if spec:
        lines.append(
            f"speculative replies over the spoken runs: {spec['started']} started, "
            f"{spec['used']} used, {spec['discarded']} thrown away; model calls "
            f"{spec['model_calls']}, of them wasted {spec['wasted_calls']}"
        )
    lines += report.stage_table(runs["ours_typed"], "OURS, typed message (ms from send_text)")
    lines += report.stage_table(
        runs["ours_tool"], "OURS, reply that starts with a screenshot tool call (ms from send_text)"
    )
    for side in SIDES:
        pair = results["pairs"][side]
        if pair["n"]:
            ratios = pair["ratios"]
            lines.append(
                f"pairwise ours / {SHORT[side]}, end of speech -> first sample, n={pair['n']}: "
                f"median {pair['ratio_median']:.3f} (min {min(ratios):.3f}, "
                f"max {max(ratios):.3f}); median difference {pair['difference_ms_median']:+.1f} ms"
            )
    lines += goal_lines(results)
    plots: list[str] = []
    try:
        for system in ("ours", *SIDES):
            rs = [r for r in runs[f"{system}_voice"] if "total_ms" in r]
            if rs:
                path = out / f"latency_waterfall_{system}.png"
                title = f"{SHORT[system]}: one spoken turn (the run closest to the median)"
                report.waterfall(closest_to_median(rs), path, title)
                plots.append(str(path))
        series = {
            f"{SHORT[system]}, spoken": [
                r["total_ms"] for r in runs[f"{system}_voice"] if "total_ms" in r
            ]
            for system in ("ours", *SIDES)
        }
        series["ours, typed"] = [r["total_ms"] for r in runs["ours_typed"]]
        series["ours, tool first"] = [r["total_ms"] for r in runs["ours_tool"]]
        path = out / "latency_distribution.png"
        report.distribution(
            series, path, "Time to the first audio sample, per system and kind of turn"
        )
        plots.append(str(path))
    except ImportError:
        lines.append("no plots: matplotlib is missing (pip install -e '.[bench]')")
    results["plots"] = plots
    lines += ["", "plots: " + ", ".join(plots)]
    text = "\n".join(lines) + "\n"
    (out / "latency.txt").write_text(text)
    (out / "latency.json").write_text(json.dumps(results, indent=1, default=str))
    print(text)
    return plots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="spoken turns per system")
    parser.add_argument("--typed-runs", type=int, default=20)
    parser.add_argument("--tool-runs", type=int, default=20)
    parser.add_argument("--question", choices=sorted(QUESTIONS), default="default")
    parser.add_argument("--ttft-ms", type=float, default=300.0)
    parser.add_argument("--tokens-per-s", type=float, default=50.0)
    parser.add_argument("--no-pipecat", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    results = asyncio.run(bench(args))
    write_outputs(results, args.out)


if __name__ == "__main__":
    main()

"""Voice-to-voice latency, ours and Pipecat's, on identical work.

    /work/venv/bin/python -m bench.latency [--runs 20] [--typed-runs 20] [--tool-runs 20]
        [--ttft-ms 300] [--tokens-per-s 50] [--no-pipecat] [--out bench/out]

Writes OUT/latency.json, OUT/latency.txt and OUT/latency_*.png; prints the summary.
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
    QUESTION,
    SCREEN_QUESTION,
    TAIL_SILENCE_S,
    TYPED_QUESTION,
    Stimulus,
    machine,
    make_question_wav,
    summarize,
)
from bench.latency.server import BenchChatServer, ModelScript


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


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    from bench.latency.ours import OurApp
    from bench.latency.pipecat_side import PipecatWorker

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    wav = make_question_wav(out / "question.wav")
    stimulus = Stimulus.from_wav(wav)
    script = ModelScript(args.ttft_ms, args.tokens_per_s)
    results: dict[str, Any] = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "stimulus": {
            "question": QUESTION,
            "wav": str(wav),
            "speech_s": round(stimulus.speech_s, 3),
            "lead_silence_s": LEAD_SILENCE_S,
            "tail_silence_s": TAIL_SILENCE_S,
            "chunk_ms": CHUNK_MS,
            "speech_end": "last 10 ms frame above 2 % of the peak RMS (energy), from the file",
            "typed_question": TYPED_QUESTION,
            "screen_question": SCREEN_QUESTION,
        },
        "model_script": script.describe(),
        "settings": {},
        "runs": {"ours_voice": [], "pipecat_voice": [], "ours_typed": [], "ours_tool": []},
        "pipecat_error": None,
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
        worker: PipecatWorker | None = None
        if not args.no_pipecat:
            worker = PipecatWorker(chat.base_url, wav, out / "pipecat_runner.log")
            try:
                await worker.start()
                results["settings"]["pipecat"] = worker.settings
                results["settings"]["pipecat"]["load_ms"] = round(worker.load_ms)
                warm = await worker.run()  # the first inference of each model is slow
                if "error" in warm:
                    raise RuntimeError(f"the Pipecat warm-up turn failed: {warm['error']}")
                print("pipecat: ready; warmed up", flush=True)
            except Exception as exc:  # keep our side complete whatever happens there
                results["pipecat_error"] = f"{type(exc).__name__}: {exc}"
                print(f"pipecat unavailable: {results['pipecat_error']}", flush=True)
                with contextlib.suppress(Exception):
                    await worker.aclose()
                worker = None
        for i in range(args.runs):  # interleaved: A B A B ...
            a = await ours.voice_run(stimulus)
            runs["ours_voice"].append(a)
            line = f"voice {i + 1:2}/{args.runs}: ours {a['total_ms']:7.1f} ms"
            if worker is not None:
                b = await worker.run()
                runs["pipecat_voice"].append(b)
                line += f"   pipecat {b.get('total_ms', float('nan')):7.1f} ms"
            print(line, flush=True)
        if worker is not None:
            await worker.aclose()
        for _ in range(args.typed_runs):
            runs["ours_typed"].append(await ours.typed_run())
        for _ in range(args.tool_runs):
            runs["ours_tool"].append(await ours.tool_run())
        await ours.aclose()
    pairs = [
        (a["total_ms"], b["total_ms"])
        for a, b in zip(runs["ours_voice"], runs["pipecat_voice"], strict=False)
        if "total_ms" in b
    ]
    results["pairs"] = {
        "n": len(pairs),
        "ratios": [a / b for a, b in pairs],
        "ratio_median": statistics.median(a / b for a, b in pairs) if pairs else None,
        "difference_ms_median": statistics.median(a - b for a, b in pairs) if pairs else None,
    }
    results["summary"] = {
        name: {
            "total_ms": summarize([r["total_ms"] for r in rs if "total_ms" in r]),
            "overhead_ms": summarize([r["overhead_ms"] for r in rs if "overhead_ms" in r]),
        }
        for name, rs in runs.items()
        if rs
    }
    return results


def write_outputs(results: dict[str, Any], out: Path) -> list[str]:
    runs = results["runs"]
    lines = [
        "Voice-to-voice latency (bench/latency)",
        f"machine: {results['machine']}",
        f"question: {results['stimulus']['question']!r} ({results['stimulus']['speech_s']} s of "
        f"espeak-ng speech, fed in real time in {results['stimulus']['chunk_ms']:.0f} ms chunks)",
        f"model: scripted, TTFT {results['model_script']['ttft_ms']:.0f} ms, "
        f"{results['model_script']['tokens_per_s']:.0f} tokens/s, "
        f"{results['model_script']['reply_tokens']} tokens",
        "",
        "settings:",
    ]
    for system, s in results["settings"].items():
        lines.append(f"  {system}: {json.dumps(s)}")
    lines.append("")
    lines += report.stage_table(runs["ours_voice"], "OURS, spoken turn (ms from the end of speech)")
    if runs["pipecat_voice"]:
        lines += report.stage_table(
            runs["pipecat_voice"], "PIPECAT, spoken turn (ms from the end of speech)"
        )
    if results["pipecat_error"]:
        lines += [f"PIPECAT: not measured: {results['pipecat_error']}", ""]
    lines += report.stage_table(runs["ours_typed"], "OURS, typed message (ms from send_text)")
    lines += report.stage_table(
        runs["ours_tool"], "OURS, reply that starts with a screenshot tool call (ms from send_text)"
    )
    pairs = results["pairs"]
    if pairs["n"]:
        ratios = pairs["ratios"]
        lines.append(
            f"pairwise ours/pipecat end-of-speech -> first sample, n={pairs['n']}: "
            f"median {pairs['ratio_median']:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
            f"median difference {pairs['difference_ms_median']:+.1f} ms"
        )
    plots: list[str] = []
    try:
        if runs["ours_voice"]:
            path = out / "latency_waterfall_ours.png"
            run = closest_to_median(runs["ours_voice"])
            report.waterfall(run, path, "Ours: one spoken turn (the run closest to the median)")
            plots.append(str(path))
        if any("total_ms" in r for r in runs["pipecat_voice"]):
            path = out / "latency_waterfall_pipecat.png"
            report.waterfall(
                closest_to_median(runs["pipecat_voice"]),
                path,
                "Pipecat: one spoken turn (the run closest to the median)",
            )
            plots.append(str(path))
        series = {
            "ours, spoken": [r["total_ms"] for r in runs["ours_voice"] if "total_ms" in r],
            "pipecat, spoken": [r["total_ms"] for r in runs["pipecat_voice"] if "total_ms" in r],
            "ours, typed": [r["total_ms"] for r in runs["ours_typed"]],
            "ours, tool first": [r["total_ms"] for r in runs["ours_tool"]],
        }
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
    parser.add_argument("--ttft-ms", type=float, default=300.0)
    parser.add_argument("--tokens-per-s", type=float, default=50.0)
    parser.add_argument("--no-pipecat", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    results = asyncio.run(bench(args))
    write_outputs(results, args.out)


if __name__ == "__main__":
    main()

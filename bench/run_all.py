"""Every benchmark in bench/, with small run counts, in a few minutes: `make bench`.

    python bench/run_all.py [--latency-runs 20] [--only NAME ...] [--no-pipecat]

Runs each `bench/bench_*.py` (with the short arguments below; a new script runs with
its defaults), the voice-to-voice latency bench (`python -m bench.latency`, ours
and Pipecat side by side) and the false cut-off bench (`python -m
bench.latency.cutoffs`, about 25 minutes), each in its own process, and writes:

    bench/out/results.json   machine, every bench's output, the latency results
    bench/out/summary.txt    the same as text
    bench/out/latency_*.png  a stage waterfall for one turn, a distribution per system

Figures only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.latency.common import OUT_DIR, machine  # noqa: E402

# Short runs so the whole set takes minutes; a script not listed runs with its defaults.
QUICK_ARGS: dict[str, list[str]] = {
    "bench_agent": ["--turns", "50", "--history", "100", "--screens", "3"],
    "bench_asr": ["--runs", "5", "--skip-wer"],
    "bench_avatar": ["--frames", "200"],
    # 40 items a language take over 40 minutes: run it alone for the README's figures
    "bench_continuations": ["--language", "en", "--items", "5"],
    "bench_dialogue": ["--conversations", "4"],  # the full 45 turns: run it alone
    "bench_parsers": ["--seconds", "0.2", "--runs", "50"],
    "bench_transformers": ["--runs", "5"],
    "bench_tts": ["--runs", "5"],
    "bench_turn": ["--runs", "3"],
}
TIMEOUT_S = 600


def run(
    name: str, command: list[str], out: Path, timeout_s: float = TIMEOUT_S
) -> dict[str, Any]:
    print(f"== {name}: {' '.join(command)}", flush=True)
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s
        )
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc = None
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stderr = f"timed out after {timeout_s} s"
    seconds = time.perf_counter() - start
    (out / f"{name}.txt").write_text(stdout + ("\n--- stderr ---\n" + stderr if stderr else ""))
    status = "ok" if rc == 0 else f"FAILED (exit {rc})"
    print(f"   {status} in {seconds:.0f} s", flush=True)
    return {
        "command": " ".join(command),
        "exit_code": rc,
        "seconds": round(seconds, 1),
        "output": stdout,
        "stderr_tail": stderr[-2000:] if rc != 0 else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency-runs", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="bench names, e.g. bench_tts latency")
    parser.add_argument("--no-pipecat", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    results: dict[str, Any] = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "python": python,
        "benches": {},
    }
    wanted = set(args.only or [])
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        name = script.stem
        if wanted and name not in wanted:
            continue
        results["benches"][name] = run(name, [python, str(script), *QUICK_ARGS.get(name, [])], out)
    if not wanted or "latency" in wanted:
        command = [python, "-m", "bench.latency", "--runs", str(args.latency_runs)]
        command += ["--out", str(out)] + (["--no-pipecat"] if args.no_pipecat else [])
        results["benches"]["latency"] = run("latency", command, out)
        latency_json = out / "latency.json"
        if latency_json.exists():
            results["latency"] = json.loads(latency_json.read_text())
    if not wanted or "cutoffs" in wanted:
        command = [python, "-m", "bench.latency.cutoffs", "--out", str(out)]
        command += ["--no-pipecat"] if args.no_pipecat else []
        results["benches"]["cutoffs"] = run("cutoffs", command, out, timeout_s=3600)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    lines = [
        f"bench/run_all.py, {results['started']} .. {results['finished']}",
        f"machine: {json.dumps(results['machine'])}",
        "",
    ]
    for name, r in results["benches"].items():
        state = "ok" if r["exit_code"] == 0 else f"FAILED (exit {r['exit_code']})"
        lines += [f"==== {name}: {state}, {r['seconds']} s: {r['command']}", r["output"].rstrip()]
        if r["stderr_tail"]:
            lines.append("stderr: " + r["stderr_tail"])
        lines.append("")
    plots = results.get("latency", {}).get("plots", [])
    lines.append(
        "files: " + ", ".join([str(out / "results.json"), str(out / "summary.txt"), *plots])
    )
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-1:]))


if __name__ == "__main__":
    main()

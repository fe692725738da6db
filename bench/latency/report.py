"""Tables and PNG plots from a latency results dict (see `bench.latency.__main__`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.latency.common import summarize

STAGE_LABELS = {
    "pause_transcription": "final words' transcription starts",
    "vad_stop": "VAD stop",
    "endpoint": "turn decided",
    "transcript": "final transcript",
    "request_sent": "request sent",
    "tool_call_done": "tool call received",
    "tool_started": "tool started",
    "screenshot_taken": "screenshot taken",
    "second_request": "2nd request at server",
    "first_token": "first token",
    "first_fragment": "first fragment ready",
    "first_audio": "first audio synthesised",
    "first_sample": "first sample played",
}


def _column(runs: list[dict[str, Any]], section: str, key: str) -> list[float]:
    return [r[section][key] for r in runs if key in r.get(section, {})]


def _keys(runs: list[dict[str, Any]], section: str) -> list[str]:
    """Every key of `section` in the runs, in the order they first appear."""
    keys: dict[str, None] = {}
    for r in runs:
        keys.update(dict.fromkeys(r.get(section, {})))
    return list(keys)


def stage_table(runs: list[dict[str, Any]], title: str) -> list[str]:
    ok = [r for r in runs if "total_ms" in r]
    failed = len(runs) - len(ok)
    lines = [f"{title}  (n={len(ok)}{f', failed {failed}' if failed else ''})"]
    if not ok:
        return [*lines, "  no successful runs", ""]
    lines.append(f"  {'stage, ms from the reference point':<44}{'p50':>9}{'p95':>9}{'n':>5}")
    for key in _keys(ok, "stages_ms"):
        values = _column(ok, "stages_ms", key)
        s = summarize(values)
        label = STAGE_LABELS.get(key, key)
        lines.append(f"  {label:<44}{s['p50']:9.1f}{s['p95']:9.1f}{len(values):5d}")
    lines.append(f"  {'-- parts (what the components took)':<44}")
    for key in _keys(ok, "parts_ms"):
        s = summarize(_column(ok, "parts_ms", key))
        lines.append(f"  {key:<44}{s['p50']:9.1f}{s['p95']:9.1f}")
    s = summarize([r["overhead_ms"] for r in ok if "overhead_ms" in r])
    label = "overhead = total - max(turn decided, parts)"
    lines.append(f"  {label:<44}{s['p50']:9.1f}{s['p95']:9.1f}")
    for extra in ("feed_late_ms", "asr_audio_s", "transcriptions", "cut_off_before_the_end"):
        values = [r[extra] for r in ok if r.get(extra) is not None]
        if values:
            s = summarize(values)
            lines.append(f"  {extra:<44}{s['p50']:9.1f}{s['p95']:9.1f}")
    return [*lines, ""]


def waterfall(run: dict[str, Any], path: Path, title: str) -> None:
    """One turn's stages as bars from the reference point (end of speech), in the order
    they happened (with a speculative reply the turn may be decided after the model
    has started)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = sorted(run["stages_ms"].items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(stages) + 1.6))
    prev = 0.0
    colors = plt.get_cmap("tab10")
    for i, (_key, at) in enumerate(stages):
        ax.barh(i, at - prev, left=prev, color=colors(i % 10))
        ax.text(at + 15, i, f"{at:.0f} ms (+{at - prev:.0f})", va="center", fontsize=8)
        prev = max(prev, at)
    ax.set_yticks(range(len(stages)), [STAGE_LABELS.get(k, k) for k, _ in stages])
    ax.invert_yaxis()
    ax.set_xlabel("ms since the end of speech")
    ax.set_xlim(0, prev * 1.25 + 50)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def distribution(series: dict[str, list[float]], path: Path, title: str) -> None:
    """End of speech to first sample: each system's runs, as dots over a box."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [n for n, v in series.items() if v]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 1.0 * len(names)))
    data = [series[n] for n in names]
    ax.boxplot(data, vert=False, widths=0.5, showfliers=False)
    rng = np.random.default_rng(0)
    for i, values in enumerate(data, start=1):
        ax.scatter(values, i + rng.uniform(-0.15, 0.15, len(values)), s=12, alpha=0.7)
        p50 = float(np.median(values))
        ax.text(p50, i + 0.33, f"p50 {p50:.0f} ms", ha="center", fontsize=8)
    ax.set_yticks(range(1, len(names) + 1), names)
    ax.set_xlabel("ms, end of speech (or message sent) to first audio sample")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""The desktop shell's costs: launch → window shown, frame time during a reply, idle memory.

    python bench/bench_ui.py [--runs 5] [--reply-s 6] [--skip-xvfb] [--skip-memory]

(a) Launch: `python -m app` in a fresh process, timed from just before the process
    is spawned to the main window's first show event (and its first paint), with the
    process's CPU time until then (on a loaded machine wall time swells; CPU time
    much less), and to the VoiceSession being attached to the window (the app
    shows the window first, then imports app.session in a worker thread and makes
    the session). The config is a fresh one with the first-run guide done and a
    hosted chat model on a loopback URL, so nothing is downloaded and, as always,
    no model loads before the window shows (`VoiceSession.start()` loads them
    after). Offscreen Qt, and under Xvfb (a real X server, xcb) when Xvfb is
    installed. Budget ≤ 1.0 s (to shown).
(b) Frame time during a reply: the main window receives AssistantSentence events
    (one every 1.5 s), MouthLevel events at 25 Hz (the player's 40 ms chunks) and a
    transcript line per turn while the avatar animates. It reports the interval
    between the avatar's paints, the time each avatar paint takes, all widgets'
    paint time per second, and how late a 5 ms timer fires (the UI thread stalling).
(c) Resident memory, idle, with the main window, the pet and the embedded speech
    recognition loaded (faster-whisper tiny.en through the app's speech client
    `load()`), after a few idle seconds. Budget ≤ 300 MB.

Each part runs in its own process. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_BUDGET_S = 1.0
MEMORY_BUDGET_MB = 300.0

# The launch probe: hooks the main window's first show event, first paint and the
# session's attachment, then runs the `companion` command exactly as `python -m app` does.
LAUNCH_CHILD = textwrap.dedent(
    """
    import sys, time
    T0 = float(sys.argv[1])
    import runpy
    from PySide6.QtCore import QTimer
    import app.ui.main_window as mw
    shown = []
    show, paint = mw.MainWindow.showEvent, mw.MainWindow.paintEvent
    attach = mw.MainWindow.attach_session
    def on_show(self, event):
        if not shown:
            shown.append(1)
            print("SHOWN", time.time() - T0, flush=True)
            print("CPU", time.process_time(), flush=True)
        show(self, event)
    def on_paint(self, event):
        if len(shown) == 1:
            shown.append(2)
            print("PAINTED", time.time() - T0, flush=True)
        paint(self, event)
    def on_attach(self, session):
        print("ATTACHED", time.time() - T0, flush=True)
        attach(self, session)
        QTimer.singleShot(0, self.quit_requested.emit)  # measured: quit the usual way
    mw.MainWindow.showEvent = on_show
    mw.MainWindow.paintEvent = on_paint
    mw.MainWindow.attach_session = on_attach
    sys.argv = ["companion", "--quit-after", "10"]  # a safety net: it quits once attached
    try:
        runpy.run_module("app", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    """
)

LAUNCH_CONFIG = """\
[chat]
model = "openai-compatible/bench"
base_url = "http://127.0.0.1:9/v1"

[ui]
first_run_done = true
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@contextlib.contextmanager
def xvfb() -> Iterator[str | None]:
    """A private Xvfb display (':N'), or None when Xvfb is not installed."""
    if shutil.which("Xvfb") is None:
        yield None
        return
    read, write = os.pipe()
    proc = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-noreset",
            "+extension",
            "RECORD",
            "-screen",
            "0",
            "1600x1000x24",
        ],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        yield f":{number}" if number else None
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _clean_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPANION_", "QT_"))}
    for key in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(key, None)
    env["COMPANION_CONFIG"] = str(folder / "config.toml")
    env["COMPANION_DATA_DIR"] = str(folder / "data")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def launch_runs(
    runs: int, display: str | None, child: str = LAUNCH_CHILD
) -> dict[str, list[float]]:
    """Seconds from spawning the process to the window's first show event / paint /
    the session attached."""
    shown: list[float] = []
    painted: list[float] = []
    attached: list[float] = []
    cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "config.toml").write_text(LAUNCH_CONFIG)
        env = _clean_env(folder)
        if display is None:
            env["QT_QPA_PLATFORM"] = "offscreen"
        else:
            env["DISPLAY"] = display
        for _ in range(runs + 1):  # the first run warms the file cache and is dropped
            started = time.time()
            done = subprocess.run(
                [sys.executable, "-c", child, repr(started)],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
            if "SHOWN" not in lines:
                raise RuntimeError(f"the window never showed:\n{done.stderr[-2000:]}")
            shown.append(float(lines["SHOWN"]))
            cpu.append(float(lines["CPU"]))
            if "PAINTED" in lines:
                painted.append(float(lines["PAINTED"]))
            if "ATTACHED" in lines:
                attached.append(float(lines["ATTACHED"]))
    return {
        "shown": shown[1:],
        "painted": painted[1:],
        "attached": attached[1:],
        "cpu": cpu[1:],
    }


# -- (b) frames during a reply ------------------------------------------------------------

FRAMES_CHILD = textwrap.dedent(
    """
    import json, math, sys, time
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from app.events import (AssistantSentence, MouthLevel, Status, StatusChanged,
                            TurnFinished, UserTranscript)
    from app.ui.main_window import MainWindow
    from tests.ui_sessions import ScriptedSession as Session  # does nothing when driven

    seconds = float(sys.argv[1])
    session = Session()
    window = MainWindow(session)
    window.resize(900, 640)
    window.show()
    avatar = window.avatar
    avatar_paints, avatar_cost, all_paint = [], [], [0.0]

    class Timing(QObject):
        def eventFilter(self, obj, event):
            if event.type() != QEvent.Type.Paint:
                return False
            started = time.perf_counter()
            obj.event(event)  # paint now, timed; the filter then swallows the event
            cost = time.perf_counter() - started
            all_paint[0] += cost
            if obj is avatar:
                avatar_paints.append(started)
                avatar_cost.append(cost)
            return True

    timing = Timing()
    app.installEventFilter(timing)
    lateness = []
    last = [time.perf_counter()]
    def tick():
        now = time.perf_counter()
        lateness.append(now - last[0] - 0.005)
        last[0] = now
    ticker = QTimer(); ticker.setInterval(5); ticker.timeout.connect(tick)

    words = ("Sure, here is another sentence of the reply, long enough to wrap "
             "across the bubble like a real one does.").split()
    state = {"t": 0, "turn": 1, "sentence": 0}
    def mouth():
        state["t"] += 1
        session.events.emit(MouthLevel(0.5 + 0.5 * math.sin(state["t"] / 3)))
    def sentence():
        if state["sentence"] == 0:
            session.events.emit(UserTranscript("Tell me more please", True, state["turn"]))
            session.events.emit(StatusChanged(Status.SPEAKING))
        n = state["sentence"]
        text = " ".join(words[: 8 + (n * 5) % len(words)]) + "."
        session.events.emit(AssistantSentence(text, text, (), state["turn"]))
        state["sentence"] += 1
        if state["sentence"] == 4:
            session.events.emit(TurnFinished(state["turn"], {}))
            state["turn"] += 1
            state["sentence"] = 0
    mouth_timer = QTimer(); mouth_timer.setInterval(40); mouth_timer.timeout.connect(mouth)
    talk_timer = QTimer(); talk_timer.setInterval(1500); talk_timer.timeout.connect(sentence)

    def begin():
        avatar_paints.clear(); avatar_cost.clear(); all_paint[0] = 0.0; lateness.clear()
        last[0] = time.perf_counter()
        state["began"] = time.perf_counter()
        ticker.start(); mouth_timer.start(); talk_timer.start(); sentence()
        QTimer.singleShot(int(seconds * 1000), app.quit)
    QTimer.singleShot(500, begin)  # let the first layout and paint pass
    app.exec()
    elapsed = time.perf_counter() - state["began"]
    intervals = [b - a for a, b in zip(avatar_paints, avatar_paints[1:])]
    print(json.dumps({"intervals": intervals, "avatar_cost": avatar_cost,
                      "paint_s_per_s": all_paint[0] / elapsed, "lateness": lateness,
                      "turns": state["turn"]}))
    """
)


def frames(seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        env = _clean_env(Path(tmp))
        env["QT_QPA_PLATFORM"] = "offscreen"
        done = subprocess.run(
            [sys.executable, "-c", FRAMES_CHILD, str(seconds)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=120 + seconds,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- (c) memory -----------------------------------------------------------------------------

MEMORY_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    import qasync

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    app = QApplication([])
    from app.config import Settings
    from app.session import build_speech
    from app.ui.app import Shell
    from app.ui.main_window import MainWindow
    from tests.ui_sessions import ScriptedSession as Session  # does nothing when driven

    idle_s = float(sys.argv[1])
    figures = {}

    async def main():
        session = Session()
        window = MainWindow(session)
        shell = Shell(session, window, use_tray=False)
        shell.show_main()
        await asyncio.sleep(idle_s / 2)
        figures["ui_only_mb"] = rss_mb()
        speech = build_speech(Settings())
        started = time.perf_counter()
        await speech.load()
        figures["asr_load_s"] = time.perf_counter() - started
        figures["asr"] = type(speech).__name__
        await asyncio.sleep(idle_s)
        figures["idle_mb"] = rss_mb()
        shell.dispose()

    loop = qasync.QEventLoop(app)
    with loop:
        loop.run_until_complete(main())
    print(json.dumps(figures))
    """
)


def memory(idle_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        env = _clean_env(Path(tmp))
        env["QT_QPA_PLATFORM"] = "offscreen"
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, str(idle_s)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- the table ---------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="launches per display kind")
    parser.add_argument("--reply-s", type=float, default=6.0, help="seconds of simulated reply")
    parser.add_argument("--idle-s", type=float, default=3.0, help="idle seconds before RSS")
    parser.add_argument("--skip-xvfb", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    rows: list[tuple[str, str, str]] = []
    launches = {"offscreen": launch_runs(args.runs, None)}
    if not args.skip_xvfb:
        with xvfb() as display:
            if display is not None:
                launches["Xvfb (xcb)"] = launch_runs(args.runs, display)
    for kind, figures in launches.items():
        shown = figures["shown"]
        verdict = "ok" if statistics.median(shown) <= LAUNCH_BUDGET_S else "OVER"
        rows.append(
            (
                f"launch → shown, {kind} (p50/{len(shown)})",
                _ms(statistics.median(shown)),
                f"≤ {LAUNCH_BUDGET_S * 1000:.0f} ms {verdict}; p95 "
                f"{percentile(shown, 95) * 1000:.0f}, min {min(shown) * 1000:.0f}, "
                f"max {max(shown) * 1000:.0f}",
            )
        )
        rows.append(
            (
                "  CPU time until shown (p50)",
                _ms(statistics.median(figures["cpu"])),
                "user+sys of the process (less swayed by a busy machine)",
            )
        )
        if figures["painted"]:
            rows.append(
                (
                    "  first paint (p50)",
                    _ms(statistics.median(figures["painted"])),
                    "",
                )
            )
        if figures["attached"]:
            rows.append(
                (
                    "  session made and attached (p50)",
                    _ms(statistics.median(figures["attached"])),
                    f"p95 {percentile(figures['attached'], 95) * 1000:.0f} ms; models load after",
                )
            )

    f = frames(args.reply_s)
    intervals, cost, late = f["intervals"], f["avatar_cost"], f["lateness"]
    rows += [
        (
            "reply: avatar frame interval p50 / p95",
            _ms(statistics.median(intervals)),
            f"p95 {percentile(intervals, 95) * 1000:.0f} ms, {len(intervals)} frames (timer 33 ms)",
        ),
        (
            "reply: avatar paint time p50 / p95",
            f"{statistics.median(cost) * 1000:7.2f} ms",
            f"p95 {percentile(cost, 95) * 1000:.1f} ms",
        ),
        (
            "reply: all widgets' paint time",
            f"{f['paint_s_per_s'] * 100:7.1f} %",
            "of one core",
        ),
        (
            "reply: UI thread stall (5 ms timer late) p95",
            _ms(percentile(late, 95)),
            f"max {max(late) * 1000:.0f} ms",
        ),
    ]
    if not args.skip_memory:
        m = memory(args.idle_s)
        rows += [
            ("RSS idle, window + pet, no models", f"{m['ui_only_mb']:7.0f} MB", ""),
            (
                "RSS idle, + embedded ASR loaded",
                f"{m['idle_mb']:7.0f} MB",
                f"≤ {MEMORY_BUDGET_MB:.0f} MB "
                f"{'ok' if m['idle_mb'] <= MEMORY_BUDGET_MB else 'OVER'}; "
                f"{m['asr']} load {m['asr_load_s']:.2f} s",
            ),
        ]
    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  {'figure':>10}  notes")
    for what, figure, note in rows:
        print(f"{what:<{width}}  {figure:>10}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

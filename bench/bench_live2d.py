"""A Live2D model as the avatar: frame time at the window's size, and the CPU an idle
Live2D avatar costs with the window visible and hidden.

    python bench/bench_live2d.py [--model FOLDER] [--frames 300] [--idle-s 20]

The model defaults to the shared test model (`../shared/fixtures/live2d/shizuku/`,
copied to a temporary folder). Everything runs in a child process on a private Xvfb,
so the OpenGL driver is whatever Mesa gives there: on this kind of machine llvmpipe,
Mesa's software renderer (the figures on a GPU are far lower).

(a) Frame time: the main window at its usual size, the Live2D model in the avatar's
    place; one frame is what the avatar's timer does: advance the model (motions,
    blink, breath, expression, mouth), draw it offscreen, read it back and paint the
    widget. `repaint()` makes the paint happen inside the measurement.
(b) CPU of an idle avatar: the app's own event loop runs for `--idle-s` seconds with
    the model idling at its frame rate (30 fps by default; 15 also shown), the window
    visible; then hidden (the avatar's timer stops). CPU is the process's, all its
    threads (llvmpipe renders on several), as a share of one core. The sprite avatar
    idling in the same window is shown for comparison. Goal: ≤ 5 % at 30 fps visible.

It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_ui import percentile, xvfb  # the private Xvfb and percentiles the UI bench uses

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT.parent / "shared" / "fixtures" / "live2d" / "shizuku"
MARKER = "figures: "


# -- the child: runs on the Xvfb ------------------------------------------------------------


def child(model_folder: Path, data: Path, frames: int, idle_s: float) -> dict[str, Any]:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.avatar.live2d_model import load_live2d_model
    from app.config.models import Live2DSettings
    from app.ui.live2d_scene import shared_context
    from app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(["bench"])
    assert isinstance(app, QApplication)
    model = load_live2d_model(model_folder, data_folder=data)
    window = MainWindow()
    window.show()
    problem = window.avatar.set_live2d(model, Live2DSettings())
    if problem:
        raise SystemExit(problem)
    for _ in range(20):
        app.processEvents()
        time.sleep(0.01)
    avatar = window.avatar
    context, surface = shared_context()
    context.makeCurrent(surface)
    renderer = str(context.functions().glGetString(0x1F01))
    context.doneCurrent()

    # (a) frame time, the avatar's own frames in a row
    avatar._timer.stop()  # the measurement drives the frames itself
    times: list[float] = []
    for _ in range(frames):
        start = time.perf_counter()
        avatar.step(1 / 30)
        avatar.repaint()
        times.append((time.perf_counter() - start) * 1000)
    face = avatar.live2d
    assert face is not None
    parts: dict[str, list[float]] = {"advance": [], "draw and read back": [], "cpu": []}
    ratio = avatar.devicePixelRatioF()
    width, height = round(avatar.width() * ratio), round(avatar.height() * ratio)
    for _ in range(frames):
        cpu, start = time.process_time(), time.perf_counter()
        face.scene.puppet.advance(1 / 30)
        middle = time.perf_counter()
        face.scene.draw(width, height)
        end = time.perf_counter()
        parts["advance"].append((middle - start) * 1000)
        parts["draw and read back"].append((end - middle) * 1000)
        parts["cpu"].append((time.process_time() - cpu) * 1000)
    avatar._timer.start()

    def idle(seconds: float) -> tuple[float, float]:
        """(% of one core, frames painted per second) while the loop runs `seconds`."""
        painted = [0]
        paint = avatar.paintEvent

        def counting(event: Any) -> None:
            painted[0] += 1
            paint(event)

        avatar.paintEvent = counting  # type: ignore[method-assign]
        loop = QEventLoop()  # not app.quit(): that would close the window
        cpu, wall = time.process_time(), time.perf_counter()
        QTimer.singleShot(round(seconds * 1000), loop.quit)
        loop.exec()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        avatar.paintEvent = paint  # type: ignore[method-assign]
        return 100 * cpu / wall, painted[0] / wall

    idle(1.0)  # settle
    visible_30 = idle(idle_s)
    avatar.set_live2d_view(Live2DSettings(frame_rate=15))
    visible_15 = idle(idle_s)
    avatar.set_live2d_view(Live2DSettings())
    window.hide()
    hidden = idle(idle_s)
    window.show()
    avatar.set_live2d(None)
    sprite = idle(idle_s)
    rss_mb = 0.0
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss_mb = int(line.split()[1]) / 1024
    return {
        "rss_mb": rss_mb,
        "renderer": renderer,
        "size": [avatar.width(), avatar.height()],
        "frame_ms": times,
        "parts_ms": parts,
        "visible_30": visible_30,
        "visible_15": visible_15,
        "hidden": hidden,
        "sprite": sprite,
    }


# -- the parent --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="a Live2D model folder")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        figures = child(Path(args.child[0]), Path(args.child[1]), args.frames, args.idle_s)
        print(MARKER + json.dumps(figures), flush=True)
        return 0
    if shutil.which("Xvfb") is None:
        raise SystemExit("Xvfb is not installed (apt-get install xvfb)")
    with tempfile.TemporaryDirectory() as tmp, xvfb() as display:
        if display is None:
            raise SystemExit("Xvfb did not start")
        model = args.model
        if model is None:
            if not FIXTURE.is_dir():
                raise SystemExit(f"no --model given and no test model at {FIXTURE}")
            model = Path(shutil.copytree(FIXTURE, Path(tmp) / "shizuku"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPANION_", "QT_"))}
        env |= {"DISPLAY": display, "PYTHONPATH": str(ROOT), "COMPANION_DATA_DIR": tmp}
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(model), tmp, "--frames", str(args.frames),
             "--idle-s", str(args.idle_s)],
            env=env, capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
    line = next((x for x in done.stdout.splitlines() if x.startswith(MARKER)), None)
    if line is None:
        raise SystemExit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    f = json.loads(line.removeprefix(MARKER))
    frame = f["frame_ms"]
    print(f"Live2D avatar, {Path(model).name}, renderer {f['renderer']}, {os.cpu_count()} cores")
    print(f"frame at the window's size ({f['size'][0]}×{f['size'][1]}): "
          f"p50 {percentile(frame, 50):.1f} ms, p95 {percentile(frame, 95):.1f} ms "
          f"({len(frame)} frames)")  # fmt: skip
    for part, values in f["parts_ms"].items():
        what = "CPU time of one frame, all threads" if part == "cpu" else part
        print(f"  {what}: p50 {percentile(values, 50):.1f} ms, p95 {percentile(values, 95):.1f} ms")
    print(f"resident memory of the process (window with the model, sprites dropped): "
          f"{f['rss_mb']:.0f} MB")  # fmt: skip
    for key, label in (
        ("visible_30", "idle, window visible, 30 fps"),
        ("visible_15", "idle, window visible, 15 fps"),
        ("hidden", "idle, window hidden"),
        ("sprite", "the sprite avatar, idle, visible (for comparison)"),
    ):
        cpu, fps = f[key]
        print(f"{label:<50} {cpu:5.1f} % of a core ({fps:.1f} frames/s painted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

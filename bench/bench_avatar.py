"""Avatar render cost per frame, offscreen: p50/p95 in ms (budget: ≤ 2 ms, i.e. a small
share of a 16.7 ms frame at 60 fps).

    python bench/bench_avatar.py [--frames 600] [--width 400 --height 520]

It animates the sprite avatar as the window would while talking (mouth levels from a
voice-like envelope, blinks, an expression change every second, the idle bob) and
times `step` + painting into an offscreen image of the window's avatar size. The
first frame (scaling the frames for this size) is reported apart. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication

from app.ui import AvatarWidget

FRAME_S = 1 / 60


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--width", type=int, default=400)
    parser.add_argument("--height", type=int, default=520)
    args = parser.parse_args(argv)
    _app = QApplication.instance() or QApplication(sys.argv[:1])

    started = time.perf_counter()
    widget = AvatarWidget()
    load_ms = (time.perf_counter() - started) * 1000
    size = QSize(args.width, args.height)
    widget.resize(size)
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    expressions = widget.expressions

    def frame(n: int) -> float:
        t = n * FRAME_S
        if n % 60 == 0:
            widget.set_expression(expressions[(n // 60) % len(expressions)])
        if n % 150 == 75:
            widget.blink()
        # a syllable-rate envelope with pauses, like speech
        level = max(0.0, math.sin(t * 2 * math.pi * 4.0)) * (0.0 if (t % 3.0) > 2.4 else 0.9)
        widget.set_mouth_level(level)
        start = time.perf_counter()
        widget.step(FRAME_S)
        painter = QPainter(image)
        try:
            widget._paint(painter, image.rect().toRectF(), 1.0)
        finally:
            painter.end()
        return (time.perf_counter() - start) * 1000

    first_ms = frame(0)
    cold = [frame(n) for n in range(1, args.frames + 1)]  # each sprite's first use included
    warm = [frame(n) for n in range(args.frames + 1, 2 * args.frames + 1)]
    states = widget.pack.names
    print(
        f"avatar pack {widget.pack.name!r}: {len(states)} expressions, loaded in {load_ms:.1f} ms"
    )
    print(f"first frame at {args.width}x{args.height} (scales the frames): {first_ms:.2f} ms")
    for label, times in (("first pass (decodes + scales each frame once)", cold), ("warm", warm)):
        print(
            f"{label}, {len(times)} frames: p50 {pct(times, 0.5):.3f} ms, "
            f"p95 {pct(times, 0.95):.3f} ms, max {max(times):.3f} ms, "
            f"mean {statistics.fmean(times):.3f} ms (budget 2 ms)"
        )
    times = warm
    print(f"share of one core at 60 fps (mean): {statistics.fmean(times) / (FRAME_S * 1000):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

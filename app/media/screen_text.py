"""Reading the text in a screenshot, offline: RapidOCR (PP-OCRv4 detection and
recognition, Chinese and English, ONNX models inside the `rapidocr-onnxruntime` wheel,
Apache-2.0) on one thread that owns it.

The engine loads on first use (about 1.5 s), not at start: most conversations never
look at the screen. Areas can be left out (Companion's own windows, so the companion
does not read its own chat back). Lines come back top to bottom, the pieces of one
line left to right.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["ScreenTextError", "ScreenTextReader", "TextLine", "ocr_installed", "rows"]

MIN_SCORE = 0.5  # recognitions the engine is less sure of are left out
Box = tuple[int, int, int, int]  # left, top, right, bottom


class ScreenTextError(Exception):
    """The text could not be read; the message says why in words."""


def ocr_installed() -> bool:
    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


@dataclass(slots=True, frozen=True)
class TextLine:
    """One piece of text the engine found, with its box in the image's pixels."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    score: float

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


def rows(lines: Sequence[TextLine]) -> list[list[TextLine]]:
    """Pieces grouped into rows of the screen (their vertical middles within half a
    line's height), top to bottom, each row left to right."""
    grouped: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda t: (t.middle, t.left)):
        if grouped:
            row = grouped[-1]
            height = max(1, min(line.bottom - line.top, row[0].bottom - row[0].top))
            if abs(line.middle - row[0].middle) <= height / 2:
                row.append(line)
                continue
        grouped.append([line])
    return [sorted(row, key=lambda t: t.left) for row in grouped]


class ScreenTextReader:
    """OCR on one owner thread. `threads` bounds the engine's own CPU threads."""

    def __init__(self, *, threads: int = 2, timeout_s: float = 60.0) -> None:
        self._threads = threads
        self._timeout_s = timeout_s
        self._owner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="screen-text")
        self._engine: Any = None

    def _load(self) -> Any:
        if self._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise ScreenTextError(
                    "the text reader is not installed; install it with: "
                    "pip install --no-deps rapidocr-onnxruntime"
                ) from exc
            # Its default is every core: bounded, so reading a screen leaves room for
            # the voice and the chat model.
            self._engine = RapidOCR(
                intra_op_num_threads=self._threads, inter_op_num_threads=1, print_verbose=False
            )
        return self._engine

    def _read(self, path: Path, hide: Sequence[Box]) -> list[TextLine]:
        import numpy as np
        from PIL import Image

        engine = self._load()
        try:
            with Image.open(path) as image:
                pixels = np.array(image.convert("RGB"))
        except OSError as exc:
            raise ScreenTextError(f"the screenshot {path} could not be read: {exc}") from exc
        for left, top, right, bottom in hide:
            pixels[max(0, top) : max(0, bottom), max(0, left) : max(0, right)] = 255
        found, _ = engine(pixels)
        lines = []
        for corners, text, score in found or []:
            if float(score) < MIN_SCORE or not str(text).strip():
                continue
            xs = [int(p[0]) for p in corners]
            ys = [int(p[1]) for p in corners]
            lines.append(
                TextLine(str(text).strip(), min(xs), min(ys), max(xs), max(ys), float(score))
            )
        return lines

    async def read(self, path: Path, *, hide: Sequence[Box] = ()) -> list[TextLine]:
        """The text in the image at `path`, with the `hide` boxes left out."""
        future = self._owner.submit(self._read, Path(path), list(hide))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
        except TimeoutError:
            raise ScreenTextError(
                f"reading the screen's text took longer than {self._timeout_s:.0f} s"
            ) from None
        except ScreenTextError:
            raise
        except Exception as exc:  # onnxruntime and OpenCV errors, in words
            raise ScreenTextError(f"the screen's text could not be read: {exc}") from exc

    def close(self) -> None:
        self._owner.shutdown(wait=False, cancel_futures=True)

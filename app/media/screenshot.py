"""Screen capture with mss, off the event loop.

`capture_screen` grabs the monitor under the mouse pointer (the primary one when
the pointer cannot be found), a monitor by number (1, 2, ... as mss counts them),
or all monitors together (`"all"`), and saves it as a PNG in the captures folder.
`capture_for_model` also makes the model copy under the import policy, from the
pixels in memory while the PNG is being written (a 4K screen is not read back).
Failures (no display, a Wayland session without X) raise `ScreenshotError` in words.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
import logging
import math
import os
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from app.llm import ImageBlock, ImageFileRef
from app.media.images import MAX_MODEL_SIDE, model_copy_sync
from app.media.windows import Window, front_window, list_windows, windows_in

log = logging.getLogger(__name__)

__all__ = [
    "Capture",
    "MonitorChoice",
    "ScreenGrabber",
    "ScreenshotError",
    "capture_for_model",
    "capture_for_model_sync",
    "capture_screen",
    "capture_screen_sync",
    "monitor_under",
    "pointer_position",
    "screenshot_caption",
]

MonitorChoice = Literal["under_mouse", "all"] | int


class ScreenshotError(Exception):
    """The screen could not be captured; the message says why in words."""


@dataclass(slots=True, frozen=True)
class Capture:
    """A saved screenshot. `monitor` is mss's number: 0 for all monitors, 1.. for one;
    `left`/`top` is where it starts on the virtual screen. `windows` are the windows it
    shows, front to back, in its own pixels (listed when the capture is for the model)."""

    path: Path
    monitor: int
    width: int
    height: int
    left: int = 0
    top: int = 0
    windows: tuple[Window, ...] = ()


_TITLE_CHARS = 120
_OTHER_WINDOWS = 5


def screenshot_caption(capture: Capture) -> str:
    """What a screenshot shows, in words every model can read: the screen, the window
    the user is looking at, the other windows on it, and whether Companion's is there."""
    def quoted(title: str) -> str:
        return "“" + title[:_TITLE_CHARS] + ("…" if len(title) > _TITLE_CHARS else "") + "”"

    what = "all monitors" if capture.monitor == 0 else f"monitor {capture.monitor}"
    words = [f"Screenshot of {what} ({capture.width}x{capture.height} pixels)."]
    front = front_window(capture.windows)
    if front is not None:
        words.append(f"The user is looking at the window {quoted(front.title)}.")
    others = [w.title for w in capture.windows if w is not front and not w.own]
    if others:
        shown = ", ".join(quoted(t) for t in others[:_OTHER_WINDOWS])
        more = f" and {len(others) - _OTHER_WINDOWS} more" if len(others) > _OTHER_WINDOWS else ""
        words.append(f"Other windows on it: {shown}{more}.")
    if any(w.own for w in capture.windows):
        words.append("Companion's own window (this conversation) is on it too.")
    return " ".join(words)


def monitor_under(point: tuple[int, int] | None, monitors: Sequence[Mapping[str, Any]]) -> int:
    """The mss number (1..) of the monitor containing `point`; the primary one when the
    point is unknown or off every monitor."""
    singles = list(enumerate(monitors))[1:]
    if point is not None:
        x, y = point
        for number, mon in singles:
            left, top = mon["left"], mon["top"]
            if left <= x < left + mon["width"] and top <= y < top + mon["height"]:
                return number
    for number, mon in singles:
        if mon.get("is_primary"):
            return number
    return 1


@functools.cache
def _libx11() -> ctypes.CDLL | None:
    # find_library runs ldconfig: once per process, not once per screenshot.
    name = ctypes.util.find_library("X11")
    return ctypes.CDLL(name) if name else None


def _pointer_x11(display: str | None) -> tuple[int, int] | None:
    x11 = _libx11()
    if x11 is None:
        return None
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    x11.XQueryPointer.argtypes = (ctypes.c_void_p, ctypes.c_ulong, *[ctypes.c_void_p] * 7)
    dpy = x11.XOpenDisplay(display.encode() if display else None)
    if not dpy:
        return None
    try:
        root, child = ctypes.c_ulong(), ctypes.c_ulong()
        rx, ry, wx, wy = (ctypes.c_int() for _ in range(4))
        mask = ctypes.c_uint()
        refs = (root, child, rx, ry, wx, wy, mask)
        ok = x11.XQueryPointer(dpy, x11.XDefaultRootWindow(dpy), *map(ctypes.byref, refs))
        return (rx.value, ry.value) if ok else None
    finally:
        x11.XCloseDisplay(dpy)


def _pointer_windows() -> tuple[int, int] | None:
    class POINT(ctypes.Structure):
        _fields_ = (("x", ctypes.c_long), ("y", ctypes.c_long))

    point = POINT()
    user32 = ctypes.windll.user32  # type: ignore[attr-defined]
    return (point.x, point.y) if user32.GetCursorPos(ctypes.byref(point)) else None


def _pointer_macos() -> tuple[int, int] | None:
    class CGPoint(ctypes.Structure):
        _fields_ = (("x", ctypes.c_double), ("y", ctypes.c_double))

    quartz = ctypes.CDLL(
        "/System/Library/Frameworks/ApplicationServices.framework/ApplicationServices"
    )
    quartz.CGEventCreate.restype = ctypes.c_void_p
    quartz.CGEventCreate.argtypes = [ctypes.c_void_p]
    quartz.CGEventGetLocation.restype = CGPoint
    quartz.CGEventGetLocation.argtypes = [ctypes.c_void_p]
    quartz.CFRelease.argtypes = [ctypes.c_void_p]
    event = quartz.CGEventCreate(None)
    if not event:
        return None
    try:
        where = quartz.CGEventGetLocation(event)
        return round(where.x), round(where.y)
    finally:
        quartz.CFRelease(event)


def pointer_position(display: str | None = None) -> tuple[int, int] | None:
    """Where the mouse pointer is on the virtual screen, or None when it cannot be told."""
    try:
        if sys.platform.startswith("win"):
            return _pointer_windows()
        if sys.platform == "darwin":
            return _pointer_macos()
        return _pointer_x11(display or os.environ.get("DISPLAY"))
    except (OSError, AttributeError, ValueError) as exc:
        log.info("the mouse pointer position is unknown (%s)", exc)
        return None


def _no_display_reason() -> str | None:
    if sys.platform.startswith(("win", "darwin")):
        return None
    if os.environ.get("DISPLAY"):
        return None
    if os.environ.get("WAYLAND_DISPLAY"):
        return (
            "This is a Wayland session without an X display; screen capture needs X "
            "(XWayland) or a desktop that allows it."
        )
    return "There is no display to capture ($DISPLAY is not set)."


@dataclass(slots=True)
class _Shot:
    """mss's pixels as they came: BGRA (the fourth byte is padding)."""

    bgra: bytes | bytearray
    size: tuple[int, int]
    monitor: int
    left: int = 0
    top: int = 0

    def rgb(self) -> Image.Image:
        return Image.frombuffer("RGB", self.size, self.bgra, "raw", "BGRX", 0, 1)

    def small_rgb(self) -> Image.Image:
        """The pixels shrunk to the model's size before the channels are swapped, so the
        full-size conversion stays off this path (it is done while saving)."""
        image = Image.frombuffer("RGBX", self.size, self.bgra, "raw", "RGBX", 0, 1)
        ratio = max(self.size) / MAX_MODEL_SIDE
        if ratio > 1.5:
            image = image.reduce(math.ceil(ratio))
        elif ratio > 1:
            size = (round(image.width / ratio), round(image.height / ratio))
            image = image.resize(size, Image.Resampling.BILINEAR)
        blue, green, red, _ = image.split()
        return Image.merge("RGB", (red, green, blue))


def _grab_from(grabber: Any, monitor: MonitorChoice) -> _Shot:
    """One grab with an open mss instance; mss's own errors pass through."""
    monitors = grabber.monitors
    if monitor == "all":
        number = 0
    elif monitor == "under_mouse":
        number = monitor_under(pointer_position(), monitors)
    else:
        number = int(monitor)
        if not 1 <= number < len(monitors):
            raise ScreenshotError(
                f"There is no monitor {number}; this computer has "
                f"{len(monitors) - 1} (numbered from 1)."
            )
    area = monitors[number]
    shot = grabber.grab(area)
    return _Shot(shot.bgra, (shot.width, shot.height), number, area["left"], area["top"])


def _grab(monitor: MonitorChoice) -> _Shot:
    """One grab with a fresh mss instance (opened and closed around it)."""
    import mss
    from mss.exception import ScreenShotError

    reason = _no_display_reason()
    if reason:
        raise ScreenshotError(reason)
    try:
        with mss.MSS() as grabber:
            return _grab_from(grabber, monitor)
    except ScreenShotError as exc:
        raise ScreenshotError(f"The screen could not be captured: {exc}") from exc


class ScreenGrabber:
    """One mss instance on one worker thread, kept between captures: mss then reuses its
    X connection and shared-memory buffer (a 4K grab took ~10 ms instead of ~60 ms here).
    A failed grab or a new $DISPLAY drops the instance, so the next capture starts
    afresh (which is also when a changed monitor layout is seen)."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="screen-grabber")
        self._mss: Any = None
        self._display: str | None = None

    def _drop(self) -> None:
        if self._mss is not None:
            with contextlib.suppress(Exception):
                self._mss.close()
        self._mss = None

    def grab_sync(self, monitor: MonitorChoice) -> _Shot:
        """Grab on the calling thread: only ever call it on this grabber's thread."""
        import mss
        from mss.exception import ScreenShotError

        reason = _no_display_reason()
        if reason:
            raise ScreenshotError(reason)
        display = os.environ.get("DISPLAY")
        if display != self._display:
            self._drop()
        try:
            if self._mss is None:
                self._mss, self._display = mss.MSS(), display
            return _grab_from(self._mss, monitor)
        except ScreenShotError as exc:
            self._drop()
            raise ScreenshotError(f"The screen could not be captured: {exc}") from exc

    async def _run(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, functools.partial(func, *args, **kwargs))

    async def capture(self, monitor: MonitorChoice = "under_mouse", *, folder: Path) -> Capture:
        shot = await self._run(self.grab_sync, monitor)
        path = await self._run(_save, shot, folder, 1)
        return Capture(path=path, monitor=shot.monitor, width=shot.size[0], height=shot.size[1])

    async def capture_for_model(
        self,
        monitor: MonitorChoice = "under_mouse",
        *,
        folder: Path,
        session_id: str,
        name: str | None = None,
        root: Path | None = None,
    ) -> tuple[Capture, ImageBlock]:
        result: tuple[Capture, ImageBlock] = await self._run(
            capture_for_model_sync,
            monitor,
            folder=folder,
            session_id=session_id,
            name=name,
            root=root,
            grabber=self,
        )
        return result

    def close(self) -> None:
        self._thread.submit(self._drop)
        self._thread.shutdown(wait=False)


def _save(shot: _Shot, folder: Path, compress_level: int) -> Path:
    image = shot.rgb()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = Path(folder).resolve() / f"capture-{stamp}-{uuid.uuid4().hex[:6]}.png"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Fast compression: a 4K screen is saved in a fraction of default-level time.
        image.save(path, "PNG", compress_level=compress_level)
    except OSError as exc:
        raise ScreenshotError(f"The screenshot could not be saved to {path}: {exc}") from exc
    return path


def capture_screen_sync(
    monitor: MonitorChoice = "under_mouse", *, folder: Path, compress_level: int = 1
) -> Capture:
    """Grab and save one screenshot (blocking: call it from a worker thread)."""
    shot = _grab(monitor)
    path = _save(shot, folder, compress_level)
    return Capture(path=path, monitor=shot.monitor, width=shot.size[0], height=shot.size[1])


def capture_for_model_sync(
    monitor: MonitorChoice = "under_mouse",
    *,
    folder: Path,
    session_id: str,
    name: str | None = None,
    root: Path | None = None,
    grabber: ScreenGrabber | None = None,
) -> tuple[Capture, ImageBlock]:
    """Grab a screenshot, keep it as a PNG in `folder` and make its model copy under the
    import policy (`images.model_copy_sync`), saving and shrinking at the same time.
    Blocking: call it from a worker thread (`grabber`'s own, when one is given)."""
    shot = grabber.grab_sync(monitor) if grabber is not None else _grab(monitor)
    width, height = shot.size  # the windows on it are listed too, for describing it
    with ThreadPoolExecutor(1, thread_name_prefix="capture-save") as pool:
        saving = pool.submit(_save, shot, folder, 1)
        if max(shot.size) > MAX_MODEL_SIDE:
            # The copy does not depend on the saved file: make it while the PNG is written.
            stand_in = ImageFileRef(path=Path(folder) / "pending.png", mime_type="image/png")
            small = shot.small_rgb()
            block = model_copy_sync(small, stand_in, session_id=session_id, name=name, root=root)
            path = saving.result()
            original = ImageFileRef(path=path, mime_type="image/png", width=width, height=height)
            block = ImageBlock(original=original, model=block.model, name=name)
        else:
            path = saving.result()
            original = ImageFileRef(path=path, mime_type="image/png", width=width, height=height)
            block = model_copy_sync(
                shot.rgb(), original, session_id=session_id, name=name, root=root
            )
    windows = windows_in(list_windows(), shot.left, shot.top, width, height)
    capture = Capture(path, shot.monitor, width, height, shot.left, shot.top, windows)
    return capture, block


async def capture_screen(monitor: MonitorChoice = "under_mouse", *, folder: Path) -> Capture:
    """`capture_screen_sync` in a worker thread, so the event loop never waits on mss."""
    return await asyncio.to_thread(capture_screen_sync, monitor, folder=folder)


async def capture_for_model(
    monitor: MonitorChoice = "under_mouse",
    *,
    folder: Path,
    session_id: str,
    name: str | None = None,
    root: Path | None = None,
) -> tuple[Capture, ImageBlock]:
    """`capture_for_model_sync` in a worker thread."""
    return await asyncio.to_thread(
        capture_for_model_sync, monitor, folder=folder, session_id=session_id, name=name, root=root
    )

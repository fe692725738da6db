"""Screen capture with mss on a real X server (Xvfb), and its failures in words."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from app.media import ScreenGrabber, ScreenshotError, capture_screen, capture_screen_sync
from app.media.screenshot import _Shot, capture_for_model_sync, monitor_under, pointer_position

XVFB = shutil.which("Xvfb")


@pytest.fixture
def xvfb_display(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private Xvfb server (it picks a free display number itself); DISPLAY set to it."""
    if XVFB is None:
        pytest.fail("Xvfb is not installed: run scripts/setup.sh")
    read_fd, write_fd = os.pipe()
    # -noreset: else the server resets (and the pointer jumps) whenever a client leaves.
    command = [XVFB, "-displayfd", str(write_fd), "-screen", "0", "1280x720x24"]
    proc = subprocess.Popen(
        [*command, "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as reader:
            number = reader.readline().strip()
        assert number, "Xvfb did not start"
        display = f":{number}"
        monkeypatch.setenv("DISPLAY", display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield display
    finally:
        proc.terminate()
        proc.wait(5)


def warp_pointer(display: str, x: int, y: int) -> None:
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XWarpPointer.argtypes = [
        *(ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_int, ctypes.c_int),
        *(ctypes.c_uint, ctypes.c_uint, ctypes.c_int, ctypes.c_int),
    ]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    x11.XWarpPointer(dpy, 0, x11.XDefaultRootWindow(dpy), 0, 0, 0, 0, x, y)
    x11.XSync(dpy, 0)
    x11.XCloseDisplay(dpy)


async def test_the_monitor_under_the_mouse_is_captured(xvfb_display: str, tmp_path: Path) -> None:
    warp_pointer(xvfb_display, 100, 200)
    assert pointer_position() == (100, 200)
    capture = await capture_screen("under_mouse", folder=tmp_path)
    assert capture.monitor == 1 and (capture.width, capture.height) == (1280, 720)
    with Image.open(capture.path) as image:
        assert image.format == "PNG" and image.size == (1280, 720)
    assert capture.path.parent == tmp_path.resolve()


def test_all_monitors_and_a_numbered_one(xvfb_display: str, tmp_path: Path) -> None:
    assert capture_screen_sync("all", folder=tmp_path).monitor == 0
    assert capture_screen_sync(1, folder=tmp_path).monitor == 1
    with pytest.raises(ScreenshotError, match="no monitor 7"):
        capture_screen_sync(7, folder=tmp_path)


def test_the_monitor_under_a_point_and_the_primary_fallback() -> None:
    monitors = [
        {"left": 0, "top": 0, "width": 3000, "height": 1080},
        {"left": 0, "top": 0, "width": 1920, "height": 1080},
        {"left": 1920, "top": 0, "width": 1080, "height": 1080, "is_primary": True},
    ]
    assert monitor_under((100, 100), monitors) == 1
    assert monitor_under((2000, 500), monitors) == 2
    assert monitor_under(None, monitors) == 2  # pointer unknown: the primary one
    assert monitor_under((-50, 9000), monitors) == 2
    assert monitor_under(None, monitors[:2]) == 1  # no primary marked: the first


def test_no_display_is_reported_in_words(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ScreenshotError, match="no display"):
        capture_screen_sync(folder=tmp_path)


def test_a_wayland_session_without_x_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(ScreenshotError, match="Wayland"):
        capture_screen_sync(folder=tmp_path)


def test_an_unreachable_x_server_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DISPLAY", ":987")
    with pytest.raises(ScreenshotError):
        capture_screen_sync(folder=tmp_path)


async def test_a_grabber_keeps_mss_open_between_captures(
    xvfb_display: str, tmp_path: Path
) -> None:
    grabber = ScreenGrabber()
    try:
        capture, image = await grabber.capture_for_model(
            folder=tmp_path / "captures", session_id="s", name="tool1", root=tmp_path
        )
        kept = grabber._mss
        again = await grabber.capture(folder=tmp_path / "captures")
        assert kept is not None and grabber._mss is kept
        assert again.path != capture.path and again.path.is_file()
        # A 1280x720 screen fits the model as it is: its PNG is reused.
        assert image.name == "tool1" and image.model == image.original
        assert image.original.path == capture.path
    finally:
        grabber.close()


class FakeGrabber:
    """Hands out a 4K screen of one colour, as mss would (BGRA)."""

    def grab_sync(self, monitor: object) -> _Shot:
        pixel = bytes([10, 20, 30, 0])  # blue, green, red, padding
        return _Shot(bytearray(pixel * (3840 * 2160)), (3840, 2160), 1)


def test_a_4k_capture_gets_a_small_model_copy_with_true_colours(tmp_path: Path) -> None:
    capture, image = capture_for_model_sync(
        folder=tmp_path / "captures",
        session_id="s",
        root=tmp_path,
        grabber=FakeGrabber(),  # type: ignore[arg-type]
    )
    assert (capture.width, capture.height) == (3840, 2160)
    assert image.original.path == capture.path and image.original.mime_type == "image/png"
    assert (image.model.width, image.model.height) == (1920, 1080)
    assert image.model.mime_type == "image/jpeg"
    with Image.open(image.model.path) as copy:
        red, green, blue = copy.getpixel((100, 100))  # type: ignore[misc]
        assert abs(red - 30) <= 2 and abs(green - 20) <= 2 and abs(blue - 10) <= 2
    with Image.open(capture.path) as original:
        assert original.size == (3840, 2160) and original.getpixel((5, 5)) == (30, 20, 10)

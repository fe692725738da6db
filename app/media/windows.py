"""The windows on the screen, for describing a screenshot: their titles, where they are,
which one is active, and which are Companion's own.

X11 (and XWayland) through python-xlib: EWMH's `_NET_ACTIVE_WINDOW` and
`_NET_CLIENT_LIST_STACKING` when a window manager sets them, else the root window's
mapped children and the input focus. Windows through user32. Elsewhere (macOS, a
Wayland session without X) nothing is listed: a screenshot is then described by its
text alone. Listing never raises; it is blocking (call it off the event loop).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from dataclasses import dataclass, replace
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["Window", "front_window", "list_windows", "windows_in"]


@dataclass(slots=True, frozen=True)
class Window:
    """One visible top-level window; `left`/`top` on the virtual screen (or in a
    screenshot, after `windows_in`). `own`: one of Companion's windows."""

    title: str
    left: int
    top: int
    width: int
    height: int
    active: bool = False
    own: bool = False

    @property
    def box(self) -> tuple[int, int, int, int]:
        """(left, top, right, bottom)."""
        return self.left, self.top, self.left + self.width, self.top + self.height


def list_windows(display: str | None = None, *, pid: int | None = None) -> list[Window]:
    """The visible titled windows, front to back. `pid` is the process whose windows
    count as own (this one by default)."""
    pid = os.getpid() if pid is None else pid
    try:
        if sys.platform.startswith("win"):
            return _windows_user32(pid)
        if sys.platform == "darwin":
            return []
        target = display or os.environ.get("DISPLAY")
        return _windows_x11(target, pid) if target else []
    except Exception as exc:  # a window list is a nicety: never a failed screenshot
        log.info("the windows on the screen could not be listed (%s)", exc)
        return []


def windows_in(
    windows: list[Window], left: int, top: int, width: int, height: int
) -> tuple[Window, ...]:
    """The windows that show in the screen area (left, top, width, height), moved into
    its coordinates and clipped to it."""
    inside: list[Window] = []
    for w in windows:
        x0, y0 = max(w.left, left), max(w.top, top)
        x1 = min(w.left + w.width, left + width)
        y1 = min(w.top + w.height, top + height)
        if x1 > x0 and y1 > y0:
            inside.append(replace(w, left=x0 - left, top=y0 - top, width=x1 - x0, height=y1 - y0))
    return tuple(inside)


def front_window(windows: tuple[Window, ...] | list[Window]) -> Window | None:
    """The window the user is looking at: the active one, unless it is Companion's own
    (they typed to it), then the front-most other window."""
    others = [w for w in windows if not w.own]
    active = next((w for w in others if w.active), None)
    return active or (others[0] if others else None)


# ---------------------------------------------------------------- X11


def _x11_title(win: Any, atoms: dict[str, int]) -> str:
    """`_NET_WM_NAME` (UTF-8), else the old `WM_NAME`."""
    with contextlib.suppress(Exception):
        prop = win.get_full_property(atoms["_NET_WM_NAME"], atoms["UTF8_STRING"])
        if prop is not None and prop.value:
            value = prop.value
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            return text.strip()
    with contextlib.suppress(Exception):
        name = win.get_wm_name()
        if name:
            return (name.decode("latin-1") if isinstance(name, bytes) else str(name)).strip()
    return ""


def _x11_window(root: Any, win: Any, atoms: dict[str, int], pid: int, active: int) -> Window | None:
    from Xlib import X

    attributes = win.get_attributes()
    if attributes.map_state != X.IsViewable or attributes.win_class == X.InputOnly:
        return None
    title = _x11_title(win, atoms)
    if not title:
        return None
    geometry = win.get_geometry()
    where = win.translate_coords(root, 0, 0)  # the window's origin, seen from the root
    owner = None
    with contextlib.suppress(Exception):
        prop = win.get_full_property(atoms["_NET_WM_PID"], X.AnyPropertyType)
        if prop is not None and len(prop.value):
            owner = int(prop.value[0])
    return Window(
        title=title,
        left=-where.x,
        top=-where.y,
        width=int(geometry.width),
        height=int(geometry.height),
        active=win.id == active,
        own=owner == pid,
    )


def _windows_x11(name: str, pid: int) -> list[Window]:
    from Xlib import X
    from Xlib.display import Display

    d = Display(name)
    try:
        root = d.screen().root
        atoms = {
            a: d.intern_atom(a)
            for a in (
                "_NET_ACTIVE_WINDOW",
                "_NET_CLIENT_LIST_STACKING",
                "_NET_WM_NAME",
                "UTF8_STRING",
                "_NET_WM_PID",
            )
        }
        active = 0
        prop = root.get_full_property(atoms["_NET_ACTIVE_WINDOW"], X.AnyPropertyType)
        if prop is not None and len(prop.value):
            active = int(prop.value[0])
        stacking = root.get_full_property(atoms["_NET_CLIENT_LIST_STACKING"], X.AnyPropertyType)
        if stacking is not None and len(stacking.value):
            candidates = [d.create_resource_object("window", int(i)) for i in stacking.value]
        else:  # no EWMH window manager: the root's children are the windows
            candidates = list(root.query_tree().children)
            if not active:
                focus = d.get_input_focus().focus
                active = _top_level_of(focus, root)
        found: list[Window] = []
        for win in reversed(candidates):  # stacking order is bottom to top
            with contextlib.suppress(Exception):
                window = _x11_window(root, win, atoms, pid, active)
                if window is not None:
                    found.append(window)
        return found
    finally:
        d.close()


def _top_level_of(win: Any, root: Any) -> int:
    """The root's child holding `win` (the focus may be deep inside a window)."""
    with contextlib.suppress(Exception):
        while win is not None and not isinstance(win, int):
            parent = win.query_tree().parent
            if parent is None or parent.id == root.id:
                return int(win.id)
            win = parent
    return 0


# ---------------------------------------------------------------- Windows


def _windows_user32(pid: int) -> list[Window]:
    import ctypes
    from ctypes import wintypes

    user32 = ctypes.windll.user32  # type: ignore[attr-defined]
    active = user32.GetForegroundWindow()
    found: list[Window] = []
    proto = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.HWND, wintypes.LPARAM)  # type: ignore[attr-defined]

    def visit(hwnd: int, _: int) -> bool:
        if not user32.IsWindowVisible(hwnd) or user32.IsIconic(hwnd):
            return True
        length = user32.GetWindowTextLengthW(hwnd)
        if length <= 0:
            return True
        text = ctypes.create_unicode_buffer(length + 1)
        user32.GetWindowTextW(hwnd, text, length + 1)
        rect = wintypes.RECT()
        user32.GetWindowRect(hwnd, ctypes.byref(rect))
        owner = wintypes.DWORD()
        user32.GetWindowThreadProcessId(hwnd, ctypes.byref(owner))
        found.append(
            Window(
                title=text.value.strip(),
                left=rect.left,
                top=rect.top,
                width=rect.right - rect.left,
                height=rect.bottom - rect.top,
                active=hwnd == active,
                own=owner.value == pid,
            )
        )
        return True

    user32.EnumWindows(proto(visit), 0)  # top to bottom (z-order)
    return [w for w in found if w.title and w.width > 0 and w.height > 0]

"""Keyboard control of the session: global hotkeys where the platform allows, in-app
shortcuts always.

Global hotkeys (push-to-talk held, interrupt, mute toggle) use pynput, which listens
on its own thread; every key it reports is carried to the Qt thread by a queued
signal before anything touches the session. Where they cannot work (Linux without
an X display, e.g. Wayland without XWayland; pynput missing; macOS without the
accessibility permission) the shell says so once and the in-app shortcuts remain:
Ctrl+M mutes, Esc interrupts, holding Ctrl+Space talks.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from app.config import UiSettings
    from app.ui.session_port import SessionPort

log = logging.getLogger(__name__)

PUSH_TO_TALK = "push_to_talk"
INTERRUPT = "interrupt"
MUTE = "mute"
ACTIONS = (PUSH_TO_TALK, INTERRUPT, MUTE)
STOP_WAIT_S = 0.5

MUTE_SHORTCUT = "Ctrl+M"
INTERRUPT_SHORTCUT = "Esc"
# Held: Ctrl+Space talks while both keys are down (a press-and-release needs an
# event filter: QShortcut only reports presses).
PTT_KEY = Qt.Key.Key_Space
PTT_MODIFIER = Qt.KeyboardModifier.ControlModifier


def _tr(text: str) -> str:
    return QCoreApplication.translate("Hotkeys", text)


# -- the session side: what a key does ------------------------------------------------------


class KeyActions:
    """What the keys do to the session; every call comes on the Qt thread.

    Mute toggles between "muted" and the mode the user had before."""

    def __init__(
        self, session: SessionPort, *, notify: Callable[[str], None] | None = None
    ) -> None:
        self.session = session
        self._notify = notify
        self._mode_before_mute = "always_on"
        self._told_ptt_mode = False
        self.ptt_held = False

    def push_to_talk(self, pressed: bool) -> None:
        if pressed == self.ptt_held:
            return  # key repeat, or a release without a press
        self.ptt_held = pressed
        if pressed and self.session.mic_mode != PUSH_TO_TALK and not self._told_ptt_mode:
            self._told_ptt_mode = True
            self._say(
                _tr(
                    "The push-to-talk key works when the microphone mode is "
                    "“push to talk”. Switch the mode to use it."
                )
            )
        self._call(self.session.set_push_to_talk, pressed)

    def interrupt(self) -> None:
        self._call(self.session.interrupt)

    def toggle_mute(self) -> None:
        mode = self.session.mic_mode
        if mode == "muted":
            self._call(self.session.set_mic_mode, self._mode_before_mute)
        else:
            self._mode_before_mute = mode
            self._call(self.session.set_mic_mode, "muted")

    def _call(self, method: Callable[..., object], *args: object) -> None:
        try:
            method(*args)
        except Exception as exc:  # a key must never take the window down
            log.warning("%s failed: %s", getattr(method, "__name__", "a key action"), exc)

    def _say(self, text: str) -> None:
        if self._notify is not None:
            self._notify(text)


# -- in-app shortcuts -----------------------------------------------------------------------


class _HoldToTalkFilter(QObject):
    """Ctrl+Space held in one of our windows → push-to-talk; release (of either key, or
    the window losing focus) ends it."""

    def __init__(self, windows: list[QWidget], actions: KeyActions) -> None:
        super().__init__(windows[0])
        self._windows = windows
        self._actions = actions
        self.held = False

    def _ours(self, obj: QObject) -> bool:
        if not isinstance(obj, QWidget):
            return False
        top = obj.window()
        return any(top is w for w in self._windows)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent):
            if not self._ours(obj):
                return False
            if kind == QEvent.Type.KeyPress and event.key() == PTT_KEY:
                if event.modifiers() & PTT_MODIFIER:
                    if not event.isAutoRepeat() and not self.held:
                        self.held = True
                        self._actions.push_to_talk(True)
                    return True
            elif (
                kind == QEvent.Type.KeyRelease
                and self.held
                and event.key() in (PTT_KEY, Qt.Key.Key_Control)
                and not event.isAutoRepeat()
            ):
                self.release()
                return event.key() == PTT_KEY
        elif kind == QEvent.Type.WindowDeactivate and self.held and self._ours(obj):
            self.release()
        return False

    def release(self) -> None:
        if self.held:
            self.held = False
            self._actions.push_to_talk(False)


class InAppShortcuts:
    """Keyboard shortcuts inside the main window and the pet (they need focus, and work
    on every platform). A key the window already binds is left to the window."""

    def __init__(self, windows: list[QWidget], actions: KeyActions) -> None:
        self.shortcuts: list[QShortcut] = []
        for window in windows:
            taken = {s.key().toString() for s in window.findChildren(QShortcut)}
            for keys, slot in (
                (MUTE_SHORTCUT, actions.toggle_mute),
                (INTERRUPT_SHORTCUT, actions.interrupt),
            ):
                sequence = QKeySequence(keys)
                if sequence.toString() in taken:
                    continue
                shortcut = QShortcut(sequence, window)
                shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
                shortcut.activated.connect(slot)
                self.shortcuts.append(shortcut)
        self.hold_to_talk = _HoldToTalkFilter(windows, actions)
        app = QCoreApplication.instance()
        if app is not None:
            app.installEventFilter(self.hold_to_talk)

    def dispose(self) -> None:
        app = QCoreApplication.instance()
        if app is not None:
            app.removeEventFilter(self.hold_to_talk)
        self.hold_to_talk.release()


# -- global hotkeys -------------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    action: str
    combo: str
    keys: frozenset[Any]


def normalise_combo(combo: str) -> str:
    """'Ctrl+Alt+Space' or '<ctrl>+<alt>+space' → pynput's '<ctrl>+<alt>+<space>'."""
    parts = [p.strip() for p in combo.strip().split("+")]
    out = []
    for part in parts:
        if not part:
            raise ValueError(combo)
        if len(part) == 1 or (part.startswith("<") and part.endswith(">")):
            out.append(part.lower())
        else:
            out.append(f"<{part.lower()}>")
    return "+".join(out)


def unavailable_reason(
    environ: dict[str, str] | None = None, platform: str | None = None
) -> str | None:
    """Why global hotkeys cannot work here, in words; None when they can be tried."""
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    if plat.startswith("linux") and not env.get("DISPLAY"):
        if env.get("WAYLAND_DISPLAY"):
            return _tr(
                "Global hotkeys are off: this Wayland desktop offers no X11 "
                "(XWayland) display to listen on. The shortcuts work while a "
                "Companion window has focus: Ctrl+Space (hold) to talk, Esc to stop, "
                "Ctrl+M to mute."
            )
        return _tr(
            "Global hotkeys are off: there is no X11 display to listen on. "
            "The shortcuts work while a Companion window has focus: "
            "Ctrl+Space (hold) to talk, Esc to stop, Ctrl+M to mute."
        )
    return None


class GlobalHotkeys(QObject):
    """System-wide hotkeys through pynput. The listener's thread only emits `_key`
    (queued), so the actions run on the Qt thread."""

    _key = Signal(str, bool)  # action, pressed
    triggered = Signal(str, bool)  # the same, on the Qt thread (for tests and logs)

    def __init__(
        self, bindings: dict[str, str], actions: KeyActions, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._combos = {a: c for a, c in bindings.items() if a in ACTIONS and c.strip()}
        self._actions = actions
        self._listener: Any = None
        self._bindings: list[Binding] = []
        self._pressed: set[Any] = set()
        self._active: set[str] = set()
        self.invalid: list[str] = []  # combinations in the settings that are not keys
        self.keys_heard = 0  # any key, bound or not (tests wait for the listener with it)
        self._canonical: Callable[[Any], Any] = lambda key: key
        self._key.connect(self._on_key, Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> bool:
        return self._listener is not None

    @property
    def bindings(self) -> list[Binding]:
        return list(self._bindings)

    def start(self) -> str | None:
        """Start listening; returns None, or why global hotkeys are off (in words)."""
        reason = unavailable_reason()
        if reason is not None:
            return reason
        if not self._combos:
            return None
        if sys.platform.startswith("linux"):
            # Only the X11 backend: the uinput one reads raw input devices as root.
            os.environ.setdefault("PYNPUT_BACKEND_KEYBOARD", "xorg")
        try:
            from pynput import keyboard
        except Exception as exc:  # not installed, or no usable backend
            log.info("global hotkeys unavailable: %s", exc)
            return _tr("Global hotkeys are off (%1). The in-app shortcuts still work.").replace(
                "%1", str(exc) or type(exc).__name__
            )
        bindings = []
        for action, combo in self._combos.items():
            try:
                keys = keyboard.HotKey.parse(normalise_combo(combo))
            except ValueError:
                log.warning("ignoring the hotkey %r for %s: not a key combination", combo, action)
                self.invalid.append(combo)
                continue
            bindings.append(Binding(action, combo, frozenset(keys)))
        self._bindings = bindings
        if not bindings:
            return None  # nothing to listen for (the shell names the invalid ones)
        try:
            listener = keyboard.Listener(on_press=self._press, on_release=self._release)
            self._canonical = listener.canonical
            listener.daemon = True
            listener.start()
            listener.wait()
        except Exception as exc:
            log.info("the hotkey listener did not start: %s", exc)
            return _tr("Global hotkeys are off (%1). The in-app shortcuts still work.").replace(
                "%1", str(exc) or type(exc).__name__
            )
        if sys.platform == "darwin" and not getattr(listener, "IS_TRUSTED", True):
            listener.stop()
            return _tr(
                "Global hotkeys need Companion to be allowed under System Settings › "
                "Privacy & Security › Accessibility. The in-app shortcuts still work."
            )
        self._listener = listener
        return None

    @staticmethod
    def limitation(environ: dict[str, str] | None = None) -> str | None:
        """What the user should know about hotkeys that do run (Wayland through XWayland)."""
        env = os.environ if environ is None else environ
        wayland = env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland"
        if sys.platform.startswith("linux") and wayland and env.get("DISPLAY"):
            return _tr(
                "On Wayland the global hotkeys reach Companion only while an X11 "
                "(XWayland) window has focus; the desktop keeps other keys private."
            )
        return None

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.stop()
                _wake_xorg_listener(listener)
                listener.join(STOP_WAIT_S)  # the X connections close on its thread
            except Exception as exc:  # pragma: no cover - depends on the backend
                log.debug("stopping the hotkey listener: %s", exc)
        for action in list(self._active):
            self._active.discard(action)
            if action == PUSH_TO_TALK:
                self._actions.push_to_talk(False)

    # pynput's thread -----------------------------------------------------------------

    def _press(self, key: Any) -> None:
        self.keys_heard += 1
        if key is None:
            return
        self._pressed.add(self._canonical(key))
        for binding in self._bindings:
            if binding.action not in self._active and binding.keys <= self._pressed:
                self._active.add(binding.action)
                self._key.emit(binding.action, True)

    def _release(self, key: Any) -> None:
        if key is None:
            return
        canonical = self._canonical(key)
        self._pressed.discard(canonical)
        for binding in self._bindings:
            if binding.action in self._active and canonical in binding.keys:
                self._active.discard(binding.action)
                self._key.emit(binding.action, False)

    # the Qt thread -------------------------------------------------------------------

    @Slot(str, bool)
    def _on_key(self, action: str, pressed: bool) -> None:
        if action == PUSH_TO_TALK:
            self._actions.push_to_talk(pressed)
        elif pressed and action == INTERRUPT:
            self._actions.interrupt()
        elif pressed and action == MUTE:
            self._actions.toggle_mute()
        self.triggered.emit(action, pressed)


def _wake_xorg_listener(listener: Any) -> None:
    """pynput 1.8's X11 listener asks its recording connection to stop without
    flushing it, so the thread sleeps until the next key anywhere. Disable the record
    context through the listener's other connection, which is idle, as its own
    clean-up does."""
    stop_display = getattr(listener, "_display_stop", None)
    context = getattr(listener, "_context", None)
    if stop_display is None or context is None:
        return
    try:
        stop_display.record_disable_context(context)
        stop_display.flush()
    except Exception as exc:  # already closed: the thread has ended
        log.debug("waking the hotkey listener: %s", exc)


def bindings_from(ui: UiSettings) -> dict[str, str]:
    return {
        PUSH_TO_TALK: ui.hotkey_push_to_talk,
        INTERRUPT: ui.hotkey_interrupt,
        MUTE: ui.hotkey_mute,
    }


__all__ = [
    "GlobalHotkeys",
    "InAppShortcuts",
    "KeyActions",
    "bindings_from",
    "normalise_combo",
    "unavailable_reason",
]

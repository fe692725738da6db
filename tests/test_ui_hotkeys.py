"""Keys: global hotkeys heard on a real X server (Xvfb with RECORD, keys sent through
XTEST) reach the session on the Qt thread; without a display they turn off and the
user is told once; the in-app shortcuts work in the main window and the pet."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.config import UiSettings
from app.ui import MainWindow, run_window
from app.ui.app import Shell
from app.ui.hotkeys import (
    INTERRUPT,
    MUTE,
    PUSH_TO_TALK,
    GlobalHotkeys,
    KeyActions,
    bindings_from,
    normalise_combo,
    unavailable_reason,
)
from app.ui.pet import PetWindow, pet_limitation
from tests.test_ui import window_of
from tests.ui_sessions import ScriptedSession

WAIT_S = 10.0  # an upper bound for the X server and the listener thread, not a timing check


class RecordingSession(ScriptedSession):
    """A scripted session in a chosen microphone mode that also records which thread
    the push-to-talk calls came on."""

    def __init__(self, mode: str = "push_to_talk") -> None:
        super().__init__()
        self.mic_mode = mode
        self.ptt_threads: list[threading.Thread] = []

    def set_push_to_talk(self, pressed: bool) -> None:
        super().set_push_to_talk(pressed)
        self.ptt_threads.append(threading.current_thread())


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture(autouse=True)
def delete_windows_after_each_test(qapp: QApplication) -> Iterator[None]:
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(scope="module")
def xserver() -> Iterator[str]:
    """A real X server with the RECORD extension (pynput listens through it).
    `-noreset`: an X server resets when its last client leaves, and refuses whoever
    connects meanwhile (the next test's keyboard)."""
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed: run scripts/setup.sh (Debian package xvfb)")
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
            "640x480x24",
        ],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Keyboard:
    """Presses keys on the X server through XTEST, as a person's keyboard would."""

    def __init__(self, display: str) -> None:
        from Xlib import XK, X
        from Xlib import display as xdisplay
        from Xlib.ext import xtest

        self._x, self._xk, self._xtest = X, XK, xtest
        self.conn = xdisplay.Display(display)

    def _code(self, name: str) -> int:
        return int(self.conn.keysym_to_keycode(self._xk.string_to_keysym(name)))

    def down(self, *names: str) -> None:
        for name in names:
            self._xtest.fake_input(self.conn, self._x.KeyPress, self._code(name))
        self.conn.sync()

    def up(self, *names: str) -> None:
        for name in reversed(names):
            self._xtest.fake_input(self.conn, self._x.KeyRelease, self._code(name))
        self.conn.sync()

    def tap(self, *names: str) -> None:
        self.down(*names)
        self.up(*names)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def keyboard(xserver: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Keyboard]:
    monkeypatch.setenv("DISPLAY", xserver)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    keys = Keyboard(xserver)
    yield keys
    keys.close()


def listening(hotkeys: GlobalHotkeys, keyboard: Keyboard) -> bool:
    """pynput reports ready a moment before its X RECORD context is on: tap a key that
    is bound to nothing until the listener hears it."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        keyboard.tap("Shift_R")
        if wait_for_briefly(lambda: hotkeys.keys_heard > 0):
            return True
    return False


def wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if condition():
            return True
        time.sleep(0.01)
    return condition()


# -- global hotkeys on a real X server -------------------------------------------------------


def test_global_hotkeys_drive_the_session_on_the_qt_thread(
    qapp: QApplication, keyboard: Keyboard
) -> None:
    session = RecordingSession()
    actions = KeyActions(session)
    hotkeys = GlobalHotkeys(bindings_from(UiSettings()), actions)
    try:
        assert hotkeys.start() is None
        assert hotkeys.running
        assert listening(hotkeys, keyboard)

        keyboard.down("Control_L", "Alt_L", "space")
        assert wait_for(lambda: session.ptt == [True])
        keyboard.up("Control_L", "Alt_L", "space")
        assert wait_for(lambda: session.ptt == [True, False])
        assert all(t is threading.main_thread() for t in session.ptt_threads)

        keyboard.tap("Control_L", "Alt_L", "s")
        assert wait_for(lambda: session.interrupts == 1)

        keyboard.tap("Control_L", "Alt_L", "m")
        assert wait_for(lambda: session.modes == ["muted"])
        keyboard.tap("Control_L", "Alt_L", "m")  # again: back to the mode before muting
        assert wait_for(lambda: session.modes == ["muted", "push_to_talk"])

        keyboard.tap("s")  # a key alone is not a hotkey
        keyboard.tap("Control_L", "Alt_L", "s")
        assert wait_for(lambda: session.interrupts == 2)
        assert session.ptt == [True, False]
    finally:
        hotkeys.stop()
    assert not listener_threads()  # stopped at once, without waiting for another key
    keyboard.tap("Control_L", "Alt_L", "s")
    assert not wait_for_briefly(lambda: session.interrupts > 2)


def listener_threads() -> list[threading.Thread]:
    from pynput.keyboard import Listener

    return [t for t in threading.enumerate() if isinstance(t, Listener) and t.is_alive()]


def wait_for_briefly(condition: Callable[[], bool]) -> bool:
    for _ in range(30):
        QApplication.processEvents()
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_the_shell_starts_configured_hotkeys_and_a_held_key_is_let_go_on_quit(
    qapp: QApplication, keyboard: Keyboard
) -> None:
    session = RecordingSession()
    ui = UiSettings(hotkey_push_to_talk="Ctrl+Shift+P", hotkey_interrupt="", hotkey_mute="")
    window = MainWindow(session)
    shell = Shell(session, window, ui=ui, use_tray=False)
    try:
        assert shell.start_global_hotkeys()
        assert shell.hotkeys is not None
        assert [b.action for b in shell.hotkeys.bindings] == [PUSH_TO_TALK]
        assert listening(shell.hotkeys, keyboard)
        keyboard.tap("Control_L", "Alt_L", "space")  # the default combination is not bound
        keyboard.down("Control_L", "Shift_L", "p")
        assert wait_for(lambda: session.ptt == [True])
        shell.quit()  # the key is still down: push-to-talk must not stay held
        assert session.ptt == [True, False]
        assert not listener_threads()
        keyboard.up("Control_L", "Shift_L", "p")
        assert not wait_for_briefly(lambda: len(session.ptt) > 2)
        assert "hotkeys" not in shell.told
    finally:
        shell.dispose()
        window.deleteLater()


def test_a_setting_that_is_not_a_key_combination_is_named_and_the_rest_work(
    qapp: QApplication, keyboard: Keyboard
) -> None:
    session = RecordingSession()
    ui = UiSettings(hotkey_mute="ctrl alt m please")
    window = MainWindow(session)
    shell = Shell(session, window, ui=ui, use_tray=True)
    try:
        assert shell.start_global_hotkeys()
        assert shell.hotkeys is not None
        assert {b.action for b in shell.hotkeys.bindings} == {PUSH_TO_TALK, INTERRUPT}
        assert "ctrl alt m please" in shell.told["hotkey-settings"]
        assert "ctrl alt m please" in window.notice_label.text()
        assert listening(shell.hotkeys, keyboard)
        keyboard.tap("Control_L", "Alt_L", "s")
        assert wait_for(lambda: session.interrupts == 1)
    finally:
        shell.dispose()
        window.deleteLater()


def test_hotkeys_changed_in_the_settings_apply_at_once(
    qapp: QApplication, keyboard: Keyboard
) -> None:
    session = RecordingSession()
    ui = UiSettings(pet_geometry={"screen": [1, 2, 300, 400]})
    window = MainWindow(session)
    shell = Shell(session, window, ui=ui, use_tray=True)
    try:
        assert shell.start_global_hotkeys()
        edited = UiSettings(hotkey_interrupt="<ctrl>+<shift>+x", click_through=True)
        shell.apply_ui(edited)
        assert shell.ui is ui and ui.hotkey_interrupt == "<ctrl>+<shift>+x"
        assert ui.pet_geometry == {"screen": [1, 2, 300, 400]}  # the shell's own, kept
        assert shell.pet.windowFlags() & Qt.WindowType.WindowTransparentForInput
        assert shell.hotkeys is not None
        assert listening(shell.hotkeys, keyboard)
        assert len(listener_threads()) == 1  # the old listener is gone
        keyboard.tap("Control_L", "Alt_L", "s")  # the old combination does nothing now
        keyboard.tap("Control_L", "Shift_L", "x")
        assert wait_for(lambda: session.interrupts == 1)
        assert not wait_for_briefly(lambda: session.interrupts > 1)
    finally:
        shell.dispose()
        window.deleteLater()


# -- without a display: off, and told once -----------------------------------------------------


def test_without_a_display_hotkeys_are_off_and_the_user_is_told_once(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    session = RecordingSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=True)
    try:
        assert not shell.start_global_hotkeys()
        assert not shell.start_global_hotkeys()  # asking again tells nothing new
        assert list(shell.told) == ["hotkeys"]
        notice = window.notice_label.text()
        assert "Global hotkeys are off" in notice
        assert notice.count("Global hotkeys are off") == 1
        assert "Ctrl+Space" in notice  # what still works, in words
    finally:
        shell.dispose()
        window.deleteLater()


def test_the_app_turns_hotkeys_off_without_a_display_and_says_so_once(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    seen: dict[str, str] = {}

    class Probe(RecordingSession):
        async def start(self) -> None:
            await super().start()
            for _ in range(20):  # the shell starts the hotkeys once the window shows
                await asyncio.sleep(0.01)
            seen["notice"] = window_of(self).notice_label.text()
            window_of(self).close()

    session = Probe()
    assert run_window(lambda: session, use_tray=False, quit_after_s=10) == 0
    assert seen["notice"].count("Global hotkeys are off") == 1


def test_the_tray_and_hotkey_notices_are_both_kept(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    session = RecordingSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=False)
    try:
        shell.start_global_hotkeys()
        notice = window.status_text()  # both notices are shown, one under the other
        assert "no system tray" in notice and "Global hotkeys are off" in notice
    finally:
        shell.dispose()
        window.deleteLater()


def test_hotkeys_switched_off_in_the_settings_say_nothing(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    session = RecordingSession()
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(global_hotkeys=False), use_tray=True)
    try:
        assert not shell.start_global_hotkeys()
        assert shell.told == {}
    finally:
        shell.dispose()
        window.deleteLater()


def test_wayland_without_xwayland_is_named_in_the_reason() -> None:
    reason = unavailable_reason({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert reason is not None and "Wayland" in reason
    assert unavailable_reason({"DISPLAY": ":0"}, "linux") is None
    assert unavailable_reason({}, "win32") is None
    limit = GlobalHotkeys.limitation({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"})
    assert limit is not None and "XWayland" in limit
    assert GlobalHotkeys.limitation({"DISPLAY": ":0"}) is None


def test_key_combinations_are_written_either_way() -> None:
    assert normalise_combo("Ctrl+Alt+Space") == "<ctrl>+<alt>+<space>"
    assert normalise_combo("<ctrl>+<alt>+m") == "<ctrl>+<alt>+m"
    with pytest.raises(ValueError):
        normalise_combo("ctrl++")


def test_a_pet_on_native_wayland_says_it_cannot_stay_on_top() -> None:
    limitation = pet_limitation("wayland")
    assert limitation is not None and "XWayland" in limitation
    assert pet_limitation("xcb") is None


# -- in-app shortcuts (offscreen) --------------------------------------------------------------


def press(widget: object, key: Qt.Key, modifiers: Qt.KeyboardModifier, *, release: bool) -> None:
    assert isinstance(widget, (MainWindow, PetWindow))
    if release:
        QTest.keyRelease(widget, key, modifiers)
    else:
        QTest.keyPress(widget, key, modifiers)
    QApplication.processEvents()


@pytest.fixture
def shell(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shell]:
    monkeypatch.delenv("DISPLAY", raising=False)
    session = RecordingSession(mode="always_on")
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=True)
    window.show()
    window.activateWindow()
    QApplication.processEvents()
    yield shell
    shell.dispose()
    window.deleteLater()


def session_of(shell: Shell) -> RecordingSession:
    assert isinstance(shell.session, RecordingSession)
    return shell.session


def test_ctrl_m_mutes_and_unmutes_from_the_main_window(shell: Shell) -> None:
    session = session_of(shell)
    QTest.keyClick(shell.window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    QApplication.processEvents()
    assert session.modes == ["muted"]
    QTest.keyClick(shell.window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    QApplication.processEvents()
    assert session.modes == ["muted", "always_on"]


def test_holding_ctrl_space_talks_until_released(shell: Shell) -> None:
    session = session_of(shell)
    session.mic_mode = "push_to_talk"
    ctrl = Qt.KeyboardModifier.ControlModifier
    target = shell.window.text_input
    QTest.keyPress(target, Qt.Key.Key_Space, ctrl)
    QTest.keyPress(target, Qt.Key.Key_Space, ctrl)  # held: no second press reaches the session
    QApplication.processEvents()
    assert session.ptt == [True]
    assert target.text() == ""  # the key talked; it typed nothing
    QTest.keyRelease(target, Qt.Key.Key_Space, ctrl)
    QApplication.processEvents()
    assert session.ptt == [True, False]
    QTest.keyPress(target, Qt.Key.Key_Space, ctrl)
    QTest.keyRelease(target, Qt.Key.Key_Control, ctrl)  # letting go of Ctrl first also ends it
    QApplication.processEvents()
    assert session.ptt == [True, False, True, False]


def test_push_to_talk_outside_that_mode_says_how_to_use_it_once(shell: Shell) -> None:
    session = session_of(shell)
    ctrl = Qt.KeyboardModifier.ControlModifier
    for _ in range(2):
        QTest.keyPress(shell.window, Qt.Key.Key_Space, ctrl)
        QTest.keyRelease(shell.window, Qt.Key.Key_Space, ctrl)
    QApplication.processEvents()
    assert session.ptt == [True, False, True, False]
    assert list(shell.told) == ["ptt"]
    assert "push to talk" in shell.window.notice_label.text()


def test_esc_in_the_pet_interrupts_and_ctrl_m_mutes(shell: Shell) -> None:
    session = session_of(shell)
    shell.show_pet()
    shell.pet.activateWindow()
    QApplication.processEvents()
    QTest.keyClick(shell.pet, Qt.Key.Key_Escape)
    QTest.keyClick(shell.pet, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    QApplication.processEvents()
    assert session.interrupts == 1
    assert session.modes == ["muted"]


def test_esc_in_the_main_window_interrupts_once(shell: Shell) -> None:
    # The window binds Esc itself; the shell must not add a second (ambiguous) one.
    session = session_of(shell)
    QTest.keyClick(shell.window, Qt.Key.Key_Escape)
    QApplication.processEvents()
    assert session.interrupts == 1


def test_mute_twice_switches_the_microphone_off_and_back_on(qapp: QApplication) -> None:
    session = ScriptedSession()
    actions = KeyActions(session)
    actions.toggle_mute()
    actions.toggle_mute()
    assert session.modes == ["muted", "always_on"]
    assert session.mic_calls == [False, True]
    for action in (INTERRUPT, MUTE):
        assert action in bindings_from(UiSettings())

"""Runs the Companion window on a qasync event loop and drives a session through it.

`run_window` owns the lifecycle: the QApplication, the loop, the window shown
first, then the session built (its heavy imports in a worker thread) and attached,
`session.start()` in the background (models load after the window appears), and
on close `session.aclose()` and a clean loop shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

import qasync
import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QApplication

from app.avatar.state import EXPRESSIONS
from app.config import Settings, UiSettings, save_settings
from app.events import EventHub, Notice, Status, StatusChanged
from app.ui.main_window import MainWindow, describe_error

if TYPE_CHECKING:  # imported when first used: they are not needed to show the window
    from app.ui.first_run import FirstRunGuide
    from app.ui.hotkeys import GlobalHotkeys
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.tray import CompanionTray

log = logging.getLogger(__name__)

ACLOSE_TIMEOUT_S = 10.0
# What the shell keeps in `Settings.ui` itself (the settings dialog does not show them).
SHELL_OWNED_UI_FIELDS = frozenset({"window_geometry", "pet_geometry", "first_run_done"})
SIGNAL_POLL_MS = 250  # lets Python see Ctrl+C while Qt's loop is waiting


class SessionLike(Protocol):
    """What the window drives: a `VoiceSession`, or anything shaped like one."""

    @property
    def events(self) -> EventHub: ...

    @property
    def expressions(self) -> tuple[str, ...]: ...

    async def start(self) -> None: ...

    def set_mic_enabled(self, enabled: bool) -> None: ...

    async def send_text(self, text: str) -> object: ...

    def interrupt(self) -> None: ...

    async def aclose(self) -> None: ...


def run_window(
    make_session: Callable[[], SessionLike],
    *,
    title: str = "Companion",
    quit_after_s: float | None = None,
    use_tray: bool | None = None,
    settings: Settings | None = None,
    preload: Sequence[str] = (),
) -> int:
    """Show the window, then make its session, until the user closes it (or
    `quit_after_s` passes).

    The window shows first, saying "Starting"; then the modules named in `preload`
    are imported in a worker thread, `make_session()` runs on the loop's thread, and
    the session is attached to the window and started. `settings`: the app's
    settings (the shell's own state is saved into them); None takes the session's
    `settings` attribute, if it has one.

    Returns the process exit code: 0 when the window closed, even if the session
    failed to be made or to start (the window showed why). `use_tray`: None asks
    the desktop whether it has a tray; True/False decides (tests).
    """
    app = QApplication.instance() or QApplication(sys.argv[:1] or ["companion"])
    if not isinstance(app, QApplication):
        raise RuntimeError("a non-widget Qt application already exists in this process")
    from app.ui.i18n import install_translators

    # Before any window: every text is translated when it is made.
    install_translators(app, settings.ui.language if settings is not None else "auto")
    quit_on_last_window = app.quitOnLastWindowClosed()
    # The loop must outlive the window: it still has to run session.aclose().
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    hooks_before = _install_asyncgen_hooks(loop)
    try:
        return loop.run_until_complete(
            _show_session(make_session, title, quit_after_s, use_tray, settings, preload)
        )
    finally:
        _wait_for_decoders()
        _close_loop(loop)
        sys.set_asyncgen_hooks(hooks_before.firstiter, hooks_before.finalizer)
        app.setQuitOnLastWindowClosed(quit_on_last_window)


def _install_asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> Any:
    """Let the loop finish async generators (asyncio's own loops do this in
    run_forever; qasync does not): an abandoned generator (an HTTP response stream)
    is then closed on the loop instead of printing "Exception ignored" at collection.
    Returns the hooks that were there before."""
    before = sys.get_asyncgen_hooks()
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is not None and finalizer is not None:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
    return before


def _wait_for_decoders() -> None:
    """No picture-decoding thread may still run Python code when the interpreter exits."""
    from app.ui.transcript import wait_for_image_decoding

    if not wait_for_image_decoding(2000):
        log.warning("some pictures were still being decoded at quit")


class Shell:
    """The main window, the desktop pet and the tray icon for one session.

    Both windows present the session's events all the time, so switching between
    them loses nothing. Without a tray, closing the window quits (and the user is
    told once); with one, closing the window keeps the app running.
    """

    def __init__(
        self,
        session: SessionLike,
        window: MainWindow,
        *,
        ui: UiSettings | None = None,
        save: Callable[[], None] | None = None,
        use_tray: bool | None = None,
        on_quit: Callable[[], None] | None = None,
        settings: Settings | None = None,
    ) -> None:
        # The shell is made once the window shows: its modules are not on that path.
        from app.ui.hotkeys import InAppShortcuts, KeyActions
        from app.ui.pet import PetWindow
        from app.ui.tray import CompanionTray, no_tray_notice, tray_available

        self.session = session
        self.window = window
        self.ui = ui if ui is not None else UiSettings()
        self._on_quit = on_quit
        self.quitting = False
        self.pet = PetWindow(session, self.ui, save=save)
        actions = self.pet.actions_menu
        actions.open_main = self.show_main
        actions.quit_app = self.quit
        actions.toggle_pet = self.toggle_pet
        self.settings = settings
        self.settings_dialog: SettingsDialog | None = None
        self.first_run_guide: FirstRunGuide | None = None
        if settings is not None:
            actions.open_settings = self.open_settings
            window.settings_requested.connect(self.open_settings)
        self.pet.open_main_requested.connect(self.show_main)
        self.pet.quit_requested.connect(self.quit)
        window.pet_requested.connect(self.show_pet)
        window.quit_requested.connect(self.quit)
        self._told: dict[str, str] = {}  # what the user was told about this platform, once
        has_tray = tray_available() if use_tray is None else use_tray
        self.tray: CompanionTray | None = None
        if has_tray:
            self.tray = CompanionTray(actions)
            self.tray.show()
            window.hide_on_close = True
        else:
            self.tell_once("tray", no_tray_notice())
        # Keys: in-app shortcuts now; the global hotkeys once the window shows.
        self.key_actions = KeyActions(session, notify=lambda text: self.tell_once("ptt", text))
        self._unsubscribe_keys = session.events.subscribe(self.key_actions.present)
        self.shortcuts = InAppShortcuts([window, self.pet], self.key_actions)
        self.hotkeys: GlobalHotkeys | None = None

    def tell_once(self, topic: str, message: str) -> None:
        """Tell the user something about this platform, once per topic; the notices told
        so far stay together in the status line (a later one does not hide an earlier)."""
        if topic in self._told or not message:
            return
        self._told[topic] = message
        self.window.show_notice("\n".join(self._told.values()))
        if self.pet.isVisible():
            self.pet.show_notice(message)

    @property
    def told(self) -> dict[str, str]:
        """The platform notices shown so far, by topic."""
        return dict(self._told)

    def start_global_hotkeys(self) -> bool:
        """Listen for the system-wide hotkeys when the settings and the platform allow;
        otherwise say why, once. Returns whether they run."""
        if self.hotkeys is not None or not self.ui.global_hotkeys or self.quitting:
            return self.hotkeys is not None and self.hotkeys.running
        from app.ui.hotkeys import GlobalHotkeys, bindings_from

        hotkeys = GlobalHotkeys(bindings_from(self.ui), self.key_actions, self.window)
        reason = hotkeys.start()
        if reason is not None:
            self.tell_once("hotkeys", reason)
            return False
        self.hotkeys = hotkeys
        if hotkeys.invalid:
            self.tell_once(
                "hotkey-settings",
                QCoreApplication.translate(
                    "Shell",
                    "These hotkeys in the settings are not key combinations and are off: "
                    "{0}. Write them like <ctrl>+<alt>+<space>.",
                ).format(", ".join(hotkeys.invalid)),
            )
        limitation = GlobalHotkeys.limitation()
        if limitation is not None:
            self.tell_once("hotkeys", limitation)
        return hotkeys.running

    def open_settings(self) -> SettingsDialog | None:
        """Open the settings dialog (not modal: the conversation goes on meanwhile)."""
        if self.settings is None:
            return None
        from app.ui.settings_dialog import SettingsDialog

        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            return self.settings_dialog
        dialog = SettingsDialog(self.settings, self.window)
        dialog.accepted.connect(lambda: self._settings_saved(dialog))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_saved(self, dialog: SettingsDialog) -> None:
        if dialog.result_settings is None or self.settings is None:
            return
        for name in type(self.settings).model_fields:
            if name != "ui":  # the shell's own state stays the live object
                setattr(self.settings, name, getattr(dialog.result_settings, name))
        self.apply_ui(dialog.result_settings.ui)
        self.window.show_notice(
            QCoreApplication.translate(
                "Shell", "Settings saved. Some changes apply when Companion restarts."
            )
        )

    def apply_ui(self, new: UiSettings) -> None:
        """Take the user's choices from edited settings into the live `ui` (the shell
        keeps its own geometry and first-run state), and apply the keys and the pet's
        click-through at once."""
        from app.ui.hotkeys import bindings_from

        keys_before = (self.ui.global_hotkeys, bindings_from(self.ui))
        click_through_before = self.ui.click_through
        for name in type(self.ui).model_fields:
            if name not in SHELL_OWNED_UI_FIELDS:
                setattr(self.ui, name, getattr(new, name))
        if self.ui.click_through != click_through_before:
            self.pet.set_click_through(self.ui.click_through, save=False)
        if (self.ui.global_hotkeys, bindings_from(self.ui)) != keys_before:
            if self.hotkeys is not None:
                self.hotkeys.stop()
                self.hotkeys = None
            for topic in ("hotkeys", "hotkey-settings"):
                self._told.pop(topic, None)  # a new choice earns a new word
            self.start_global_hotkeys()

    def show_initial(self) -> None:
        if self.ui.start_in_pet_mode:
            self.show_pet()
        else:
            self.show_main()
        if self.settings is not None and not self.ui.first_run_done:
            self.open_first_run()

    def open_first_run(self) -> FirstRunGuide | None:
        """The first-run guide over the main window (not modal: the loop keeps running)."""
        if self.settings is None:
            return None
        from app.ui.first_run import FirstRunGuide

        self.show_main()
        guide = FirstRunGuide(self.settings, self.window)
        guide.accepted.connect(
            lambda: self.window.show_notice(
                QCoreApplication.translate(
                    "Shell", "All set. Changes to the chat model apply when Companion restarts."
                )
            )
        )
        self.first_run_guide = guide
        guide.open()
        return guide

    def show_main(self) -> None:
        self.pet.hide()
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()

    def show_pet(self) -> None:
        self.window.hide()
        self.pet.show()
        self.pet.raise_()
        from app.ui.pet import pet_limitation

        limitation = pet_limitation()
        if limitation is not None and "pet" not in self._told:
            self.tell_once("pet", limitation)
            if self.tray is not None:
                self.tray.showMessage("Companion", limitation)

    def toggle_pet(self) -> None:
        if self.pet.isVisible():
            self.show_main()
        else:
            self.show_pet()

    def quit(self) -> None:
        """Quit from a menu: close everything; the app then stops the session."""
        if self.quitting:
            return
        self.quitting = True
        self.stop_keys()
        self.window.hide_on_close = False
        if self.tray is not None:
            self.tray.hide()
        self.pet.close()
        self.window.close()
        if self._on_quit is not None:
            self._on_quit()

    def stop_keys(self) -> None:
        """Stop the global hotkeys and let go of a held push-to-talk."""
        if self.hotkeys is not None:
            self.hotkeys.stop()
        self.shortcuts.dispose()

    def dispose(self) -> None:
        self.stop_keys()
        with contextlib.suppress(ValueError):
            self._unsubscribe_keys()
        if self.tray is not None:
            self.tray.dispose()
            self.tray = None
        self.pet.dispose()


class _UnmadeSession:
    """Stands in when the session could not be made: the window and the shell still
    work (settings, tray, quit), and starting it reports why, in the status line."""

    def __init__(self, error: BaseException) -> None:
        self.events = EventHub()
        self.expressions: tuple[str, ...] = EXPRESSIONS
        self.error = error

    async def start(self) -> None:
        raise self.error

    def set_mic_enabled(self, enabled: bool) -> None:
        return None

    async def send_text(self, text: str) -> object:
        raise RuntimeError(
            QCoreApplication.translate("Shell", "Companion could not start: {0}").format(
                describe_error(self.error)
            )
        )

    def interrupt(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def _make_session(
    make_session: Callable[[], SessionLike], preload: Sequence[str]
) -> SessionLike:
    """Import what the session needs off the UI thread, then make it on this thread;
    a failure gives a stand-in that reports it."""
    for name in preload:
        try:
            await asyncio.to_thread(importlib.import_module, name)
        except Exception as exc:  # make_session meets it again and it is reported then
            log.debug("preloading %s failed: %s", name, exc)
    try:
        return make_session()
    except Exception as exc:
        log.warning("The session could not be made: %s", describe_error(exc))
        return _UnmadeSession(exc)


async def _show_session(
    make_session: Callable[[], SessionLike],
    title: str,
    quit_after_s: float | None,
    use_tray: bool | None = None,
    settings: Settings | None = None,
    preload: Sequence[str] = (),
) -> int:
    loop = asyncio.get_running_loop()
    # The settings as launched (COMPANION_* variables and command-line flags included):
    # saving writes only what changes from here on.
    baseline = settings.model_copy(deep=True) if settings is not None else None
    closed: asyncio.Future[None] = loop.create_future()
    shell: Shell | None = None

    def on_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    def quit_app() -> None:
        if shell is not None:
            shell.quit()
        else:  # still starting: no tray yet, closing the window quits
            window.hide_on_close = False
            window.close()
            on_closed()

    # The window first, with no session: "Starting" shows while the session is made.
    window = MainWindow(title=title)
    window.closed.connect(on_closed)
    window.quit_requested.connect(quit_app)
    quit_timer = loop.call_later(quit_after_s, quit_app) if quit_after_s is not None else None
    restore_sigint = _close_on_sigint(loop, quit_app)
    if settings is None or not settings.ui.start_in_pet_mode:
        window.show()
    session: SessionLike | None = None
    starting: asyncio.Task[None] | None = None
    making = loop.create_task(_make_session(make_session, preload), name="companion-session-make")
    try:
        waiting: list[asyncio.Future[Any]] = [making, closed]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if closed.done():
            return 0  # closed while starting: the finally below stops the rest
        session = making.result()
        window.attach_session(session)
        if settings is None:
            found = getattr(session, "settings", None)
            settings = found if isinstance(found, Settings) else None
        shell = Shell(
            session,
            window,
            ui=settings.ui if settings is not None else UiSettings(),
            save=_saver(settings, baseline) if settings is not None else None,
            use_tray=use_tray,
            on_quit=on_closed,
            settings=settings,
        )
        shell.show_initial()
        # After the first frame: pynput's import and the X connection cost launch time.
        QTimer.singleShot(0, shell.start_global_hotkeys)
        starting = loop.create_task(_start(session, window), name="companion-session-start")
        await closed
    finally:
        restore_sigint()
        if quit_timer is not None:
            quit_timer.cancel()
        quit_app()  # a no-op unless we got here by cancellation or closing while starting
        if session is None and making.done() and not making.cancelled():
            session = making.result()  # made just as the window closed: close it too
        tasks = [starting] if starting is not None else []
        await _cancel(making, *tasks, *window.pending_tasks())
        if session is not None:
            await _aclose(session)
        if shell is not None:
            shell.dispose()
        window.deleteLater()
    return 0


def _saver(settings: Settings, baseline: Settings | None = None) -> Callable[[], None]:
    """Saves the shell's state (the pet's place) into the config file: only what
    changed since `baseline` (the settings at launch), so values that came from
    COMPANION_* variables never reach the file."""
    if baseline is None:
        baseline = settings.model_copy(deep=True)

    def save() -> None:
        from app.ui.settings_dialog import settings_to_save

        save_settings(settings_to_save(baseline, settings))

    return save


async def _start(session: SessionLike, window: MainWindow) -> None:
    try:
        await session.start()
    except Exception as exc:  # the window stays open and says what went wrong
        log.warning("The session failed to start: %s", describe_error(exc))
        window.present(StatusChanged(Status.ERROR, "could not start"))
        window.present(Notice(f"Could not start: {describe_error(exc)}", error=True))


async def _cancel(*tasks: asyncio.Task[Any]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _aclose(session: SessionLike) -> None:
    try:
        await asyncio.wait_for(session.aclose(), ACLOSE_TIMEOUT_S)
    except TimeoutError:
        log.warning("The session did not close within %.0f s; leaving it", ACLOSE_TIMEOUT_S)
    except Exception as exc:
        log.warning("Closing the session failed: %s", describe_error(exc))


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left, finish async generators, close: no 'Task was destroyed' warnings."""
    try:
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            log.debug("cancelling leftover task %r", task)
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
        release_loop_timers(loop)


def release_loop_timers(loop: asyncio.AbstractEventLoop) -> None:
    """Hand a closed qasync loop's timer object to the QApplication (call after
    `loop.close()`, on the GUI thread).

    qasync leaves the Qt timers of handles that never fired (a cancelled `call_later`,
    a `wait_for` that finished early) registered on that object after `close()`. The
    loop sits in reference cycles, so the garbage collector would free it later, on
    whichever thread allocates at that moment: Qt then stops the timers from the
    wrong thread ("Timers cannot be stopped from another thread") and crashes when one
    comes due. Owned by the application, the object lives on the GUI thread; its
    leftover timers fire once more and are killed there."""
    timer = getattr(loop, "_timer", None)
    app = QCoreApplication.instance()
    if isinstance(timer, QObject) and shiboken6.isValid(timer) and app is not None:
        timer.setParent(app)


def _close_on_sigint(
    loop: asyncio.AbstractEventLoop, close: Callable[[], None]
) -> Callable[[], None]:
    """Ctrl+C in the terminal closes the window the normal way; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(close)

    signal.signal(signal.SIGINT, on_sigint)
    # Python runs signal handlers only between bytecodes; this timer makes sure there are some.
    poll = QTimer()
    poll.timeout.connect(lambda: None)
    poll.start(SIGNAL_POLL_MS)

    def restore() -> None:
        with contextlib.suppress(RuntimeError):
            poll.stop()
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)

    return restore


def protect_none_from_binding_refcount_bug() -> bool:
    """Work around Qt bindings that drop a reference to None on every void method call.

    PySide6 6.12.0 does this; Python 3.12+ made None, True and False immortal, so
    there it is harmless, but on 3.11 None's count reaches zero within seconds of
    painting and the process aborts ("Fatal Python error: none_dealloc"). When the
    probe sees the bug, this gives the three singletons a count no process can use
    up, which is what 3.12 does for them. Returns True when it did. The real fix is
    a binding without the bug (pin PySide6 below 6.12 on Python 3.11).
    """
    if sys.version_info >= (3, 12) or hasattr(sys, "gettotalrefcount"):
        return False  # immortal already / a debug build lays objects out differently
    probe = QPainterPath()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.moveTo(0.0, 0.0)
    if sys.getrefcount(None) > before - 32:
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every object in a release build.
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40
    log.info("Qt bindings leak references to None; made None/True/False immortal")
    return True


__all__ = [
    "SessionLike",
    "Shell",
    "protect_none_from_binding_refcount_bug",
    "release_loop_timers",
    "run_window",
]

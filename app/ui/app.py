"""Runs the Companion window on a qasync event loop and drives a session through it.

`run_window` owns the lifecycle: the QApplication, the loop, the window shown
first, then the session built (its heavy imports in a worker thread) and attached,
`session.start()` in the background (models load after the window appears), and
on close `session.aclose()` and a clean loop shutdown. The shell around the window
is `app.ui.shell`; the loop's plumbing is `app.ui.qt_loop`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import qasync
from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

from app.agent.persona import Character
from app.avatar.state import EXPRESSIONS
from app.config import Settings, UiSettings, save_settings
from app.events import EventHub, Notice, Status, StatusChanged
from app.ui.main_window import MainWindow
from app.ui.qt_loop import (
    cancel_tasks,
    close_loop,
    close_on_sigint,
    install_asyncgen_hooks,
    protect_none_from_binding_refcount_bug,
    release_loop_timers,
    wait_for_decoders,
)
from app.ui.session_port import MemoryPort, SessionPort
from app.ui.shell import Shell
from app.ui.status_line import describe_error

if TYPE_CHECKING:
    from app.agent.storage import ConversationInfo
    from app.avatar.live2d_model import Live2DModel
    from app.avatar.pack import AvatarPack
    from app.llm.messages import Msg

log = logging.getLogger(__name__)

ACLOSE_TIMEOUT_S = 10.0
# The name tests and the bench know the session's shape by.
SessionLike = SessionPort


def run_window(
    make_session: Callable[[], SessionPort],
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
    `settings` (a stand-in may have none).

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
    hooks_before = install_asyncgen_hooks(loop)
    try:
        return loop.run_until_complete(
            _show_session(make_session, title, quit_after_s, use_tray, settings, preload)
        )
    finally:
        wait_for_decoders()
        close_loop(loop)
        sys.set_asyncgen_hooks(hooks_before.firstiter, hooks_before.finalizer)
        app.setQuitOnLastWindowClosed(quit_on_last_window)


class _UnmadeSession:
    """Stands in when the session could not be made: the window and the shell still
    work (settings, tray, quit), and starting it reports why, in the status line. It
    keeps no conversations and no settings; what it is asked to do, it cannot."""

    def __init__(self, error: BaseException) -> None:
        self.events = EventHub()
        self.settings: Settings | None = None
        self.character = Character(name="")
        self.avatar_pack: AvatarPack | None = None
        self.live2d_model: Live2DModel | None = None
        self.expressions: tuple[str, ...] = EXPRESSIONS
        self.mic_mode = "always_on"
        self.conversation_id = ""
        self.memory: MemoryPort | None = None
        self.error = error

    async def start(self) -> None:
        raise self.error

    async def aclose(self) -> None:
        return None

    async def send_text(self, text: str) -> object:
        raise self._cannot()

    def interrupt(self) -> None:
        return None

    def answer_capture(self, request_id: int, allowed: bool) -> None:
        return None

    def set_mic_mode(self, mode: str) -> None:
        return None

    def set_mic_enabled(self, enabled: bool) -> None:
        return None

    def set_push_to_talk(self, pressed: bool) -> None:
        return None

    def set_turns_paused(self, paused: bool) -> None:
        return None

    def conversations(self) -> list[ConversationInfo]:
        return []

    def history_messages(self) -> list[Msg]:
        return []

    async def new_conversation(self) -> str:
        raise self._cannot()

    async def switch_conversation(self, uid: str) -> None:
        raise self._cannot()

    def rename_conversation(self, uid: str, title: str) -> None:
        raise self._cannot()

    async def delete_conversation(self, uid: str) -> None:
        raise self._cannot()

    def _cannot(self) -> RuntimeError:
        return RuntimeError(
            QCoreApplication.translate("Shell", "Companion could not start: {0}").format(
                describe_error(self.error)
            )
        )


async def _make_session(
    make_session: Callable[[], SessionPort], preload: Sequence[str]
) -> SessionPort:
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
    make_session: Callable[[], SessionPort],
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
    restore_sigint = close_on_sigint(loop, quit_app)
    if settings is None or not settings.ui.start_in_pet_mode:
        window.show()
    session: SessionPort | None = None
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
            settings = session.settings
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
        await cancel_tasks(making, *tasks, *window.pending_tasks())
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


async def _start(session: SessionPort, window: MainWindow) -> None:
    try:
        await session.start()
    except Exception as exc:  # the window stays open and says what went wrong
        log.warning("The session failed to start: %s", describe_error(exc))
        window.present(StatusChanged(Status.ERROR, "could not start"))
        window.present(Notice(f"Could not start: {describe_error(exc)}", error=True))


async def _aclose(session: SessionPort) -> None:
    try:
        await asyncio.wait_for(session.aclose(), ACLOSE_TIMEOUT_S)
    except TimeoutError:
        log.warning("The session did not close within %.0f s; leaving it", ACLOSE_TIMEOUT_S)
    except Exception as exc:
        log.warning("Closing the session failed: %s", describe_error(exc))


__all__ = [
    "SessionLike",
    "SessionPort",
    "Shell",
    "protect_none_from_binding_refcount_bug",
    "release_loop_timers",
    "run_window",
]

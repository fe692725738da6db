"""The tray and quitting (offscreen): with a tray, closing the window keeps the app
running and Quit from the menu ends it fast and clean even with a turn in flight;
without one, the app says so once and closing the window quits."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMenu

from app.ui import run_window
from app.ui.pet import PetWindow
from app.ui.tray import NO_TRAY_NOTICE, app_icon
from tests.test_ui import window_of
from tests.ui_sessions import ScriptedSession

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


class TurnInFlightSession(ScriptedSession):
    """A session whose reply never ends on its own: quitting must cut it short."""

    def __init__(self) -> None:
        super().__init__()
        self.turn_cancelled = False

    async def send_text(self, text: str) -> None:
        self.sent.append(text)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.turn_cancelled = True
            raise


def tray_menu() -> QMenu:
    (menu,) = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMenu)
        and any(a.text() == "Quit Companion" for a in w.actions())
        and not isinstance(w.parent(), PetWindow)
    ]
    return menu


def test_the_app_icon_is_drawn(qapp: QApplication) -> None:
    assert not app_icon().isNull()


def test_without_a_tray_the_user_is_told_once_and_closing_quits(qapp: QApplication) -> None:
    seen: dict[str, object] = {}

    class Probe(ScriptedSession):
        async def start(self) -> None:
            await super().start()
            window = window_of(self)
            QApplication.processEvents()
            seen["notice"] = window.status_text()  # every notice shown
            window.close()

    session = Probe()
    assert run_window(lambda: session, use_tray=False, quit_after_s=10) == 0
    notice = str(seen["notice"])
    assert NO_TRAY_NOTICE in notice and notice.count(NO_TRAY_NOTICE) == 1
    assert session.closed


def test_with_a_tray_closing_the_window_keeps_running_and_quit_ends_a_turn_in_flight(
    qapp: QApplication,
) -> None:
    seen: dict[str, float | bool] = {}
    session = TurnInFlightSession()

    async def script() -> None:
        await asyncio.sleep(0.05)
        window = window_of(session)
        window.text_input.setText("tell me a long story")
        window.send_button.click()
        await asyncio.sleep(0.05)
        window.close()  # with a tray: only hidden
        await asyncio.sleep(0.05)
        seen["hidden"] = not window.isVisible()
        seen["still_running"] = not session.closed
        next(a for a in tray_menu().actions() if a.text() == "Quit Companion").trigger()
        # Only reached if Quit left the app running (the turn in flight held it open).
        await asyncio.sleep(15)
        seen["running_after_quit"] = True

    def make() -> TurnInFlightSession:
        asyncio.get_running_loop().create_task(script())
        return session

    assert run_window(make, use_tray=True, quit_after_s=60) == 0
    assert seen["hidden"] and seen["still_running"]
    assert "running_after_quit" not in seen  # Quit ended it, not the 60 s guard
    assert session.sent == ["tell me a long story"]
    assert session.turn_cancelled and session.closed


def test_quitting_from_the_tray_with_a_turn_in_flight_prints_no_traceback() -> None:
    script = textwrap.dedent(
        """
        import asyncio, os, time
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication, QMenu
        from app.ui import run_window
        from tests.test_ui_tray import TurnInFlightSession, tray_menu
        from tests.test_ui import window_of

        session = TurnInFlightSession()

        async def script():
            await asyncio.sleep(0.05)
            window = window_of(session)
            window.text_input.setText("go on")
            window.send_button.click()
            await asyncio.sleep(0.05)
            print("quitting", time.monotonic(), flush=True)
            next(a for a in tray_menu().actions() if a.text() == "Quit Companion").trigger()

        def make():
            asyncio.get_running_loop().create_task(script())
            return session

        code = run_window(make, use_tray=True, quit_after_s=20)
        print("exited", time.monotonic(), code, session.turn_cancelled, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    quit_at = float(lines["quitting"])
    exited_at, code, cancelled = lines["exited"].split()
    assert float(exited_at) - quit_at < 2.0
    assert code == "0" and cancelled == "True"

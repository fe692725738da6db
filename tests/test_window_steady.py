"""The main window holds still (issue 28, item 7), offscreen: the conversation and the
input bar never move when a status, a notice, a pill or a "💭 Remembered" line comes
or goes; and Stop works only while there is a reply to stop."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QWidget

from app.events import (
    LoadProgress,
    MemoryChanged,
    MicStateChanged,
    SessionEvent,
    Status,
    StatusChanged,
    TurnFinished,
)
from app.ui import MainWindow
from tests.ui_sessions import ScriptedSession


class RememberingSession(ScriptedSession):
    """A session with a long-term memory, so the window shows "💭 Remembered"."""

    def __init__(self) -> None:
        super().__init__()
        self.memory = self  # type: ignore[assignment]  # only `undo` is reached
        self.undone: list[int] = []

    def undo(self, change_id: int) -> None:
        self.undone.append(change_id)


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def window(qapp: QApplication) -> Iterator[MainWindow]:
    session = RememberingSession()
    win = MainWindow(session)
    win.resize(1000, 640)
    win.show()
    settle()
    yield win
    win.close()


def settle() -> None:
    for _ in range(6):
        QApplication.processEvents()


def where(widget: QWidget, window: MainWindow) -> QRect:
    top_left = widget.mapTo(window, QPoint(0, 0))
    return QRect(top_left, widget.size())


def layout_of(window: MainWindow) -> dict[str, tuple[int, int]]:
    """How high and where up or down the parts a person reads and types in are."""
    settle()
    parts = {
        "input bar": window.text_input,
        "send": window.send_button,
        "stop": window.stop_button,
        "conversation": window.transcript,
        "avatar": window.avatar,
    }
    return {name: (where(w, window).y(), w.height()) for name, w in parts.items()}


def show(window: MainWindow, *events: SessionEvent) -> None:
    for event in events:
        window.present(event)


Change = Callable[[MainWindow], None]
# Each line that comes and goes under the controls: (name, show it, take it away).
LINES: list[tuple[str, Change, Change]] = [
    (
        "a notice",
        lambda w: w.show_notice("📸 Took a screenshot of screen 1 (1280×800) to look at it."),
        lambda w: w.status.dismiss(0),
    ),
    (
        "an error",
        lambda w: w.show_notice("The model server stopped answering.", error=True),
        lambda w: w.status.dismiss(0),
    ),
    (
        "💭 Remembered",
        lambda w: show(w, MemoryChanged(1, "remembered", ("your cat is called Miso",))),
        lambda w: w.memory_notice.hide() if w.memory_notice is not None else None,
    ),
    (
        "a status with details",
        lambda w: show(w, StatusChanged(Status.LOADING, "loading the embedded chat model")),
        lambda w: show(w, StatusChanged(Status.LISTENING)),
    ),
    (
        "the loading progress",
        lambda w: show(w, LoadProgress("speech model", 1, 3)),
        lambda w: show(w, LoadProgress("speech model", 3, 3)),
    ),
    (
        "the mic-live pill",
        lambda w: show(w, MicStateChanged(enabled=True, available=True)),
        lambda w: show(w, MicStateChanged(enabled=False, available=True)),
    ),
    (
        "the screenshot pill",
        lambda w: w.capture_pill.flash(60_000),
        lambda w: w.capture_pill.hide(),
    ),
    (
        "the microphone unavailable",
        lambda w: show(w, MicStateChanged(enabled=False, available=False, detail="no device")),
        lambda w: show(w, MicStateChanged(enabled=True, available=True)),
    ),
]


@pytest.mark.parametrize(("name", "show_it", "hide_it"), LINES, ids=[n for n, _, _ in LINES])
def test_the_window_does_not_move_when_a_line_comes_and_goes(
    window: MainWindow, name: str, show_it: Change, hide_it: Change
) -> None:
    before = layout_of(window)
    show_it(window)
    during = layout_of(window)
    hide_it(window)
    after = layout_of(window)
    assert during == before, name
    assert after == before, name


def test_a_notice_and_a_memory_line_together_move_nothing(window: MainWindow) -> None:
    before = layout_of(window)
    show(window, MicStateChanged(enabled=True, available=True))
    window.capture_pill.flash(60_000)
    window.show_notice("📸 Took a screenshot of screen 1 (1280×800) to look at it.")
    show(window, MemoryChanged(2, "remembered", ("you like tea",)))
    assert window.memory_notice is not None and window.memory_notice.isVisible()
    assert layout_of(window) == before
    window.status.dismiss(0)
    window.memory_notice.hide()
    assert layout_of(window) == before


def test_the_lines_are_all_shown_whole(window: MainWindow) -> None:
    window.show_notice("📸 Took a screenshot of screen 1 (1280×800) to look at it.")
    show(window, MemoryChanged(3, "remembered", ("your cat is called Miso",)))
    settle()
    notice = window.memory_notice
    assert notice is not None
    for widget in (window.notice_label, notice, window.status_label):
        box = where(widget, window)
        assert box.bottom() <= window.height(), widget.objectName()
        needed = widget.heightForWidth(widget.width())
        needed = needed if needed > 0 else widget.sizeHint().height()
        assert widget.height() >= needed - 1, widget.objectName()


# -- Stop --------------------------------------------------------------------------------


def test_stop_is_off_while_nothing_plays(window: MainWindow) -> None:
    assert not window.stop_button.isEnabled()
    for status in (Status.LISTENING, Status.IDLE, Status.MUTED, Status.HEARING):
        show(window, StatusChanged(status))
        assert not window.stop_button.isEnabled(), status
    # and it does not look like an alarm: not the red of the enabled button
    colour = window.stop_button.palette().buttonText().color().name()
    assert colour != "#b42335"


@pytest.mark.parametrize("busy", [Status.THINKING, Status.SPEAKING, Status.REPLYING])
def test_stop_is_on_while_a_reply_is_made_or_spoken(window: MainWindow, busy: Status) -> None:
    session = window.session
    assert isinstance(session, ScriptedSession)
    show(window, StatusChanged(busy))
    assert window.stop_button.isEnabled()
    # Muting or hearing the user meanwhile leaves the reply stoppable.
    show(window, StatusChanged(Status.MUTED), StatusChanged(Status.HEARING))
    assert window.stop_button.isEnabled()
    window.stop_button.click()
    assert session.interrupts == 1
    show(window, TurnFinished(1, {}, interrupted=True))
    assert not window.stop_button.isEnabled()


@pytest.mark.parametrize(
    "end",
    [
        StatusChanged(Status.LISTENING, "interrupted"),
        StatusChanged(Status.ERROR, "the model server is down"),
        TurnFinished(2, {}),
    ],
    ids=["interrupted", "error", "finished"],
)
def test_stop_goes_off_when_the_reply_ends(window: MainWindow, end: SessionEvent) -> None:
    show(window, StatusChanged(Status.SPEAKING))
    assert window.stop_button.isEnabled()
    show(window, end)
    assert not window.stop_button.isEnabled()

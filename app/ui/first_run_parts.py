"""Parts of the first-run guide: the checklist (plain words, the technical details one
click away), the page that asks how the microphone should listen, what the guide says
while the app is still loading, and growing the guide so no wrapped line is cut off."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QLabel,
    QLayout,
    QRadioButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.checks import CheckResult
from app.config import Settings
from app.events import Status, StatusChanged
from app.ui.status_line import status_detail_words

LOADING = (Status.STARTING, Status.LOADING)
PERCENT = re.compile(r"\((\d+) %\)$")


def _tr(text: str) -> str:
    return QCoreApplication.translate("FirstRunGuide", text)


class CheckSignals(QObject):
    """The worker thread's voice: it holds this child of the guide, never the guide, so
    the guide is never freed on that thread. Emitting after the guide is gone raises
    RuntimeError, which the worker takes as the signal to stop."""

    # (index of the check starting, total, its name) and (done, total, its result),
    # emitted from the worker thread and delivered on the UI thread.
    started = Signal(int, int, str)
    done = Signal(int, int, object)
    finished = Signal()


class Checklist(QWidget):
    """One line per check in words a newcomer can act on ("Speech recognition is ready
    (works offline)"); "Details" shows what each check found technically (the model's
    name and size, the device). Every result given is shown: a line never goes away."""

    def __init__(self, expected: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results: list[CheckResult] = []
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        self.label = QLabel()
        self.label.setObjectName("checksResults")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        # Room for a line per check from the start: the guide opens at a size that
        # holds them, rather than growing (or, briefly, cutting lines off) as they come.
        self.label.setMinimumHeight(expected * self.label.fontMetrics().lineSpacing())
        self.details_button = QToolButton()
        self.details_button.setObjectName("checksDetailsButton")
        self.details_button.setText(_tr("Details"))
        self.details_button.setToolTip(_tr("What each check found: devices, models, sizes"))
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.toggled.connect(self._show_details)
        self.details_button.hide()  # until there is something to show
        self.details = QLabel()
        self.details.setObjectName("checksDetails")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setStyleSheet("color: #555;")
        self.details.hide()
        box.addWidget(self.label)
        box.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        box.addWidget(self.details)

    def show_results(self, results: Sequence[CheckResult]) -> None:
        self.results = list(results)
        plain = [f"{_mark(r)} {_escape(r.line)}" for r in self.results]
        technical = [
            f"{_mark(r)} <b>{_escape(r.name)}</b>: {_escape(r.text)}" for r in self.results
        ]
        self.label.setText("<br>".join(plain))
        self.details.setText("<br>".join(technical))
        self.label.setToolTip("\n".join(f"{r.name}: {r.text}" for r in self.results))
        self.details_button.setVisible(bool(self.results))

    @property
    def lines(self) -> list[str]:
        """The plain lines shown, one per check."""
        return [r.line for r in self.results]

    def _show_details(self, shown: bool) -> None:
        self.details.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.details_button.setArrowType(arrow)
        self.details_button.setText(_tr("Hide details") if shown else _tr("Details"))


def _mark(result: CheckResult) -> str:
    return "✔" if result.ok else "⚠"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- how the microphone listens ---------------------------------------------------------

MicChoice = Literal["always_on", "push_to_talk"]


class ListeningPage(QWidget):
    """The guide asks how the microphone should listen, each way with its trade-off in
    one line; nothing is chosen for the user (unless the settings file already says)."""

    chosen = Signal(str)

    def __init__(self, current: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        box = QVBoxLayout(self)
        box.addWidget(QLabel(_tr("<h3>How should the companion listen?</h3>")))
        self.always_on = QRadioButton(_tr("Always on"))
        self.always_on.setObjectName("alwaysOnChoice")
        self.push_to_talk = QRadioButton(_tr("Push to talk"))
        self.push_to_talk.setObjectName("pushToTalkChoice")
        self.group = QButtonGroup(self)
        trade_offs = (
            (
                self.always_on,
                _tr("Just talk. Without headphones it may hear its own voice."),
            ),
            (
                self.push_to_talk,
                _tr(
                    "Hold Ctrl+Space (or the “Hold to talk” button) while you speak. "
                    "It never hears itself."
                ),
            ),
        )
        for button, trade_off in trade_offs:
            self.group.addButton(button)
            note = QLabel(trade_off)
            note.setWordWrap(True)
            note.setContentsMargins(24, 0, 0, 8)
            note.setObjectName(button.objectName() + "Note")
            box.addWidget(button)
            box.addWidget(note)
        self.hint = QLabel(
            _tr("Choose one to go on. You can change it any time beside the microphone button.")
        )
        self.hint.setObjectName("listeningHint")
        self.hint.setWordWrap(True)
        box.addWidget(self.hint)
        box.addStretch(1)
        if current == "always_on":
            self.always_on.setChecked(True)
        elif current == "push_to_talk":
            self.push_to_talk.setChecked(True)
        self.group.buttonToggled.connect(self._toggled)

    @property
    def mode(self) -> MicChoice | None:
        """`always_on`, `push_to_talk`, or None while nothing is chosen."""
        if self.always_on.isChecked():
            return "always_on"
        if self.push_to_talk.isChecked():
            return "push_to_talk"
        return None

    def choose(self, mode: str) -> None:
        {"always_on": self.always_on, "push_to_talk": self.push_to_talk}[mode].setChecked(True)

    def focus_choice(self) -> None:
        """The keyboard on the choice (the first way, while none is chosen)."""
        (self.push_to_talk if self.mode == "push_to_talk" else self.always_on).setFocus()

    def _toggled(self, _button: object, checked: bool) -> None:
        if checked and self.mode is not None:
            self.chosen.emit(self.mode)


# -- the chat model -----------------------------------------------------------------------


def chat_route(settings: Settings) -> tuple[str, str | None, str | None]:
    """What decides which chat model answers: its name, its server, its key."""
    chat = settings.chat
    key = chat.api_key.get_secret_value() if chat.api_key is not None else None
    return chat.model, chat.base_url, key


# -- while the app is still loading -------------------------------------------------------


def still_loading(event: StatusChanged | None) -> bool:
    return event is not None and event.status in LOADING


def loading_words(event: StatusChanged) -> str:
    """What the app is still doing, as the status line says it."""
    return status_detail_words(event.detail) or _tr("starting")


def loading_percent(event: StatusChanged) -> int | None:
    """How far a preparation with steps is (its "(52 %)"), or None."""
    found = PERCENT.search(event.detail)
    return int(found[1]) if found else None


def where_it_is(
    results: Sequence[CheckResult], status: StatusChanged | None
) -> tuple[str, int, int]:
    """Once the checks are done: what the guide says over the checklist, and its bar's
    maximum and value. "Done" only when nothing is loading any more; meanwhile what is
    still getting ready, with its percentage when it has one (else a busy bar)."""
    failed = any(not r.ok for r in results)
    total = len(results)
    if status is not None and still_loading(status):
        checked = (
            _tr("Checks done: Companion works without what is missing (see below).")
            if failed
            else _tr("Checks done: everything is in place.")
        )
        text = _tr("{checked} Still getting ready — {what}. You can go on meanwhile.").format(
            checked=checked, what=loading_words(status)
        )
        percent = loading_percent(status)
        return text, (0 if percent is None else 100), (percent or 0)
    if failed:
        return _tr("Done. Companion works without what is missing; see below."), total, total
    return _tr("Done. Everything is in place."), total, total


# -- no line cut off ------------------------------------------------------------------------


def grow_to_fit(window: QWidget, *, now: bool = False) -> None:
    """Make `window` tall enough for its wrapped lines at its width (never smaller, and
    no taller than the screen): Qt sizes a dialog by its minimum size, which does not
    count the extra lines a word-wrapped label needs, and then cuts them off. `now`:
    first lay out what changed (else that waits for the event loop, and a busy loop
    paints the new text cut off before)."""
    if now:  # every widget and layout forgets the sizes it cached, then lays out again
        for widget in window.findChildren(QWidget):
            widget.updateGeometry()
        for inner in window.findChildren(QLayout):
            inner.invalidate()
    top = window.layout()
    if now and top is not None:
        top.activate()
    if not window.hasHeightForWidth():
        needed = window.sizeHint().height()
    else:
        needed = window.heightForWidth(window.width())
    screen = window.screen()
    if screen is not None:
        frame = window.frameGeometry().height() - window.height()
        needed = min(needed, screen.availableGeometry().height() - frame)
    if needed > window.height():
        window.resize(window.width(), needed)
        if now and top is not None:  # lay the children out at the new size at once
            top.setGeometry(window.rect())


__all__ = [
    "CheckSignals",
    "Checklist",
    "ListeningPage",
    "MicChoice",
    "chat_route",
    "grow_to_fit",
    "loading_percent",
    "loading_words",
    "still_loading",
    "where_it_is",
]

"""The main window's status line: what the session is doing (a coloured dot and a word),
the model loading progress, why the microphone is unavailable, the privacy pills, and
the notices under it: a short list, newest last, so that one never hides another (the
warnings told at start come within the same second). Errors are red and stay until
dismissed (×) or pushed out by newer notices; others fade. An error is told in one
place: the notices, never again in the status row."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.events import LoadProgress, Status, StatusChanged
from app.ui.controls import PrivacyPill
from app.ui.device_words import device_words
from app.ui.mic_state import MicState
from app.ui.style import STATUS_COLOURS, repolish

log = logging.getLogger(__name__)

NOTICE_SHOWN_MS = 8000  # plain notices fade; errors stay until dismissed or pushed out
CAPTURE_PILL_MS = 6000  # how long "screenshot taken" stays up after a capture
MAX_NOTICES = 4  # shown at once, newest last
ROW_SPACING = 10  # between the status row and the notices, as between the window's rows
# The session's fixed status details (it speaks English); see `_status_detail`.
STATUS_DETAIL_TEXTS = (
    QT_TRANSLATE_NOOP("StatusLine", "loading the speech and chat models"),
    QT_TRANSLATE_NOOP("StatusLine", "loading the embedded chat model"),
    QT_TRANSLATE_NOOP("StatusLine", "no microphone: type your messages"),
    QT_TRANSLATE_NOOP("StatusLine", "the microphone is gone: type your messages"),
    QT_TRANSLATE_NOOP("StatusLine", "interrupted"),
    QT_TRANSLATE_NOOP("StatusLine", "didn't catch that"),
    QT_TRANSLATE_NOOP("StatusLine", "the reply is shown: no sound output"),
)
# The session's word for a sound test's pause (app.session.conductor.TESTING): the row
# says "Mic paused — until the sound test ends", as the mic button does.
TESTING_DETAIL = "paused during a sound test"
STILL_WAITING = re.compile(r"still waiting for (.+) \((\d+) s\)")
# What the session calls the embedded model in it (app.session.turn); a hosted model's
# own name ("gpt-4o-mini") is shown as it is.
WAITED_FOR_TEXTS = (QT_TRANSLATE_NOOP("StatusLine", "the local model"),)
# The embedded model's first preparation (app.session.services.PREPARING_WORDS).
PREPARING_TEXTS = (
    QT_TRANSLATE_NOOP("StatusLine", "preparing the embedded chat model: joining its parts"),
    QT_TRANSLATE_NOOP("StatusLine", "preparing the embedded chat model: checking it"),
)
PREPARING = re.compile(r"(.+) \((\d+) %\)")
# The status line's words, marked for translation (the session emits `Status` values).
STATUS_WORDS = {
    Status.STARTING: QT_TRANSLATE_NOOP("StatusLine", "Starting"),
    Status.LOADING: QT_TRANSLATE_NOOP("StatusLine", "Loading"),
    Status.LISTENING: QT_TRANSLATE_NOOP("StatusLine", "Listening"),
    Status.HEARING: QT_TRANSLATE_NOOP("StatusLine", "Hearing you"),
    Status.TRANSCRIBING: QT_TRANSLATE_NOOP("StatusLine", "Transcribing"),
    Status.THINKING: QT_TRANSLATE_NOOP("StatusLine", "Thinking"),
    Status.SPEAKING: QT_TRANSLATE_NOOP("StatusLine", "Speaking"),
    Status.REPLYING: QT_TRANSLATE_NOOP("StatusLine", "Replying"),
    Status.MUTED: QT_TRANSLATE_NOOP("StatusLine", "Mic off"),
    Status.IDLE: QT_TRANSLATE_NOOP("StatusLine", "Ready"),
    Status.ERROR: QT_TRANSLATE_NOOP("StatusLine", "Error"),
}


@dataclass(slots=True)
class _Notice:
    message: str
    error: bool
    until: float | None  # time.monotonic() when it fades; None: it stays


class _NoticeRow(QWidget):
    """One notice: its words (selectable) and a × that dismisses it."""

    def __init__(self, label: QLabel, dismiss: QToolButton) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(label, 1)
        row.addWidget(dismiss, 0, Qt.AlignmentFlag.AlignTop)


def status_detail_words(detail: str) -> str:
    """The session's own words for a status, in the UI's language when they are ones
    it always uses (anything else, such as an error, is shown as it came)."""

    def tr(text: str) -> str:
        return QCoreApplication.translate("StatusLine", text)

    if detail in STATUS_DETAIL_TEXTS:
        return tr(detail)
    waiting = STILL_WAITING.fullmatch(detail)
    if waiting:
        what, seconds = waiting.groups()
        what = tr(what) if what in WAITED_FOR_TEXTS else what  # never half one language
        return QCoreApplication.translate("StatusLine", "still waiting for {0} ({1} s)").format(
            what, seconds
        )
    preparing = PREPARING.fullmatch(detail)
    if preparing and preparing[1] in PREPARING_TEXTS:
        return f"{tr(preparing[1])} ({preparing[2]} %)"
    return detail


def describe_error(exc: BaseException) -> str:
    """An exception in words for a person: its message, or its kind when it has none."""
    return str(exc).strip() or type(exc).__name__


class StatusLine(QWidget):
    """The status row and the notices row under the window's controls.
    `status_changed` passes on each session status it shows (the first-run guide
    follows the loading with it)."""

    status_changed = Signal(object)  # a StatusChanged

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._status = StatusChanged(Status.STARTING)
        self._mic: MicState | None = None  # unknown until the mic controls say
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(ROW_SPACING)
        status = QHBoxLayout()
        status.setContentsMargins(6, 0, 6, 0)
        status.setSpacing(8)
        self.dot = QLabel()
        self.dot.setFixedSize(10, 10)
        self.status_label = QLabel()
        self.status_label.setObjectName("statusText")
        self.mic_note = QLabel()
        self.mic_note.setObjectName("micNote")
        # A long reason must not widen the window: it is cut here, whole in the tooltip.
        self.mic_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.mic_note.hide()
        self._notices: list[_Notice] = []
        self._was_counting = False  # "still waiting (N s)" is logged once, not every second
        self._rows: list[tuple[_NoticeRow, QLabel]] = []  # one per notice, oldest first
        self.notices_box = QVBoxLayout()
        self.notices_box.setSpacing(2)
        for _ in range(MAX_NOTICES):
            self._add_row()
        # The newest notice's words (tests and the shell read it by this name).
        self.notice_label = self._rows[-1][1]
        self.progress = QProgressBar()
        self.progress.setObjectName("loadProgress")
        self.progress.setFixedWidth(120)
        self.progress.setMaximumHeight(10)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.mic_live = PrivacyPill(self.tr("● Mic live"))
        self.mic_live.setToolTip(self.tr("The microphone is on and listening"))
        self.capture_pill = PrivacyPill(self.tr("📸 Screenshot taken"))
        status.addWidget(self.dot, 0, Qt.AlignmentFlag.AlignVCenter)
        status.addWidget(self.status_label)
        status.addWidget(self.progress, 0, Qt.AlignmentFlag.AlignVCenter)
        status.addWidget(self.mic_note, 1)
        status.addWidget(self.capture_pill)
        status.addWidget(self.mic_live)
        rows.addLayout(status)
        # Notices (errors in words) get a full-width line of their own so they wrap
        # across the window instead of into a narrow column.
        self.notices_box.setContentsMargins(24, 0, 6, 0)
        rows.addLayout(self.notices_box)

        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(self._fade)
        self.show_status(StatusChanged(Status.STARTING))
        self.show_mic(available=True, detail="")

    def text(self) -> str:
        """The status line as the user reads it (every notice shown, oldest first)."""
        labels = (self.status_label, self.mic_note, *(label for _, label in self._rows))
        return " · ".join(label.text() for label in labels if label.text() and not label.isHidden())

    @property
    def notices(self) -> list[tuple[str, bool]]:
        """The notices shown, oldest first: (words, whether it is an error)."""
        return [(n.message, n.error) for n in self._notices]

    @property
    def last_status(self) -> StatusChanged:
        """The session's latest status (what the row shows, before the microphone's say)."""
        return self._status

    def show_status(self, event: StatusChanged) -> None:
        detail = self._status_detail(event.detail)
        # One place for an error: its words are a notice (once), the row says "Error".
        told = any(detail in n.message for n in self._notices if n.error)
        if event.status is Status.ERROR and detail and not told:
            self.show_notice(detail, error=True)
        self._status = event
        self._render_status()
        self.status_changed.emit(event)

    def show_mic_state(self, state: MicState) -> None:
        """What the microphone does (`MicControls.state_changed`): the pill and the row
        say the same as the mic button."""
        self._mic = state
        self.mic_live.setVisible(state.live)
        self._render_status()

    def _render_status(self) -> None:
        event = self._status
        status = event.status
        words = self.tr(str(STATUS_WORDS.get(status, status.value.capitalize())))
        detail = "" if status is Status.ERROR else self._status_detail(event.detail)
        colour = STATUS_COLOURS.get(status, "#9ca3af")
        if status in (Status.LISTENING, Status.MUTED):
            words, detail, colour = self._idle_words(event, words, detail, colour)
        shown = f"{words} — {detail}" if detail else words
        counting = STILL_WAITING.fullmatch(event.detail) is not None
        if shown != self.status_label.text() and not (counting and self._was_counting):
            log.info("status line: %s", shown)  # what the window said, for a bug report
        self._was_counting = counting
        self.status_label.setText(shown)
        self.dot.setStyleSheet(f"background: {colour}; border-radius: 5px;")

    def _idle_words(
        self, event: StatusChanged, words: str, detail: str, colour: str
    ) -> tuple[str, str, str]:
        """Listening or muted, as the microphone's one state says it (the session's
        status may come before or after the button's own change)."""
        mic = self._mic
        if mic is not None and mic.reported:  # the mic controls know the tests running
            shown: str = mic.shown
        else:  # nothing said yet: the session's own word for a test's pause
            testing = event.detail == TESTING_DETAIL or (mic is not None and mic.testing)
            shown = "paused" if testing else ""
        if event.detail == TESTING_DETAIL:
            detail = ""  # said as "Mic paused" below, when the mic is not off anyway
        muted = STATUS_COLOURS[Status.MUTED]
        if shown == "off":
            return self.tr("Mic off"), detail, muted
        if shown == "paused":
            return self.tr("Mic paused"), self.tr("until the sound test ends"), muted
        if shown == "push_to_talk" and not (mic is not None and mic.held):
            return self.tr("Ready"), detail or self.tr("hold to talk"), STATUS_COLOURS[Status.IDLE]
        if shown in ("on", "push_to_talk"):
            return self.tr("Listening"), detail, STATUS_COLOURS[Status.LISTENING]
        return words, detail, colour

    def _status_detail(self, detail: str) -> str:
        return status_detail_words(detail)

    def show_notice(self, message: str, *, error: bool = False) -> None:
        """Add a notice under the ones shown (the same words again move to the end);
        errors in red stay until dismissed or pushed out, others fade."""
        if not message:
            return
        log.info("notice%s: %s", " (error)" if error else "", message)
        message = device_words(message)  # the audio layer speaks English
        self._notices = [n for n in self._notices if n.message != message]  # as shown
        until = None if error else time.monotonic() + NOTICE_SHOWN_MS / 1000
        self._notices.append(_Notice(message, error, until))
        del self._notices[:-MAX_NOTICES]
        self._render()

    def show_capture(self, monitor: int, width: int, height: int) -> None:
        """A screenshot was taken (of screen `monitor`, 0: all of them): said, and the
        privacy pill flashes."""
        where = self.tr("all screens") if monitor == 0 else self.tr("screen {0}").format(monitor)
        self.show_notice(
            self.tr("📸 Took a screenshot of {0} ({1}×{2}) to look at it.").format(
                where, width, height
            )
        )
        self.capture_pill.flash(CAPTURE_PILL_MS)

    def show_heard_aside(self, text: str) -> None:
        """Words heard over the companion's voice, too short to stop it: not a turn, but
        shown, so that nothing said goes unseen."""
        self.show_notice(
            self.tr("Heard while I was speaking: “{0}”. Say it again if it was for me.").format(
                text
            )
        )

    def dismiss(self, index: int) -> None:
        """Take notice `index` (as in `notices`) away."""
        if 0 <= index < len(self._notices):
            del self._notices[index]
            self._render()

    def _add_row(self) -> None:
        label = QLabel()
        label.setObjectName("notice")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        dismiss = QToolButton()
        dismiss.setObjectName("dismissNotice")
        dismiss.setText("×")
        dismiss.setAutoRaise(True)
        dismiss.setToolTip(self.tr("Dismiss"))
        row = _NoticeRow(label, dismiss)
        position = len(self._rows)
        dismiss.clicked.connect(lambda: self._dismiss_row(position))
        self._rows.append((row, label))
        self.notices_box.addWidget(row)
        row.hide()

    def _dismiss_row(self, position: int) -> None:
        # The rows show the newest notices at the bottom: row i holds notice i - offset.
        self.dismiss(position - (len(self._rows) - len(self._notices)))

    def _fade(self) -> None:
        now = time.monotonic()
        self._notices = [n for n in self._notices if n.until is None or n.until > now]
        self._render()

    def _render(self) -> None:
        offset = len(self._rows) - len(self._notices)
        for position, (row, label) in enumerate(self._rows):
            notice = self._notices[position - offset] if position >= offset else None
            label.setText(notice.message if notice else "")
            label.setToolTip(notice.message if notice else "")
            label.setProperty("error", bool(notice and notice.error))
            repolish(label)
            row.setVisible(notice is not None)
        fading = [n.until for n in self._notices if n.until is not None]
        if fading:
            self._notice_timer.start(max(0, round((min(fading) - time.monotonic()) * 1000)))
        else:
            self._notice_timer.stop()

    def show_mic(self, *, available: bool, detail: str) -> None:
        """Say why the microphone is unavailable (nothing while it is available)."""
        note = (
            self.tr("Microphone unavailable — {0}").format(device_words(detail))
            if detail
            else self.tr("Microphone unavailable")
        )
        self.mic_note.setText(note)
        self.mic_note.setToolTip(note)
        self.mic_note.setVisible(not available)

    def show_progress(self, event: LoadProgress) -> None:
        self.progress.setRange(0, max(1, event.total))
        self.progress.setValue(event.done)
        self.progress.setToolTip(event.what)
        self.progress.setVisible(event.done < event.total)


__all__ = ["STATUS_WORDS", "StatusLine", "describe_error", "status_detail_words"]

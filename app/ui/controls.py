"""Small controls of the main window: the mic level meter, the privacy pills and the
steady area that holds the lines coming and going under the controls."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QLayout, QPushButton, QSizePolicy, QVBoxLayout, QWidget

FLOOR_DB = -60.0  # the meter's empty end
FALL_DB_PER_S = 30.0  # how fast the bar falls back (it jumps up at once)
SPEECH_DB = -35.0  # louder than this is drawn in the "you are heard" colour


class LevelMeter(QWidget):
    """The microphone's loudness as a bar: rises at once, falls smoothly, grey when
    the mic is closed. `level_db` is what it shows now."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("levelMeter")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setToolTip(self.tr("Microphone level"))
        self.level_db = FLOOR_DB
        self.active = False
        self._target = FLOOR_DB
        self._at = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(33)
        self._timer.timeout.connect(self._fall)

    def sizeHint(self) -> QSize:
        return QSize(90, 12)

    def set_level(self, dbfs: float) -> None:
        self._target = max(FLOOR_DB, min(0.0, dbfs))
        self._at = time.monotonic()
        if self._target >= self.level_db:
            self.level_db = self._target
        if not self._timer.isActive():
            self._timer.start()
        self.update()

    def set_active(self, active: bool) -> None:
        self.active = active
        if not active:
            self.level_db = self._target = FLOOR_DB
            self._timer.stop()
        self.update()

    @property
    def fraction(self) -> float:
        return (self.level_db - FLOOR_DB) / -FLOOR_DB

    def _fall(self) -> None:
        now = time.monotonic()
        # No new level for a while (the stream paused): fall to the floor.
        target = self._target if now - self._at < 0.5 else FLOOR_DB
        self.level_db = max(target, self.level_db - FALL_DB_PER_S * 0.033)
        if self.level_db <= FLOOR_DB:
            self._timer.stop()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
            radius = rect.height() / 2
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#ece7fb"))
            p.drawRoundedRect(rect, radius, radius)
            if self.active and self.fraction > 0:
                filled = QRectF(
                    rect.x(),
                    rect.y(),
                    max(rect.height(), rect.width() * self.fraction),
                    rect.height(),
                )
                colour = "#22a06b" if self.level_db >= SPEECH_DB else "#8bd3b0"
                p.setBrush(QColor(colour))
                p.drawRoundedRect(filled, radius, radius)
        finally:
            p.end()


class PrivacyPill(QLabel):
    """A red pill the user always sees while something private happens: the mic is
    live, or a screenshot was just taken."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("privacyPill")
        self.setStyleSheet(
            "#privacyPill { background: #fee2e2; color: #b91c1c; border-radius: 9px;"
            " padding: 1px 8px; font-size: 12px; font-weight: 600; }"
        )
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.hide()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)

    def flash(self, ms: int) -> None:
        """Show for `ms` milliseconds."""
        self.show()
        self._timer.start(ms)


class SteadyArea(QWidget):
    """A column whose height never shrinks: lines that come and go in it (the notices,
    "💭 Remembered") never move what is above it. It starts with `reserve` pixels and
    grows, once, only when more lines than that are shown at the same time.

    The lines live in `inner`, placed at the top by hand: a widget with a layout of its
    own would be measured by that layout, never by `heightForWidth` here."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.inner = QWidget(self)
        self.column = QVBoxLayout(self.inner)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.setSpacing(4)
        self.inner.installEventFilter(self)
        self.reserve = 0
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def add(self, item: QWidget | QLayout) -> None:
        if isinstance(item, QWidget):
            self.column.addWidget(item)
        else:
            self.column.addLayout(item)

    def keep_room(self, height: int) -> None:
        """Reserve at least `height` pixels from now on."""
        self.reserve = max(self.reserve, height)
        self.updateGeometry()

    def _needed(self, width: int) -> int:
        layout = self.column
        if layout.hasHeightForWidth():
            return layout.totalHeightForWidth(width)
        return layout.totalSizeHint().height()

    def hasHeightForWidth(self) -> bool:
        return True  # asked by width, so wrapped lines count as they are shown

    def heightForWidth(self, width: int) -> int:
        self.reserve = max(self.reserve, self._needed(width))
        return self.reserve

    def sizeHint(self) -> QSize:
        width = self.column.totalSizeHint().width()
        return QSize(width, self.heightForWidth(self.width() if self.width() > 0 else width))

    def minimumSizeHint(self) -> QSize:
        return QSize(self.column.totalMinimumSize().width(), self.reserve)

    def _place(self) -> None:
        needed = self._needed(self.width())
        self.inner.setGeometry(0, 0, self.width(), needed)  # the lines at the top
        if needed > self.reserve:  # more lines at once than ever: grow, once
            self.reserve = needed
            self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.inner and event.type() == QEvent.Type.LayoutRequest:
            self._place()
        return False


def usual_room(status: QWidget, pill: QWidget, notice_row: QWidget) -> int:
    """The room the window keeps under its controls: the status row (as tall as its
    pills), one notice and one memory line (like `app.ui.memory_page.MemoryNotice`)."""
    row = max(status.sizeHint().height(), pill.sizeHint().height())
    memory_line = QPushButton("💭 M", status)  # styled as the window styles it
    memory_line.hide()
    memory_line.setFlat(True)
    memory_line.setStyleSheet("padding: 4px 12px; border-radius: 12px; font-weight: 500;")
    memory_height = memory_line.sizeHint().height()
    memory_line.setParent(None)  # gone with this function (never shown)
    layout = status.layout()
    spacing = (layout.spacing() if layout is not None else 0) + 4  # SteadyArea's
    return row + notice_row.sizeHint().height() + memory_height + spacing

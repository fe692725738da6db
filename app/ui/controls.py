"""Small controls of the main window: the mic level meter and the privacy pills."""

from __future__ import annotations

import time

from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

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

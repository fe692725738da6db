"""How the window looks: its style sheets, the status colours and the microphone glyph,
drawn in code so they look the same with every font and theme."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from app.events import Status

STATUS_COLOURS = {
    Status.STARTING: "#f59e0b",
    Status.LOADING: "#f59e0b",
    Status.LISTENING: "#22a06b",
    Status.HEARING: "#1f8ef1",
    Status.TRANSCRIBING: "#1f8ef1",
    Status.THINKING: "#8b5cf6",
    Status.SPEAKING: "#ec4899",
    Status.REPLYING: "#ec4899",
    Status.MUTED: "#9ca3af",
    Status.IDLE: "#22a06b",
    Status.ERROR: "#dc2626",
}

# The main window's style sheet; every widget inside it (bubbles, controls) follows it.
WINDOW_STYLE = """
QMainWindow, #central { background: #f5f3fb; }
QLabel { color: #2d2440; }
#card { background: #ffffff; border: 1px solid #e7e2f3; border-radius: 16px; }
#cardTitle { font-size: 15px; font-weight: 600; color: #3b2e63; }
#cardHint { font-size: 12px; color: #a39bb8; }
#transcript, #transcriptInner { background: transparent; border: none; }
#placeholder { color: #b3abc6; font-size: 14px; }
#userBubble { background: #7c5cff; border-radius: 14px; }
#userBubble[pending="true"] { background: #b3a2ff; }
#userBubble QLabel { color: #ffffff; background: transparent; }
#companionBubble { background: #f4f0fe; border: 1px solid #e6defa; border-radius: 14px; }
#companionBubble QLabel { background: transparent; }
#caption { font-size: 11px; font-weight: 600; color: #9d94b8; }
#userBubble #caption { color: #e6defe; }
QLineEdit { background: #ffffff; border: 1px solid #dcd4f2; border-radius: 19px;
            padding: 8px 14px; font-size: 14px; color: #2d2440; }
QLineEdit:focus { border: 1px solid #8b6cf0; }
QPushButton { border: none; border-radius: 19px; padding: 9px 18px; font-size: 14px;
              font-weight: 600; background: #ece7fb; color: #3b2e63; }
QPushButton:hover { background: #e2dafa; }
QPushButton:disabled { background: #f0eef5; color: #b4afc2; }
#sendButton { background: #7c5cff; color: #ffffff; }
#sendButton:hover { background: #6a48f5; }
#sendButton:disabled { background: #d3c9fc; color: #f6f3ff; }
#stopButton { background: #ffe4e6; color: #b42335; }
#stopButton:hover { background: #ffd3d7; }
#stopButton:disabled { background: #f3f1f6; color: #a19aae; }
#micButton:checked { background: #dcfce7; color: #166534; }
#micButton[unavailable="true"] { background: #f3f1f6; color: #a19aae; }
#statusText { color: #4b4363; font-weight: 600; }
#micNote { color: #b45309; }
#notice { color: #6b6480; }
#notice[error="true"] { color: #c62828; font-weight: 600; }
QScrollBar:vertical { background: transparent; width: 8px; margin: 4px 2px; }
QScrollBar::handle:vertical { background: #dcd5ef; border-radius: 3px; min-height: 30px; }
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: none; }
QScrollBar:horizontal { background: transparent; height: 8px; margin: 2px 4px; }
QScrollBar::handle:horizontal { background: #dcd5ef; border-radius: 3px; min-width: 30px; }
QScrollBar::add-line:horizontal, QScrollBar::sub-line:horizontal { width: 0; }
QScrollBar::add-page:horizontal, QScrollBar::sub-page:horizontal { background: none; }
QSplitter::handle { background: transparent; }
#conversationList { background: transparent; border: none; font-size: 13px; outline: 0; }
#conversationList::item { padding: 6px 8px; border-radius: 8px; color: #3b2e63; }
#conversationList::item:hover { background: #f1edfb; }
#conversationList::item:selected { background: #e6defa; color: #2d2440; font-weight: 600; }
#newConversation { padding: 5px 12px; font-size: 13px; }
"""

# The transcript's own pieces; the window's style sheet still applies around them.
TRANSCRIPT_STYLE = """
#thinkingToggle { border: none; background: transparent; padding: 0; color: #a39bb8;
                  font-size: 12px; font-style: italic; text-align: left; }
#thinkingToggle:hover { color: #7c6fa3; }
#thinkingBody { color: #a39bb8; font-style: italic; font-size: 12px;
                border-left: 2px solid #e0d8f5; padding-left: 6px; }
#toolChip { background: #ebe5fb; color: #5b4a8f; border: 1px solid #ddd3f7;
            border-radius: 9px; padding: 1px 8px; font-size: 11px; }
#captureThumb { border: 1px solid #ddd3f7; border-radius: 6px; background: #faf9fd; }
#captureThumb[unavailable="true"] { background: #fdeef0; color: #a33a4a; border-radius: 9px;
            border: 1px solid #f5cdd3; padding: 1px 8px; font-size: 11px; }
#interruptedMark { color: #b0a8c4; font-size: 12px; }
"""


def repolish(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def mic_icon(state: str) -> QIcon:
    """A microphone glyph drawn in code, so it looks the same with every font."""
    colour = {"on": "#15803d", "off": "#5b5275", "unavailable": "#a19aae"}[state]
    pixmap = QPixmap(40, 40)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(colour), 3.2)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        p.setBrush(QColor(colour))
        capsule = QPainterPath()
        capsule.addRoundedRect(QRectF(14, 4, 12, 20), 6, 6)
        p.drawPath(capsule)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawArc(QRectF(9, 8, 22, 22), 200 * 16, 140 * 16)
        p.drawLine(QPointF(20, 30), QPointF(20, 36))
        if state != "on":
            slash = QPen(QColor("#dc2626" if state == "unavailable" else colour), 3.2)
            slash.setCapStyle(Qt.PenCapStyle.RoundCap)
            p.setPen(slash)
            p.drawLine(QPointF(8, 6), QPointF(32, 34))
    finally:
        p.end()
    return QIcon(pixmap)


__all__ = ["STATUS_COLOURS", "TRANSCRIPT_STYLE", "WINDOW_STYLE", "mic_icon", "repolish"]

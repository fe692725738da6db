"""The conversation as chat bubbles: the user's words, the companion's sentences as
they are spoken, thinking (dimmed), tool use and screenshots."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

MAX_TRANSCRIPT_ROWS = 300
BUBBLE_PADDING_X = 26  # left + right, inside a bubble


def _repolish(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# -- transcript --------------------------------------------------------------------------


@dataclass(slots=True)
class TranscriptEntry:
    """One line of the conversation as shown."""

    speaker: Literal["user", "companion"]
    turn_id: int
    parts: list[tuple[str, bool]] = field(default_factory=list)  # (text, is_thinking)
    final: bool = True
    interrupted: bool = False

    @property
    def text(self) -> str:
        joined = ""
        for part, _thinking in self.parts:
            joined = _join_sentences(joined, part)
        return joined


def _join_sentences(before: str, after: str) -> str:
    # CJK text runs on without spaces between sentences.
    if not before or not after:
        return before + after
    if _is_cjk(before[-1]) or _is_cjk(after[0]):
        return before + after
    return f"{before} {after}"


def _is_cjk(char: str) -> bool:
    return (
        "\u2e80" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef" or "\u3000" <= char <= "\u303f"
    )


@dataclass(slots=True)
class _Row:
    entry: TranscriptEntry
    widget: QWidget
    bubble: QFrame
    body: QLabel


class TranscriptView(QScrollArea):
    """Both sides of the conversation as chat bubbles, updated live."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        inner.setObjectName("transcriptInner")
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(14, 10, 14, 10)
        self._layout.setSpacing(8)
        self._placeholder = QLabel("Say something, or type a message below.")
        self._placeholder.setObjectName("placeholder")
        self._placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout.addWidget(self._placeholder, 1)
        self._layout.addStretch(0)
        self.setWidget(inner)
        self._rows: list[_Row] = []
        self._user: dict[int, _Row] = {}
        self._companion: dict[int, _Row] = {}
        self._follow = True  # keep the newest line in view unless the user scrolled up
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)

    @property
    def entries(self) -> list[TranscriptEntry]:
        """The lines shown, oldest first (read them; change the view through its methods)."""
        return [row.entry for row in self._rows]

    def show_user(self, text: str, *, final: bool, turn_id: int) -> None:
        """Show what the user said; a later text for the same turn replaces it."""
        text = text.strip()
        row = self._user.get(turn_id)
        if row is not None and row.entry.final and not final:
            return  # a late partial never overwrites the final text
        if not text:
            if row is not None and final:  # it came to nothing
                self._remove(row)
            return
        if row is None:
            row = self._add_row(TranscriptEntry("user", turn_id, final=final))
            self._user[turn_id] = row
        row.entry.parts = [(text, False)]
        row.entry.final = final
        row.body.setText(text)
        self._fit(row)
        row.bubble.setProperty("pending", not final)
        _repolish(row.bubble)

    def add_sentence(self, text: str, *, turn_id: int, thinking: bool = False) -> None:
        """Append one reply sentence to the companion's bubble for `turn_id`."""
        text = text.strip()
        if not text:
            return
        row = self._companion.get(turn_id)
        if row is None:
            row = self._add_row(TranscriptEntry("companion", turn_id))
            self._companion[turn_id] = row
        row.entry.parts.append((text, thinking))
        row.body.setText(_companion_html(row.entry))
        self._fit(row)

    def mark_interrupted(self, turn_id: int) -> None:
        row = self._companion.get(turn_id)
        if row is not None and not row.entry.interrupted:
            row.entry.interrupted = True
            row.body.setText(_companion_html(row.entry))
            self._fit(row)

    def _add_row(self, entry: TranscriptEntry) -> _Row:
        self._placeholder.hide()
        user = entry.speaker == "user"
        bubble = QFrame()
        bubble.setObjectName("userBubble" if user else "companionBubble")
        box = QVBoxLayout(bubble)
        box.setContentsMargins(BUBBLE_PADDING_X // 2, 7, BUBBLE_PADDING_X // 2, 9)
        box.setSpacing(2)
        caption = QLabel("You" if user else "Companion")
        caption.setObjectName("caption")
        body = QLabel()
        body.setWordWrap(True)
        body.setTextFormat(Qt.TextFormat.PlainText if user else Qt.TextFormat.RichText)
        body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        box.addWidget(
            caption, 0, Qt.AlignmentFlag.AlignRight if user else Qt.AlignmentFlag.AlignLeft
        )
        box.addWidget(body)
        bubble.setMaximumWidth(self._bubble_width())

        row_widget = QWidget()
        line = QHBoxLayout(row_widget)
        line.setContentsMargins(0, 0, 0, 0)
        if user:
            line.addStretch(1)
        line.addWidget(bubble)
        if not user:
            line.addStretch(1)
        self._layout.insertWidget(self._layout.count() - 1, row_widget)
        row = _Row(entry, row_widget, bubble, body)
        self._rows.append(row)
        while len(self._rows) > MAX_TRANSCRIPT_ROWS:
            self._remove(self._rows[0])
        return row

    def _remove(self, row: _Row) -> None:
        self._rows.remove(row)
        table = self._user if row.entry.speaker == "user" else self._companion
        if table.get(row.entry.turn_id) is row:
            del table[row.entry.turn_id]
        self._layout.removeWidget(row.widget)
        row.widget.deleteLater()
        if not self._rows:
            self._placeholder.show()

    def _bubble_width(self) -> int:
        return max(200, int(self.viewport().width() * 0.8))

    def _fit(self, row: _Row) -> None:
        # A word-wrapped label asks for a narrow width; ask for the text's own width
        # instead, up to the widest a bubble may be, so short lines stay on one line.
        widest = self._bubble_width()
        text = row.entry.text + (" — interrupted" if row.entry.interrupted else "")
        natural = row.body.fontMetrics().horizontalAdvance(text) + 6
        row.bubble.setMaximumWidth(widest)
        row.body.setMinimumWidth(min(natural, widest - BUBBLE_PADDING_X))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        for row in self._rows:
            self._fit(row)

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 24

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)


def _companion_html(entry: TranscriptEntry) -> str:
    shown = ""
    plain = ""
    for text, thinking in entry.parts:
        piece = html.escape(text)
        if thinking:
            piece = f'<span style="color:#a39bb8; font-style:italic;">{piece}</span>'
        joined = _join_sentences(plain, text)
        shown += joined[len(plain) : len(joined) - len(text)] + piece  # the separator, if any
        plain = joined
    if entry.interrupted:
        shown += ' <span style="color:#b0a8c4;">— interrupted</span>'
    return shown

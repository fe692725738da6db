"""The conversation as chat bubbles: the user's words, the companion's sentences as
they are spoken, its thinking (dimmed, collapsed), tool use (small chips) and
screenshots (thumbnails that open full size), live or from a stored conversation.

The bubbles' pieces are in `app.ui.bubbles`, the pictures in `app.ui.pictures`, and
what a stored conversation shows in `app.ui.stored_history`; this module lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import shiboken6
from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.agent.notes import without_notes
from app.avatar.state import EXPRESSIONS
from app.llm.messages import Msg
from app.ui.bubbles import (
    TOOL_LABELS,
    TextSegment,
    ThinkingSection,
    ToolChip,
    TranscriptEntry,
    tool_label,
)
from app.ui.pictures import (
    THUMBNAIL_BOX,
    CaptureThumbnail,
    CaptureViewer,
    decode_image,
    wait_for_image_decoding,
)
from app.ui.stored_history import RowPlan, plan_history
from app.ui.style import TRANSCRIPT_STYLE, repolish

MAX_TRANSCRIPT_ROWS = 300
BUBBLE_PADDING_X = 26  # left + right, inside a bubble
HISTORY_FIRST_ROWS = 40  # a loaded conversation's newest bubbles, shown at once
HISTORY_CHUNK_ROWS = 40  # then older ones, this many per pass of the event loop

_CONTEXT = "TranscriptView"


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


@dataclass(slots=True)
class _Row:
    entry: TranscriptEntry
    widget: QWidget
    bubble: QFrame
    box: QVBoxLayout  # the bubble's pieces, after its caption
    body: QLabel | None = None  # the user's words (user rows)
    segments: list[QWidget] = field(default_factory=list)  # companion rows, in order
    mark: QLabel | None = None  # "— interrupted" when it cannot go after text


class TranscriptView(QScrollArea):
    """Both sides of the conversation as chat bubbles, updated live."""

    viewer_opened = Signal(QDialog)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.companion_name = ""  # the character's name on its bubbles ("" = "Companion")
        # The expression tags taken out of stored replies: the session's, once it is there.
        self.expressions: tuple[str, ...] = EXPRESSIONS
        self.setStyleSheet(TRANSCRIPT_STYLE)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        inner.setObjectName("transcriptInner")
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(14, 10, 14, 10)
        self._layout.setSpacing(8)
        self._placeholder = QLabel(self.tr("Say something, or type a message below."))
        self._placeholder.setObjectName("placeholder")
        self._placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout.addWidget(self._placeholder, 1)
        self._layout.addStretch(0)
        self.setWidget(inner)
        self._rows: list[_Row] = []
        self._user: dict[int, _Row] = {}
        self._companion: dict[int, _Row] = {}
        self._latest_turn: int | None = None
        self._viewers: list[CaptureViewer] = []
        self._older: list[RowPlan] = []  # history bubbles still to build, oldest first
        self._insert_at: int | None = None
        self._bottom_gap: int | None = None
        self._older_timer = QTimer(self)
        self._older_timer.setSingleShot(True)
        self._older_timer.setInterval(0)
        self._older_timer.timeout.connect(self._build_older)
        self._follow = True  # keep the newest line in view unless the user scrolled up
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)

    # -- reading ---------------------------------------------------------------------------

    @property
    def entries(self) -> list[TranscriptEntry]:
        """The lines shown, oldest first (read them; change the view through its methods)."""
        return [row.entry for row in self._rows]

    def bubble_widgets(self, index: int) -> list[QWidget]:
        """The pieces of bubble `index` (as in `entries`), in the order shown."""
        row = self._rows[index]
        out: list[QWidget] = []
        for i in range(row.box.count()):
            item = row.box.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None and widget.objectName() != "caption":
                out.append(widget)
        return out

    @property
    def viewers(self) -> list[CaptureViewer]:
        """The full-size picture windows open now."""
        return [v for v in self._viewers if shiboken6.isValid(v)]

    # -- live updates ------------------------------------------------------------------------

    def show_user(self, text: str, *, final: bool, turn_id: int) -> None:
        """Show what the user said; a later text for the same turn replaces it."""
        text = text.strip()
        row = self._user.get(turn_id)
        if row is not None and row.entry.final and not final:
            return  # a late partial never overwrites the final text
        if not text:
            if row is not None and final and not row.entry.images:  # it came to nothing
                self._remove(row)
            return
        self._latest_turn = turn_id
        if row is None:
            row = self._user_row(turn_id, final=final)
        row.entry.parts = [(text, False)]
        row.entry.final = final
        assert row.body is not None
        # Words still being heard trail off: "what's the weather li…".
        trailing = final or text.endswith(("…", "..."))
        row.body.setText(text if trailing else f"{text}…")
        row.body.show()
        self._fit(row)
        row.bubble.setProperty("pending", not final)
        repolish(row.bubble)

    def add_sentence(self, text: str, *, turn_id: int, thinking: bool = False) -> None:
        """Append one reply sentence to the companion's bubble for `turn_id`; thinking
        goes in the bubble's collapsed thinking section. A note the app wrote for the
        model (which a model may repeat) is never shown as the companion's words."""
        text = text.strip() if thinking else without_notes(text).strip()
        if not text:
            return
        row = self._companion_row(turn_id)
        row.entry.parts.append((text, thinking))
        last = row.segments[-1] if row.segments else None
        if thinking:
            if isinstance(last, ThinkingSection):
                last.add(text)
            else:
                section = ThinkingSection()
                section.add(text)
                section.set_live(not row.entry.interrupted)
                self._append_segment(row, section)
        else:
            if isinstance(last, TextSegment):
                last.sentences.append(text)
            else:
                last = TextSegment()
                last.sentences.append(text)
                self._append_segment(row, last)
            self._render_text(row)
        self._fit(row)

    def add_tool(self, name: str, *, turn_id: int) -> None:
        """Show that the companion used tool `name` during turn `turn_id` (a chip)."""
        row = self._companion_row(turn_id)
        row.entry.tools.append(name)
        self._append_segment(row, ToolChip(name))

    def add_capture(self, path: Path, *, turn_id: int | None = None) -> None:
        """Show a screenshot as a thumbnail in the companion's bubble for `turn_id` (the
        newest turn when None); a click opens it full size."""
        turn = turn_id if turn_id is not None else (self._latest_turn or 0)
        row = self._companion_row(turn)
        self._add_picture(row, (Path(path),), _tr("screenshot unavailable"))

    def mark_interrupted(self, turn_id: int) -> None:
        row = self._companion.get(turn_id)
        if row is not None and not row.entry.interrupted:
            row.entry.interrupted = True
            self._finish_thinking(row)
            self._render_text(row)
            self._fit(row)

    def withdraw_reply(self, turn_id: int) -> None:
        """The reply to `turn_id` is taken back (the user went on speaking, and is
        answered anew under the same number): its bubble goes."""
        row = self._companion.get(turn_id)
        if row is not None:
            self._remove(row)

    def finish_turn(self, turn_id: int) -> None:
        """The reply for `turn_id` is complete: its thinking stops saying "Thinking…"."""
        row = self._companion.get(turn_id)
        if row is not None:
            self._finish_thinking(row)

    def clear(self) -> None:
        """Empty the view (the placeholder shows again)."""
        self._older = []
        self._older_timer.stop()
        self._bottom_gap = None
        for row in list(self._rows):
            self._remove(row)
        self._latest_turn = None

    def load_history(self, messages: Sequence[Msg]) -> None:
        """Show a stored conversation in place of what is shown: the user's words and
        pictures, the companion's answers, its thinking (collapsed), its tool calls as
        chips and the pictures tools returned; only the newest MAX_TRANSCRIPT_ROWS
        bubbles. The system prompt and tool-result text are not shown.

        The newest HISTORY_FIRST_ROWS bubbles appear at once; older ones are added above
        them HISTORY_CHUNK_ROWS at a time on later passes of the event loop, so a long
        conversation never freezes the window (`loading` says when it is done)."""
        self.clear()
        plans = plan_history(messages, self.expressions)[-MAX_TRANSCRIPT_ROWS:]
        split = max(0, len(plans) - HISTORY_FIRST_ROWS)
        self._older = plans[:split]
        self._follow = True
        self._build_rows(plans[split:], at=None)
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
        if self._older:
            self._older_timer.start()

    @property
    def loading(self) -> bool:
        """Older bubbles of a loaded conversation are still being added."""
        return bool(self._older)

    def _build_older(self) -> None:
        room = MAX_TRANSCRIPT_ROWS - len(self._rows)  # live bubbles may have come meanwhile
        older = self._older[-min(room, HISTORY_CHUNK_ROWS) :] if room > 0 else []
        self._older = self._older[: len(self._older) - len(older)] if older else []
        bar = self.verticalScrollBar()
        self._bottom_gap = bar.maximum() - bar.value()  # what the user sees stays put
        self._build_rows(older, at=0)
        if self._older:
            self._older_timer.start()

    def _build_rows(self, plans: Sequence[RowPlan], *, at: int | None) -> None:
        """Build bubbles for `plans`, appended (`at` None) or from position `at` on."""
        latest = self._latest_turn
        self._insert_at = at
        self.setUpdatesEnabled(False)
        try:
            for plan in plans:
                self._build(plan)
        finally:
            self._insert_at = None
            self.setUpdatesEnabled(True)
        if at is not None:
            self._latest_turn = latest  # older bubbles are not the current turn

    # -- building ------------------------------------------------------------------------

    def _build(self, plan: RowPlan) -> None:
        if plan.speaker == "user":
            row = self._user_row(plan.turn_id, final=True)
            for kind, payload in plan.items:
                if kind == "text" and isinstance(payload, str):
                    row.entry.parts.append((payload, False))
                elif kind == "image" and isinstance(payload, tuple):
                    self._add_picture(row, payload, _tr("image unavailable"))
            assert row.body is not None
            row.body.setText(row.entry.text)
            row.body.setVisible(bool(row.entry.text))
            self._fit(row)
            return
        for kind, payload in plan.items:
            if kind == "text" and isinstance(payload, str):
                self.add_sentence(payload, turn_id=plan.turn_id)
            elif kind == "thinking" and isinstance(payload, str):
                self.add_sentence(payload, turn_id=plan.turn_id, thinking=True)
            elif kind == "tool" and isinstance(payload, str):
                self.add_tool(payload, turn_id=plan.turn_id)
            elif kind == "image" and isinstance(payload, tuple):
                row = self._companion_row(plan.turn_id)
                self._add_picture(row, payload, _tr("screenshot unavailable"))
        if plan.interrupted:
            self.mark_interrupted(plan.turn_id)
        self.finish_turn(plan.turn_id)

    def _user_row(self, turn_id: int, *, final: bool) -> _Row:
        row = self._user.get(turn_id)
        if row is None:
            row = self._add_row(TranscriptEntry("user", turn_id, final=final))
            self._user[turn_id] = row
        return row

    def _companion_row(self, turn_id: int) -> _Row:
        self._latest_turn = turn_id
        row = self._companion.get(turn_id)
        if row is None:
            row = self._add_row(TranscriptEntry("companion", turn_id))
            self._companion[turn_id] = row
        return row

    def _append_segment(self, row: _Row, widget: QWidget) -> None:
        if not isinstance(widget, ThinkingSection):
            self._finish_thinking(row)
        alignment = (
            Qt.AlignmentFlag.AlignLeft
            if isinstance(widget, ToolChip | CaptureThumbnail)
            else Qt.AlignmentFlag(0)
        )
        if row.mark is not None:  # the interrupted mark stays last
            row.box.insertWidget(row.box.indexOf(row.mark), widget, 0, alignment)
        else:
            row.box.addWidget(widget, 0, alignment)
        row.segments.append(widget)
        if row.entry.interrupted:
            self._render_text(row)

    def _add_picture(self, row: _Row, paths: tuple[Path, ...], unavailable: str) -> None:
        thumb = CaptureThumbnail(paths, unavailable_text=unavailable)
        thumb.clicked.connect(lambda: self.open_viewer(thumb.paths))
        if paths:
            row.entry.images.append(paths[0])
        if row.entry.speaker == "user":
            row.box.addWidget(thumb, 0, Qt.AlignmentFlag.AlignRight)
        else:
            self._append_segment(row, thumb)

    def open_viewer(self, paths: Sequence[Path]) -> CaptureViewer:
        """Open a picture full size in its own window (non-modal)."""
        viewer = CaptureViewer(paths, self.window())
        self._viewers = [*self.viewers, viewer]
        viewer.destroyed.connect(self._forget_viewers)
        viewer.show()
        self.viewer_opened.emit(viewer)
        return viewer

    def _forget_viewers(self) -> None:
        self._viewers = [v for v in self._viewers if shiboken6.isValid(v)]

    def _finish_thinking(self, row: _Row) -> None:
        for segment in row.segments:
            if isinstance(segment, ThinkingSection):
                segment.set_live(False)

    def _render_text(self, row: _Row) -> None:
        """Re-draw the answer text; the "interrupted" mark follows the last piece."""
        last = row.segments[-1] if row.segments else None
        for segment in row.segments:
            if isinstance(segment, TextSegment):
                segment.show_text(interrupted=row.entry.interrupted and segment is last)
        needs_mark = row.entry.interrupted and not isinstance(last, TextSegment)
        if needs_mark and row.mark is None:
            row.mark = QLabel(_tr("— interrupted"))
            row.mark.setObjectName("interruptedMark")
            row.box.addWidget(row.mark)
        elif not needs_mark and row.mark is not None:
            row.box.removeWidget(row.mark)
            row.mark.deleteLater()
            row.mark = None

    def _add_row(self, entry: TranscriptEntry) -> _Row:
        self._placeholder.hide()
        user = entry.speaker == "user"
        bubble = QFrame()
        bubble.setObjectName("userBubble" if user else "companionBubble")
        box = QVBoxLayout(bubble)
        box.setContentsMargins(BUBBLE_PADDING_X // 2, 7, BUBBLE_PADDING_X // 2, 9)
        box.setSpacing(4)
        caption = QLabel(self.tr("You") if user else (self.companion_name or self.tr("Companion")))
        caption.setObjectName("caption")
        box.addWidget(
            caption, 0, Qt.AlignmentFlag.AlignRight if user else Qt.AlignmentFlag.AlignLeft
        )
        body: QLabel | None = None
        if user:
            body = QLabel()
            body.setObjectName("userText")
            body.setWordWrap(True)
            body.setTextFormat(Qt.TextFormat.PlainText)
            body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
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
        row = _Row(entry, row_widget, bubble, box, body)
        if self._insert_at is None:
            self._layout.insertWidget(self._layout.count() - 1, row_widget)
            self._rows.append(row)
        else:  # older history goes above what is shown; the placeholder stays first
            self._layout.insertWidget(self._insert_at + 1, row_widget)
            self._rows.insert(self._insert_at, row)
            self._insert_at += 1
        while len(self._rows) > MAX_TRANSCRIPT_ROWS:
            self._remove(self._rows[0])
        return row

    def _remove(self, row: _Row) -> None:
        self._rows.remove(row)
        table = self._user if row.entry.speaker == "user" else self._companion
        if table.get(row.entry.turn_id) is row:
            del table[row.entry.turn_id]
        self._layout.removeWidget(row.widget)
        row.widget.hide()
        row.widget.deleteLater()
        if not self._rows:
            self._placeholder.show()

    # -- sizing and scrolling -----------------------------------------------------------------

    def _bubble_width(self) -> int:
        return max(200, int(self.viewport().width() * 0.8))

    def _fit(self, row: _Row) -> None:
        # A word-wrapped label asks for a narrow width; ask for the text's own width
        # instead, up to the widest a bubble may be, so short lines stay on one line.
        widest = self._bubble_width()
        row.bubble.setMaximumWidth(widest)
        labels: list[tuple[QLabel, str]] = []
        if row.body is not None:
            labels.append((row.body, row.entry.text))
        for segment in row.segments:
            if isinstance(segment, TextSegment):
                extra = " " + _tr("— interrupted") if row.entry.interrupted else ""
                labels.append((segment, segment.plain + extra))
            elif isinstance(segment, ThinkingSection):
                labels.append((segment.body, segment.plain))
        for label, text in labels:
            natural = label.fontMetrics().horizontalAdvance(text) + 6
            label.setMinimumWidth(min(natural, widest - BUBBLE_PADDING_X))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        for row in self._rows:
            self._fit(row)

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 24

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
        elif self._bottom_gap is not None:  # older bubbles went in above the view
            self.verticalScrollBar().setValue(maximum - self._bottom_gap)
        if not self._older:
            self._bottom_gap = None  # the loading is over: live lines scroll as usual


__all__ = [
    "HISTORY_CHUNK_ROWS",
    "HISTORY_FIRST_ROWS",
    "MAX_TRANSCRIPT_ROWS",
    "THUMBNAIL_BOX",
    "TOOL_LABELS",
    "CaptureThumbnail",
    "CaptureViewer",
    "ThinkingSection",
    "ToolChip",
    "TranscriptEntry",
    "TranscriptView",
    "decode_image",
    "tool_label",
    "wait_for_image_decoding",
]

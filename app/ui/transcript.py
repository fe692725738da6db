"""The conversation as chat bubbles: the user's words, the companion's sentences as
they are spoken, its thinking (dimmed, collapsed), tool use (small chips) and
screenshots (thumbnails that open full size).

Images are decoded off the UI thread (`QImageReader` with a scaled size, on Qt's
global thread pool); the UI thread only turns the finished `QImage` into a pixmap.
"""

from __future__ import annotations

import html
import itertools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import shiboken6
from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QObject,
    QSize,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QGuiApplication, QImage, QImageReader, QMouseEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.agent.speech_text import INLINE_TAG, tidy_spaces
from app.avatar.state import EXPRESSIONS
from app.llm.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

log = logging.getLogger(__name__)

MAX_TRANSCRIPT_ROWS = 300
BUBBLE_PADDING_X = 26  # left + right, inside a bubble
THUMBNAIL_BOX = QSize(240, 150)  # a thumbnail fits in this box, keeping its shape
VIEWER_SCREEN_SHARE = 0.9  # the viewer opens at most this share of the screen
HISTORY_FIRST_ROWS = 40  # a loaded conversation's newest bubbles, shown at once
HISTORY_CHUNK_ROWS = 40  # then older ones, this many per pass of the event loop

_CONTEXT = "TranscriptView"

# Friendly words for the tools the companion has (lupdate finds them through the NOOP).
TOOL_LABELS: dict[str, str] = {
    "take_screenshot": str(QT_TRANSLATE_NOOP("TranscriptView", "looked at your screen")),
    "get_time": str(QT_TRANSLATE_NOOP("TranscriptView", "checked the time")),
    "read_clipboard": str(QT_TRANSLATE_NOOP("TranscriptView", "read the clipboard")),
}

ItemKind = Literal["text", "thinking", "tool", "image"]


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


def tool_label(name: str) -> str:
    """What a tool chip says: friendly words for a known tool, its name otherwise."""
    known = TOOL_LABELS.get(name)
    return f"🔧 {_tr(known) if known else name}"


def _repolish(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# The view's own looks; the window's style sheet (bubbles, colours) still applies.
STYLE = """
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


# -- the transcript's model ----------------------------------------------------------------


@dataclass(slots=True)
class TranscriptEntry:
    """One bubble of the conversation as shown."""

    speaker: Literal["user", "companion"]
    turn_id: int
    parts: list[tuple[str, bool]] = field(default_factory=list)  # (text, is_thinking)
    final: bool = True
    interrupted: bool = False
    tools: list[str] = field(default_factory=list)  # tool names, in the order called
    images: list[Path] = field(default_factory=list)  # pictures shown as thumbnails

    @property
    def text(self) -> str:
        joined = ""
        for part, _thinking in self.parts:
            joined = _join_sentences(joined, part)
        return joined

    @property
    def answer(self) -> str:
        """The text without the thinking."""
        joined = ""
        for part, thinking in self.parts:
            if not thinking:
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


# -- decoding images off the UI thread ---------------------------------------------------


def decode_image(paths: Sequence[Path], box: QSize | None) -> tuple[QImage, QSize, str]:
    """The first readable image of `paths`, scaled to fit `box` (full size when None) while
    it is decoded; with the image's own size. A null image and the reason when none reads.
    Safe on any thread (QImage, not QPixmap)."""
    reason = "no file"
    for path in paths:
        reader = QImageReader(str(path))
        reader.setAutoTransform(True)
        size = reader.size()
        if not size.isValid() or size.isEmpty():
            reason = reader.errorString() or "not an image"
            continue
        if box is not None and (size.width() > box.width() or size.height() > box.height()):
            reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
        image = reader.read()
        if image.isNull():
            reason = reader.errorString() or "the image could not be decoded"
            continue
        return image, size, ""
    return QImage(), QSize(), reason


class _ImageLoader(QObject):
    """Runs `decode_image` on Qt's thread pool and hands the result to a callback on the
    UI thread, unless the widget that asked is gone by then."""

    _decoded = Signal(int, QImage, QSize, str)

    def __init__(self) -> None:
        super().__init__()
        self._jobs: dict[int, tuple[QObject, Callable[[QImage, QSize, str], None]]] = {}
        self._ids = itertools.count(1)
        self._decoded.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def load(
        self,
        paths: Sequence[Path],
        box: QSize | None,
        owner: QObject,
        done: Callable[[QImage, QSize, str], None],
    ) -> None:
        job = next(self._ids)
        self._jobs[job] = (owner, done)
        paths = tuple(paths)
        box = QSize(box) if box is not None else None

        def work() -> None:
            try:
                image, size, reason = decode_image(paths, box)
            except Exception as exc:  # never let a bad file take a pool thread down
                image, size, reason = QImage(), QSize(), str(exc) or type(exc).__name__
            self._decoded.emit(job, image, size, reason)

        QThreadPool.globalInstance().start(work)

    @Slot(int, QImage, QSize, str)
    def _deliver(self, job: int, image: QImage, size: QSize, reason: str) -> None:
        owner, done = self._jobs.pop(job, (None, None))
        if owner is None or done is None or not shiboken6.isValid(owner):
            return
        try:
            done(image, size, reason)
        except RuntimeError:  # the widget went away meanwhile
            log.debug("an image arrived for a widget that is gone", exc_info=True)

    @property
    def pending(self) -> int:
        return len(self._jobs)


_loader: _ImageLoader | None = None


def image_loader() -> _ImageLoader:
    """The one loader, made on first use (on the UI thread, where it must live)."""
    global _loader
    if _loader is None or not shiboken6.isValid(_loader):
        _loader = _ImageLoader()
    return _loader


def wait_for_image_decoding(timeout_ms: int = 2000) -> bool:
    """Wait for pictures being decoded (call before quitting, so no pool thread is still
    in Python code while the interpreter shuts down); False if some were still busy."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)


# -- the pieces of a bubble ------------------------------------------------------------------


class _TextSegment(QLabel):
    """Consecutive answer sentences of one bubble."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("answerText")
        self.sentences: list[str] = []
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)

    @property
    def plain(self) -> str:
        joined = ""
        for sentence in self.sentences:
            joined = _join_sentences(joined, sentence)
        return joined

    def show_text(self, *, interrupted: bool) -> None:
        shown = html.escape(self.plain).replace("\n", "<br>")
        if interrupted:
            mark = html.escape(_tr("— interrupted"))
            shown += f' <span style="color:#b0a8c4;">{mark}</span>'
        self.setText(shown)


class ThinkingSection(QWidget):
    """The companion's thinking: a dimmed section, collapsed until the user opens it.
    Its header says "Thinking…" while the thinking streams in and no answer came yet."""

    toggled = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("thinkingSection")
        self.sentences: list[str] = []
        self._live = True
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 2)
        box.setSpacing(2)
        self.toggle_button = QToolButton()
        self.toggle_button.setObjectName("thinkingToggle")
        self.toggle_button.setCheckable(True)
        self.toggle_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toggle_button.toggled.connect(self._on_toggled)
        self.body = QLabel()
        self.body.setObjectName("thinkingBody")
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.body.setVisible(False)
        box.addWidget(self.toggle_button, 0, Qt.AlignmentFlag.AlignLeft)
        box.addWidget(self.body)
        self._update_header()

    @property
    def expanded(self) -> bool:
        return self.toggle_button.isChecked()

    @property
    def live(self) -> bool:
        return self._live

    @property
    def plain(self) -> str:
        joined = ""
        for sentence in self.sentences:
            joined = _join_sentences(joined, sentence)
        return joined

    def add(self, text: str) -> None:
        self.sentences.append(text)
        self.body.setText(self.plain)

    def set_live(self, live: bool) -> None:
        if live != self._live:
            self._live = live
            self._update_header()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle_button.setChecked(expanded)

    def _on_toggled(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self._update_header()
        self.toggled.emit(expanded)

    def _update_header(self) -> None:
        words = _tr("Thinking…") if self._live else _tr("Thought for a moment")
        self.toggle_button.setText(f"{words} {'▾' if self.expanded else '▸'}")
        self.toggle_button.setToolTip(
            _tr("Hide the thinking") if self.expanded else _tr("Show the thinking")
        )


class ToolChip(QLabel):
    """A small chip: the companion used a tool."""

    def __init__(self, name: str) -> None:
        super().__init__(tool_label(name))
        self.setObjectName("toolChip")
        self.name = name
        self.setToolTip(name)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)


class CaptureThumbnail(QLabel):
    """A picture as a thumbnail (decoded off the UI thread); a click opens it full size.
    A file that is missing or does not decode becomes a small "unavailable" chip."""

    clicked = Signal()

    def __init__(self, paths: Sequence[Path], *, unavailable_text: str) -> None:
        super().__init__()
        self.setObjectName("captureThumb")
        self.paths = tuple(paths)
        self.state: Literal["loading", "ready", "unavailable"] = "loading"
        self.full_size = QSize()
        self._unavailable_text = unavailable_text
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setFixedSize(THUMBNAIL_BOX.width() // 2, THUMBNAIL_BOX.height() // 2)
        self.setText("…")
        self.setToolTip(str(self.paths[0]) if self.paths else "")
        if not self.paths:
            self._show_unavailable("no file")
        else:
            image_loader().load(self.paths, THUMBNAIL_BOX, self, self._on_decoded)

    @property
    def path(self) -> Path | None:
        return self.paths[0] if self.paths else None

    def _on_decoded(self, image: QImage, size: QSize, reason: str) -> None:
        if image.isNull():
            self._show_unavailable(reason)
            return
        self.state = "ready"
        self.full_size = size
        pixmap = QPixmap.fromImage(image)
        self.setText("")
        self.setFixedSize(pixmap.size() + QSize(2, 2))
        self.setPixmap(pixmap)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(
            _tr("Click to see it full size ({w}×{h})").format(w=size.width(), h=size.height())
        )

    def _show_unavailable(self, reason: str) -> None:
        log.info("a picture could not be shown (%s): %s", self.path, reason)
        self.state = "unavailable"
        self.setMinimumSize(0, 0)
        self.setMaximumSize(16_777_215, 16_777_215)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setText(f"🖼 {self._unavailable_text}")
        self.setToolTip(reason)
        self.setProperty("unavailable", True)
        _repolish(self)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.state == "ready":
            self.clicked.emit()
            event.accept()
            return
        super().mouseReleaseEvent(event)


class CaptureViewer(QDialog):
    """A picture at full size in a scrollable, non-modal window that fits the screen."""

    def __init__(self, paths: Sequence[Path], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("captureViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setModal(False)
        self.paths = tuple(paths)
        name = self.paths[0].name if self.paths else ""
        self.setWindowTitle(self.tr("Screenshot — {name}").format(name=name))
        self.image_label = QLabel(self.tr("Loading…"))
        self.image_label.setObjectName("viewerImage")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroller = QScrollArea()
        self.scroller.setWidget(self.image_label)
        self.scroller.setWidgetResizable(False)
        self.scroller.setAlignment(Qt.AlignmentFlag.AlignCenter)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.scroller)
        self.image_label.adjustSize()
        self.resize(self._fitting(QSize(480, 320)))
        image_loader().load(self.paths, None, self, self._on_decoded)

    @property
    def loaded(self) -> bool:
        pixmap = self.image_label.pixmap()
        return not pixmap.isNull()

    def _fitting(self, wanted: QSize) -> QSize:
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return wanted
        area = screen.availableGeometry().size()
        return QSize(
            min(wanted.width(), int(area.width() * VIEWER_SCREEN_SHARE)),
            min(wanted.height(), int(area.height() * VIEWER_SCREEN_SHARE)),
        )

    def _on_decoded(self, image: QImage, _size: QSize, reason: str) -> None:
        if image.isNull():
            self.image_label.setText(
                self.tr("This screenshot is unavailable: {reason}").format(reason=reason)
            )
            self.image_label.adjustSize()
            return
        pixmap = QPixmap.fromImage(image)
        self.image_label.setPixmap(pixmap)
        self.image_label.resize(pixmap.size())
        frame = 2 * self.scroller.frameWidth() + 4
        self.resize(self._fitting(pixmap.size() + QSize(frame, frame)))


# -- the view ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Row:
    entry: TranscriptEntry
    widget: QWidget
    bubble: QFrame
    box: QVBoxLayout  # the bubble's pieces, after its caption
    body: QLabel | None = None  # the user's words (user rows)
    segments: list[QWidget] = field(default_factory=list)  # companion rows, in order
    mark: QLabel | None = None  # "— interrupted" when it cannot go after text


@dataclass(slots=True)
class _RowPlan:
    """A bubble to build from stored history."""

    speaker: Literal["user", "companion"]
    turn_id: int
    items: list[tuple[ItemKind, str | tuple[Path, ...]]] = field(default_factory=list)
    interrupted: bool = False


class TranscriptView(QScrollArea):
    """Both sides of the conversation as chat bubbles, updated live."""

    viewer_opened = Signal(QDialog)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.companion_name = ""  # the character's name on its bubbles ("" = "Companion")
        self.setStyleSheet(STYLE)
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
        self._older: list[_RowPlan] = []  # history bubbles still to build, oldest first
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
        row.body.setText(text)
        row.body.show()
        self._fit(row)
        row.bubble.setProperty("pending", not final)
        _repolish(row.bubble)

    def add_sentence(self, text: str, *, turn_id: int, thinking: bool = False) -> None:
        """Append one reply sentence to the companion's bubble for `turn_id`; thinking
        goes in the bubble's collapsed thinking section."""
        text = text.strip()
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
            if isinstance(last, _TextSegment):
                last.sentences.append(text)
            else:
                last = _TextSegment()
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
        plans = _plan_history(messages)[-MAX_TRANSCRIPT_ROWS:]
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

    def _build_rows(self, plans: Sequence[_RowPlan], *, at: int | None) -> None:
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

    def _build(self, plan: _RowPlan) -> None:
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
            if isinstance(segment, _TextSegment):
                segment.show_text(interrupted=row.entry.interrupted and segment is last)
        needs_mark = row.entry.interrupted and not isinstance(last, _TextSegment)
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
            if isinstance(segment, _TextSegment):
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


# -- stored history to bubbles ---------------------------------------------------------------

_KNOWN_EXPRESSIONS = {name.lower() for name in EXPRESSIONS}
_BRACKET_TAG = re.compile(
    r"\[\s*([A-Za-z][\w-]*)\s*(?::\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*)?\](?!\()"
)
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)


def _shown_text(text: str) -> str:
    """Stored reply text as the transcript showed it live: expression tags gone."""

    def drop_known(match: re.Match[str]) -> str:
        return " " if match[1].lower() in _KNOWN_EXPRESSIONS else match[0]

    return tidy_spaces(INLINE_TAG.sub(" ", _BRACKET_TAG.sub(drop_known, text))).strip()


def _split_think(text: str) -> list[tuple[ItemKind, str]]:
    """Text with inline `<think>` … `</think>` as thinking and answer pieces, in order."""
    out: list[tuple[ItemKind, str]] = []
    at = 0
    for match in _THINK.finditer(text):
        out.append(("text", text[at : match.start()]))
        out.append(("thinking", match[1]))
        at = match.end()
    out.append(("text", text[at:]))
    cleaned: list[tuple[ItemKind, str]] = []
    for kind, piece in out:
        piece = piece.strip() if kind == "thinking" else _shown_text(piece)
        if piece:
            cleaned.append((kind, piece))
    return cleaned


def _picture_paths(image: ImageBlock) -> tuple[Path, ...]:
    """Where a stored picture can be read: the user's original, else the model's copy."""
    paths = [image.original.path]
    if image.model.path != image.original.path:
        paths.append(image.model.path)
    return tuple(paths)


def _plan_history(messages: Sequence[Msg]) -> list[_RowPlan]:
    """The bubbles a stored conversation makes: one for each user message, one for the
    companion's whole reply to it (its tool round trips included)."""
    plans: list[_RowPlan] = []
    turn = 0
    reply: _RowPlan | None = None
    for msg in messages:
        if msg.role == Role.SYSTEM:
            continue
        if msg.role == Role.USER:
            turn += 1
            reply = None
            plan = _RowPlan("user", -turn)
            for block in msg.blocks:
                if isinstance(block, TextBlock) and block.text.strip():
                    plan.items.append(("text", block.text.strip()))
                elif isinstance(block, ImageBlock):
                    plan.items.append(("image", _picture_paths(block)))
            if plan.items:
                plans.append(plan)
            continue
        if reply is None:
            if turn == 0:
                turn = 1
            reply = _RowPlan("companion", -turn)
            plans.append(reply)
        for block in msg.blocks:
            if isinstance(block, TextBlock):
                reply.items.extend(_split_think(block.text))
            elif isinstance(block, ThinkingBlock) and not block.redacted and block.text.strip():
                reply.items.append(("thinking", block.text.strip()))
            elif isinstance(block, ToolUseBlock):
                reply.items.append(("tool", block.name))
            elif isinstance(block, ImageBlock):
                reply.items.append(("image", _picture_paths(block)))
            elif isinstance(block, ToolResultBlock):
                reply.items.extend(("image", _picture_paths(image)) for image in block.images)
        if msg.role == Role.ASSISTANT and msg.metadata.get("interrupted"):
            reply.interrupted = True
    return [plan for plan in plans if plan.items or plan.interrupted]


__all__ = [
    "MAX_TRANSCRIPT_ROWS",
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

"""The pieces of a chat bubble: the bubble's text as a model (`TranscriptEntry`), the
companion's answer sentences, its thinking (dimmed, collapsed) and tool chips."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

_CONTEXT = "TranscriptView"

# Friendly words for the tools the companion has (lupdate finds them through the NOOP).
TOOL_LABELS: dict[str, str] = {
    "take_screenshot": str(QT_TRANSLATE_NOOP("TranscriptView", "looked at your screen")),
    "get_time": str(QT_TRANSLATE_NOOP("TranscriptView", "checked the time")),
    "read_clipboard": str(QT_TRANSLATE_NOOP("TranscriptView", "read the clipboard")),
}


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


def tool_label(name: str) -> str:
    """What a tool chip says: friendly words for a known tool, its name otherwise."""
    known = TOOL_LABELS.get(name)
    return f"🔧 {_tr(known) if known else name}"


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
        return _joined(part for part, _thinking in self.parts)

    @property
    def answer(self) -> str:
        """The text without the thinking."""
        return _joined(part for part, thinking in self.parts if not thinking)


def _joined(sentences: Iterable[str]) -> str:
    joined = ""
    for sentence in sentences:
        joined = _join_sentences(joined, sentence)
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


# -- the pieces of a bubble ------------------------------------------------------------------


class TextSegment(QLabel):
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
        return _joined(self.sentences)

    def show_text(self, *, interrupted: bool) -> None:
        shown = html.escape(self.plain).replace("\n", "<br>")
        if interrupted:
            mark = html.escape(_tr("— interrupted"))
            shown += f' <span style="color:#b0a8c4; font-size:11px;">{mark}</span>'
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
        return _joined(self.sentences)

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


__all__ = [
    "TOOL_LABELS",
    "TextSegment",
    "ThinkingSection",
    "ToolChip",
    "TranscriptEntry",
    "tool_label",
]

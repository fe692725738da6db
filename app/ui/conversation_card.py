"""The main window's conversation card: its title, the hint that Esc stops a reply, the
💭 Memory button (shown with a session that has a memory) and the transcript."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from app.ui.transcript import TranscriptView


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)  # the window's own texts


class ConversationCard(QFrame):
    def __init__(self, open_memory: Callable[[], object]) -> None:
        super().__init__()
        self.setObjectName("card")
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 10, 4, 4)
        box.setSpacing(4)
        header = QHBoxLayout()
        header.setContentsMargins(14, 0, 14, 0)
        heading = QLabel(_tr("Conversation"))
        heading.setObjectName("cardTitle")
        hint = QLabel(_tr("Esc stops a reply"))
        hint.setObjectName("cardHint")
        header.addWidget(heading)
        header.addStretch(1)
        header.addWidget(hint)
        self.memory_button = QPushButton(_tr("💭 Memory"))
        self.memory_button.setObjectName("memoryButton")
        self.memory_button.setToolTip(_tr("What the companion remembers about you"))
        self.memory_button.clicked.connect(open_memory)
        self.memory_button.hide()
        header.addWidget(self.memory_button)
        box.addLayout(header)
        self.transcript = TranscriptView()
        box.addWidget(self.transcript, 1)

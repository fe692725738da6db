"""The Memory page: what the companion remembers about the user, to read, search, edit,
delete, export, import or erase; and the small "💭 Remembered: …" notice in the window
that takes a new memory back when clicked.

Both only present: every change goes through the session's memory (`MemoryPort`), and
the list is read again after each change (the session's `MemoryChanged` events), so
what the page shows is what is stored.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.events import MemoryChanged, SessionEvent
from app.memory.person import to_the_user
from app.ui.session_port import MemoryPort, SessionPort
from app.ui.status_line import describe_error

if TYPE_CHECKING:
    from app.ui.main_window import MainWindow

log = logging.getLogger(__name__)

ID_ROLE = Qt.ItemDataRole.UserRole
NOTICE_SHOWN_MS = 15_000  # long enough to read it and click it
ERROR_STYLE = "color: #c62828;"
# The page looks like the window it opens from: a light card with roomy rows.
PAGE_STYLE = """
#memoryPage { background: #f5f3fb; }
#memoryList { background: #ffffff; border: 1px solid #e7e2f3; border-radius: 12px;
              padding: 4px; font-size: 14px; color: #2d2440; }
#memoryList::item { padding: 8px 10px; border-bottom: 1px solid #f0ecf8; }
#memoryList::item:selected { background: #ece7fb; color: #2d2440; border-radius: 8px; }
#memoryCount { color: #8a83a0; }
"""


class _Bridge(QObject):
    received = Signal(object)


def shown(note: str) -> str:
    """A stored note as the page lists it: said to the user ("Your cat is Nori"); what
    they type over it is taken back to the stored person by the memory."""
    text = to_the_user(note)
    return text[:1].upper() + text[1:]


def _day(stamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(stamp))


class MemoryPage(QDialog):
    """The list of memories of the session's character, newest first."""

    def __init__(self, session: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryPage")
        self.setWindowTitle(self.tr("Memory"))
        self.setStyleSheet(PAGE_STYLE)
        self.resize(600, 560)
        memory = session.memory
        if memory is None:
            raise ValueError("this session keeps no long-term memory")
        self.memory: MemoryPort = memory
        self._filling = False
        self._shown_texts: dict[int, str] = {}
        box = QVBoxLayout(self)
        title = QLabel(
            self.tr("What {0} remembers about you").format(memory.character or "Companion")
        )
        title.setObjectName("cardTitle")
        box.addWidget(title)
        about = QLabel(
            self.tr(
                "Kept on this computer, in the data folder; only the chat model you chose "
                "reads it. In a conversation, say “remember that …”, “forget …” or “what "
                "do you remember about me?”. Double-click a memory to change it."
            )
        )
        about.setWordWrap(True)
        box.addWidget(about)
        self.off_label = QLabel(
            self.tr(
                "Memory is off: nothing new is remembered or recalled. Turn it on in "
                "Settings → Privacy."
            )
        )
        self.off_label.setObjectName("memoryOff")
        self.off_label.setWordWrap(True)
        self.off_label.setStyleSheet("color: #b45309;")
        box.addWidget(self.off_label)
        self.search = QLineEdit()
        self.search.setObjectName("memorySearch")
        self.search.setPlaceholderText(self.tr("Search memories…"))
        self.search.textChanged.connect(lambda _text: self.refresh())
        box.addWidget(self.search)
        self.list = QListWidget()
        self.list.setObjectName("memoryList")
        self.list.setWordWrap(True)
        self.list.setEditTriggers(
            QListWidget.EditTrigger.DoubleClicked | QListWidget.EditTrigger.EditKeyPressed
        )
        self.list.itemChanged.connect(self._edited)
        self.list.currentItemChanged.connect(lambda *_: self._enable())
        box.addWidget(self.list, 1)
        self.count_label = QLabel()
        self.count_label.setObjectName("memoryCount")
        box.addWidget(self.count_label)
        self.error_label = QLabel()
        self.error_label.setObjectName("memoryError")
        self.error_label.setStyleSheet(ERROR_STYLE)
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        box.addWidget(self.error_label)
        row = QHBoxLayout()
        self.edit_button = self._button(row, self.tr("Edit"), self.edit_current)
        self.delete_button = self._button(row, self.tr("Delete"), self.delete_current)
        row.addStretch(1)
        self.export_button = self._button(row, self.tr("Export…"), self._ask_export)
        self.import_button = self._button(row, self.tr("Import…"), self._ask_import)
        box.addLayout(row)
        bottom = QHBoxLayout()
        self.forget_button = self._button(
            bottom, self.tr("Forget everything…"), self.ask_forget_everything
        )
        self.forget_button.setObjectName("forgetEverything")
        bottom.addStretch(1)
        self._button(bottom, self.tr("Close"), self.close)
        box.addLayout(bottom)
        self.question: QMessageBox | None = None
        self.file_dialog: QFileDialog | None = None
        self._bridge = _Bridge(self)
        self._bridge.received.connect(self._on_event, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe: Callable[[], None] = session.events.subscribe(self._from_session)
        self.finished.connect(lambda _result: self._stop_listening())
        self.refresh()

    def _button(self, row: QHBoxLayout, text: str, action: Callable[[], object]) -> QPushButton:
        button = QPushButton(text)
        button.clicked.connect(lambda _checked=False: action())
        row.addWidget(button)
        return button

    # -- reading ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the memories again (the search applied) and show them."""
        current = self.current_id()
        self.off_label.setVisible(not self.memory.enabled)
        try:
            items = self.memory.items(self.search.text())
            total = self.memory.count()
        except Exception as exc:
            self.show_error(describe_error(exc))
            return
        self._filling = True
        self._shown_texts = {memory.id: shown(memory.text) for memory in items}
        try:
            self.list.clear()
            for memory in items:
                item = QListWidgetItem(shown(memory.text))
                item.setData(ID_ROLE, memory.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                item.setToolTip(
                    self.tr("{kind} · remembered {day} · recalled {count} times").format(
                        kind=memory.kind, day=_day(memory.created_at), count=memory.recalled_count
                    )
                )
                self.list.addItem(item)
                if memory.id == current:
                    self.list.setCurrentItem(item)
        finally:
            self._filling = False
        if self.search.text().strip():
            self.count_label.setText(self.tr("{0} of {1} memories").format(len(items), total))
        else:
            self.count_label.setText(self.tr("{0} memories").format(total))
        self._enable()

    def _enable(self) -> None:
        chosen = self.list.currentItem() is not None
        self.edit_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)
        self.forget_button.setEnabled(self.list.count() > 0 or bool(self.search.text()))

    def current_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(ID_ROLE)) if item is not None else None

    def texts(self) -> list[str]:
        """The memories as the list shows them, top first."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    # -- changing ---------------------------------------------------------------------

    def edit_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def _edited(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        text = item.text().strip()
        memory_id = int(item.data(ID_ROLE))
        if text == self._shown_texts.get(memory_id):
            return  # not changed (an edit left as it was)
        if not text:
            self.show_error(self.tr("A memory needs some words; use Delete to remove it."))
            QTimer.singleShot(0, self.refresh)
            return
        self._do(lambda: self.memory.edit(memory_id, text))

    def delete_current(self) -> None:
        memory_id = self.current_id()
        if memory_id is not None:
            self._do(lambda: self.memory.delete(memory_id))

    def ask_forget_everything(self) -> QMessageBox:
        """Ask before erasing every memory (the answer comes back without a nested loop)."""
        box = QMessageBox(self)
        box.setObjectName("forgetEverythingQuestion")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("Forget everything?"))
        box.setText(
            self.tr("Erase all {0} memories? This cannot be undone.").format(self.memory.count())
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.finished.connect(
            lambda button: (
                self._do(self.memory.forget_everything)
                if button == QMessageBox.StandardButton.Yes.value
                else None
            )
        )
        self.question = box
        box.open()
        return box

    def _ask_export(self) -> None:
        dialog = self._file_dialog(self.tr("Export memories"), save=True)
        dialog.fileSelected.connect(lambda path: self.export_to(Path(path)))
        dialog.open()

    def _ask_import(self) -> None:
        dialog = self._file_dialog(self.tr("Import memories"), save=False)
        dialog.fileSelected.connect(lambda path: self.import_from(Path(path)))
        dialog.open()

    def _file_dialog(self, title: str, *, save: bool) -> QFileDialog:
        dialog = QFileDialog(self, title)
        dialog.setNameFilter(self.tr("Memory files (*.json)"))
        dialog.setDefaultSuffix("json")
        if save:
            dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
            dialog.selectFile("companion-memories.json")
        else:
            dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.file_dialog = dialog
        return dialog

    def export_to(self, path: Path) -> None:
        self._move(
            lambda: self.memory.export_json(path), self.tr("Exported {0} memories to {1}"), path
        )

    def import_from(self, path: Path) -> None:
        self._move(
            lambda: self.memory.import_json(path),
            self.tr("Imported {0} new memories from {1}"),
            path,
        )
        self.refresh()

    def _move(self, move: Callable[[], int], done: str, path: Path) -> None:
        """Export or import, then say how many memories went, or what went wrong."""
        try:
            count = move()
        except Exception as exc:
            self.show_error(describe_error(exc))
            return
        self.show_info(done.format(count, path))

    def _do(self, change: Callable[[], object]) -> None:
        try:
            change()
        except Exception as exc:
            self.show_error(describe_error(exc))
        else:
            self.error_label.hide()
        self.refresh()

    def show_error(self, message: str) -> None:
        self.error_label.setStyleSheet(ERROR_STYLE)
        self.error_label.setText(message)
        self.error_label.show()

    def show_info(self, message: str) -> None:
        self.error_label.setStyleSheet("")
        self.error_label.setText(message)
        self.error_label.show()

    # -- the session's events ------------------------------------------------------------

    def _from_session(self, event: SessionEvent) -> None:
        if isinstance(event, MemoryChanged):
            with contextlib.suppress(RuntimeError):  # the page is already gone
                self._bridge.received.emit(event)

    def _on_event(self, _event: MemoryChanged) -> None:
        if self.isVisible():
            self.refresh()

    def _stop_listening(self) -> None:
        with contextlib.suppress(ValueError):
            self._unsubscribe()


class MemoryNotice(QPushButton):
    """ "💭 Remembered: your cat is Nori" under the window's controls; clicking it takes
    the change back. It fades after a while."""

    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryNotice")
        self.setFlat(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setStyleSheet(
            "#memoryNotice { background: #f4f0fe; color: #5b4a8b; border-radius: 12px; "
            "padding: 4px 12px; font-weight: 500; text-align: left; }"
        )
        self.memory: MemoryPort | None = None
        self.change_id: int | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.clicked.connect(self.undo)
        self.hide()

    def show_change(self, event: MemoryChanged) -> bool:
        """Show a new, updated or forgotten memory; returns whether it was shown."""
        said = "; ".join(to_the_user(text) for text in event.texts)
        if event.action == "remembered":
            text = self.tr("💭 Remembered: {0}").format(said)
        elif event.action == "updated":
            text = self.tr("💭 Updated: {0}").format(said)
        elif event.action == "forgot":
            text = self.tr("💭 Forgot: {0}").format(said)
        elif event.action == "undone":
            self.setText(self.tr("💭 Undone"))
            self.change_id = None
            self.setToolTip("")
            self._timer.start(3000)
            self.show()
            return True
        else:
            return False
        self.change_id = event.change_id if event.undoable else None
        self.setText(text)
        self.setToolTip(self.tr("Click to undo") if self.change_id is not None else "")
        self._timer.start(NOTICE_SHOWN_MS)
        self.show()
        return True

    def undo(self) -> None:
        if self.memory is None or self.change_id is None:
            return
        change_id, self.change_id = self.change_id, None
        try:
            self.memory.undo(change_id)
        except Exception as exc:
            self.failed.emit(describe_error(exc))


__all__ = ["MemoryNotice", "MemoryPage"]


def show_memory_change(window: MainWindow, memory: MemoryPort, event: MemoryChanged) -> None:
    """Tell `window` what was just remembered (or forgotten), under its controls."""
    if window.memory_notice is None:  # made at the first change: not on the launch path
        window.memory_notice = MemoryNotice()
        window.memory_notice.failed.connect(lambda text: window.show_notice(text, error=True))
        window.memory_row.addWidget(window.memory_notice, 0, Qt.AlignmentFlag.AlignLeft)
    window.memory_notice.memory = memory
    window.memory_notice.show_change(event)


def open_memory_page(window: MainWindow, session: SessionPort) -> MemoryPage:
    """The window's Memory page, opened (or the open one brought forward)."""
    page = window.memory_page
    if page is not None and page.isVisible():
        page.refresh()
        page.raise_()
        return page
    window.memory_page = page = MemoryPage(session, window)
    page.open()
    return page

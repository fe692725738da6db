"""The conversations side list: start, switch, rename and delete conversations.

It only presents: every change goes through the session (its `SessionPort` members;
the session goes through its `ConversationStorage`), and the list is re-read from the
session afterwards, so what it shows is what is on disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.agent.storage import ConversationInfo
from app.ui.session_port import SessionPort

log = logging.getLogger(__name__)

UID_ROLE = Qt.ItemDataRole.UserRole
# The title the storage gives a conversation with no words of the user yet (in English,
# as stored: `app.agent.storage`); the list shows it in the UI's language.
STORED_DEFAULT_TITLE = "New conversation"

Spawn = Callable[[Coroutine[Any, Any, object], str], None]


class ConversationList(QWidget):
    """Newest first; the current conversation is selected. Double-click or F2 renames,
    Delete asks first, then deletes."""

    failed = Signal(str)  # an action that failed, in words (the window shows it)

    def __init__(self, session: SessionPort, spawn: Spawn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversations")
        self._session = session
        self._spawn = spawn
        self._refreshing = False
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(6)
        header = QHBoxLayout()
        title = QLabel(self.tr("Conversations"))
        title.setObjectName("cardTitle")
        self.new_button = QPushButton(self.tr("New"))
        self.new_button.setObjectName("newConversation")
        self.new_button.setToolTip(self.tr("Start a new conversation (Ctrl+N)"))
        self.new_button.clicked.connect(self.start_new)
        header.addWidget(title)
        header.addStretch(1)
        header.addWidget(self.new_button)
        box.addLayout(header)
        self.list = QListWidget()
        self.list.setObjectName("conversationList")
        # A long title is cut with "…" (the whole title is in its tooltip), never
        # scrolled sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.itemDoubleClicked.connect(lambda item: self.ask_rename(item.data(UID_ROLE)))
        box.addWidget(self.list, 1)
        self.refresh()

    # -- reading ---------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the list from the session; keep the current conversation selected."""
        try:
            infos = self._session.conversations()
            current = self._session.conversation_id
        except Exception as exc:  # a damaged history folder must not break the window
            log.warning("could not list conversations: %s", exc)
            self.failed.emit(self.tr("Could not list the conversations: {0}").format(exc))
            return
        self._refreshing = True
        try:
            self.list.clear()
            for info in reversed(infos):  # newest first
                item = QListWidgetItem(self._label(info))
                item.setData(UID_ROLE, info.uid)
                item.setToolTip(self._label(info))
                self.list.addItem(item)
                # No wider than the list, whatever the title: the view then elides it.
                height = self.list.sizeHintForIndex(self.list.indexFromItem(item)).height()
                item.setSizeHint(QSize(1, height))
                if info.uid == current:
                    self.list.setCurrentItem(item)
        finally:
            self._refreshing = False

    def _label(self, info: ConversationInfo) -> str:
        if info.title == STORED_DEFAULT_TITLE:  # the storage's English: shown translated
            return self.tr("New conversation")
        if info.title:
            return info.title
        if info.message_count == 0:
            return self.tr("New conversation")
        return self.tr("Conversation {0}").format(info.uid[:8])

    def uids(self) -> list[str]:
        """The conversations as listed, newest first."""
        return [self.list.item(i).data(UID_ROLE) for i in range(self.list.count())]

    def titles(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def current_uid(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else str(item.data(UID_ROLE))

    # -- actions ---------------------------------------------------------------------

    def start_new(self) -> None:
        self._spawn(self._after(self._session.new_conversation()), self.tr("start a conversation"))

    def switch_to(self, uid: str) -> None:
        if uid == self._session.conversation_id:
            return
        self._spawn(
            self._after(self._session.switch_conversation(uid)),
            self.tr("open the conversation"),
        )

    def rename(self, uid: str, title: str) -> None:
        try:
            self._session.rename_conversation(uid, title)
        except Exception as exc:
            self.failed.emit(self.tr("Could not rename the conversation: {0}").format(exc))
        self.refresh()

    def delete(self, uid: str) -> None:
        self._spawn(
            self._after(self._session.delete_conversation(uid)),
            self.tr("delete the conversation"),
        )

    def ask_rename(self, uid: str) -> QInputDialog:
        """A small non-blocking dialog that asks for the new title."""
        current = next((i for i in range(self.list.count()) if self.uids()[i] == uid), None)
        dialog = QInputDialog(self)
        dialog.setObjectName("renameConversation")
        dialog.setWindowTitle(self.tr("Rename conversation"))
        dialog.setLabelText(self.tr("Title:"))
        dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
        if current is not None:
            dialog.setTextValue(self.list.item(current).text())
        dialog.textValueSelected.connect(lambda text: self.rename(uid, text))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def ask_delete(self, uid: str) -> QMessageBox:
        """Deleting is for good: ask first (non-blocking)."""
        box = QMessageBox(self)
        box.setObjectName("deleteConversation")
        box.setWindowTitle(self.tr("Delete conversation?"))
        box.setText(self.tr("Delete this conversation for good? This cannot be undone."))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def decided(button: int) -> None:
            if button == QMessageBox.StandardButton.Yes.value:
                self.delete(uid)

        box.finished.connect(decided)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    async def _after(self, call: Coroutine[Any, Any, object]) -> None:
        try:
            await call
        finally:
            self.refresh()

    def _activated(self, item: QListWidgetItem) -> None:
        if not self._refreshing:
            self.switch_to(str(item.data(UID_ROLE)))

    def _menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(self.tr("New conversation"), self.start_new)
        if item is not None:
            uid = str(item.data(UID_ROLE))
            menu.addAction(self.tr("Rename…"), lambda: self.ask_rename(uid))
            menu.addAction(self.tr("Delete…"), lambda: self.ask_delete(uid))
        menu.popup(self.list.viewport().mapToGlobal(position))

"""The Companion main window: the avatar, the live transcript, the controls and a status line.

The window only presents. It listens to the session's events and calls the
session's public methods (`SessionPort`); all the work happens in the session.

The window can be shown before its session exists (the session's imports and
construction take longer than the window): built without one, it says "Starting",
keeps what the user types, and `attach_session` brings in everything that depends
on the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.events import (
    AssistantSentence,
    CaptureRequested,
    CaptureTaken,
    ConversationChanged,
    ExpressionChanged,
    HeardAside,
    LoadProgress,
    MemoryChanged,
    MicLevel,
    MicStateChanged,
    MouthLevel,
    Notice,
    PushToTalkChanged,
    ReplyWithdrawn,
    SessionEvent,
    Status,
    StatusChanged,
    ToolUsed,
    TurnFinished,
    UserTranscript,
)
from app.ui.avatar_widget import AvatarWidget
from app.ui.controls import SteadyArea, usual_room
from app.ui.conversation_card import ConversationCard
from app.ui.mic_controls import MicControls
from app.ui.session_port import SessionPort
from app.ui.status_line import StatusLine, describe_error
from app.ui.style import WINDOW_STYLE
from app.ui.transcript import TranscriptEntry, TranscriptView

if TYPE_CHECKING:  # the side list comes with a session that has conversations
    from app.ui.conversations import ConversationList
    from app.ui.memory_page import MemoryNotice, MemoryPage

log = logging.getLogger(__name__)

REPLY_STATUSES = frozenset({Status.THINKING, Status.SPEAKING, Status.REPLYING})
AT_REST_STATUSES = frozenset({Status.ERROR, Status.STARTING, Status.LOADING})


class _EventBridge(QObject):
    """Carries session events to the GUI thread, whichever thread emitted them."""

    received = Signal(object)


class MainWindow(QMainWindow):
    """The Companion window for one session."""

    closed = Signal()
    # The shell's hooks: the user asked for the desktop pet / the settings / to quit;
    # with `hide_on_close` (a tray exists) closing the window only hides it.
    pet_requested = Signal()
    settings_requested = Signal()
    quit_requested = Signal()
    hidden_to_tray = Signal()

    def __init__(self, session: SessionPort | None = None, *, title: str = "Companion") -> None:
        super().__init__()
        self._session: SessionPort | None = None
        self._unsubscribe: Callable[[], None] = lambda: None
        self.conversations: ConversationList | None = None
        self.memory_page: MemoryPage | None = None
        self.memory_notice: MemoryNotice | None = None
        self.hide_on_close = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._last_turn: int | None = None
        self._face = ""
        self.setWindowTitle(title)
        self.setStyleSheet(WINDOW_STYLE)
        self._build()
        self._size_and_place()

        self._bridge = _EventBridge(self)
        # Queued: the listener may be called on any thread, and presenting later also
        # keeps a session that emits from inside our own calls from re-entering us.
        self._bridge.received.connect(self.present, Qt.ConnectionType.QueuedConnection)
        if session is not None:
            self.attach_session(session)
        else:
            self._show_ready(False)

    def attach_session(self, session: SessionPort) -> None:
        """Drive `session` from now on (once): its avatar pack and expressions, its
        conversations in the side list, its history, its mic mode and its events."""
        if self._session is not None:
            raise RuntimeError("the window already has a session")
        self._session = session
        self.transcript.companion_name = session.character.name
        self.transcript.expressions = session.expressions
        if session.avatar_pack is not None:
            problem = self.avatar.set_pack(session.avatar_pack)
            if problem:
                log.info("avatar pack: %s", problem)
        self._show_live2d(session)
        self._add_conversations(session)
        self.memory_button.setVisible(session.memory is not None)
        self.mic.attach(session)
        if not self._closing:
            self._unsubscribe = session.events.subscribe(self._on_session_event)
        self._load_history()
        self._show_ready(True)

    def _show_live2d(self, session: SessionPort) -> None:
        """The user's Live2D model in place of the sprites; the one notice when it cannot
        be drawn (no OpenGL) says why."""
        if session.live2d_model is None:
            return
        view = session.settings.avatar.live2d if session.settings is not None else None
        problem = self.avatar.set_live2d(session.live2d_model, view)
        if problem:
            log.warning("Live2D: %s", problem)
            self.show_notice(problem, error=True)

    def _add_conversations(self, session: SessionPort) -> None:
        if not session.conversation_id:
            return  # a stand-in that keeps no conversations
        from app.ui.conversations import ConversationList

        self.conversations = ConversationList(session, self._spawn)
        self.conversations.failed.connect(lambda text: self.show_notice(text, error=True))
        self.conversations.setMinimumWidth(190)
        self._side_box.addWidget(self.conversations)
        self._side.show()
        QShortcut(QKeySequence("Ctrl+N"), self, self.conversations.start_new)

    def _show_ready(self, ready: bool) -> None:
        """Before the session exists the controls that need it wait; what the user
        types stays in the box and can be sent once the session is there."""
        self.mic.set_ready(ready)
        self.send_button.setEnabled(ready and bool(self.text_input.text().strip()))
        self.send_button.setToolTip(
            self.tr("Send the message (Enter)")
            if ready
            else self.tr("Companion is still starting; you can send this in a moment")
        )

    # -- parts, for the app and for tests ----------------------------------------------

    @property
    def session(self) -> SessionPort | None:
        """The session the window drives; None until `attach_session`."""
        return self._session

    def pending_tasks(self) -> tuple[asyncio.Task[None], ...]:
        """Session calls still running (sent messages); the app cancels them on close."""
        return tuple(self._tasks)

    def status_text(self) -> str:
        """The status line as the user reads it."""
        return self.status.text()

    def show_notice(self, message: str, *, error: bool = False) -> None:
        """Show a message in the status line; errors in red until the next notice."""
        self.status.show_notice(message, error=error)

    # -- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        central = QWidget()
        central.setObjectName("central")
        outer = QVBoxLayout(central)
        outer.setContentsMargins(14, 14, 14, 10)
        outer.setSpacing(10)

        self.avatar = AvatarWidget()  # the session's pack comes with the session
        self.avatar.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.avatar.customContextMenuRequested.connect(self._avatar_menu)

        card = ConversationCard(self.open_memory)
        self.memory_button = card.memory_button  # shown with a session that has a memory
        self.transcript = card.transcript

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.setHandleWidth(12)
        # The side list's card: filled and shown when the session has conversations.
        self._side = QFrame()
        self._side.setObjectName("card")
        self._side_box = QVBoxLayout(self._side)
        self._side_box.setContentsMargins(10, 10, 10, 10)
        self._side.hide()
        split.addWidget(self._side)
        split.addWidget(self.avatar)
        split.addWidget(card)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 3)
        split.setSizes([220, 380, 480])
        self.splitter = split
        outer.addWidget(split, 1)

        controls = QHBoxLayout()
        controls.setSpacing(8)
        self.mic = MicControls()
        self.mic.failed.connect(lambda text: self.show_notice(text, error=True))
        self.text_input = QLineEdit()
        self.text_input.setPlaceholderText(self.tr("Type a message…"))
        self.text_input.returnPressed.connect(self.send)
        self.text_input.textChanged.connect(self._on_text_changed)
        self.send_button = QPushButton(self.tr("Send"))
        self.send_button.setObjectName("sendButton")
        self.send_button.setEnabled(False)
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip(self.tr("Stop the reply (Esc)"))
        self.stop_button.setEnabled(False)  # nothing to stop yet
        self.stop_button.clicked.connect(self.stop)
        controls.addWidget(self.mic)
        controls.addWidget(self.text_input, 1)
        controls.addWidget(self.send_button)
        controls.addWidget(self.stop_button)
        outer.addLayout(controls)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)
        QShortcut(QKeySequence("Ctrl+P"), self, self.pet_requested.emit)
        QShortcut(QKeySequence("Ctrl+,"), self, self.settings_requested.emit)
        QShortcut(QKeySequence("Ctrl+Q"), self, self.quit_requested.emit)

        # Its lines come and go in room kept for them: what is above never moves.
        self.status = StatusLine()
        self.memory_row = QHBoxLayout()  # the "💭 Remembered" notice, when there is one
        self.memory_row.setContentsMargins(18, 0, 6, 0)
        self.status_area = SteadyArea()
        self.status_area.add(self.status)
        self.status_area.add(self.memory_row)
        outer.addWidget(self.status_area)
        self.mic.state_changed.connect(self.status.show_mic_state)  # one truth for both
        # The parts tests and the shell reach by name.
        self.mic_button = self.mic.mic_button
        self.mode_box = self.mic.mode_box
        self.talk_button = self.mic.talk_button
        self.level_meter = self.mic.level_meter
        self.status_label = self.status.status_label
        self.mic_note = self.status.mic_note
        self.notice_label = self.status.notice_label
        self.progress = self.status.progress
        self.mic_live = self.status.mic_live
        self.capture_pill = self.status.capture_pill

        self.setCentralWidget(central)
        row = self.status.notice_label.parentWidget() or self.status.notice_label
        self.status_area.keep_room(usual_room(self.status, self.mic_live, row))
        self.text_input.setFocus()  # a newcomer can type at once

    def _size_and_place(self) -> None:
        self.setMinimumSize(640, 460)
        # Without a session yet: room for the side list a real session brings.
        width, height = (1100 if self._session is None or self.conversations else 900), 660
        screen = self.screen()
        if screen is not None:
            area = screen.availableGeometry()
            width = min(width, int(area.width() * 0.95))
            height = min(height, int(area.height() * 0.9))
            self.move(area.center() - QPoint(width // 2, height // 2))
        self.resize(width, height)

    # -- presenting session events -----------------------------------------------------

    def _on_session_event(self, event: SessionEvent) -> None:
        with contextlib.suppress(RuntimeError):  # the window is already gone
            self._bridge.received.emit(event)

    @Slot(object)
    def present(self, event: SessionEvent) -> None:
        """Show one session event (called on the GUI thread)."""
        if isinstance(event, MouthLevel):
            self.avatar.set_mouth_level(event.level)
        elif isinstance(event, MicLevel):
            self.mic.level_meter.set_level(event.dbfs)
        elif isinstance(event, UserTranscript):
            self._last_turn = event.turn_id
            self.transcript.show_user(event.text, final=event.final, turn_id=event.turn_id)
        elif isinstance(event, AssistantSentence):
            self.transcript.add_sentence(
                event.display_text, turn_id=event.turn_id, thinking=event.is_thinking
            )
        elif isinstance(event, ExpressionChanged):
            self.avatar.set_expression(event.expression, event.intensity)
            self._log_face()
        elif isinstance(event, StatusChanged):
            self._show_stoppable(event)
            self.status.show_status(event)
            self.avatar.set_thinking(event.status is Status.THINKING)
            self._log_face()
        elif isinstance(event, Notice):
            self.show_notice(event.message, error=event.error)
        elif isinstance(event, MicStateChanged):
            self._show_mic(enabled=event.enabled, available=event.available, detail=event.detail)
        elif isinstance(event, TurnFinished):
            self.stop_button.setEnabled(False)
            if event.interrupted:
                self.transcript.mark_interrupted(event.turn_id)
            self.transcript.finish_turn(event.turn_id)
            if self.conversations is not None:
                self.conversations.refresh()  # a first turn gives the conversation its title
        elif isinstance(event, ReplyWithdrawn):
            self.transcript.withdraw_reply(event.turn_id)
        elif isinstance(event, HeardAside):
            self.status.show_heard_aside(event.text)
        elif isinstance(event, CaptureTaken):
            self.status.show_capture(event.monitor, event.width, event.height)
            self.transcript.add_capture(event.path, turn_id=self._last_turn)
        elif isinstance(event, CaptureRequested):
            self._ask_capture(event)
        elif isinstance(event, PushToTalkChanged):
            self.mic.show_push_to_talk(event.held)
        elif isinstance(event, ToolUsed):
            self._last_turn = event.turn_id
            self.transcript.add_tool(event.name, turn_id=event.turn_id)
        elif isinstance(event, LoadProgress):
            self.status.show_progress(event)
        elif isinstance(event, MemoryChanged):
            self._show_memory_change(event)
        elif isinstance(event, ConversationChanged):
            self._load_history()
            if self.conversations is not None:
                self.conversations.refresh()

    def _show_stoppable(self, event: StatusChanged) -> None:
        """Stop is on while a reply is made or spoken, until its turn ends (or fails)."""
        if event.status in REPLY_STATUSES:
            self.stop_button.setEnabled(True)
        elif event.status in AT_REST_STATUSES or event.detail == "interrupted":
            self.stop_button.setEnabled(False)

    def _show_memory_change(self, event: MemoryChanged) -> None:
        if self._session is not None and self._session.memory is not None:
            from app.ui.memory_page import show_memory_change  # not on the launch path

            show_memory_change(self, self._session.memory, event)

    def open_memory(self) -> MemoryPage | None:
        """The Memory page (not modal: the conversation goes on meanwhile)."""
        if self._session is None or self._session.memory is None:
            return None
        from app.ui.memory_page import open_memory_page

        return open_memory_page(self, self._session)

    def _log_face(self) -> None:
        if self.avatar.expression != self._face:  # what the avatar shows, for a bug report
            self._face = self.avatar.expression
            log.info("avatar face: %s", self._face)

    def _ask_capture(self, event: CaptureRequested) -> None:
        """The user decides before each capture (when the config asks for that)."""
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Take a screenshot?"))
        box.setText(self.tr("The companion wants to take a screenshot to look at your screen."))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setObjectName("captureQuestion")
        session = self._session

        def decided(button: int) -> None:
            if session is not None:
                session.answer_capture(
                    event.request_id, button == QMessageBox.StandardButton.Yes.value
                )

        box.finished.connect(decided)
        box.open()

    def _show_mic(self, *, enabled: bool, available: bool, detail: str) -> None:
        self.mic.show_state(enabled=enabled, available=available, detail=detail)
        self.status.show_mic(available=available, detail=detail)

    def _load_history(self) -> None:
        """Show the session's current conversation (at start and after a switch)."""
        if self._session is None:
            return
        try:
            self.transcript.load_history(self._session.history_messages())
        except Exception as exc:
            log.warning("could not show the conversation: %s", describe_error(exc))
            self.show_notice(
                self.tr("Could not show the conversation: {0}").format(describe_error(exc)),
                error=True,
            )

    # -- user actions ------------------------------------------------------------------

    def send(self) -> None:
        """Send the typed message as a turn."""
        text = self.text_input.text().strip()
        if not text or self._session is None:
            return  # still starting: the text stays in the box
        self.text_input.clear()
        self._spawn(self._session.send_text(text), self.tr("send the message"))

    def stop(self) -> None:
        """Interrupt the reply."""
        if self._session is None:
            return
        try:
            self._session.interrupt()
        except Exception as exc:
            log.warning("interrupt failed: %s", describe_error(exc))
            self.show_notice(self.tr("Could not stop: {0}").format(describe_error(exc)), error=True)

    def _on_text_changed(self, text: str) -> None:
        self.send_button.setEnabled(bool(text.strip()) and self._session is not None)

    def _avatar_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(self.tr("Switch to desktop pet (Ctrl+P)"), self.pet_requested.emit)
        menu.addAction(self.tr("Settings… (Ctrl+,)"), self.settings_requested.emit)
        if self._session is not None and self._session.memory is not None:
            menu.addAction(self.tr("Memory…"), self.open_memory)
        menu.addAction(self.tr("Quit Companion (Ctrl+Q)"), self.quit_requested.emit)
        menu.addSection(self.tr("Try an expression"))
        for name in self._session.expressions if self._session is not None else ():
            if name in self.avatar.expressions:
                action = menu.addAction(name.capitalize())
                action.triggered.connect(lambda _=False, n=name: self.avatar.set_expression(n))
        menu.popup(self.avatar.mapToGlobal(position))  # not exec(): no nested event loop

    def _spawn(self, call: Coroutine[Any, Any, object], what: str) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            call.close()
            self.show_notice(
                self.tr("Could not {0}: the app is not running.").format(what), error=True
            )
            return
        task = loop.create_task(self._report_failure(call, what))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _report_failure(self, call: Coroutine[Any, Any, object], what: str) -> None:
        try:
            await call
        except Exception as exc:
            log.warning("could not %s: %s", what, describe_error(exc))
            self.show_notice(
                self.tr("Could not {0}: {1}").format(what, describe_error(exc)), error=True
            )

    # -- closing -------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.hide_on_close and not self._closing:
            event.ignore()  # the app keeps running in the tray
            self.hide()
            self.hidden_to_tray.emit()
            return
        if not self._closing:
            self._closing = True
            with contextlib.suppress(ValueError):  # already unsubscribed
                self._unsubscribe()
            self.closed.emit()
        super().closeEvent(event)


__all__ = ["MainWindow", "TranscriptEntry", "TranscriptView", "describe_error"]

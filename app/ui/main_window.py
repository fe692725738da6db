"""The Companion main window: the avatar, the live transcript, the controls and a status line.

The window only presents. It listens to the session's events and calls the
session's few public methods; all the work happens in the session.

The window can be shown before its session exists (the session's imports and
construction take longer than the window): built without one, it says "Starting",
keeps what the user types, and `attach_session` brings in everything that depends
on the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QObject,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QCloseEvent,
    QColor,
    QIcon,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
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
    LoadProgress,
    MicLevel,
    MicStateChanged,
    MouthLevel,
    Notice,
    PushToTalkChanged,
    SessionEvent,
    Status,
    StatusChanged,
    ToolUsed,
    TurnFinished,
    UserTranscript,
)
from app.ui.avatar_widget import AvatarWidget
from app.ui.controls import LevelMeter, PrivacyPill
from app.ui.transcript import TranscriptEntry, TranscriptView

if TYPE_CHECKING:  # the side list comes with a session that has conversations
    from app.ui.app import SessionLike
    from app.ui.conversations import ConversationList

log = logging.getLogger(__name__)

NOTICE_SHOWN_MS = 8000  # plain notices fade; errors stay until the next notice
CAPTURE_PILL_MS = 6000  # how long "screenshot taken" stays up after a capture
MIC_MODES = (
    ("always_on", QT_TRANSLATE_NOOP("MainWindow", "Always on")),
    ("push_to_talk", QT_TRANSLATE_NOOP("MainWindow", "Push to talk")),
    ("muted", QT_TRANSLATE_NOOP("MainWindow", "Muted")),
)
# The session's fixed status details (it speaks English); see `_status_detail`.
STATUS_DETAIL_TEXTS = (
    QT_TRANSLATE_NOOP("MainWindow", "loading the speech and chat models"),
    QT_TRANSLATE_NOOP("MainWindow", "no microphone: type your messages"),
    QT_TRANSLATE_NOOP("MainWindow", "the microphone is gone: type your messages"),
    QT_TRANSLATE_NOOP("MainWindow", "interrupted"),
    QT_TRANSLATE_NOOP("MainWindow", "didn't catch that"),
)
STILL_WAITING = re.compile(r"still waiting for (.+) \((\d+) s\)")
# The status line's words, marked for translation (the session emits `Status` values).
STATUS_WORDS = {
    Status.STARTING: QT_TRANSLATE_NOOP("MainWindow", "Starting"),
    Status.LOADING: QT_TRANSLATE_NOOP("MainWindow", "Loading"),
    Status.LISTENING: QT_TRANSLATE_NOOP("MainWindow", "Listening"),
    Status.HEARING: QT_TRANSLATE_NOOP("MainWindow", "Hearing you"),
    Status.TRANSCRIBING: QT_TRANSLATE_NOOP("MainWindow", "Transcribing"),
    Status.THINKING: QT_TRANSLATE_NOOP("MainWindow", "Thinking"),
    Status.SPEAKING: QT_TRANSLATE_NOOP("MainWindow", "Speaking"),
    Status.MUTED: QT_TRANSLATE_NOOP("MainWindow", "Mic off"),
    Status.IDLE: QT_TRANSLATE_NOOP("MainWindow", "Ready"),
    Status.ERROR: QT_TRANSLATE_NOOP("MainWindow", "Error"),
}

STATUS_COLOURS = {
    Status.STARTING: "#f59e0b",
    Status.LOADING: "#f59e0b",
    Status.LISTENING: "#22a06b",
    Status.HEARING: "#1f8ef1",
    Status.TRANSCRIBING: "#1f8ef1",
    Status.THINKING: "#8b5cf6",
    Status.SPEAKING: "#ec4899",
    Status.MUTED: "#9ca3af",
    Status.IDLE: "#22a06b",
    Status.ERROR: "#dc2626",
}

STYLE = """
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
QSplitter::handle { background: transparent; }
#conversationList { background: transparent; border: none; font-size: 13px; outline: 0; }
#conversationList::item { padding: 6px 8px; border-radius: 8px; color: #3b2e63; }
#conversationList::item:hover { background: #f1edfb; }
#conversationList::item:selected { background: #e6defa; color: #2d2440; font-weight: 600; }
#newConversation { padding: 5px 12px; font-size: 13px; }
"""


def describe_error(exc: BaseException) -> str:
    """An exception in words for a person: its message, or its kind when it has none."""
    return str(exc).strip() or type(exc).__name__


def _repolish(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# -- the window --------------------------------------------------------------------------


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

    def __init__(self, session: SessionLike | None = None, *, title: str = "Companion") -> None:
        super().__init__()
        self._session: SessionLike | None = None
        self._unsubscribe: Callable[[], None] = lambda: None
        self.conversations: ConversationList | None = None
        self.hide_on_close = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._last_turn: int | None = None
        self._mic_on = False
        self._talking = False
        self.setWindowTitle(title)
        self.setStyleSheet(STYLE)
        self._build()
        self._size_and_place()

        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(lambda: self._set_notice("", error=False))

        self._bridge = _EventBridge(self)
        # Queued: the listener may be called on any thread, and presenting later also
        # keeps a session that emits from inside our own calls from re-entering us.
        self._bridge.received.connect(self.present, Qt.ConnectionType.QueuedConnection)
        if session is not None:
            self.attach_session(session)
        else:
            self._show_ready(False)

    def attach_session(self, session: SessionLike) -> None:
        """Drive `session` from now on (once): its avatar pack and expressions, its
        conversations in the side list, its history, its mic mode and its events."""
        if self._session is not None:
            raise RuntimeError("the window already has a session")
        self._session = session
        character = getattr(session, "character", None)
        self.transcript.companion_name = str(getattr(character, "name", "") or "")
        pack = getattr(session, "avatar_pack", None)
        if pack is not None:
            problem = self.avatar.set_pack(pack)
            if problem:
                log.info("avatar pack: %s", problem)
        self._add_conversations(session)
        mode = self._session_mode()
        self.mode_box.setCurrentIndex(self._mode_index(mode))
        self.talk_button.setVisible(mode == "push_to_talk")
        if not self._closing:
            self._unsubscribe = session.events.subscribe(self._on_session_event)
        self._load_history()
        self._show_ready(True)

    def _add_conversations(self, session: SessionLike) -> None:
        from app.ui.conversations import ConversationList, ConversationsLike

        if not isinstance(session, ConversationsLike):
            return
        self.conversations = ConversationList(session, self._spawn)
        self.conversations.failed.connect(lambda text: self.show_notice(text, error=True))
        self.conversations.setMinimumWidth(190)
        self._side_box.addWidget(self.conversations)
        self._side.show()
        QShortcut(QKeySequence("Ctrl+N"), self, self.conversations.start_new)

    def _show_ready(self, ready: bool) -> None:
        """Before the session exists the controls that need it wait; what the user
        types stays in the box and can be sent once the session is there."""
        for control in (self.mic_button, self.mode_box, self.talk_button):
            control.setEnabled(ready)
        self.send_button.setEnabled(ready and bool(self.text_input.text().strip()))
        self.send_button.setToolTip(
            self.tr("Send the message (Enter)")
            if ready
            else self.tr("Companion is still starting; you can send this in a moment")
        )

    # -- parts, for the app and for tests ----------------------------------------------

    @property
    def session(self) -> SessionLike | None:
        """The session the window drives; None until `attach_session`."""
        return self._session

    def pending_tasks(self) -> tuple[asyncio.Task[None], ...]:
        """Session calls still running (sent messages); the app cancels them on close."""
        return tuple(self._tasks)

    def status_text(self) -> str:
        """The status line as the user reads it."""
        labels = (self.status_label, self.mic_note, self.notice_label)
        return " · ".join(label.text() for label in labels if label.text() and not label.isHidden())

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

        card = QFrame()
        card.setObjectName("card")
        card_box = QVBoxLayout(card)
        card_box.setContentsMargins(4, 10, 4, 4)
        card_box.setSpacing(4)
        header = QHBoxLayout()
        header.setContentsMargins(14, 0, 14, 0)
        heading = QLabel(self.tr("Conversation"))
        heading.setObjectName("cardTitle")
        hint = QLabel(self.tr("Esc stops a reply"))
        hint.setObjectName("cardHint")
        header.addWidget(heading)
        header.addStretch(1)
        header.addWidget(hint)
        card_box.addLayout(header)
        self.transcript = TranscriptView()
        card_box.addWidget(self.transcript, 1)

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
        self.mic_button = QPushButton(self.tr("Mic off"))
        self.mic_button.setObjectName("micButton")
        self.mic_button.setCheckable(True)
        self.mic_button.clicked.connect(self._on_mic_clicked)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("micMode")
        self.mode_box.setToolTip(self.tr("How the microphone listens"))
        for mode, label in MIC_MODES:
            self.mode_box.addItem(self.tr(str(label)), mode)
        self.mode_box.setCurrentIndex(self._mode_index(self._session_mode()))
        self.mode_box.activated.connect(self._on_mode_chosen)
        self.talk_button = QPushButton(self.tr("Hold to talk"))
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setToolTip(self.tr("Hold while you speak; release to send"))
        self.talk_button.pressed.connect(lambda: self._push_to_talk(True))
        self.talk_button.released.connect(lambda: self._push_to_talk(False))
        self.talk_button.setVisible(self._session_mode() == "push_to_talk")
        self.level_meter = LevelMeter()
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
        self.stop_button.clicked.connect(self.stop)
        controls.addWidget(self.mic_button)
        controls.addWidget(self.mode_box)
        controls.addWidget(self.talk_button)
        controls.addWidget(self.level_meter, 0, Qt.AlignmentFlag.AlignVCenter)
        controls.addWidget(self.text_input, 1)
        controls.addWidget(self.send_button)
        controls.addWidget(self.stop_button)
        outer.addLayout(controls)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)
        QShortcut(QKeySequence("Ctrl+P"), self, self.pet_requested.emit)
        QShortcut(QKeySequence("Ctrl+,"), self, self.settings_requested.emit)
        QShortcut(QKeySequence("Ctrl+Q"), self, self.quit_requested.emit)

        status = QHBoxLayout()
        status.setContentsMargins(6, 0, 6, 0)
        status.setSpacing(8)
        self.status_dot = QLabel()
        self.status_dot.setFixedSize(10, 10)
        self.status_label = QLabel()
        self.status_label.setObjectName("statusText")
        self.mic_note = QLabel()
        self.mic_note.setObjectName("micNote")
        # A long reason must not widen the window: it is cut here, whole in the tooltip.
        self.mic_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.mic_note.hide()
        self.notice_label = QLabel()
        self.notice_label.setObjectName("notice")
        self.notice_label.setWordWrap(True)
        self.notice_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setObjectName("loadProgress")
        self.progress.setFixedWidth(120)
        self.progress.setMaximumHeight(10)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.mic_live = PrivacyPill(self.tr("● Mic live"))
        self.mic_live.setToolTip(self.tr("The microphone is on and listening"))
        self.capture_pill = PrivacyPill(self.tr("📸 Screenshot taken"))
        status.addWidget(self.status_dot, 0, Qt.AlignmentFlag.AlignVCenter)
        status.addWidget(self.status_label)
        status.addWidget(self.progress, 0, Qt.AlignmentFlag.AlignVCenter)
        status.addWidget(self.mic_note, 1)
        status.addWidget(self.capture_pill)
        status.addWidget(self.mic_live)
        outer.addLayout(status)
        # Notices (errors in words) get a full-width line of their own so they wrap
        # across the window instead of into a narrow column.
        notices = QHBoxLayout()
        notices.setContentsMargins(24, 0, 6, 0)
        notices.addWidget(self.notice_label, 1)
        outer.addLayout(notices)
        self._show_status(StatusChanged(Status.STARTING))
        self._show_mic(enabled=False, available=True, detail="")

        self.setCentralWidget(central)

    def _size_and_place(self) -> None:
        self.setMinimumSize(640, 460)
        # Without a session yet: room for the side list a real session brings.
        width, height = (1100 if self._session is None or self.conversations else 900), 660
        screen = self.screen()
        if screen is not None:
            area = screen.availableGeometry()
            width = min(width, int(area.width() * 0.95))
            height = min(height, int(area.height() * 0.9))
            self.resize(width, height)
            self.move(area.center() - QPoint(width // 2, height // 2))
        else:
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
            self.level_meter.set_level(event.dbfs)
        elif isinstance(event, UserTranscript):
            self._last_turn = event.turn_id
            self.transcript.show_user(event.text, final=event.final, turn_id=event.turn_id)
        elif isinstance(event, AssistantSentence):
            self.transcript.add_sentence(
                event.display_text, turn_id=event.turn_id, thinking=event.is_thinking
            )
        elif isinstance(event, ExpressionChanged):
            self.avatar.set_expression(event.expression, event.intensity)
        elif isinstance(event, StatusChanged):
            self._show_status(event)
        elif isinstance(event, Notice):
            self.show_notice(event.message, error=event.error)
        elif isinstance(event, MicStateChanged):
            self._show_mic(enabled=event.enabled, available=event.available, detail=event.detail)
        elif isinstance(event, TurnFinished):
            if event.interrupted:
                self.transcript.mark_interrupted(event.turn_id)
            self.transcript.finish_turn(event.turn_id)
            if self.conversations is not None:
                self.conversations.refresh()  # a first turn gives the conversation its title
        elif isinstance(event, CaptureTaken):
            where = (
                self.tr("all screens")
                if event.monitor == 0
                else self.tr("screen {0}").format(event.monitor)
            )
            self.show_notice(
                self.tr("📸 Took a screenshot of {0} ({1}×{2}) to look at it.").format(
                    where, event.width, event.height
                )
            )
            self.capture_pill.flash(CAPTURE_PILL_MS)
            self.transcript.add_capture(event.path, turn_id=self._last_turn)
        elif isinstance(event, CaptureRequested):
            self._ask_capture(event)
        elif isinstance(event, PushToTalkChanged):
            self._talking = event.held
            self.talk_button.setDown(event.held)  # also when held from a hotkey
            self._show_mic_live()
        elif isinstance(event, ToolUsed):
            self._last_turn = event.turn_id
            self.transcript.add_tool(event.name, turn_id=event.turn_id)
        elif isinstance(event, LoadProgress):
            self._show_progress(event)
        elif isinstance(event, ConversationChanged):
            self._load_history()
            if self.conversations is not None:
                self.conversations.refresh()

    def _ask_capture(self, event: CaptureRequested) -> None:
        """The user decides before each capture (when the config asks for that)."""
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Take a screenshot?"))
        box.setText(self.tr("The companion wants to take a screenshot to look at your screen."))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setObjectName("captureQuestion")
        answer = getattr(self._session, "answer_capture", None)

        def decided(button: int) -> None:
            if callable(answer):
                answer(event.request_id, button == QMessageBox.StandardButton.Yes.value)

        box.finished.connect(decided)
        box.open()

    def _show_status(self, event: StatusChanged) -> None:
        words = self.tr(str(STATUS_WORDS.get(event.status, event.status.value.capitalize())))
        detail = self._status_detail(event.detail)
        self.status_label.setText(f"{words} — {detail}" if detail else words)
        colour = STATUS_COLOURS.get(event.status, "#9ca3af")
        self.status_dot.setStyleSheet(f"background: {colour}; border-radius: 5px;")
        self.avatar.set_thinking(event.status is Status.THINKING)

    def _status_detail(self, detail: str) -> str:
        """The session's own words for a status, in the UI's language when they are
        ones it always uses (anything else, such as an error, is shown as it came)."""
        if detail in STATUS_DETAIL_TEXTS:
            return self.tr(detail)
        waiting = STILL_WAITING.fullmatch(detail)
        if waiting:
            return self.tr("still waiting for {0} ({1} s)").format(*waiting.groups())
        return detail

    def show_notice(self, message: str, *, error: bool = False) -> None:
        """Show a message in the status line; errors in red until the next notice."""
        self._set_notice(message, error=error)
        if error:
            self._notice_timer.stop()
        else:
            self._notice_timer.start(NOTICE_SHOWN_MS)

    def _set_notice(self, message: str, *, error: bool) -> None:
        self.notice_label.setText(message)
        self.notice_label.setToolTip(message)
        self.notice_label.setProperty("error", error)
        _repolish(self.notice_label)

    def _show_mic(self, *, enabled: bool, available: bool, detail: str) -> None:
        button = self.mic_button
        on = enabled and available
        button.setChecked(on)
        button.setEnabled(available)
        button.setProperty("unavailable", not available)
        _repolish(button)
        if not available:
            state, text = "unavailable", self.tr("No mic")
            tip = (
                self.tr("Microphone unavailable: {0}").format(detail)
                if detail
                else self.tr("Microphone unavailable")
            )
        elif on:
            state, text = "on", self.tr("Mic on")
            tip = self.tr("The microphone is listening. Click to mute it.")
        else:
            state, text = "off", self.tr("Mic off")
            tip = self.tr("The microphone is off. Click to talk.")
        button.setText(text)
        button.setToolTip(tip)
        button.setIcon(_mic_icon(state))
        note = (
            self.tr("Microphone unavailable — {0}").format(detail)
            if detail
            else self.tr("Microphone unavailable")
        )
        self.mic_note.setText(note)
        self.mic_note.setToolTip(note)
        self.mic_note.setVisible(not available)
        self._mic_on = on
        self.level_meter.set_active(on)
        mode = self._session_mode()
        index = self._mode_index("muted" if available and not enabled else mode)
        self.mode_box.setCurrentIndex(index)
        self.mode_box.setEnabled(available)
        self.talk_button.setVisible(mode == "push_to_talk")
        self._show_mic_live()

    def _show_mic_live(self) -> None:
        """The privacy pill: shown whenever the microphone can hear the user."""
        mode = self._session_mode()
        live = self._mic_on and (mode != "push_to_talk" or self._talking)
        self.mic_live.setVisible(live)

    def _session_mode(self) -> str:
        return str(getattr(self._session, "mic_mode", None) or "always_on")

    @staticmethod
    def _mode_index(mode: str) -> int:
        return next((i for i, (m, _) in enumerate(MIC_MODES) if m == mode), 0)

    def _show_progress(self, event: LoadProgress) -> None:
        self.progress.setRange(0, max(1, event.total))
        self.progress.setValue(event.done)
        self.progress.setToolTip(event.what)
        self.progress.setVisible(event.done < event.total)

    def _load_history(self) -> None:
        """Show the session's current conversation (at start and after a switch)."""
        messages = getattr(self._session, "history_messages", None)
        if not callable(messages):
            return
        try:
            self.transcript.load_history(messages())
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

    def _on_mic_clicked(self, checked: bool) -> None:
        if self._session is None:
            return
        self._show_mic(enabled=checked, available=True, detail="")  # the session will confirm
        try:
            self._session.set_mic_enabled(checked)
        except Exception as exc:
            log.warning("set_mic_enabled failed: %s", describe_error(exc))
            self._show_mic(enabled=not checked, available=True, detail="")
            self.show_notice(
                self.tr("Could not switch the microphone: {0}").format(describe_error(exc)),
                error=True,
            )

    def _on_mode_chosen(self, index: int) -> None:
        if self._session is None:
            return
        mode = str(self.mode_box.itemData(index))
        set_mode = getattr(self._session, "set_mic_mode", None)
        try:
            if callable(set_mode):
                set_mode(mode)
            else:
                self._session.set_mic_enabled(mode != "muted")
        except Exception as exc:
            log.warning("set_mic_mode failed: %s", describe_error(exc))
            self.show_notice(
                self.tr("Could not switch the microphone: {0}").format(describe_error(exc)),
                error=True,
            )
        self.talk_button.setVisible(self._session_mode() == "push_to_talk")
        self._show_mic_live()

    def _push_to_talk(self, pressed: bool) -> None:
        self._talking = pressed
        push = getattr(self._session, "set_push_to_talk", None)
        if callable(push):
            push(pressed)
        self._show_mic_live()

    def _on_text_changed(self, text: str) -> None:
        self.send_button.setEnabled(bool(text.strip()) and self._session is not None)

    def _avatar_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(self.tr("Switch to desktop pet (Ctrl+P)"), self.pet_requested.emit)
        menu.addAction(self.tr("Settings… (Ctrl+,)"), self.settings_requested.emit)
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


def _mic_icon(state: str) -> QIcon:
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


__all__ = ["MainWindow", "TranscriptEntry", "TranscriptView", "describe_error"]

"""The desktop pet: the avatar alone in a frameless, translucent, always-on-top window.

It presents the same session's events as the main window (the avatar's face and
mouth, the sentence being spoken in a bubble), so the user can switch between the
two at any time without losing the conversation. Its place and size are kept per
screen in `Settings.ui`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, QPoint, QRect, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QAction,
    QGuiApplication,
    QMouseEvent,
    QResizeEvent,
    QScreen,
    QWheelEvent,
)
from PySide6.QtWidgets import QLabel, QMenu, QVBoxLayout, QWidget

from app.config import UiSettings
from app.events import (
    AssistantSentence,
    ExpressionChanged,
    MicStateChanged,
    MouthLevel,
    SessionEvent,
    Status,
    StatusChanged,
    TurnFinished,
)
from app.ui.avatar_widget import AvatarWidget

if TYPE_CHECKING:
    from app.ui.app import SessionLike

log = logging.getLogger(__name__)

PET_SIZE = (280, 440)
BUBBLE_LINGER_MS = 4000  # the last sentence stays readable a little after the turn ends

BUBBLE_STYLE = """
#petBubble { background: rgba(255, 255, 255, 235); color: #2d2440; border: 1px solid #d9cff7;
             border-radius: 14px; padding: 8px 12px; font-size: 13px; }
"""


NOTICE_SHOWN_MS = 8000


def pet_limitation(platform_name: str | None = None) -> str | None:
    """What the pet cannot do on this windowing system, in words (None: nothing).

    Qt's native Wayland backend cannot keep a window above others or place it (the
    compositor decides), so there the pet may sink under other windows and come back
    elsewhere. `app.cli` prefers XWayland ("xcb;wayland") for that reason; this is
    for a desktop without XWayland or a user who forced QT_QPA_PLATFORM=wayland.
    """
    name = QGuiApplication.platformName() if platform_name is None else platform_name
    if name.startswith("wayland"):
        return QCoreApplication.translate(
            "PetWindow",
            "On this Wayland desktop the pet cannot keep itself above other windows or "
            "remember its place: the desktop decides. Install XWayland (or start with "
            "QT_QPA_PLATFORM=xcb) for a pet that stays on top.",
        )
    return None


def _tr(text: str) -> str:
    return QCoreApplication.translate("MenuActions", text)


class _EventBridge(QObject):
    received = Signal(object)


class MenuActions:
    """The shell's menu (pet right-click and tray): built once per menu from callbacks,
    so every menu offers the same things and they all act on the same session."""

    def __init__(
        self,
        session: SessionLike,
        *,
        avatar: AvatarWidget,
        open_main: Callable[[], None],
        quit_app: Callable[[], None],
        toggle_pet: Callable[[], None] | None = None,
        click_through: Callable[[bool], None] | None = None,
        is_click_through: Callable[[], bool] = lambda: False,
    ) -> None:
        self.session = session
        self.avatar = avatar
        self.open_main = open_main
        self.quit_app = quit_app
        self.toggle_pet = toggle_pet
        self.click_through = click_through
        self.is_click_through = is_click_through
        self.open_settings: Callable[[], object] | None = None
        self.mic_enabled = False
        self.mic_available = True

    def fill(self, menu: QMenu) -> None:
        """Add the shell's actions to `menu` (cleared first: states are read fresh)."""
        menu.clear()
        menu.addAction(_tr("Open main window"), self.open_main)
        if self.toggle_pet is not None:
            menu.addAction(_tr("Show / hide desktop pet"), self.toggle_pet)
        if self.open_settings is not None:
            menu.addAction(_tr("Settings…"), self.open_settings)
        mic = menu.addAction(_tr("Microphone on"))
        mic.setCheckable(True)
        mic.setChecked(self.mic_enabled and self.mic_available)
        mic.setEnabled(self.mic_available)
        mic.toggled.connect(self._set_mic)
        set_mode = getattr(self.session, "set_mic_mode", None)
        if callable(set_mode):
            modes = menu.addMenu(_tr("Microphone mode"))
            modes.setEnabled(self.mic_available)
            current = getattr(self.session, "mic_mode", "always_on")
            for mode, label in (
                ("always_on", _tr("Always on")),
                ("push_to_talk", _tr("Push to talk")),
                ("muted", _tr("Muted")),
            ):
                choice = modes.addAction(label)
                choice.setCheckable(True)
                choice.setChecked(mode == current)
                choice.triggered.connect(lambda _=False, m=mode: self._set_mode(m))
        menu.addAction(_tr("Stop speaking"), self._stop)
        if self.click_through is not None:
            through = menu.addAction(_tr("Click-through pet"))
            through.setCheckable(True)
            through.setChecked(self.is_click_through())
            through.toggled.connect(self.click_through)
        faces = menu.addMenu(_tr("Try an expression"))
        for name in self.session.expressions:
            if name in self.avatar.expressions:
                action = faces.addAction(name.capitalize())
                action.triggered.connect(lambda _=False, n=name: self.avatar.set_expression(n))
        menu.addSeparator()
        menu.addAction(_tr("Quit Companion"), self.quit_app)

    def action(self, menu: QMenu, text: str) -> QAction:
        """The action named `text` in `menu`, by its English text or as shown (tests and
        the tray find entries this way)."""
        shown = _tr(text)
        for action in menu.actions():
            if action.text() in (text, shown):
                return action
        raise KeyError(text)

    def _set_mic(self, on: bool) -> None:
        try:
            self.session.set_mic_enabled(on)
        except Exception as exc:
            log.warning("set_mic_enabled failed: %s", exc)

    def _set_mode(self, mode: str) -> None:
        try:
            self.session.set_mic_mode(mode)  # type: ignore[attr-defined]
        except Exception as exc:
            log.warning("set_mic_mode failed: %s", exc)

    def _stop(self) -> None:
        try:
            self.session.interrupt()
        except Exception as exc:
            log.warning("interrupt failed: %s", exc)

    def present(self, event: SessionEvent) -> None:
        if isinstance(event, MicStateChanged):
            self.mic_enabled = event.enabled
            self.mic_available = event.available


def screen_key(widget: QWidget) -> str:
    """The name the geometry of `widget` is stored under: its screen's name."""
    screen = _screen_of(widget)
    return (screen.name() if screen is not None else "") or "default"


def _screen_of(widget: QWidget) -> QScreen | None:
    # Where the window's centre is, else the primary screen (a window not shown yet).
    return QGuiApplication.screenAt(widget.geometry().center()) or QGuiApplication.primaryScreen()


class PetWindow(QWidget):
    """The avatar on the desktop, with the sentence being spoken in a bubble above it.

    Closing only hides it: it keeps following the session, so showing it again finds
    it up to date. `dispose()` ends that."""

    open_main_requested = Signal()
    quit_requested = Signal()
    geometry_saved = Signal()

    def __init__(
        self,
        session: SessionLike,
        ui: UiSettings | None = None,
        *,
        save: Callable[[], None] | None = None,
        menu_actions: MenuActions | None = None,
    ) -> None:
        super().__init__(
            None,
            Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.Tool,
        )
        self._session = session
        self._ui = ui if ui is not None else UiSettings()
        self._save = save
        self._drag_from: QPoint | None = None
        self._restoring = False
        self.setWindowTitle("Companion")
        self.setObjectName("pet")
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setStyleSheet(BUBBLE_STYLE)

        box = QVBoxLayout(self)
        box.setContentsMargins(6, 6, 6, 6)
        box.setSpacing(4)
        self.bubble = QLabel()
        self.bubble.setObjectName("petBubble")
        self.bubble.setWordWrap(True)
        self.bubble.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bubble.hide()
        self.avatar = AvatarWidget(pack=getattr(session, "avatar_pack", None))
        self.avatar.setMinimumSize(120, 150)
        box.addWidget(self.bubble)
        box.addWidget(self.avatar, 1)

        self.actions_menu = menu_actions or MenuActions(
            session,
            avatar=self.avatar,
            open_main=self.open_main_requested.emit,
            quit_app=self.quit_requested.emit,
            click_through=self.set_click_through,
            is_click_through=lambda: self.click_through,
        )
        self._bubble_timer = QTimer(self)
        self._bubble_timer.setSingleShot(True)
        self._bubble_timer.timeout.connect(self.bubble.hide)
        self._bubble_turn = -1

        self.resize(*PET_SIZE)
        self.restore_geometry()
        self.set_click_through(self._ui.click_through, save=False)

        self._bridge = _EventBridge(self)
        self._bridge.received.connect(self.present, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = session.events.subscribe(self._on_session_event)

    @property
    def session(self) -> SessionLike:
        return self._session

    @property
    def click_through(self) -> bool:
        return self._ui.click_through

    @property
    def bubble_text(self) -> str:
        return self.bubble.text() if not self.bubble.isHidden() else ""

    # -- presenting --------------------------------------------------------------------

    def _on_session_event(self, event: SessionEvent) -> None:
        with contextlib.suppress(RuntimeError):
            self._bridge.received.emit(event)

    @Slot(object)
    def present(self, event: SessionEvent) -> None:
        """Show one session event (called on the GUI thread)."""
        self.actions_menu.present(event)
        if isinstance(event, MouthLevel):
            self.avatar.set_mouth_level(event.level)
        elif isinstance(event, ExpressionChanged):
            self.avatar.set_expression(event.expression, event.intensity)
        elif isinstance(event, StatusChanged):
            self.avatar.set_thinking(event.status is Status.THINKING)
        elif isinstance(event, AssistantSentence) and not event.is_thinking:
            text = event.display_text.strip()
            if text:
                self._bubble_turn = event.turn_id
                self.bubble.setText(text)
                self.bubble.show()
                self._bubble_timer.stop()
        elif isinstance(event, TurnFinished) and event.turn_id == self._bubble_turn:
            self._bubble_timer.start(BUBBLE_LINGER_MS)

    def show_notice(self, text: str) -> None:
        """Say something about the app in the bubble for a while (the main window may be
        hidden while the pet shows)."""
        self.bubble.setText(text)
        self.bubble.show()
        self._bubble_turn = -1
        self._bubble_timer.start(NOTICE_SHOWN_MS)

    # -- click-through and geometry ------------------------------------------------------

    def set_click_through(self, on: bool, *, save: bool = True) -> None:
        """Let mouse clicks pass through the pet to the windows below (or stop that)."""
        self._ui.click_through = on
        visible = self.isVisible()
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, on)
        self.setWindowFlag(Qt.WindowType.WindowTransparentForInput, on)
        if visible:
            self.show()  # changing a window flag hides the window
        if save:
            self._persist()

    def restore_geometry(self) -> None:
        """Put the pet where it last was on this screen (else bottom right of it)."""
        self._restoring = True
        try:
            saved = self._ui.pet_geometry.get(screen_key(self))
            if saved and len(saved) == 4:
                x, y, w, h = saved
                self.setGeometry(QRect(x, y, max(w, 120), max(h, 150)))
                return
            screen = _screen_of(self)
            if screen is not None:
                area = screen.availableGeometry()
                self.move(area.right() - self.width() - 24, area.bottom() - self.height() - 24)
        finally:
            self._restoring = False

    def remember_geometry(self) -> None:
        g = self.geometry()
        self._ui.pet_geometry[screen_key(self)] = [g.x(), g.y(), g.width(), g.height()]
        self._persist()

    def _persist(self) -> None:
        if self._save is not None:
            try:
                self._save()
            except Exception as exc:  # the pet still works; only the place is not kept
                log.warning("could not save the pet's place: %s", exc)
        self.geometry_saved.emit()

    # -- mouse -----------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_from = event.globalPosition().toPoint() - self.frameGeometry().topLeft()
            event.accept()
        elif event.button() == Qt.MouseButton.RightButton:
            self.show_menu(event.globalPosition().toPoint())
            event.accept()
        else:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is not None and event.buttons() & Qt.MouseButton.LeftButton:
            self.move(event.globalPosition().toPoint() - self._drag_from)
            event.accept()
        else:
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is not None and event.button() == Qt.MouseButton.LeftButton:
            self._drag_from = None
            self.remember_geometry()
            event.accept()
        else:
            super().mouseReleaseEvent(event)

    def show_menu(self, at: QPoint) -> QMenu:
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.actions_menu.fill(menu)
        menu.popup(at)  # not exec(): no nested event loop
        return menu

    def wheelEvent(self, event: QWheelEvent) -> None:
        """The wheel resizes the pet (a frameless window has no edges to drag)."""
        steps = event.angleDelta().y() / 120
        if not steps:
            return
        scale = 1.1**steps
        w = max(120, min(900, round(self.width() * scale)))
        h = max(150, min(1400, round(self.height() * scale)))
        self.resize(w, h)
        self.remember_geometry()
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.isVisible() and not self._restoring and self._drag_from is None:
            g = self.geometry()
            self._ui.pet_geometry[screen_key(self)] = [g.x(), g.y(), g.width(), g.height()]

    def dispose(self) -> None:
        """Stop following the session and delete the window."""
        with contextlib.suppress(ValueError):
            self._unsubscribe()
        self.close()
        self.deleteLater()


__all__ = ["MenuActions", "PetWindow", "pet_limitation", "screen_key"]

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
    QGuiApplication,
    QHideEvent,
    QKeySequence,
    QMouseEvent,
    QResizeEvent,
    QScreen,
    QShortcut,
    QShowEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QLabel, QMenu, QVBoxLayout, QWidget

from app.config import UiSettings
from app.events import (
    AssistantSentence,
    ExpressionChanged,
    MouthLevel,
    ReplyWithdrawn,
    SessionEvent,
    Status,
    StatusChanged,
    TurnFinished,
)
from app.ui.avatar_widget import AvatarWidget
from app.ui.pet_menu import MenuActions

if TYPE_CHECKING:
    from app.avatar.live2d_model import Live2DModel
    from app.config.models import Live2DSettings
    from app.ui.session_port import SessionPort

log = logging.getLogger(__name__)

PET_SIZE = (280, 440)
BUBBLE_LINGER_MS = 4000  # the last sentence stays readable a little after the turn ends

BUBBLE_STYLE = """
#petBubble { background: rgba(255, 255, 255, 235); color: #2d2440; border: 1px solid #d9cff7;
             border-radius: 14px; padding: 8px 12px; font-size: 13px; }
"""


NOTICE_SHOWN_MS = 8000
SHAPE_MS = 200  # a Live2D pet's clickable shape follows the model this often
# Where a translucent window's transparent pixels still catch clicks unless it is shaped
# (Windows and macOS let them through by themselves).
SHAPED_PLATFORMS = ("xcb", "wayland")
CLICK_SLOP_PX = 6


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


class _EventBridge(QObject):
    received = Signal(object)


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
        session: SessionPort,
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
        self._pressed_at: QPoint | None = None
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
        self.avatar = AvatarWidget(pack=session.avatar_pack)
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
        self._live2d_tried = False
        self._shape_timer = QTimer(self)
        self._shape_timer.setInterval(SHAPE_MS)
        self._shape_timer.timeout.connect(self.update_shape)

        self.resize(*PET_SIZE)
        self.restore_geometry()
        self.set_click_through(self._ui.click_through, save=False)

        self._bridge = _EventBridge(self)
        self._bridge.received.connect(self.present, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = session.events.subscribe(self._on_session_event)
        # The way back to the main window: Ctrl+P (as in the main window) or a
        # double-click. The pet takes the keyboard when shown or clicked, which a
        # tool window does not get by itself without a window manager.
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        back = QShortcut(QKeySequence("Ctrl+P"), self)
        back.setContext(Qt.ShortcutContext.WindowShortcut)
        back.activated.connect(self.open_main_requested.emit)

    @property
    def session(self) -> SessionPort:
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
        elif isinstance(event, ReplyWithdrawn) and event.turn_id == self._bubble_turn:
            self.bubble.hide()  # the user went on: the reply is answered anew
            self._bubble_timer.stop()

    def show_notice(self, text: str) -> None:
        """Say something about the app in the bubble for a while (the main window may be
        hidden while the pet shows)."""
        self.bubble.setText(text)
        self.bubble.show()
        self._bubble_turn = -1
        self._bubble_timer.start(NOTICE_SHOWN_MS)

    # -- a Live2D model ------------------------------------------------------------------

    def _open_live2d(self) -> None:
        """The session's Live2D model, opened the first time the pet shows (it costs
        memory while hidden)."""
        if not self._live2d_tried:
            settings = self._session.settings
            view = settings.avatar.live2d if settings is not None else None
            self.show_live2d(self._session.live2d_model, view)

    def show_live2d(self, model: Live2DModel | None, view: Live2DSettings | None) -> None:
        """Show `model` (None: the sprites). If it cannot be drawn the main window has said
        why, and the pet keeps its sprites."""
        self._live2d_tried = True
        if model is None and self.avatar.live2d is None:
            return
        problem = self.avatar.set_live2d(model, view)
        if problem is not None:
            log.info("the pet shows its sprites: %s", problem)
        shown = self.avatar.live2d is not None
        self.avatar.background = not shown  # a model has nothing around it: its own alpha
        self.avatar.taps_on_click = not shown  # a press drags the pet; a click taps (below)
        if not shown:
            self._shape_timer.stop()
            self.clearMask()
        elif self.isVisible():
            self._start_shaping()

    def update_shape(self) -> None:
        """Clicks go through where the model is transparent: the window takes the model's
        shape (and the bubble's, while it shows)."""
        region = self.avatar.opaque_region()
        if region is None or region.isEmpty():
            self.clearMask()  # no frame yet, or the model moved out of sight: all clickable
            return
        region = region.translated(self.avatar.pos())
        if not self.bubble.isHidden():
            region = region.united(self.bubble.geometry())
        self.setMask(region)

    def _start_shaping(self) -> None:
        if QGuiApplication.platformName().startswith(SHAPED_PLATFORMS):
            self._shape_timer.start()

    def showEvent(self, event: QShowEvent) -> None:
        self._open_live2d()
        super().showEvent(event)
        self.activateWindow()  # keys (Ctrl+P, Esc) reach the pet without a click first
        if self.avatar.live2d is not None:
            self._start_shaping()

    def hideEvent(self, event: QHideEvent) -> None:
        self._shape_timer.stop()
        super().hideEvent(event)

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

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_from = None
            self.open_main_requested.emit()
            event.accept()
        else:
            super().mouseDoubleClickEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.activateWindow()
        if event.button() == Qt.MouseButton.LeftButton:
            self._pressed_at = event.globalPosition().toPoint()
            self._drag_from = self._pressed_at - self.frameGeometry().topLeft()
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
            pressed, self._pressed_at = self._pressed_at, None
            released = event.globalPosition().toPoint()
            if pressed is not None and (released - pressed).manhattanLength() < CLICK_SLOP_PX:
                self.avatar.tap(self.avatar.mapFromGlobal(event.globalPosition()))  # a click
            else:
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

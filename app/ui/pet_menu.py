"""The shell's menu, the same in the pet's right-click and the tray: the main window,
the pet, settings, the microphone and its mode, stop speaking, click-through, an
expression to try, quit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from app.events import MicStateChanged, SessionEvent

if TYPE_CHECKING:
    from app.ui.avatar_widget import AvatarWidget
    from app.ui.session_port import SessionPort

log = logging.getLogger(__name__)


def _tr(text: str) -> str:
    return QCoreApplication.translate("MenuActions", text)



class MenuActions:
    """The shell's menu (pet right-click and tray): built once per menu from callbacks,
    so every menu offers the same things and they all act on the same session."""

    def __init__(
        self,
        session: SessionPort,
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
        modes = menu.addMenu(_tr("Microphone mode"))
        modes.setEnabled(self.mic_available)
        current = self.session.mic_mode
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
            self.session.set_mic_mode(mode)
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


__all__ = ["MenuActions"]

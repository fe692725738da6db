"""The tray icon: the same menu as the desktop pet, when the desktop has a tray.

Whether there is one is only known at run time (GNOME without an extension has
none); `tray_available()` asks, and the shell degrades without it.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.ui.pet_menu import MenuActions

NO_TRAY_NOTICE = str(
    QT_TRANSLATE_NOOP(
        "CompanionTray",
        "This desktop has no system tray: closing the window quits Companion. The desktop pet's right-click menu has the same actions.",  # noqa: E501 - one literal for lupdate
    )
)


def no_tray_notice() -> str:
    """NO_TRAY_NOTICE in the user's language (GNOME shows a tray only with an extension
    such as "AppIndicator and KStatusNotifierItem Support")."""
    return QCoreApplication.translate("CompanionTray", NO_TRAY_NOTICE)


def tray_available() -> bool:
    """True when the desktop shows tray icons (asked now, not at import)."""
    return QSystemTrayIcon.isSystemTrayAvailable()


def app_icon() -> QIcon:
    """Companion's icon, drawn in code so it needs no file."""
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor("#7c5cff"))
        p.drawEllipse(QRectF(4, 4, 56, 56))
        p.setBrush(QColor("#ffffff"))
        p.drawEllipse(QRectF(20, 24, 8, 10))
        p.drawEllipse(QRectF(36, 24, 8, 10))
        p.drawRoundedRect(QRectF(24, 42, 16, 5), 2.5, 2.5)
    finally:
        p.end()
    return QIcon(pixmap)


class CompanionTray(QSystemTrayIcon):
    """The tray icon; a click opens the main window, the menu does the rest."""

    def __init__(self, actions: MenuActions, parent: QObject | None = None) -> None:
        super().__init__(app_icon(), parent)
        self.actions = actions
        self.setToolTip("Companion")
        self.menu = QMenu()
        actions.fill(self.menu)
        # Refilled on every opening so checkmarks show the session's current state.
        self.menu.aboutToShow.connect(lambda: actions.fill(self.menu))
        self.setContextMenu(self.menu)
        self.activated.connect(self._on_activated)

    def dispose(self) -> None:
        """Take the icon off the tray and delete it with its menu (a top-level widget
        that would otherwise outlive it)."""
        self.hide()
        self.menu.deleteLater()
        self.deleteLater()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.actions.open_main()


__all__ = ["NO_TRAY_NOTICE", "CompanionTray", "app_icon", "no_tray_notice", "tray_available"]

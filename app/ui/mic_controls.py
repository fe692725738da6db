"""The main window's microphone controls: the on/off button, the mode box, the
hold-to-talk button and the level meter. They call the session; its events confirm."""

from __future__ import annotations

import logging

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from app.ui.controls import LevelMeter
from app.ui.session_port import SessionPort
from app.ui.status_line import describe_error
from app.ui.style import mic_icon, repolish

log = logging.getLogger(__name__)

MIC_MODES = (
    ("always_on", QT_TRANSLATE_NOOP("MicControls", "Always on")),
    ("push_to_talk", QT_TRANSLATE_NOOP("MicControls", "Push to talk")),
    ("muted", QT_TRANSLATE_NOOP("MicControls", "Muted")),
)
DEFAULT_MODE = "always_on"  # what the controls show before the session is there


class MicControls(QWidget):
    """The microphone, as the user switches it. `live_changed` says whether the mic can
    hear the user now (the privacy pill follows it); `failed` is a call that failed,
    in words."""

    live_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session: SessionPort | None = None
        self._on = False
        self._talking = False
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(8)
        self.mic_button = QPushButton(self.tr("Mic off"))
        self.mic_button.setObjectName("micButton")
        self.mic_button.setCheckable(True)
        self.mic_button.clicked.connect(self._on_mic_clicked)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("micMode")
        self.mode_box.setToolTip(self.tr("How the microphone listens"))
        for mode, label in MIC_MODES:
            self.mode_box.addItem(self.tr(str(label)), mode)
        self.mode_box.setCurrentIndex(mode_index(DEFAULT_MODE))
        self.mode_box.activated.connect(self._on_mode_chosen)
        self.talk_button = QPushButton(self.tr("Hold to talk"))
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setToolTip(self.tr("Hold while you speak; release to send"))
        self.talk_button.pressed.connect(lambda: self._push_to_talk(True))
        self.talk_button.released.connect(lambda: self._push_to_talk(False))
        self.talk_button.setVisible(False)
        self.level_meter = LevelMeter()
        box.addWidget(self.mic_button)
        box.addWidget(self.mode_box)
        box.addWidget(self.talk_button)
        box.addWidget(self.level_meter, 0, Qt.AlignmentFlag.AlignVCenter)
        self.show_state(enabled=False, available=True, detail="")

    def attach(self, session: SessionPort) -> None:
        """Drive `session` from now on; show its mode."""
        self._session = session
        mode = self._mode()
        self.mode_box.setCurrentIndex(mode_index(mode))
        self.talk_button.setVisible(mode == "push_to_talk")

    def set_ready(self, ready: bool) -> None:
        """Before the session exists the controls wait."""
        for control in (self.mic_button, self.mode_box, self.talk_button):
            control.setEnabled(ready)

    def show_state(self, *, enabled: bool, available: bool, detail: str) -> None:
        """Show the microphone on, off or unavailable (`detail`: why)."""
        button = self.mic_button
        on = enabled and available
        button.setChecked(on)
        button.setEnabled(available)
        button.setProperty("unavailable", not available)
        repolish(button)
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
        button.setIcon(mic_icon(state))
        self._on = on
        self.level_meter.set_active(on)
        mode = self._mode()
        self.mode_box.setCurrentIndex(mode_index("muted" if available and not enabled else mode))
        self.mode_box.setEnabled(available)
        self.talk_button.setVisible(mode == "push_to_talk")
        self._show_live()

    def show_push_to_talk(self, held: bool) -> None:
        """The push-to-talk key is held or let go (also from a hotkey)."""
        self._talking = held
        self.talk_button.setDown(held)
        self._show_live()

    def _show_live(self) -> None:
        live = self._on and (self._mode() != "push_to_talk" or self._talking)
        self.live_changed.emit(live)

    def _mode(self) -> str:
        return self._session.mic_mode if self._session is not None else DEFAULT_MODE

    def _on_mic_clicked(self, checked: bool) -> None:
        if self._session is None:
            return
        self.show_state(enabled=checked, available=True, detail="")  # the session confirms
        try:
            self._session.set_mic_enabled(checked)
        except Exception as exc:
            log.warning("set_mic_enabled failed: %s", describe_error(exc))
            self.show_state(enabled=not checked, available=True, detail="")
            self.failed.emit(
                self.tr("Could not switch the microphone: {0}").format(describe_error(exc))
            )

    def _on_mode_chosen(self, index: int) -> None:
        if self._session is None:
            return
        try:
            self._session.set_mic_mode(str(self.mode_box.itemData(index)))
        except Exception as exc:
            log.warning("set_mic_mode failed: %s", describe_error(exc))
            self.failed.emit(
                self.tr("Could not switch the microphone: {0}").format(describe_error(exc))
            )
        self.talk_button.setVisible(self._mode() == "push_to_talk")
        self._show_live()

    def _push_to_talk(self, pressed: bool) -> None:
        self._talking = pressed
        if self._session is not None:
            self._session.set_push_to_talk(pressed)
        self._show_live()


def mode_index(mode: str) -> int:
    """Where `mode` is in the mode box (the first entry for an unknown one)."""
    return next((i for i, (m, _) in enumerate(MIC_MODES) if m == mode), 0)


__all__ = ["MIC_MODES", "MicControls", "mode_index"]

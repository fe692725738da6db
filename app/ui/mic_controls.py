"""The main window's microphone controls: the on/off button, the mode box, the
hold-to-talk button and the level meter. They call the session; its events confirm."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from app.ui.controls import LevelMeter
from app.ui.mic_state import MicState
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
# The button's glyph for each `MicState.shown` (paused: crossed out, as off).
ICONS = {
    "unavailable": "unavailable",
    "off": "off",
    "paused": "off",
    "push_to_talk": "on",
    "on": "on",
}


class MicControls(QWidget):
    """The microphone, as the user switches it. What it shows is one `MicState`
    (`state_changed` hands it to the status line, so the pill and the status agree
    with the button); `live_changed` says whether the conversation hears the user now;
    `failed` is a call that failed, in words."""

    live_changed = Signal(bool)
    state_changed = Signal(object)  # a MicState
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session: SessionPort | None = None
        self._tests = 0  # sound tests running (they nest)
        self.state = MicState(mode=DEFAULT_MODE)
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
        self._show(self.state)

    def attach(self, session: SessionPort) -> None:
        """Drive `session` from now on; show its mode."""
        self._session = session
        self._show(self.state.but(mode=self._mode()))

    def set_ready(self, ready: bool) -> None:
        """Before the session exists the controls wait."""
        for control in (self.mic_button, self.mode_box, self.talk_button):
            control.setEnabled(ready)

    def show_state(self, *, enabled: bool, available: bool, detail: str) -> None:
        """Show the microphone on, off or unavailable (`detail`: why)."""
        self._show(
            self.state.but(
                enabled=enabled,
                available=available,
                detail=detail,
                mode=self._mode(),
                reported=True,
            )
        )

    def show_push_to_talk(self, held: bool) -> None:
        """The push-to-talk key is held or let go (also from a hotkey)."""
        self.talk_button.setDown(held)
        self._show(self.state.but(held=held))

    def show_sound_test(self, running: bool) -> None:
        """A sound test starts (True) or ends (False); they nest. Meanwhile the
        conversation hears nothing, and everything says so."""
        self._tests = max(0, self._tests + (1 if running else -1))
        self._show(self.state.but(testing=self._tests > 0))

    def during_sound_tests(self, pause: Callable[[bool], None]) -> Callable[[bool], None]:
        """`pause` (the session's `set_turns_paused`) that also shows the test."""

        def paused(on: bool) -> None:
            try:
                pause(on)
            finally:
                self.show_sound_test(on)

        return paused

    def _show(self, state: MicState) -> None:
        self.state = state
        shown = state.shown
        button = self.mic_button
        button.setChecked(shown in ("on", "push_to_talk"))
        button.setEnabled(shown not in ("unavailable", "paused"))
        button.setProperty("unavailable", shown == "unavailable")
        repolish(button)
        text, tip = self._words(state)
        button.setText(text)
        button.setToolTip(tip)
        button.setIcon(mic_icon(ICONS[shown]))
        self.level_meter.set_active(shown in ("on", "push_to_talk"))
        # Switched off shows as "Muted" in the box (not before the session has said).
        muted = state.mode == "muted" or (state.reported and state.available and not state.enabled)
        self.mode_box.setCurrentIndex(mode_index("muted" if muted else state.mode))
        self.mode_box.setEnabled(state.available)
        self.talk_button.setVisible(state.mode == "push_to_talk")
        self.live_changed.emit(state.live)
        self.state_changed.emit(state)

    def _words(self, state: MicState) -> tuple[str, str]:
        """The button's text and tooltip for `state`."""
        shown = state.shown
        if shown == "unavailable":
            tip = (
                self.tr("Microphone unavailable: {0}").format(state.detail)
                if state.detail
                else self.tr("Microphone unavailable")
            )
            return self.tr("No mic"), tip
        if shown == "off":
            return self.tr("Mic off"), self.tr("The microphone is off. Click to talk.")
        if shown == "paused":
            return self.tr("Mic paused"), self.tr(
                "A sound test is running: the companion does not listen until it ends."
            )
        if shown == "push_to_talk":
            return self.tr("Mic ready"), self.tr(
                "Push to talk: the companion hears you only while you hold the button "
                "or the key. Click to mute the microphone."
            )
        return self.tr("Mic on"), self.tr("The microphone is listening. Click to mute it.")

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
        self.choose_mode(str(self.mode_box.itemData(index)))

    def choose_mode(self, mode: str) -> None:
        """Switch the session to `mode` (the mode box, or the first-run guide's choice)."""
        if self._session is None:
            return
        try:
            self._session.set_mic_mode(mode)
        except Exception as exc:
            log.warning("set_mic_mode failed: %s", describe_error(exc))
            self.failed.emit(
                self.tr("Could not switch the microphone: {0}").format(describe_error(exc))
            )
        self._show(self.state.but(mode=self._mode(), held=False))

    def _push_to_talk(self, pressed: bool) -> None:
        if self._session is not None:
            self._session.set_push_to_talk(pressed)
        self._show(self.state.but(held=pressed))


def mode_index(mode: str) -> int:
    """Where `mode` is in the mode box (the first entry for an unknown one)."""
    return next((i for i, (m, _) in enumerate(MIC_MODES) if m == mode), 0)


__all__ = ["MIC_MODES", "MicControls", "MicState", "mode_index"]

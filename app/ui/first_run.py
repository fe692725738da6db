"""The first-run guide: a few pages that check the microphone, the speaker and the
embedded models, ask how the microphone should listen, explain the screenshot
permission, and let the user pick the embedded chat model or a hosted one. Finishing
it sets `[ui] first_run_done` (and `[audio] mic_mode` to the way chosen).

The checks (`app.checks`) run one by one on a worker thread and report progress
through a Qt signal; the microphone, speaker and model tests are the settings
dialog's (`app.ui.checks`), run as tasks on the qasync loop. The guide is not
modal: the conversation window and the loop keep running while it is open.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import SecretStr
from PySide6.QtCore import QCoreApplication, QEvent, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.checks import SYSTEM_CHECKS, CheckResult, SystemCheck, run_check
from app.config import Settings, save_settings
from app.events import StatusChanged
from app.ui.checks import (
    MicCheck,
    ModelCheck,
    VoiceCheck,
    check_system,
    shown,
    weak_getter,
)
from app.ui.first_run_parts import (
    Checklist,
    CheckSignals,
    ListeningPage,
    chat_route,
    grow_to_fit,
    still_loading,
    where_it_is,
)
from app.ui.settings_dialog import settings_to_save
from app.ui.settings_editors import EMBEDDED_DEFAULT, embedded_choice_box
from app.ui.settings_fields import (
    EMBEDDED,
    NEEDS_BASE_URL,
    PROVIDERS,
    TAKES_BASE_URL,
    key_kept_text,
    key_place_text,
    provider_label,
)
from app.ui.status_line import StatusLine

log = logging.getLogger(__name__)

EMBEDDED_MODEL = f"{EMBEDDED}/{EMBEDDED_DEFAULT}"


def screenshot_text() -> str:
    return QCoreApplication.translate(
        "FirstRunGuide",
        "Companion can look at your screen when you ask it to (“what do you think of "
        "this?”). It takes a screenshot only when you ask about your screen or the model "
        "asks for one, you always see a notice when it happens, and the picture stays on "
        "this computer unless you use a hosted model. If you prefer, it can ask you "
        "before every screenshot.",
    )


class FirstRunGuide(QDialog):
    """The guide's pages: checks, listening, screenshots, the chat model. Finishing
    saves the settings with `first_run_done = true` (only what the guide changed is
    written) and tells `mic_mode_chosen` the way the microphone should listen."""

    checks_finished = Signal()
    mic_mode_chosen = Signal(str)

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        checks: Sequence[SystemCheck] | None = None,
        save: Callable[[Settings], Any] | None = save_settings,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Welcome to Companion"))
        self.setObjectName("firstRunGuide")
        self.setMinimumWidth(520)
        self.settings = settings
        self._original = settings.model_copy(deep=True)
        self._checks = list(checks if checks is not None else SYSTEM_CHECKS)
        self._save = save
        self.check_results: list[CheckResult] = []
        self.chat_model_changed = False  # set by finish(): another model (or its key, address)
        self._check_thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._session_status: StatusChanged | None = None  # None: nothing is loading

        box = QVBoxLayout(self)
        self.pages = QStackedWidget()
        self.pages.addWidget(self._checks_page())
        audio = settings.audio
        chosen = audio.mic_mode if "mic_mode" in audio.model_fields_set else None
        self.listening = ListeningPage(chosen)
        self.listening.chosen.connect(lambda _mode: self._show_page(self.pages.currentIndex()))
        self.pages.addWidget(self.listening)
        self.pages.addWidget(self._screenshot_page())
        self.pages.addWidget(self._model_page())
        box.addWidget(self.pages, 1)
        row = QHBoxLayout()
        self.back_button = QPushButton(self.tr("Back"))
        self.next_button = QPushButton(self.tr("Next"))
        self.next_button.setDefault(True)
        self.back_button.clicked.connect(self.back)
        self.next_button.clicked.connect(self.next)
        row.addStretch(1)
        row.addWidget(self.back_button)
        row.addWidget(self.next_button)
        box.addLayout(row)
        self._signals = CheckSignals(self)
        self._signals.started.connect(self._on_check_started)
        self._signals.done.connect(self._on_check_done)
        self._signals.finished.connect(self._on_checks_finished)
        self._show_page(0)

    # -- pages -----------------------------------------------------------------------------

    def _checks_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(QLabel(self.tr("<h3>Hi! Let's check your computer</h3>")))
        self.checks_progress = QProgressBar()
        self.checks_progress.setObjectName("checksProgress")
        self.checks_progress.setRange(0, len(self._checks))
        self.checks_progress.setValue(0)
        self.checks_status = QLabel(self.tr("Looking for a microphone, a speaker and the models…"))
        self.checks_status.setWordWrap(True)
        self.checklist = Checklist(len(self._checks))
        self.checks_label = self.checklist.label
        box.addWidget(self.checks_progress)
        box.addWidget(self.checks_status)
        box.addWidget(self.checklist)
        box.addWidget(QLabel(self.tr("Try them: speak, and you will hear yourself back.")))
        live = weak_getter(self, FirstRunGuide._live_settings)
        self.mic_check = MicCheck(live)
        box.addWidget(self.mic_check)
        self._voice_choice(box)
        box.addStretch(1)
        return page

    def _voice_choice(self, box: QVBoxLayout) -> None:
        """The two voices, each with a sample to play: the natural one (hibari, with the
        system voice for other languages) and the system's own."""
        box.addWidget(QLabel(self.tr("Pick the companion's voice (play both to compare):")))
        self.use_natural_voice = QRadioButton(
            self.tr("Natural voice: offline, for English (other languages use the system voice)")
        )
        self.use_system_voice = QRadioButton(self.tr("System voice: the computer's own speech"))
        system = self.settings.tts.engine == "pyttsx3"
        self.use_system_voice.setChecked(system)
        self.use_natural_voice.setChecked(not system)
        self.voice_check = VoiceCheck(weak_getter(self, FirstRunGuide._natural_voice_settings))
        self.voice_check.button.setText(self.tr("Play the natural voice"))
        self.system_voice_check = VoiceCheck(
            weak_getter(self, FirstRunGuide._system_voice_settings)
        )
        self.system_voice_check.setObjectName("systemVoiceCheck")
        self.system_voice_check.button.setText(self.tr("Play the system voice"))
        for choice, check in (
            (self.use_natural_voice, self.voice_check),
            (self.use_system_voice, self.system_voice_check),
        ):
            box.addWidget(choice)
            box.addWidget(check)

    def _screenshot_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(QLabel(self.tr("<h3>Looking at your screen</h3>")))
        text = QLabel(screenshot_text())
        text.setObjectName("screenshotText")
        text.setWordWrap(True)
        self.ask_screenshots = QCheckBox(self.tr("Ask me before each screenshot"))
        self.ask_screenshots.setChecked(self.settings.agent.confirm_screenshots)
        box.addWidget(text)
        box.addWidget(self.ask_screenshots)
        box.addStretch(1)
        return page

    def _model_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(QLabel(self.tr("<h3>Who does the thinking?</h3>")))
        self.use_embedded = QRadioButton(self.tr("An embedded model: offline and private"))
        self.use_hosted = QRadioButton(self.tr("A hosted model (needs an account and a key)"))
        chat = self.settings.chat
        hosted = not chat.model.startswith(EMBEDDED + "/")
        self.use_hosted.setChecked(hosted)
        self.use_embedded.setChecked(not hosted)
        self.embedded_model = embedded_choice_box()
        current = chat.model.partition("/")[2] if not hosted else EMBEDDED_DEFAULT
        self.embedded_model.setCurrentIndex(max(self.embedded_model.findData(current), 0))
        embedded_row = QHBoxLayout()
        embedded_row.setContentsMargins(24, 0, 0, 0)
        embedded_row.addWidget(self.embedded_model)
        embedded_row.addStretch(1)
        box.addWidget(self.use_embedded)
        box.addLayout(embedded_row)
        box.addWidget(self.use_hosted)
        self.hosted_note = QLabel(
            self.tr(
                "These are for a hosted model only: choose “A hosted model” above to fill "
                "them in. The embedded model needs no name, address or key."
            )
        )
        self.hosted_note.setObjectName("hostedNote")
        self.hosted_note.setWordWrap(True)
        self.hosted_note.setContentsMargins(24, 0, 0, 0)
        box.addWidget(self.hosted_note)
        self.hosted_form = QWidget()
        form = QFormLayout(self.hosted_form)
        provider, _, name = chat.model.partition("/")
        self.provider = QComboBox()
        for value in PROVIDERS:
            if value != EMBEDDED:
                self.provider.addItem(provider_label(value), value)
        self.provider.setCurrentIndex(max(self.provider.findData(provider), 0))
        self.model_name = QLineEdit(name if hosted else "")
        self.model_name.setPlaceholderText(self.tr("for example gpt-4o-mini"))
        self.base_url = QLineEdit(chat.base_url or "")
        self.base_url.setPlaceholderText(self.tr("only for an OpenAI-compatible server"))
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        if chat.api_key is not None:
            self.api_key.setPlaceholderText(key_kept_text())
        key_note = QLabel(key_place_text())
        key_note.setWordWrap(True)
        form.addRow(self.tr("Provider"), self.provider)
        form.addRow(self.tr("Model"), self.model_name)
        form.addRow(self.tr("Base URL"), self.base_url)
        form.addRow(self.tr("API key"), self.api_key)
        form.addRow("", key_note)
        box.addWidget(self.hosted_form)
        self.model_error = QLabel()
        self.model_error.setObjectName("modelError")
        self.model_error.setStyleSheet("color: #c62828;")
        self.model_error.setWordWrap(True)
        box.addWidget(self.model_error)
        self.model_check = ModelCheck(weak_getter(self, FirstRunGuide._chosen_settings))
        box.addWidget(self.model_check)
        box.addStretch(1)
        self.use_hosted.toggled.connect(self._on_choice_changed)
        self.provider.currentIndexChanged.connect(self._on_choice_changed)
        self._on_choice_changed()
        return page

    def _on_choice_changed(self) -> None:
        hosted = self.use_hosted.isChecked()
        self.hosted_form.setEnabled(hosted)
        self.hosted_note.setVisible(not hosted)
        self.embedded_model.setEnabled(not hosted)
        self.base_url.setEnabled(hosted and self.provider.currentData() in TAKES_BASE_URL)

    # -- checks ----------------------------------------------------------------------------

    def start_checks(self) -> threading.Thread:
        """Run the checks one by one on a worker thread; progress arrives as signals."""
        if self._check_thread is not None:
            return self._check_thread
        settings = self.settings.model_copy(deep=True)
        todo = list(self._checks)
        self.check_results = []
        self.checks_progress.setRange(0, len(todo))
        self.checks_progress.setValue(0)
        signals, closed = self._signals, self._closed

        def run() -> None:
            results: list[CheckResult] = []
            try:
                for index, (name, check) in enumerate(todo):
                    if closed.is_set():
                        return
                    title = shown(name)
                    signals.started.emit(index, len(todo), title)
                    result = run_check(title, functools.partial(check, settings), show=shown)
                    results.append(result)
                    signals.done.emit(len(results), len(todo), result)
                signals.finished.emit()
            except RuntimeError:  # the guide was deleted meanwhile
                log.debug("the first-run guide went away during its checks")

        thread = threading.Thread(target=run, name="first-run-checks", daemon=True)
        self._check_thread = thread
        thread.start()
        return thread

    def _on_check_started(self, index: int, total: int, name: str) -> None:
        self.checks_status.setText(
            # In plain words: the checks' own names are the details' (a click away).
            self.tr("Checking your computer ({n} of {total})…").format(n=index + 1, total=total)
        )

    def _on_check_done(self, done: int, total: int, result: object) -> None:
        assert isinstance(result, CheckResult)
        self.check_results.append(result)
        self.checks_progress.setValue(done)
        self.show_checks(self.check_results)

    def _on_checks_finished(self) -> None:
        log.info(
            "first-run checks: %s", "; ".join(f"{r.name}: {r.text}" for r in self.check_results)
        )
        self.checks_finished.emit()
        self._show_where_it_is()

    def follow_status(self, status_line: StatusLine) -> None:
        """Say what the app is still doing (loading, preparing the chat model) as the
        window's status line says it, and "Done" only once it is ready."""
        status_line.status_changed.connect(self.show_session_status)
        self.show_session_status(status_line.last_status)

    def show_session_status(self, event: object) -> None:
        if isinstance(event, StatusChanged):
            self._session_status = event
            self._show_where_it_is()

    def _show_where_it_is(self) -> None:
        """The line over the checklist once the checks are done, and the bar."""
        if self.checks_done:
            text, maximum, value = where_it_is(self.check_results, self._session_status)
            self.checks_status.setText(text)
            self.checks_progress.setRange(0, maximum)
            self.checks_progress.setValue(value)
            grow_to_fit(self, now=True)

    @property
    def checks_done(self) -> bool:
        return len(self.check_results) == len(self._checks)

    def show_checks(self, results: list[CheckResult]) -> None:
        self.checklist.show_results(results)
        grow_to_fit(self, now=True)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:  # a label's new text may need room
            grow_to_fit(self)
        return handled

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._check_thread is None:
            self.next_button.setFocus()  # the keyboard starts on Next (Enter goes on)
            self.start_checks()

    def done(self, result: int) -> None:
        self._closed.set()
        for check in (self.mic_check, self.voice_check, self.system_voice_check, self.model_check):
            check.cancel()
        super().done(result)

    # -- navigation --------------------------------------------------------------------------

    def _show_page(self, index: int) -> None:
        arriving = index != self.pages.currentIndex()
        self.pages.setCurrentIndex(index)
        self.back_button.setEnabled(index > 0)
        last = index == self.pages.count() - 1
        self.next_button.setText(self.tr("Start talking") if last else self.tr("Next"))
        asking = self.pages.currentWidget() is self.listening
        self.next_button.setEnabled(not asking or self.listening.mode is not None)
        self.listening.hint.setVisible(self.listening.mode is None)
        if asking and arriving and self.listening.mode is None:
            self.listening.focus_choice()

    def back(self) -> None:
        self._show_page(max(0, self.pages.currentIndex() - 1))

    def next(self) -> None:
        if self.pages.currentWidget() is self.listening and self.listening.mode is None:
            return  # the user chooses how it listens first
        if self.pages.currentIndex() < self.pages.count() - 1:
            self._show_page(self.pages.currentIndex() + 1)
            if not self.next_button.hasFocus():  # from the choice: the keyboard goes on
                self.next_button.setFocus()
        else:
            self.finish()

    # -- the result --------------------------------------------------------------------------

    def _apply_choice(self, settings: Settings) -> str | None:
        """Put the chosen chat model into `settings`; a problem in words, or None."""
        chat = settings.chat
        if self.use_hosted.isChecked():
            provider = str(self.provider.currentData())
            name = self.model_name.text().strip()
            base_url = self.base_url.text().strip() or None
            if not name:
                return self.tr("Enter the model's name (as the provider spells it).")
            if provider in NEEDS_BASE_URL and not base_url:
                return self.tr("An OpenAI-compatible server needs its base URL.")
            if base_url and not base_url.startswith(("http://", "https://")):
                return self.tr("The base URL starts with http:// or https://.")
            chat.model = f"{provider}/{name}"
            chat.base_url = base_url if provider in TAKES_BASE_URL else None
            key = self.api_key.text().strip()
            if key:
                chat.api_key = SecretStr(key)
        else:
            chosen = self.embedded_model.currentData() or EMBEDDED_DEFAULT
            chat.model = f"{EMBEDDED}/{chosen}"
            chat.base_url = None
        return None

    def _live_settings(self) -> Settings:
        return self.settings

    def _voice_settings(self, engine: Literal["auto", "pyttsx3"]) -> Settings:
        trial = self.settings.model_copy(deep=True)
        trial.tts.engine = engine
        return trial

    def _natural_voice_settings(self) -> Settings:
        return self._voice_settings("auto")

    def _system_voice_settings(self) -> Settings:
        return self._voice_settings("pyttsx3")

    def _chosen_settings(self) -> Settings | None:
        """The settings with the model chosen on the page (for its Test button)."""
        trial = self.settings.model_copy(deep=True)
        problem = self._apply_choice(trial)
        self.model_error.setText(problem or "")
        return None if problem else trial

    def finish(self) -> None:
        """Apply the choices, set first_run_done, save, close."""
        trial = self.settings.model_copy(deep=True)
        problem = self._apply_choice(trial)
        if problem:
            self.model_error.setText(problem)
            return
        self._apply_choice(self.settings)
        self.chat_model_changed = chat_route(self.settings) != chat_route(self._original)
        self.settings.agent.confirm_screenshots = self.ask_screenshots.isChecked()
        mode = self.listening.mode
        if mode is not None:
            self.settings.audio.mic_mode = mode
        if self.use_system_voice.isChecked():
            self.settings.tts.engine = "pyttsx3"
        elif self.settings.tts.engine == "pyttsx3":
            self.settings.tts.engine = "auto"
        self.settings.ui.first_run_done = True
        if self._save is not None:
            try:
                self._save(settings_to_save(self._original, self.settings))
            except (OSError, ValueError) as exc:
                self.model_error.setText(
                    self.tr("Could not save the settings: {error}").format(error=exc)
                )
                return
        if mode is not None:
            self.mic_mode_chosen.emit(mode)
        self.accept()

    def done_notice(self) -> str:
        """What the window says once the guide is finished."""
        if self.chat_model_changed:
            return self.tr("All set. The new chat model is used when Companion restarts.")
        if still_loading(self._session_status):
            return self.tr(
                "All set. Companion is still getting ready (see the line above); then say "
                "hello, or type to the companion below."
            )
        return self.tr("All set. Say hello, or type to the companion below.")


__all__ = ["CheckResult", "FirstRunGuide", "check_system", "screenshot_text"]

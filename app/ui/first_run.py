"""The first-run guide: a few pages that check the microphone, the speaker and the
embedded models, explain the screenshot permission, and let the user pick the
embedded chat model or a hosted one. Finishing it sets `[ui] first_run_done`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.config import Settings, save_settings
from app.ui.settings_dialog import PROVIDERS

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One thing the guide looked for: what, whether it is there, and in words."""

    name: str
    ok: bool
    detail: str


def check_system(settings: Settings) -> list[CheckResult]:
    """Look for the microphone, the speaker and the embedded models (blocking: run it
    off the UI thread)."""
    results: list[CheckResult] = []
    try:
        import sounddevice as sd

        mic = sd.query_devices(settings.audio.input_device, kind="input")
        results.append(CheckResult("Microphone", True, str(mic["name"])))
    except Exception as exc:
        results.append(CheckResult("Microphone", False, f"none found ({exc}); you can type"))
    try:
        import sounddevice as sd

        out = sd.query_devices(settings.audio.output_device, kind="output")
        results.append(CheckResult("Speaker", True, str(out["name"])))
    except Exception as exc:
        results.append(CheckResult("Speaker", False, f"none found ({exc}); replies are shown"))
    try:
        from app.llm.wire.local import default_model_path

        results.append(CheckResult("Embedded chat model", True, default_model_path().name))
    except Exception as exc:
        results.append(CheckResult("Embedded chat model", False, str(exc)))
    try:
        from app.audio.vad import silero_model_path

        results.append(CheckResult("Voice detection model", True, silero_model_path().name))
    except Exception as exc:
        results.append(CheckResult("Voice detection model", False, str(exc)))
    return results


SCREENSHOT_TEXT = (
    "Companion can look at your screen when you ask it to (“what do you think of this?”). "
    "It takes a screenshot only when the model asks for one, you always see a notice when "
    "it happens, and the picture stays on this computer unless you use a hosted model. "
    "If you prefer, it can ask you before every screenshot."
)


class FirstRunGuide(QDialog):
    """The guide's pages: checks, screenshots, the chat model. `finished_guide` settings
    are saved with `first_run_done = true`."""

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        checks: Callable[[Settings], list[CheckResult]] = check_system,
        save: Callable[[Settings], Any] | None = save_settings,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Companion")
        self.setObjectName("firstRunGuide")
        self.setMinimumWidth(480)
        self.settings = settings
        self._checks = checks
        self._save = save
        self.check_results: list[CheckResult] = []
        self._check_task: asyncio.Future[list[CheckResult]] | None = None

        box = QVBoxLayout(self)
        self.pages = QStackedWidget()
        self.pages.addWidget(self._checks_page())
        self.pages.addWidget(self._screenshot_page())
        self.pages.addWidget(self._model_page())
        box.addWidget(self.pages, 1)
        row = QHBoxLayout()
        self.back_button = QPushButton("Back")
        self.next_button = QPushButton("Next")
        self.next_button.setDefault(True)
        self.back_button.clicked.connect(self.back)
        self.next_button.clicked.connect(self.next)
        row.addStretch(1)
        row.addWidget(self.back_button)
        row.addWidget(self.next_button)
        box.addLayout(row)
        self._show_page(0)

    # -- pages -----------------------------------------------------------------------------

    def _checks_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        title = QLabel("<h3>Hi! Let's check your computer</h3>")
        self.checks_label = QLabel("Looking for a microphone, a speaker and the models…")
        self.checks_label.setWordWrap(True)
        self.checks_label.setTextFormat(Qt.TextFormat.RichText)
        box.addWidget(title)
        box.addWidget(self.checks_label, 1)
        return page

    def _screenshot_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(QLabel("<h3>Looking at your screen</h3>"))
        text = QLabel(SCREENSHOT_TEXT)
        text.setWordWrap(True)
        self.ask_screenshots = QCheckBox("Ask me before each screenshot")
        self.ask_screenshots.setChecked(self.settings.agent.confirm_screenshots)
        box.addWidget(text)
        box.addWidget(self.ask_screenshots)
        box.addStretch(1)
        return page

    def _model_page(self) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(QLabel("<h3>Who does the thinking?</h3>"))
        self.use_embedded = QRadioButton("The embedded model: offline, private, small")
        self.use_hosted = QRadioButton("A hosted model (needs an account and a key)")
        hosted = not self.settings.chat.model.startswith("local/")
        self.use_hosted.setChecked(hosted)
        self.use_embedded.setChecked(not hosted)
        box.addWidget(self.use_embedded)
        box.addWidget(self.use_hosted)
        self.hosted_form = QWidget()
        form = QFormLayout(self.hosted_form)
        provider, _, name = self.settings.chat.model.partition("/")
        self.provider = QComboBox()
        for value in PROVIDERS[1:]:
            self.provider.addItem(value, value)
        self.provider.setCurrentIndex(max(self.provider.findData(provider), 0))
        self.model_name = QLineEdit(name if hosted else "")
        self.model_name.setPlaceholderText("for example gpt-4o-mini")
        self.base_url = QLineEdit(self.settings.chat.base_url or "")
        self.base_url.setPlaceholderText("only for an OpenAI-compatible server")
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("Provider", self.provider)
        form.addRow("Model", self.model_name)
        form.addRow("Base URL", self.base_url)
        form.addRow("API key", self.api_key)
        box.addWidget(self.hosted_form)
        self.model_error = QLabel()
        self.model_error.setStyleSheet("color: #c62828;")
        self.model_error.setWordWrap(True)
        box.addWidget(self.model_error)
        box.addStretch(1)
        self.use_hosted.toggled.connect(self.hosted_form.setEnabled)
        self.hosted_form.setEnabled(hosted)
        return page

    # -- checks ----------------------------------------------------------------------------

    def start_checks(self) -> None:
        """Run the checks off the UI thread when a loop runs (else right away)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.show_checks(self._checks(self.settings))
            return
        self._check_task = loop.run_in_executor(None, self._checks, self.settings)
        self._check_task.add_done_callback(self._checks_done)

    def _checks_done(self, future: asyncio.Future[list[CheckResult]]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.checks_label.setText(f"The check failed: {error}")
            return
        self.show_checks(future.result())

    def show_checks(self, results: list[CheckResult]) -> None:
        self.check_results = results
        lines = []
        for result in results:
            mark = "✅" if result.ok else "⚠️"
            lines.append(f"{mark} <b>{result.name}</b>: {result.detail}")
        self.checks_label.setText("<br>".join(lines))

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self.check_results and self._check_task is None:
            self.start_checks()

    # -- navigation --------------------------------------------------------------------------

    def _show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.back_button.setEnabled(index > 0)
        last = index == self.pages.count() - 1
        self.next_button.setText("Start talking" if last else "Next")

    def back(self) -> None:
        self._show_page(max(0, self.pages.currentIndex() - 1))

    def next(self) -> None:
        if self.pages.currentIndex() < self.pages.count() - 1:
            self._show_page(self.pages.currentIndex() + 1)
        else:
            self.finish()

    def finish(self) -> None:
        """Apply the choices, set first_run_done, save, close."""
        chat = self.settings.chat
        if self.use_hosted.isChecked():
            provider = str(self.provider.currentData())
            name = self.model_name.text().strip()
            base_url = self.base_url.text().strip() or None
            if not name:
                self.model_error.setText("Enter the model's name (as the provider spells it).")
                return
            if provider == "openai-compatible" and not base_url:
                self.model_error.setText("An OpenAI-compatible server needs its base URL.")
                return
            chat.model = f"{provider}/{name}"
            chat.base_url = base_url
            key = self.api_key.text().strip()
            if key:
                chat.api_key = SecretStr(key)
        else:
            chat.model = "local/smollm2" if not chat.model.startswith("local/") else chat.model
            chat.base_url = None
        self.settings.agent.confirm_screenshots = self.ask_screenshots.isChecked()
        self.settings.ui.first_run_done = True
        if self._save is not None:
            try:
                self._save(self.settings)
            except OSError as exc:
                self.model_error.setText(f"Could not save the settings: {exc}")
                return
        self.accept()


__all__ = ["CheckResult", "FirstRunGuide", "check_system"]

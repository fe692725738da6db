"""The settings dialog: the few settings a person changes, grouped, written back to the
config file with `save_settings` (keys to the system keyring).

Everything else stays editable in the TOML file, whose comments are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.config import (
    AgentSettings,
    AudioSettings,
    AvatarSettings,
    ChatSettings,
    Settings,
    SpeechSettings,
    TTSSettings,
    save_settings,
)

log = logging.getLogger(__name__)

EMBEDDED = "local"
PROVIDERS = (
    EMBEDDED,
    "openai",
    "anthropic",
    "gemini",
    "ollama",
    "openrouter",
    "deepseek",
    "openai-compatible",
)
PROVIDER_LABELS = {EMBEDDED: "Embedded (offline, on this computer)"}
SPEECH_ADAPTERS = ("whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr")
TTS_ENGINES = ("pyttsx3", "hibari", "openai_speech")
MIC_MODES = {"always_on": "Always on", "push_to_talk": "Push to talk", "muted": "Muted"}
KEY_KEPT = "(saved — leave empty to keep it)"


def _combo(values: tuple[str, ...] | dict[str, str], current: str) -> QComboBox:
    box = QComboBox()
    items = values.items() if isinstance(values, dict) else ((v, v) for v in values)
    for value, label in items:
        box.addItem(PROVIDER_LABELS.get(value, label), value)
    index = box.findData(current)
    box.setCurrentIndex(max(index, 0))
    return box


class SettingsDialog(QDialog):
    """Edits a copy of the settings; Save validates, writes the file and emits `saved`."""

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        save: Callable[[Settings], Any] | None = save_settings,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Companion settings")
        self.setObjectName("settingsDialog")
        self._original = settings
        self._save = save
        self.result_settings: Settings | None = None
        box = QVBoxLayout(self)
        box.addWidget(self._model_group(settings.chat))
        box.addWidget(self._voice_in_group(settings.speech, settings.audio))
        box.addWidget(self._voice_out_group(settings.tts))
        box.addWidget(self._avatar_group(settings.avatar, settings.agent))
        self.error_label = QLabel()
        self.error_label.setObjectName("settingsError")
        self.error_label.setStyleSheet("color: #c62828;")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        box.addWidget(self.error_label)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box.addWidget(buttons)
        self.buttons = buttons
        self._on_provider_changed()

    # -- groups ----------------------------------------------------------------------------

    def _model_group(self, chat: ChatSettings) -> QGroupBox:
        group = QGroupBox("Chat model")
        form = QFormLayout(group)
        provider, _, name = chat.model.partition("/")
        self.provider = _combo(PROVIDERS, provider)
        self.model_name = QLineEdit(name)
        self.model_name.setPlaceholderText("for example gpt-4o-mini")
        self.base_url = QLineEdit(chat.base_url or "")
        self.base_url.setPlaceholderText("only for an OpenAI-compatible server")
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(KEY_KEPT if chat.api_key else "")
        form.addRow("Provider", self.provider)
        form.addRow("Model", self.model_name)
        form.addRow("Base URL", self.base_url)
        form.addRow("API key", self.api_key)
        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        return group

    def _voice_in_group(self, speech: SpeechSettings, audio: AudioSettings) -> QGroupBox:
        group = QGroupBox("Voice in")
        form = QFormLayout(group)
        self.speech_adapter = _combo(SPEECH_ADAPTERS, speech.adapter)
        self.mic_mode = _combo(MIC_MODES, audio.mic_mode)
        device = audio.input_device
        self.mic_device = QLineEdit("" if device is None else str(device))
        self.mic_device.setPlaceholderText("the system default")
        form.addRow("Speech recognition", self.speech_adapter)
        form.addRow("Microphone mode", self.mic_mode)
        form.addRow("Microphone", self.mic_device)
        return group

    def _voice_out_group(self, tts: TTSSettings) -> QGroupBox:
        group = QGroupBox("Voice out")
        form = QFormLayout(group)
        self.tts_engine = _combo(TTS_ENGINES, tts.engine)
        self.voice = QLineEdit(tts.voice or "")
        self.voice.setPlaceholderText("the engine's default voice")
        self.rate = QSpinBox()
        self.rate.setRange(60, 400)
        self.rate.setValue(tts.rate)
        self.rate.setSuffix(" words/min")
        form.addRow("Engine", self.tts_engine)
        form.addRow("Voice", self.voice)
        form.addRow("Rate", self.rate)
        return group

    def _avatar_group(self, avatar: AvatarSettings, agent: AgentSettings) -> QGroupBox:
        group = QGroupBox("Avatar and privacy")
        form = QFormLayout(group)
        self.avatar_pack = QLineEdit(str(avatar.pack) if avatar.pack else "")
        self.avatar_pack.setPlaceholderText("the default character")
        self.confirm_screenshots = QCheckBox("Ask me before each screenshot")
        self.confirm_screenshots.setChecked(agent.confirm_screenshots)
        form.addRow("Avatar pack folder", self.avatar_pack)
        form.addRow("Screenshots", self.confirm_screenshots)
        return group

    def _on_provider_changed(self) -> None:
        hosted = self.provider.currentData() != EMBEDDED
        for widget in (self.base_url, self.api_key):
            widget.setEnabled(hosted)
        self.base_url.setEnabled(self.provider.currentData() in ("openai-compatible", "ollama"))

    # -- result ----------------------------------------------------------------------------

    def edited_settings(self) -> Settings:
        """The settings as the dialog shows them; raises ValueError with a message."""
        new = self._original.model_copy(deep=True)
        provider = str(self.provider.currentData())
        name = self.model_name.text().strip()
        if provider == EMBEDDED:
            name = name or "smollm2"
        elif not name:
            raise ValueError("Enter the model's name (as the provider spells it).")
        base_url = self.base_url.text().strip() or None
        if provider == "openai-compatible" and not base_url:
            raise ValueError("An OpenAI-compatible server needs its base URL.")
        if base_url and not base_url.startswith(("http://", "https://")):
            raise ValueError("The base URL starts with http:// or https://.")
        key = self.api_key.text().strip()
        device_text = self.mic_device.text().strip()
        device: str | int | None = device_text or None
        if device_text.isdigit():
            device = int(device_text)
        try:
            new.chat = ChatSettings.model_validate(
                {
                    **new.chat.model_dump(),
                    "model": f"{provider}/{name}",
                    "base_url": base_url if provider != EMBEDDED else None,
                    "api_key": SecretStr(key) if key else new.chat.api_key,
                }
            )
            new.speech = SpeechSettings.model_validate(
                {**new.speech.model_dump(), "adapter": self.speech_adapter.currentData()}
            )
            new.audio = AudioSettings.model_validate(
                {
                    **new.audio.model_dump(),
                    "mic_mode": self.mic_mode.currentData(),
                    "input_device": device,
                }
            )
            new.tts = TTSSettings.model_validate(
                {
                    **new.tts.model_dump(),
                    "engine": self.tts_engine.currentData(),
                    "voice": self.voice.text().strip() or None,
                    "rate": self.rate.value(),
                }
            )
            pack = self.avatar_pack.text().strip()
            new.avatar = AvatarSettings.model_validate(
                {**new.avatar.model_dump(), "pack": Path(pack).expanduser() if pack else None}
            )
            new.agent = AgentSettings.model_validate(
                {
                    **new.agent.model_dump(),
                    "confirm_screenshots": self.confirm_screenshots.isChecked(),
                }
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise ValueError(problems) from exc
        return new

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def accept(self) -> None:
        try:
            new = self.edited_settings()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        if self._save is not None:
            try:
                self._save(new)
            except OSError as exc:
                self.show_error(f"Could not save the settings: {exc}")
                return
        self.result_settings = new
        self.show_error("")
        super().accept()


__all__ = ["SettingsDialog"]

"""Settings round-trip to the TOML file (comments kept, keys in the keyring) and the
settings dialog (offscreen) edits, validates and saves them."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from pydantic import SecretStr
from PySide6.QtWidgets import QApplication, QLabel

from app.config import CONFIG_ENV, Settings, load_settings, save_settings
from app.ui.first_run import CheckResult, FirstRunGuide, check_system
from app.ui.settings_dialog import SettingsDialog


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv(CONFIG_ENV, str(path))
    for name in list(os.environ):
        if name.startswith("COMPANION_") and name != CONFIG_ENV:
            monkeypatch.delenv(name)
    return path


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def edited() -> Settings:
    settings = Settings()
    settings.chat.model = "openai-compatible/my-model"
    settings.chat.base_url = "http://127.0.0.1:8080/v1"
    settings.chat.api_key = SecretStr("sk-" + "very-secret-key-123456")
    settings.tts.rate = 150
    settings.audio.mic_mode = "push_to_talk"
    settings.agent.confirm_screenshots = True
    settings.ui.pet_geometry = {"HDMI-1": [10, 20, 300, 400]}
    settings.ui.first_run_done = True
    return settings


def test_a_saved_file_loads_back_equal(config_file: Path, memory_keyring: MemoryKeyring) -> None:
    settings = edited()
    save_settings(settings)
    assert load_settings() == settings


def test_a_key_is_never_written_in_clear_when_the_keyring_works(
    config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    save_settings(edited())
    text = config_file.read_text()
    assert "sk-" + "very-secret-key-123456" not in text
    assert 'api_key = "keyring:chat.api_key"' in text
    assert memory_keyring.store[("companion", "chat.api_key")] == "sk-" + "very-secret-key-123456"


def test_without_a_keyring_the_key_is_kept_in_the_file(config_file: Path, no_keyring: None) -> None:
    save_settings(edited())
    assert load_settings().chat.api_key == SecretStr("sk-" + "very-secret-key-123456")


def test_saving_keeps_the_users_comments_and_other_values(
    config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    config_file.write_text(
        '# my companion\n[persona]\nname = "Nova"  # she likes stars\n\n'
        "[tts]\n# slower\nrate = 120\n"
    )
    settings = load_settings()
    settings.tts.rate = 140
    save_settings(settings)
    text = config_file.read_text()
    assert "# my companion" in text and "# she likes stars" in text and "# slower" in text
    loaded = load_settings()
    assert loaded.persona.name == "Nova" and loaded.tts.rate == 140


def test_defaults_are_not_written_out(config_file: Path, memory_keyring: MemoryKeyring) -> None:
    save_settings(Settings())
    assert config_file.read_text().strip() == ""


def test_the_dialog_shows_and_saves_the_settings(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    dialog = SettingsDialog(Settings())
    assert dialog.provider.currentData() == "local"
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai-compatible"))
    dialog.model_name.setText("qwen")
    dialog.base_url.setText("http://localhost:1234/v1")
    dialog.api_key.setText("sk-" + "from-the-dialog-0000")
    dialog.rate.setValue(200)
    dialog.mic_mode.setCurrentIndex(dialog.mic_mode.findData("muted"))
    dialog.confirm_screenshots.setChecked(True)
    dialog.accept()
    assert dialog.result() == dialog.DialogCode.Accepted
    loaded = load_settings()
    assert loaded.chat.model == "openai-compatible/qwen"
    assert loaded.chat.base_url == "http://localhost:1234/v1"
    assert loaded.chat.api_key == SecretStr("sk-" + "from-the-dialog-0000")
    assert loaded.tts.rate == 200 and loaded.audio.mic_mode == "muted"
    assert loaded.agent.confirm_screenshots
    assert "sk-from-the-dialog" not in config_file.read_text()


def test_the_dialog_says_what_is_missing_and_does_not_save(
    qapp: QApplication, config_file: Path
) -> None:
    saved: list[Settings] = []
    dialog = SettingsDialog(Settings(), save=saved.append)
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai-compatible"))
    dialog.model_name.setText("qwen")
    dialog.accept()
    assert not saved
    assert "base URL" in dialog.error_label.text()
    assert dialog.result() != dialog.DialogCode.Accepted


def test_an_empty_key_field_keeps_the_saved_key(qapp: QApplication) -> None:
    settings = edited()
    dialog = SettingsDialog(settings, save=None)
    dialog.accept()
    assert dialog.result_settings is not None
    assert dialog.result_settings.chat.api_key == SecretStr("sk-" + "very-secret-key-123456")


def test_the_shell_opens_the_dialog_and_applies_what_was_saved(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    from app.ui import MainWindow, Shell
    from tests.test_ui import ScriptedSession

    settings = Settings()
    window = MainWindow(ScriptedSession())
    shell = Shell(window.session, window, ui=settings.ui, use_tray=False, settings=settings)
    try:
        window.settings_requested.emit()
        dialog = shell.settings_dialog
        assert dialog is not None and dialog.isVisible()
        dialog.rate.setValue(222)
        dialog.accept()
        assert settings.tts.rate == 222
        assert load_settings().tts.rate == 222
        assert "Settings saved" in window.notice_label.text()
    finally:
        shell.dispose()
        window.close()


# -- the first-run guide -------------------------------------------------------------------


def fake_checks(settings: Settings) -> list[CheckResult]:
    return [
        CheckResult("Microphone", False, "none found; you can type"),
        CheckResult("Speaker", True, "Speakers (USB)"),
        CheckResult("Embedded chat model", True, "smollm2.gguf"),
    ]


def test_the_guide_reports_what_it_found(qapp: QApplication) -> None:
    guide = FirstRunGuide(Settings(), checks=fake_checks, save=None)
    guide.start_checks()
    text = guide.checks_label.text()
    assert "Microphone" in text and "none found" in text
    assert "Speakers (USB)" in text and "smollm2.gguf" in text


def test_the_real_checks_name_the_mic_speaker_and_models() -> None:
    names = [r.name for r in check_system(Settings())]
    assert names == ["Microphone", "Speaker", "Embedded chat model", "Voice detection model"]


def test_the_guide_explains_screenshots_and_keeps_the_choice(qapp: QApplication) -> None:
    saved: list[Settings] = []
    guide = FirstRunGuide(Settings(), checks=fake_checks, save=saved.append)
    guide.next()
    labels = guide.pages.currentWidget().findChildren(QLabel)
    assert any("screenshot" in label.text().lower() for label in labels)
    guide.ask_screenshots.setChecked(True)
    guide.next()
    assert guide.next_button.text() == "Start talking"
    guide.use_embedded.setChecked(True)
    guide.next()
    assert saved and saved[0].ui.first_run_done
    assert saved[0].agent.confirm_screenshots
    assert saved[0].chat.model == "local/smollm2"
    assert guide.result() == guide.DialogCode.Accepted


def test_the_guide_can_pick_a_hosted_model(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings()
    guide = FirstRunGuide(settings, checks=fake_checks)
    guide.next()
    guide.next()
    guide.use_hosted.setChecked(True)
    guide.next()  # no model name yet
    assert "model's name" in guide.model_error.text()
    assert not settings.ui.first_run_done
    guide.provider.setCurrentIndex(guide.provider.findData("anthropic"))
    guide.model_name.setText("claude-sonnet-4-5")
    guide.api_key.setText("sk-ant-secret-000000")
    guide.next()
    loaded = load_settings()
    assert loaded.ui.first_run_done
    assert loaded.chat.model == "anthropic/claude-sonnet-4-5"
    assert loaded.chat.api_key == SecretStr("sk-ant-secret-000000")
    assert "sk-ant-secret" not in config_file.read_text()


def test_the_shell_shows_the_guide_only_until_it_is_done(qapp: QApplication) -> None:
    from app.ui import MainWindow, Shell
    from tests.test_ui import ScriptedSession

    for done in (False, True):
        settings = Settings()
        settings.ui.first_run_done = done
        window = MainWindow(ScriptedSession())
        shell = Shell(window.session, window, ui=settings.ui, use_tray=False, settings=settings)
        try:
            shell.show_initial()
            assert (shell.first_run_guide is not None) is (not done)
        finally:
            if shell.first_run_guide is not None:
                shell.first_run_guide.reject()
            shell.dispose()
            window.close()

"""The settings dialog in a person's words, on real Qt widgets (offscreen): every label
and every choice is named, never a raw identifier; each field's help is shown under it;
values set by an environment variable or a command-line option are locked and say why;
a key field says when the key is in the system keyring; maps and lists have real
editors whose values reach the saved TOML file; "automatic" shows no stray number."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, SecretStr
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLabel, QPlainTextEdit

from app.config import Settings, load_settings, save_settings
from app.ui.first_run import FirstRunGuide
from app.ui.settings_dialog import SettingsDialog, walk_fields
from app.ui.settings_fields import CHOICE_LABELS, LABELS
from app.ui.settings_tables import EntriesEditor, KeyValueEditor, ListEditor
from tests import test_ui_settings as dialog_tests
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_ui_settings import MemoryKeyring, hosted_dialog, run_check

# The dialog's own fixtures: a QApplication, an empty config file, an in-memory keyring.
qapp = dialog_tests.qapp
config_file = dialog_tests.config_file
memory_keyring = dialog_tests.memory_keyring

# A raw identifier: snake_case (whisper_local), a code like zh_CN, or one of the engine
# and mode names the issue found on screen.
RAW = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b|\b(?:pyttsx3|hibari|aec|pcm)\b|^(?:auto|chat)$")


def _shown_texts(dialog: SettingsDialog) -> list[str]:
    """Every label, checkbox text and list choice the dialog shows (help lines aside:
    they may name a variable such as OPENAI_API_KEY)."""
    texts: list[str] = []
    for label in dialog.findChildren(QLabel):
        if label.objectName() not in ("fieldHelp", "fieldLocked", "keyStored"):
            texts.append(label.text())
    texts += [box.text() for box in dialog.findChildren(QCheckBox)]
    for box in dialog.findChildren(QComboBox):
        if box.isEditable():  # a device list: the system's own names
            continue
        texts += [box.itemText(i) for i in range(box.count())]
    return [t for t in texts if t]


def test_every_choice_of_every_list_has_a_name_in_words(qapp: QApplication) -> None:
    settings = Settings()
    dialog = SettingsDialog(settings, save=None)
    lists = 0
    for _section, path, _field, kind, _value in walk_fields(Settings, settings):
        if kind.kind != "choice":
            continue
        lists += 1
        box = dialog.editors[path].input
        assert isinstance(box, QComboBox), path
        for choice in kind.choices:
            assert choice in CHOICE_LABELS.get(path, {}), (path, choice)
            shown = box.itemText(box.findData(choice))
            assert shown != str(choice) and not RAW.search(shown), (path, choice, shown)
    assert lists >= 10  # the whole model, not a few
    speech = dialog.editors["speech.adapter"].input
    assert speech.currentText() == "Built-in (Whisper tiny, English)"
    engine = dialog.editors["tts.engine"].input
    assert engine.itemText(engine.findData("pyttsx3")) == "System voice"
    assert engine.itemText(engine.findData("hibari")) == "Natural voice (Hibari, offline)"


def test_no_label_is_a_raw_name_and_every_field_shows_its_help(qapp: QApplication) -> None:
    settings = Settings()
    dialog = SettingsDialog(settings, save=None)
    dialog.resize(640, 600)
    dialog.show()
    try:
        for path, editor in dialog.editors.items():
            # Every label is chosen in words (not made from the field's name).
            label = dialog._label(path, editor.field)
            assert path in LABELS and "_" not in label, path
            # The help is a visible line under the field, whole (wrapped, never cut).
            assert editor.field.description, path
            assert editor.help.text() and not editor.help.isHidden(), path
            assert editor.help.wordWrap(), path
        texts = _shown_texts(dialog)
        raw = [t for t in texts if RAW.search(t)]
        assert not raw, raw
        for seen in ("Let me interrupt by speaking", "Sentences prepared ahead"):
            assert seen in texts
        assert "Barge in" not in texts and "Lookahead" not in texts
        assert "Enable tool" not in texts and "Require detailed" not in texts
    finally:
        dialog.close()


def test_automatic_numbers_show_no_number(qapp: QApplication) -> None:
    """ "Context window 1" greyed looked like the value used: automatic shows none."""
    dialog = SettingsDialog(Settings(), save=None)
    editor = dialog.editors["agent.context_window"]
    assert editor.automatic is not None and editor.automatic.isChecked()  # type: ignore[attr-defined]
    assert editor.spin.isHidden()  # type: ignore[attr-defined]
    editor.automatic.setChecked(False)  # type: ignore[attr-defined]
    assert not editor.spin.isHidden()  # type: ignore[attr-defined]
    assert editor.value() == editor.spin.value() >= 256  # type: ignore[attr-defined]


def test_expert_fields_are_under_advanced(qapp: QApplication) -> None:
    dialog = SettingsDialog(Settings(), save=None)
    advanced = dialog.tabs.widget(dialog._tab_index["advanced"])
    for path in ("tts.lookahead", "vad.start_threshold", "turn.pause_ms", "chat.local_context"):
        assert advanced.isAncestorOf(dialog.editors[path].widget), path
    model = dialog.tabs.widget(dialog._tab_index["model"])
    assert model.isAncestorOf(dialog.editors["chat.api_key"].widget)


def test_a_value_set_by_the_environment_is_locked_and_says_why(
    qapp: QApplication, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_TTS__RATE", "222")
    settings = load_settings()
    assert settings.tts.rate == 222
    dialog = SettingsDialog(settings)
    rate = dialog.editors["tts.rate"]
    assert rate.locked and not rate.input.isEnabled()
    assert not rate.lock_note.isHidden()
    assert "COMPANION_TTS__RATE" in rate.lock_note.text()
    assert "COMPANION_TTS__RATE" in rate.input.toolTip()
    other = dialog.editors["tts.lookahead"]
    assert not other.locked and other.input.isEnabled() and other.lock_note.isHidden()
    dialog.accept()
    assert "rate" not in config_file.read_text() if config_file.exists() else True


def test_a_value_set_by_a_command_line_option_is_locked_and_says_why(
    qapp: QApplication, config_file: Path
) -> None:
    settings = Settings()
    settings.chat.model = "openai/gpt-4o-mini"
    settings.set_by_option("chat.model", "--model")
    dialog = SettingsDialog(settings)
    route = dialog.editors["chat.model"]
    assert route.locked and "--model" in route.lock_note.text()
    assert not dialog.provider.isEnabled() and not dialog.model_name.isEnabled()
    # Choosing another provider elsewhere does not unlock it.
    route.set_enabled(True)
    assert not dialog.provider.isEnabled()
    dialog.accept()
    assert not config_file.exists() or "gpt-4o-mini" not in config_file.read_text()


def test_a_key_in_the_keyring_is_said_though_the_field_is_empty(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings()
    settings.chat.model = "openai/gpt-4o-mini"
    settings.chat.api_key = SecretStr("sk-" + "stored-in-the-keyring-000")
    save_settings(settings)
    assert "keyring:chat.api_key" in config_file.read_text()
    dialog = SettingsDialog(load_settings())
    key = dialog.editors["chat.api_key"]
    assert dialog.api_key.text() == ""  # the key itself is never shown
    assert key.stored.text() == "A key is stored in the system keyring."  # type: ignore[attr-defined]
    assert not key.stored.isHidden()  # type: ignore[attr-defined]
    assert dialog.editors["tts.api_key"].stored.isHidden()  # type: ignore[attr-defined]
    # The file points to the keyring, but the keyring lost the key: say so.
    memory_keyring.store.clear()
    dialog = SettingsDialog(load_settings())
    stored = dialog.editors["chat.api_key"].stored  # type: ignore[attr-defined]
    assert "keyring has none" in stored.text() and not stored.isHidden()


def test_the_hotkey_table_round_trips_to_the_saved_file(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings()
    settings.avatar.vtube_studio.hotkeys = {"joy": "Smile"}
    save_settings(settings)
    dialog = SettingsDialog(load_settings())
    table = dialog.editors["avatar.vtube_studio.hotkeys"]
    assert isinstance(table, KeyValueEditor)
    assert table.rows() == [("joy", "Smile")]
    assert table.table.horizontalHeaderItem(0).text() == "Expression"
    table.add_row("sad", "Cry")
    table.add_row("", "")  # an empty row is left out
    dialog.accept()
    saved = tomllib.loads(config_file.read_text())
    assert saved["avatar"]["vtube_studio"]["hotkeys"] == {"joy": "Smile", "sad": "Cry"}
    assert load_settings().avatar.vtube_studio.hotkeys == {"joy": "Smile", "sad": "Cry"}
    # A value without a name is refused in words, and nothing is saved.
    dialog = SettingsDialog(load_settings())
    table = dialog.editors["avatar.vtube_studio.hotkeys"]
    assert isinstance(table, KeyValueEditor)
    table.table.selectRow(0)
    table.remove_row()
    table.add_row("", "Wink")
    before = config_file.read_text()
    dialog.accept()
    assert dialog.result_settings is None
    assert "no name" in table.error.text()
    assert config_file.read_text() == before


class Playlist(BaseModel):
    songs: list[str] = Field(default_factory=list, description="Songs, in order.")
    volumes: dict[str, float] = Field(default_factory=dict, description="Each song's volume.")


class ListSettings(Settings):
    playlist: Playlist = Playlist()


def test_list_and_number_table_editors_read_back_what_was_typed(qapp: QApplication) -> None:
    settings = ListSettings()
    settings.playlist.songs = ["one", "two"]
    dialog = SettingsDialog(settings, save=None)
    songs = dialog.editors["playlist.songs"]
    assert isinstance(songs, ListEditor) and songs.items() == ["one", "two"]
    songs.add_item("three")
    songs.add_item("  ")
    volumes = dialog.editors["playlist.volumes"]
    assert isinstance(volumes, KeyValueEditor)
    volumes.add_row("one", "0.5")
    dialog.accept()
    result = dialog.result_settings
    assert isinstance(result, ListSettings)
    assert result.playlist.songs == ["one", "two", "three"]
    assert result.playlist.volumes == {"one": 0.5}
    volumes.add_row("two", "loud")
    with pytest.raises(ValueError):
        dialog.edited_settings()
    assert "“loud” is not a number" in volumes.error.text()


def _check_text(dialog: SettingsDialog) -> str:
    return str(dialog.model_check.result.text())


@pytest.mark.parametrize(
    "answer",
    [
        "hello hello hello hello hello hello hello hello hello",
        "<|im_start|>assistant<|im_end|>",
        '{"error": "model not loaded"}',
        "Say hello in five words or fewer.",
        "…",
    ],
)
def test_the_model_test_does_not_pass_a_bad_answer(qapp: QApplication, answer: str) -> None:
    with ScriptedChatServer([Reply.text_stream([answer])]) as server:
        dialog = hosted_dialog(server)
        run_check(dialog.model_check)
    assert dialog.model_check.ok is False, _check_text(dialog)
    assert _check_text(dialog).startswith("It did not answer:")


def test_the_model_test_passes_a_real_answer(qapp: QApplication) -> None:
    with ScriptedChatServer([Reply.text_stream(["Hi there, ", "nice to meet you!"])]) as server:
        dialog = hosted_dialog(server)
        run_check(dialog.model_check)
    assert dialog.model_check.ok, _check_text(dialog)


def test_mcp_servers_are_edited_field_by_field_and_reach_the_file(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    """No JSON box: each server is a box with its program, arguments, environment
    variables (a table) and the rest, and what is typed there is what the file gets."""
    from app.config.tools import McpServerSettings

    settings = Settings()
    settings.mcp.servers = {
        "files": McpServerSettings(command=["npx", "server files"], env={"ROOT": "/tmp"})
    }
    save_settings(settings)
    dialog = SettingsDialog(load_settings())
    servers = dialog.editors["mcp.servers"]
    assert isinstance(servers, EntriesEditor)
    assert not isinstance(servers.input, QPlainTextEdit)
    (entry,) = servers.entries
    assert entry.name.text() == "files"
    command = entry.editors["command"]
    assert command.line.text() == "npx 'server files'"  # type: ignore[attr-defined]
    env = entry.editors["env"]
    assert isinstance(env, KeyValueEditor) and env.rows() == [("ROOT", "/tmp")]
    assert env.table.horizontalHeaderItem(0).text() == "Variable"
    assert isinstance(entry.editors["args"], ListEditor)
    assert not entry.editors["env"].help.isHidden()
    env.add_row("TOKEN_FILE", "~/token")
    added = servers.add_entry("", None)
    added.name.setText("clock")
    added.editors["command"].line.setText("clock-server --utc")  # type: ignore[attr-defined]
    added.editors["args"].add_item("--quiet")  # type: ignore[attr-defined]
    dialog.accept()
    assert dialog.result_settings is not None, dialog.error_label.text()
    saved = tomllib.loads(config_file.read_text())["mcp"]["servers"]
    assert saved["files"]["env"] == {"ROOT": "/tmp", "TOKEN_FILE": "~/token"}
    assert saved["clock"]["command"] == "clock-server --utc"
    assert saved["clock"]["args"] == ["--quiet"]
    loaded = load_settings().mcp.servers
    assert loaded["clock"].args == ["--quiet"] and loaded["files"].env["TOKEN_FILE"] == "~/token"
    # A server without a name, or without a program, is refused in words.
    dialog = SettingsDialog(load_settings())
    servers = dialog.editors["mcp.servers"]
    assert isinstance(servers, EntriesEditor)
    servers.add_entry("", None)
    with pytest.raises(ValueError):
        dialog.edited_settings()
    assert "no name" in servers.error.text()


def test_the_providers_are_named_as_their_makers_name_them(qapp: QApplication) -> None:
    dialog = SettingsDialog(Settings(), save=None)
    guide = FirstRunGuide(Settings(), checks=[], save=None)
    for box in (dialog.provider, guide.provider):
        shown = [box.itemText(i) for i in range(box.count())]
        assert "OpenAI" in shown and "Anthropic (Claude)" in shown
        assert "Another OpenAI-compatible server" in shown
        assert not {"openai", "anthropic", "openai-compatible", "local"} & set(shown)


def test_the_command_line_notes_which_fields_its_options_set(config_file: Path) -> None:
    """What `companion --model X --base-url Y` passes to the window: the values and,
    for the settings dialog, which option set them (kept through a copy)."""
    from app.cli import _settings, build_parser
    from app.redaction import Redactor

    args = build_parser().parse_args(["--model", "openai/gpt-4o-mini", "--base-url", "http://h/v1"])
    settings = _settings(args, Redactor())
    assert settings.chat.model == "openai/gpt-4o-mini"
    assert settings.command_line == {"chat.model": "--model", "chat.base_url": "--base-url"}
    assert settings.model_copy(deep=True).command_line == settings.command_line
    assert load_settings().command_line == {}

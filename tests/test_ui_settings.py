"""Settings round-trip to the TOML file (comments kept, keys in the keyring) and the
settings dialog (offscreen): generated from the whole config model, it edits,
validates and saves them, never writes what came from `COMPANION_*` variables, and its
Test buttons reach a real model server on loopback, a real PulseAudio device and a
real espeak-ng voice."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import subprocess
import sys
import typing
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, Literal

import keyring
import numpy as np
import pytest
import qasync
from keyring.backend import KeyringBackend
from keyring.backends import fail
from pydantic import BaseModel, Field, SecretStr
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
)

from app import checks
from app.audio.capture import ChunkListSource, WavFileSource
from app.audio.playback import Heard, MemorySink
from app.audio.wav import read_wav_16k
from app.config import CONFIG_ENV, Settings, load_settings, save_settings
from app.ui.app import release_loop_timers
from app.ui.checks import CheckPanel
from app.ui.settings_dialog import (
    HIDDEN,
    TABS,
    ModelRouteEditor,
    SecretEditor,
    SettingsDialog,
    tab_of,
    walk_fields,
)
from app.ui.settings_words import HELP
from tests.conftest import speak_to_wav
from tests.llm_servers import Reply, ScriptedChatServer
from tests.pulse import MONITOR, SINK, PulseServer, PulseUnavailable


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


# -- the generated dialog ------------------------------------------------------------------


def run_on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run `coro` on a qasync loop, as the app does (Qt events flow meanwhile).

    qasync does not install asyncio's async-generator hooks as `run_forever` normally
    does, so an async generator dropped inside the HTTP stack would be finalized with
    no loop running (a warning); installed here, it is closed on the loop."""
    loop = qasync.QEventLoop(QApplication.instance())
    hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook
    )
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        sys.set_asyncgen_hooks(*hooks)
        loop.close()
        release_loop_timers(loop)  # else a later GC on another thread crashes Qt


def leaf_paths(settings: Settings) -> list[str]:
    return [path for _, path, _, _, _ in walk_fields(type(settings), settings)]


def tab_holding(dialog: SettingsDialog, path: str) -> str:
    (title,) = [
        dialog.tabs.tabText(i)
        for i in range(dialog.tabs.count())
        if dialog.tabs.widget(i).isAncestorOf(dialog.editors[path].widget)
    ]
    return title


def test_every_config_field_gets_an_editor_in_its_tab(qapp: QApplication) -> None:
    dialog = SettingsDialog(Settings(), save=None)
    paths = leaf_paths(Settings())
    assert set(dialog.editors) == set(paths)
    assert len(paths) > 60  # the whole model, not a hand-picked few
    assert not HIDDEN & set(dialog.editors)
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == [t for _, t in TABS]
    expected = {
        "chat.api_key": "Model",
        "agent.vision_model": "Model",
        "speech.adapter": "Voice in",
        "vad.end_silence_ms": "Voice in",
        "audio.mic_mode": "Voice in",
        "audio.output_device": "Voice out",
        "tts.rate": "Voice out",
        "avatar.vtube_studio.port": "Avatar",
        "persona.name": "Behaviour",
        "agent.max_tool_rounds": "Advanced",  # expert tuning
        "agent.enable_tool": "Behaviour",
        "agent.confirm_screenshots": "Privacy",
        "agent.allow_clipboard": "Privacy",
        "tools": "Advanced",
        "mcp.servers": "Advanced",
    }
    for path, title in expected.items():
        assert tab_holding(dialog, path) == title, path
    for path in paths:  # every field is in exactly one tab
        tab_holding(dialog, path)


def test_each_field_type_gets_its_kind_of_editor(qapp: QApplication) -> None:
    from app.config import SpeechSettings

    dialog = SettingsDialog(Settings(), save=None)

    def widget(path: str) -> Any:
        return dialog.editors[path].input

    assert isinstance(widget("audio.barge_in"), QCheckBox)
    adapter = widget("speech.adapter")
    assert isinstance(adapter, QComboBox)
    choices = typing.get_args(SpeechSettings.model_fields["adapter"].annotation)
    assert [adapter.itemData(i) for i in range(adapter.count())] == list(choices)
    silence = widget("vad.end_silence_ms")
    assert isinstance(silence, QSpinBox)
    assert (silence.minimum(), silence.maximum(), silence.value()) == (100, 5000, 640)
    threshold = widget("vad.start_threshold")
    assert isinstance(threshold, QDoubleSpinBox)
    assert (threshold.minimum(), threshold.maximum()) == (0.0, 1.0)
    assert widget("speech.timeout_s").minimum() > 0  # gt=0
    assert isinstance(dialog.editors["chat.api_key"], SecretEditor)
    assert widget("chat.api_key").echoMode() == QLineEdit.EchoMode.Password
    assert widget("agent.vision_api_key").echoMode() == QLineEdit.EchoMode.Password
    assert isinstance(dialog.editors["chat.model"], ModelRouteEditor)
    assert isinstance(widget("persona.name"), QLineEdit) and widget("persona.name").text() == "Mika"
    assert isinstance(widget("tools"), QPlainTextEdit)
    vision = widget("agent.chat_supports_vision")  # bool | None: automatic, yes, no
    assert [vision.itemData(i) for i in range(vision.count())] == [None, True, False]
    temperature = dialog.editors["chat.temperature"]
    assert getattr(temperature, "automatic", None) is not None


class WeatherSettings(BaseModel):
    """Weather reports for where you live."""

    city: str = Field("Paris", description="The city the forecast is for.")
    units: Literal["metric", "imperial"] = "metric"
    days: int = Field(3, ge=1, le=10)


class MoreSettings(Settings):
    weather: WeatherSettings = WeatherSettings()


def test_a_new_config_section_appears_by_itself_in_advanced(qapp: QApplication) -> None:
    assert tab_of("weather.city") == "advanced"
    dialog = SettingsDialog(MoreSettings(), save=None)
    city = dialog.editors["weather.city"]
    assert tab_holding(dialog, "weather.city") == "Advanced"
    assert city.input.toolTip() == "The city the forecast is for."
    days = dialog.editors["weather.days"].input
    assert isinstance(days, QSpinBox) and (days.minimum(), days.maximum()) == (1, 10)
    units = dialog.editors["weather.units"].input
    units.setCurrentIndex(units.findData("imperial"))
    dialog.accept()
    result = dialog.result_settings
    assert isinstance(result, MoreSettings) and result.weather.units == "imperial"


def test_problems_are_shown_next_to_their_fields_and_nothing_is_saved(
    qapp: QApplication,
) -> None:
    saved: list[Settings] = []
    dialog = SettingsDialog(Settings(), save=saved.append)
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai-compatible"))
    dialog.model_name.setText("qwen")
    dialog.editors["tools"].input.setPlainText('{"weather": {"description": "no command"}}')
    servers = dialog.editors["mcp.servers"]
    entry = servers.add_entry("", None)  # type: ignore[attr-defined]  # a server without a name
    dialog.tabs.setCurrentIndex(dialog.tabs.count() - 1)
    dialog.accept()
    assert not saved and dialog.result() != dialog.DialogCode.Accepted
    errors = {path: e.error.text() for path, e in dialog.editors.items() if not e.error.isHidden()}
    assert set(errors) == {"chat.base_url", "tools", "mcp.servers"}
    assert "base URL" in errors["chat.base_url"]
    assert "weather.command" in errors["tools"] and "required" in errors["tools"].lower()
    assert "no name" in errors["mcp.servers"]
    summary = dialog.error_label.text()
    assert "Not saved" in summary and "base URL" in summary and "no name" in summary
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Model"  # the first problem
    # Fixed, it saves, and the errors are gone.
    dialog.base_url.setText("http://127.0.0.1:9/v1")
    dialog.editors["tools"].input.setPlainText('{"weather": {"command": ["curl", "wttr.in"]}}')
    entry.name.setText("files")
    entry.editors["command"].line.setText("npx server-files")
    dialog.accept()
    assert dialog.result() == dialog.DialogCode.Accepted and len(saved) == 1
    assert saved[0].tools["weather"].command == ["curl", "wttr.in"]
    assert saved[0].mcp.servers["files"].command == "npx server-files"
    assert all(e.error.isHidden() for e in dialog.editors.values())


def test_values_from_the_environment_are_not_written_to_the_file(
    qapp: QApplication,
    config_file: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config_file.write_text('[persona]\nname = "Nova"\n')
    monkeypatch.setenv("COMPANION_CHAT__MODEL", "openai/gpt-from-env")
    monkeypatch.setenv("COMPANION_CHAT__API_KEY", "sk-" + "env-secret-00000000")
    monkeypatch.setenv("COMPANION_TTS__RATE", "99")
    monkeypatch.setenv("COMPANION_AUDIO__VOLUME", "0.5")
    dialog = SettingsDialog(load_settings())
    assert "COMPANION_CHAT__MODEL" in dialog.editors["chat.model"].input.toolTip()
    dialog.editors["vad.end_silence_ms"].input.setValue(900)
    dialog.editors["audio.volume"].input.setValue(0.8)  # env-set, but changed here
    dialog.accept()
    assert dialog.result_settings is not None
    assert dialog.result_settings.chat.model == "openai/gpt-from-env"  # still in effect
    text = config_file.read_text()
    assert "gpt-from-env" not in text and "env-secret" not in text
    assert "api_key" not in text and "rate" not in text
    assert 'name = "Nova"' in text and "end_silence_ms = 900" in text and "volume = 0.8" in text
    assert not memory_keyring.store
    for name in ("COMPANION_CHAT__MODEL", "COMPANION_CHAT__API_KEY", "COMPANION_TTS__RATE"):
        monkeypatch.delenv(name)
    monkeypatch.delenv("COMPANION_AUDIO__VOLUME")
    loaded = load_settings()
    assert loaded.chat.model == "local/qwen2.5-coder-1.5b" and loaded.tts.rate == 175
    assert loaded.vad.end_silence_ms == 900 and loaded.audio.volume == 0.8
    assert loaded.persona.name == "Nova"


def test_a_broken_file_is_named_and_not_saved_over(qapp: QApplication, config_file: Path) -> None:
    dialog = SettingsDialog(Settings())
    config_file.write_text("[chat\nmodel = ")  # broken after the dialog opened
    dialog.rate.setValue(150)
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted and dialog.result_settings is None
    message = dialog.error_label.text()
    assert message.startswith("Could not save the settings:")
    assert str(config_file) in message and "cannot be read" in message
    assert config_file.read_text() == "[chat\nmodel = "


def test_forget_removes_a_saved_key(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    save_settings(edited())
    dialog = SettingsDialog(load_settings())
    editor = dialog.editors["chat.api_key"]
    assert isinstance(editor, SecretEditor)
    assert "saved" in dialog.api_key.placeholderText()
    editor.forget.click()
    dialog.accept()
    assert load_settings().chat.api_key is None
    assert "api_key" not in config_file.read_text()


def test_unchanged_fields_stay_unset(qapp: QApplication, config_file: Path) -> None:
    """The character file's name wins unless the persona name was set: the dialog must
    not mark every field as set."""
    dialog = SettingsDialog(load_settings(), save=None)
    dialog.accept()
    assert dialog.result_settings is not None
    assert "name" not in dialog.result_settings.persona.model_fields_set
    dialog = SettingsDialog(load_settings(), save=None)
    dialog.editors["persona.name"].input.setText("Nova")
    dialog.accept()
    assert dialog.result_settings is not None
    assert "name" in dialog.result_settings.persona.model_fields_set


# -- the model test --------------------------------------------------------------------------


def hosted_dialog(server: ScriptedChatServer, key: str = "sk-" + "test-key-00000000") -> Any:
    dialog = SettingsDialog(Settings(), save=None)
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai-compatible"))
    dialog.model_name.setText("scripted")
    dialog.base_url.setText(server.base_url)
    dialog.api_key.setText(key)
    return dialog


def run_check(panel: CheckPanel) -> None:
    async def go() -> None:
        task = panel.run()
        assert task is not None
        assert not panel.button.isEnabled()  # one test at a time
        await task

    run_on_loop(go())
    assert panel.button.isEnabled()


def test_the_model_test_sends_one_short_request(qapp: QApplication, config_file: Path) -> None:
    with ScriptedChatServer([Reply.text_stream(["Hello", " there!"])]) as server:
        dialog = hosted_dialog(server)
        run_check(dialog.model_check)
        assert dialog.model_check.result.text() == "It answered: “Hello there!”"
        assert dialog.model_check.ok
        (request,) = server.requests
        body = request.json()
        assert body["model"] == "scripted"
        assert body["messages"][-1]["content"] == checks.MODEL_PROMPT
        assert request.headers["authorization"] == "Bearer sk-" + "test-key-00000000"
    assert not config_file.exists()  # testing saves nothing


def test_the_model_test_says_what_went_wrong(qapp: QApplication) -> None:
    refusal = Reply.error(401, {"error": {"message": "Incorrect API key provided"}})
    key = "sk-" + "wrong-key-0000000000"
    with ScriptedChatServer([refusal]) as server:
        dialog = hosted_dialog(server, key)
        run_check(dialog.model_check)
    text = dialog.model_check.result.text()
    assert text.startswith("It did not answer:") and "API key" in text
    assert key not in text and "wrong-key" not in text
    assert dialog.model_check.ok is False


def test_the_model_test_waits_for_valid_settings(qapp: QApplication) -> None:
    with ScriptedChatServer([Reply.text_stream(["Hi"])]) as server:
        dialog = hosted_dialog(server)
        dialog.base_url.setText("")  # openai-compatible needs one
        assert dialog.model_check.run() is None
        assert "Fix the settings" in dialog.model_check.result.text()
        assert not dialog.editors["chat.base_url"].error.isHidden()
        assert not server.requests


# -- the microphone and voice tests ------------------------------------------------------------


def test_the_microphone_test_records_three_seconds_and_plays_them_back(
    qapp: QApplication, tmp_path: Path
) -> None:
    clip = speak_to_wav("Testing the microphone, one two three four five.", tmp_path / "m.wav")
    dialog = SettingsDialog(Settings(), save=None)
    sink = MemorySink()
    dialog.mic_check.source_factory = lambda s: WavFileSource(clip, trailing_silence_s=2.0)
    dialog.mic_check.sink_factory = lambda s: sink
    run_check(dialog.mic_check)
    result = dialog.mic_check.last
    assert result is not None
    assert result.recorded_s == pytest.approx(checks.MIC_TEST_S)
    assert result.pcm == read_wav_16k(clip)[: len(result.pcm)]  # the start of what it heard
    assert sink.pcm == result.pcm  # played back, all of it
    assert result.playback.heard is Heard.FULL
    assert max(dialog.mic_check.levels) > checks.SOUND_LEVEL  # the meter moved
    assert dialog.mic_check.meter.value() == 0  # and is back at rest
    assert dialog.mic_check.result.text() == "Done: you should have heard yourself."


def test_the_microphone_test_notices_silence(qapp: QApplication) -> None:
    dialog = SettingsDialog(Settings(), save=None)
    dialog.mic_check.source_factory = lambda s: ChunkListSource([b"\0" * 1024] * 100)
    dialog.mic_check.sink_factory = lambda s: MemorySink()
    run_check(dialog.mic_check)
    assert "only silence" in dialog.mic_check.result.text()
    assert dialog.mic_check.ok is False


def test_the_voice_test_speaks_with_the_configured_voice(qapp: QApplication) -> None:
    sink = MemorySink()
    fast = SettingsDialog(Settings(), save=None)
    fast.rate.setValue(300)
    fast.voice_check.sink_factory = lambda s: sink
    run_check(fast.voice_check)
    slow_sink = MemorySink()
    slow = SettingsDialog(Settings(), save=None)
    slow.rate.setValue(120)
    slow.voice_check.sink_factory = lambda s: slow_sink
    run_check(slow.voice_check)
    assert fast.voice_check.last is not None and slow.voice_check.last is not None
    assert fast.voice_check.last.heard is Heard.FULL
    samples = np.frombuffer(sink.pcm, dtype="<i2")
    assert np.abs(samples.astype(np.int32)).max() > 1000  # real speech, not silence
    # The dialog's (unsaved) rate is the one used: slower speech lasts longer.
    assert slow.voice_check.last.total_s > 1.5 * fast.voice_check.last.total_s
    assert fast.voice_check.result.text().startswith("Done")


# -- on a real sound device (a private PulseAudio server with a null sink) ---------------------


def _reload_portaudio() -> None:
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


@pytest.fixture(scope="module")
def pulse() -> Iterator[PulseServer]:
    server = PulseServer()
    try:
        server.start()
    except PulseUnavailable as exc:
        pytest.fail(f"PulseAudio could not start, so no audio device exists: {exc}", False)
    env = pytest.MonkeyPatch()
    for key, value in server.env(base={}, PULSE_SINK=SINK, PULSE_SOURCE=MONITOR).items():
        env.setenv(key, value)
    try:
        _reload_portaudio()
        yield server
    finally:
        server.stop()
        env.undo()
        _reload_portaudio()


def pulse_settings() -> Settings:
    settings = Settings()
    settings.audio.input_device = "pulse"
    settings.audio.output_device = "pulse"
    return settings


def loud_samples(samples: np.ndarray) -> int:
    return int(np.count_nonzero(np.abs(samples.astype(np.int32)) > 8))


@pytest.mark.timeout(90)
def test_the_microphone_test_on_a_real_device(
    qapp: QApplication, pulse: PulseServer, tmp_path: Path
) -> None:
    from tests.test_audio_devices import MonitorRecorder

    clip = speak_to_wav("One two three, can you hear me?", tmp_path / "hello.wav")
    dialog = SettingsDialog(pulse_settings(), save=None)
    panel = dialog.mic_check

    async def go() -> None:
        task = panel.run()
        assert task is not None
        while not panel.levels and not task.done():  # the microphone is open
            await asyncio.sleep(0.01)
        play = ["paplay", f"--device={SINK}", str(clip)]
        await asyncio.to_thread(subprocess.run, play, env=pulse.env(), check=True)
        await task

    with MonitorRecorder(pulse) as heard:
        run_on_loop(go())
    result = panel.last
    assert result is not None, panel.result.text()
    assert result.heard_sound and panel.ok, panel.result.text()
    assert result.recorded_s == pytest.approx(checks.MIC_TEST_S)
    assert result.playback.heard is Heard.FULL
    # The sink heard the words twice: from paplay, then played back by the test.
    assert loud_samples(heard.samples) > 1.5 * loud_samples(np.frombuffer(result.pcm, "<i2"))


@pytest.mark.timeout(90)
def test_the_voice_test_on_a_real_device(qapp: QApplication, pulse: PulseServer) -> None:
    from tests.test_audio_devices import MonitorRecorder

    dialog = SettingsDialog(pulse_settings(), save=None)
    with MonitorRecorder(pulse) as heard:
        run_check(dialog.voice_check)
    report = dialog.voice_check.last
    assert report is not None, dialog.voice_check.result.text()
    assert report.heard is Heard.FULL and report.total_s > 1.0
    assert loud_samples(heard.samples) > 0.5 * report.total_s * 16_000 * 0.5


def test_sound_devices_are_picked_from_the_system_list(
    qapp: QApplication, pulse: PulseServer
) -> None:
    from app.ui.settings_dialog import DeviceEditor

    settings = Settings()
    settings.audio.output_device = 7  # an index typed by hand earlier stays as it was
    dialog = SettingsDialog(settings, save=None)
    try:
        mic = dialog.editors["audio.input_device"]
        speaker = dialog.editors["audio.output_device"]
        assert isinstance(mic, DeviceEditor) and isinstance(speaker, DeviceEditor)
        listed = [mic.box.itemText(i) for i in range(mic.box.count())]
        assert listed[0] == "System default" and "pulse" in listed  # the real device
        assert mic.value() is None and not mic.changed()
        assert speaker.value() == 7
        mic.box.setCurrentIndex(listed.index("pulse"))
        assert mic.value() == "pulse" and mic.changed()
        mic.box.setEditText("2")
        assert mic.value() == 2  # an index
        mic.box.setEditText("USB headset (unplugged now)")
        assert mic.value() == "USB headset (unplugged now)"
    finally:
        dialog.close()


def test_every_number_field_offers_exactly_the_range_its_setting_allows(
    qapp: QApplication,
) -> None:
    import annotated_types

    from app.ui.settings_editors import NumberEditor

    dialog = SettingsDialog(Settings(), save=None)
    numbers = {p: e for p, e in dialog.editors.items() if isinstance(e, NumberEditor)}
    assert {"chat.timeout_s", "chat.max_tokens", "chat.temperature", "tts.rate"} <= set(numbers)
    for path, editor in numbers.items():
        spin = editor.spin
        step = 1 if isinstance(spin, QSpinBox) else 0.01
        for bound in editor.field.metadata:
            if isinstance(bound, annotated_types.Ge):
                assert spin.minimum() == pytest.approx(bound.ge), path
            elif isinstance(bound, annotated_types.Gt):
                assert spin.minimum() == pytest.approx(bound.gt + step), path
            elif isinstance(bound, annotated_types.Le):
                assert spin.maximum() == pytest.approx(min(bound.le, 2**31 - 1)), path
        # The help line under it says the range too (the description, or its plain-words
        # version, states it) and is visible, not only a tooltip.
        shown = HELP.get(path, str(editor.field.description))
        assert editor.help.text() == shown and not editor.help.isHidden(), path
        assert editor.input.toolTip().startswith(shown[:30]), path
    rate = numbers["tts.rate"].spin
    assert (rate.minimum(), rate.maximum()) == (60, 400)
    timeout = numbers["chat.timeout_s"].spin
    assert timeout.minimum() > 0 and timeout.maximum() == 3600
    assert "at most 3,600" in numbers["chat.timeout_s"].help.text()

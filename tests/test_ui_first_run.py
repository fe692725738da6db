"""The first-run guide (offscreen): it checks the microphone, the speaker and the
embedded models off the UI thread with progress shown, explains the screenshot
permission, tests the microphone, the voice and the chosen model, and saves the
choice of the embedded model or a hosted one (its key in the keyring)."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import threading
import time
from pathlib import Path

import pytest
from pydantic import SecretStr
from PySide6.QtWidgets import QApplication, QLabel

from app import checks
from app.audio.capture import WavFileSource
from app.audio.playback import Heard, MemorySink
from app.config import Settings, load_settings
from app.ui.first_run import FirstRunGuide, check_system
from tests import test_ui_settings as shared
from tests.conftest import speak_to_wav
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_ui_settings import MemoryKeyring, pulse_settings, run_check

# The settings tests' fixtures: a config file of its own, an in-memory keyring, the
# QApplication and a private PulseAudio server.
config_file = shared.config_file
memory_keyring = shared.memory_keyring
qapp = shared.qapp
pulse = shared.pulse

GUIDE_PAGES = 4


def walk(guide: FirstRunGuide, pages: int = GUIDE_PAGES, mode: str = "always_on") -> None:
    """Press Next `pages` times; on the listening page, choose `mode` first."""
    for _ in range(pages):
        if guide.pages.currentWidget() is guide.listening and guide.listening.mode is None:
            guide.listening.choose(mode)
        guide.next()


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    """Let Qt deliver queued signals until `predicate()` holds."""
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail("the guide did not get there in time", False)
        QApplication.processEvents()
        time.sleep(0.005)
    QApplication.processEvents()


def quiet_checks(seen: list[str] | None = None) -> list[checks.SystemCheck]:
    def microphone(settings: Settings) -> str:
        if seen is not None:
            seen.append(threading.current_thread().name)
        raise checks.CheckFailed("none found; you can type")

    return [
        ("Microphone", microphone),
        ("Speaker", lambda s: "Speakers (USB)"),
        ("Embedded chat model", lambda s: "smollm2.gguf (100 MB)"),
    ]


def finish_checks(guide: FirstRunGuide) -> None:
    guide.start_checks()
    wait_for(lambda: guide.checks_done)


# -- the checks -----------------------------------------------------------------------------


def test_the_guide_checks_off_the_ui_thread_and_reports_what_it_found(
    qapp: QApplication,
) -> None:
    seen: list[str] = []
    guide = FirstRunGuide(Settings(), checks=quiet_checks(seen), save=None)
    finish_checks(guide)
    assert seen and seen[0] != threading.main_thread().name
    text = guide.checks_label.text()
    assert "Microphone" in text and "none found" in text
    assert "Speakers (USB)" in text and "smollm2.gguf" in text
    assert [r.ok for r in guide.check_results] == [False, True, True]
    assert guide.checks_progress.value() == guide.checks_progress.maximum() == 3
    assert "Done" in guide.checks_status.text()


def test_the_guide_shows_progress_while_a_check_is_slow(qapp: QApplication) -> None:
    release = threading.Event()

    def slow_model(settings: Settings) -> str:
        release.wait(30)
        return "loaded"

    guide = FirstRunGuide(
        Settings(),
        checks=[("Microphone", lambda s: "USB mic"), ("Embedded chat model", slow_model)],
        save=None,
    )
    guide.start_checks()
    try:
        wait_for(lambda: guide.checks_progress.value() == 1)
        shown = guide.checks_status.text()
        assert "Checking your computer (2 of 2)" in shown and "model" not in shown
        assert "USB mic" in guide.checks_label.text()
        guide.next()  # the guide stays usable meanwhile
        assert guide.pages.currentIndex() == 1
    finally:
        release.set()
    wait_for(lambda: guide.checks_done)
    assert guide.checks_progress.value() == 2 and "loaded" in guide.checks_label.text()


def test_showing_the_guide_starts_the_checks_once(qapp: QApplication) -> None:
    calls: list[int] = []

    def count(settings: Settings) -> str:
        calls.append(1)
        return "ok"

    guide = FirstRunGuide(Settings(), checks=[("Speaker", count)], save=None)
    guide.show()
    wait_for(lambda: guide.checks_done)
    guide.hide()
    guide.show()
    QApplication.processEvents()
    assert calls == [1]
    guide.reject()


def test_the_real_checks_name_the_mic_speaker_and_models() -> None:
    names = [r.name for r in check_system(Settings())]
    assert names == [
        "Microphone",
        "Speaker",
        "Embedded chat model",
        "Voice detection model",
        "Turn model",
        "Speech recognition model",
    ]


def test_the_model_checks_look_at_the_files(tmp_path: Path) -> None:
    settings = Settings()
    settings.chat.local_model_path = tmp_path / "missing.gguf"
    settings.speech.model_path = tmp_path / "no-model"
    results = {r.name: r for r in check_system(settings)}
    assert not results["Embedded chat model"].ok
    assert "missing.gguf" in results["Embedded chat model"].text
    assert not results["Speech recognition model"].ok
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"\0" * 3_000_000)
    settings.chat.local_model_path = model
    settings.speech.adapter = "openai_transcribe"
    results = {r.name: r for r in check_system(settings)}
    assert results["Embedded chat model"].ok
    assert results["Embedded chat model"].detail == "your own file mine.gguf (3 MB)"
    assert results["Speech recognition model"].ok
    assert results["Speech recognition model"].detail == "an online service, OpenAI"


@pytest.mark.timeout(90)
def test_the_real_checks_find_a_real_microphone_and_speaker(
    qapp: QApplication,
    pulse: object,
) -> None:
    guide = FirstRunGuide(pulse_settings(), save=None)
    finish_checks(guide)
    results = {r.name: r for r in guide.check_results}
    assert results["Microphone"].ok and results["Microphone"].detail == "pulse"
    assert results["Speaker"].ok and results["Speaker"].detail == "pulse"
    assert guide.checks_progress.value() == len(guide.check_results) == len(checks.SYSTEM_CHECKS)


# -- trying the microphone and the speaker ------------------------------------------------


def test_the_guide_tries_the_microphone_and_the_speaker(qapp: QApplication, tmp_path: Path) -> None:
    clip = speak_to_wav("Hello, can you hear me well?", tmp_path / "hello.wav")
    guide = FirstRunGuide(Settings(), checks=quiet_checks(), save=None)
    assert guide.pages.currentIndex() == 0
    page = guide.pages.currentWidget()
    assert page.isAncestorOf(guide.mic_check) and page.isAncestorOf(guide.voice_check)
    played = MemorySink()
    guide.mic_check.source_factory = lambda s: WavFileSource(clip, trailing_silence_s=2.0)
    guide.mic_check.sink_factory = lambda s: played
    run_check(guide.mic_check)
    assert guide.mic_check.ok, guide.mic_check.result.text()
    assert played.pcm and guide.mic_check.last is not None
    assert played.pcm == guide.mic_check.last.pcm
    spoken = MemorySink()
    guide.voice_check.sink_factory = lambda s: spoken
    run_check(guide.voice_check)
    assert guide.voice_check.ok, guide.voice_check.result.text()
    assert guide.voice_check.last is not None and guide.voice_check.last.heard is Heard.FULL
    assert len(spoken.pcm) > 16_000  # more than a moment of speech


def test_the_guide_plays_both_voices_and_keeps_the_one_picked(qapp: QApplication) -> None:
    saved: list[Settings] = []
    guide = FirstRunGuide(Settings(), checks=quiet_checks(), save=saved.append)
    page = guide.pages.currentWidget()
    assert page.isAncestorOf(guide.system_voice_check) and guide.use_natural_voice.isChecked()
    natural, system = MemorySink(), MemorySink()
    guide.voice_check.sink_factory = lambda s: natural
    guide.system_voice_check.sink_factory = lambda s: system
    run_check(guide.voice_check)
    run_check(guide.system_voice_check)
    assert guide.voice_check.ok and guide.system_voice_check.ok
    assert natural.sample_rate == 24_000 and len(natural.pcm) > 24_000  # hibari
    assert system.sample_rate == 22_050 and len(system.pcm) > 22_050  # espeak-ng
    guide.use_system_voice.setChecked(True)
    walk(guide)
    assert saved and saved[0].tts.engine == "pyttsx3"
    again = FirstRunGuide(saved[0], checks=quiet_checks(), save=saved.append)
    assert again.use_system_voice.isChecked()
    again.use_natural_voice.setChecked(True)
    walk(again)
    assert saved[-1].tts.engine == "auto"


# -- screenshots and the model ------------------------------------------------------------


def test_the_guide_explains_screenshots_and_keeps_the_choice(qapp: QApplication) -> None:
    saved: list[Settings] = []
    guide = FirstRunGuide(Settings(), checks=quiet_checks(), save=saved.append)
    walk(guide, 2)
    labels = guide.pages.currentWidget().findChildren(QLabel)
    assert any("screenshot" in label.text().lower() for label in labels)
    assert any("notice" in label.text().lower() for label in labels)
    guide.ask_screenshots.setChecked(True)
    guide.next()
    assert guide.next_button.text() == "Start talking"
    guide.use_embedded.setChecked(True)
    guide.next()
    assert saved and saved[0].ui.first_run_done
    assert saved[0].agent.confirm_screenshots
    assert saved[0].chat.model == "local/qwen2.5-coder-1.5b"
    assert guide.result() == guide.DialogCode.Accepted


def test_the_guide_can_pick_a_hosted_model(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings()
    guide = FirstRunGuide(settings, checks=quiet_checks())
    walk(guide, GUIDE_PAGES - 1)
    guide.use_hosted.setChecked(True)
    guide.next()  # no model name yet
    assert "model's name" in guide.model_error.text()
    assert not settings.ui.first_run_done and not config_file.exists()
    guide.provider.setCurrentIndex(guide.provider.findData("anthropic"))
    guide.model_name.setText("claude-sonnet-4-5")
    guide.api_key.setText("sk-ant-secret-000000")
    guide.next()
    assert guide.result() == guide.DialogCode.Accepted
    loaded = load_settings()
    assert loaded.ui.first_run_done
    assert loaded.chat.model == "anthropic/claude-sonnet-4-5"
    assert loaded.chat.api_key == SecretStr("sk-ant-secret-000000")
    assert memory_keyring.store[("companion", "chat.api_key")] == "sk-ant-secret-000000"
    assert "sk-ant-secret" not in config_file.read_text()


def test_the_guide_tests_the_chosen_hosted_model(qapp: QApplication, config_file: Path) -> None:
    with ScriptedChatServer([Reply.text_stream(["Hi", ", I am here."])]) as server:
        guide = FirstRunGuide(Settings(), checks=quiet_checks(), save=None)
        guide.use_hosted.setChecked(True)
        guide.provider.setCurrentIndex(guide.provider.findData("openai-compatible"))
        guide.model_name.setText("scripted")
        guide.base_url.setText(server.base_url)
        guide.api_key.setText("sk-" + "guide-key-000000")
        run_check(guide.model_check)
        assert guide.model_check.result.text() == "It answered: “Hi, I am here.”"
        (request,) = server.requests
        assert request.json()["model"] == "scripted"
        assert request.headers["authorization"] == "Bearer sk-" + "guide-key-000000"
    assert not config_file.exists()  # a test changes nothing
    guide.base_url.setText("")
    assert guide.model_check.run() is None
    assert "base URL" in guide.model_error.text()


def test_finishing_does_not_write_values_from_the_environment(
    qapp: QApplication,
    config_file: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPANION_TTS__RATE", "99")
    monkeypatch.setenv("COMPANION_CHAT__API_KEY", "sk-" + "from-env-0000000")
    settings = load_settings()
    guide = FirstRunGuide(settings, checks=quiet_checks())
    walk(guide)
    assert guide.result() == guide.DialogCode.Accepted
    text = config_file.read_text()
    assert "first_run_done = true" in text
    assert "rate" not in text and "api_key" not in text and not memory_keyring.store
    assert settings.tts.rate == 99  # still in effect for this run


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
            guide = shell.first_run_guide
            assert (guide is not None) is (not done)
            if guide is not None:
                wait_for(lambda g=guide: g.checks_done)
                assert len(guide.check_results) == len(checks.SYSTEM_CHECKS)
        finally:
            if shell.first_run_guide is not None:
                shell.first_run_guide.reject()
            shell.dispose()
            window.close()


def test_a_key_already_saved_is_kept_when_the_field_is_left_empty(
    qapp: QApplication,
) -> None:
    settings = Settings()
    settings.chat.model = "openai/gpt-4o-mini"
    settings.chat.api_key = SecretStr("sk-" + "kept-key-000000000")
    saved: list[Settings] = []
    guide = FirstRunGuide(settings, checks=quiet_checks(), save=saved.append)
    assert "saved" in guide.api_key.placeholderText()
    assert guide.use_hosted.isChecked() and guide.model_name.text() == "gpt-4o-mini"
    walk(guide)
    assert settings.chat.api_key == SecretStr("sk-" + "kept-key-000000000")
    assert saved and saved[0].ui.first_run_done

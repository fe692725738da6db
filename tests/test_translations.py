"""The UI in Chinese: every text the UI shows is in the Chinese translation, the compiled
file matches its source, and the window really switches language."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QApplication

from app.ui.i18n import install_translators, resolve_language, translations_dir

ROOT = Path(__file__).resolve().parents[1]
TS = translations_dir() / "companion_zh_CN.ts"
QM = translations_dir() / "companion_zh_CN.qm"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("translations", ROOT / "scripts/translations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


def test_every_ui_text_has_a_chinese_translation(tmp_path: Path) -> None:
    # Extract the texts of today's sources into a copy of the committed translation:
    # a new tr() text without a translation shows up as unfinished.
    tools = script()
    ts = tmp_path / TS.name
    shutil.copy(TS, ts)
    generated = tmp_path / "generated_strings.py"
    tools.generate_settings_strings(generated)
    tools.update(ts, generated)
    missing = tools.unfinished(ts)
    assert missing == [], f"untranslated (run scripts/translations.py): {missing[:10]}"
    assert len(tools.unfinished(TS)) == 0


def test_the_compiled_translation_matches_its_source(tmp_path: Path) -> None:
    tools = script()
    fresh = tmp_path / QM.name
    tools.compile_qm(TS, fresh)
    assert fresh.read_bytes() == QM.read_bytes(), "run scripts/translations.py"


def test_the_window_speaks_chinese_and_back(qapp: QApplication) -> None:
    from app.ui.main_window import MainWindow
    from tests.ui_sessions import ScriptedSession

    try:
        assert install_translators(qapp, "zh_CN") == "zh_CN"
        window = MainWindow(ScriptedSession())
        assert window.send_button.text() == "发送"
        assert window.mode_box.itemText(1) != "Push to talk"
        assert any("\u4e00" <= c <= "\u9fff" for c in window.text_input.placeholderText())
        window.close()
    finally:
        assert install_translators(qapp, "en") == "en"
    window = MainWindow(ScriptedSession())
    assert window.send_button.text() == "Send"
    window.close()


def test_the_language_follows_the_system_when_automatic() -> None:
    assert (
        resolve_language("auto", QLocale(QLocale.Language.Chinese, QLocale.Country.China))
        == "zh_CN"
    )
    assert resolve_language("auto", QLocale(QLocale.Language.German)) == "en"
    assert resolve_language("zh_CN", QLocale(QLocale.Language.English)) == "zh_CN"
    assert resolve_language("klingon", QLocale(QLocale.Language.English)) == "en"


def test_a_damaged_translation_leaves_english(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / QM.name).write_bytes(b"\x00garbage")
    monkeypatch.setattr(sys.modules["app.ui.i18n"], "translations_dir", lambda: tmp_path)
    assert install_translators(qapp, "zh_CN") == "en"


def test_the_app_starts_in_the_configured_language(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from app.config import Settings
    from app.ui import run_window
    from app.ui.main_window import MainWindow
    from tests.ui_sessions import ScriptedSession

    monkeypatch.setenv("COMPANION_CONFIG", str(tmp_path / "config.toml"))
    settings = Settings()
    settings.ui.language = "zh_CN"
    settings.ui.first_run_done = True
    shown: list[str] = []

    def make() -> ScriptedSession:
        # The window is already shown when the session is made: read its text now.
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible():
                shown.append(widget.send_button.text())
        return ScriptedSession()

    try:
        assert run_window(make, quit_after_s=0.3, use_tray=False, settings=settings) == 0
    finally:
        install_translators(qapp, "en")
    assert shown == ["发送"]


def _literal(node: object) -> str | None:
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None  # an f-string or a variable: nothing fixed to look for


def test_every_translatable_call_in_the_ui_is_in_the_translation() -> None:
    # Belt and braces for lupdate: a text it cannot see (a context held in a variable,
    # a helper it does not know) would stay English without any other test noticing.
    import ast
    import xml.etree.ElementTree as ET

    sources = {m.findtext("source") for m in ET.parse(TS).getroot().iter("message")}
    calls: list[tuple[str, str]] = []
    for path in sorted((ROOT / "app" / "ui").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            if name in ("tr", "_tr") and node.args:
                text = _literal(node.args[0])
            elif name in ("translate", "QT_TRANSLATE_NOOP") and len(node.args) >= 2:
                text = _literal(node.args[1])
            else:
                continue
            if text is not None:
                calls.append((path.name, text))
    assert len(calls) > 150
    missing = [(f, t) for f, t in calls if t not in sources]
    assert missing == [], missing


def test_the_sessions_own_status_words_are_shown_translated(qapp: QApplication) -> None:
    from app.events import Status, StatusChanged
    from app.ui.main_window import MainWindow
    from tests.ui_sessions import ScriptedSession

    try:
        install_translators(qapp, "zh_CN")
        window = MainWindow(ScriptedSession())
        window.present(StatusChanged(Status.THINKING, "still waiting for gpt-4o-mini (7 s)"))
        assert window.status_label.text() == "思考中 — 仍在等待 gpt-4o-mini（7 秒）"
        window.present(StatusChanged(Status.THINKING, "still waiting for the local model (3 s)"))
        assert window.status_label.text() == "思考中 — 仍在等待 内置模型（3 秒）"  # all Chinese
        window.present(StatusChanged(Status.LISTENING, "interrupted"))
        assert "已打断" in window.status_label.text()
        window.present(StatusChanged(Status.ERROR, "HTTP 503 from the server"))
        # An error's words are shown as they came, once, among the notices.
        assert window.status_label.text() == "出错了"
        assert window.status_text().count("HTTP 503 from the server") == 1
        window.close()
    finally:
        install_translators(qapp, "en")


def test_the_embedded_model_s_preparation_is_told_in_chinese(qapp: QApplication) -> None:
    from app.events import Status, StatusChanged
    from app.session.services import PREPARING_WORDS
    from app.ui.status_line import StatusLine

    try:
        assert install_translators(qapp, "zh_CN") == "zh_CN"
        line = StatusLine()
        for stage, words in PREPARING_WORDS.items():
            counted = stage != "loading"  # loading has no steps: words alone
            line.show_status(StatusChanged(Status.LOADING, f"{words} (42 %)" if counted else words))
            shown = line.status_label.text()
            assert words not in shown and ("42 %" in shown) == counted
            assert any("\u4e00" <= c <= "\u9fff" for c in shown.split("—")[-1])
        line.close()
    finally:
        assert install_translators(qapp, "en") == "en"


def _device_messages() -> list[str]:
    """What the audio layer says when a device cannot be used, made by its own code."""
    from unittest import mock

    from app.audio import capture
    from app.audio.capture import MicrophoneUnavailable, describe_missing_device
    from app.audio.playback import PlaybackError, SoundDeviceSink

    said = []
    for names in ([], ["default", "pulse"]):
        with mock.patch.object(capture, "device_names", return_value=names):
            for device in (None, "USB Mic"):
                said.append(describe_missing_device("microphone", "input", device, ValueError("x")))
            with mock.patch("sounddevice.query_devices", side_effect=ValueError("no device")):
                try:
                    SoundDeviceSink.check_available(None)
                except PlaybackError as exc:
                    said.append(str(exc))
    mic = "No microphone was found on this computer. Connect a microphone, or type your messages."
    said.append(str(MicrophoneUnavailable(mic)))
    missing = OSError("PortAudio library not found")
    said.append(describe_missing_device("microphone", "input", None, missing))
    return said


def test_the_sound_devices_messages_are_shown_in_chinese(qapp: QApplication) -> None:
    """The audio layer speaks English; a Chinese window shows its messages in Chinese,
    with the device names kept as they are (issue 26: "No sound output device" in
    English in the Chinese window)."""
    from app.ui.device_words import device_words
    from app.ui.status_line import StatusLine

    messages = _device_messages()
    assert any("sound output device" in m for m in messages)
    try:
        install_translators(qapp, "zh_CN")
        for message in messages:
            shown = device_words(message)
            own = re.sub(r"（[^（）]*）", "", shown)  # the sound system's own words stay
            assert not re.search(r"\b(?:was|found|the|Connect|Replies)\b", own), shown
            assert re.search(r"[\u4e00-\u9fff]", shown)
            for kept in re.findall(r"'[^']*'", message):  # the devices' own names stay
                assert kept in shown
        line = StatusLine()
        line.show_notice(messages[-2], error=True)
        assert line.notices[0][0] == "这台电脑上没有找到麦克风。请连接麦克风，或者打字输入。"
    finally:
        install_translators(qapp, "en")
    assert [device_words(m) for m in messages] == messages  # English: as they came

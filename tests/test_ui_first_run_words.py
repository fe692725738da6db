"""The first-run guide's rough edges, on real Qt widgets (offscreen): the hosted model's
fields are disabled, and say why, while the embedded model is chosen; finishing says
"All set" with a restart only when the chat model was changed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.config import Settings
from app.ui.first_run import FirstRunGuide
from tests import test_ui_first_run as guide_tests
from tests import test_ui_settings as dialog_tests
from tests.test_ui_settings import MemoryKeyring

# The guide's tests' fixtures: a QApplication, a config file of its own, a keyring.
qapp = dialog_tests.qapp
config_file = dialog_tests.config_file
memory_keyring = dialog_tests.memory_keyring


def test_the_hosted_fields_are_disabled_and_say_why_for_the_embedded_model(
    qapp: QApplication,
) -> None:
    guide = FirstRunGuide(Settings(), checks=guide_tests.quiet_checks(), save=None)
    fields = (guide.provider, guide.model_name, guide.base_url, guide.api_key)
    assert guide.use_embedded.isChecked()
    assert not any(field.isEnabled() for field in fields)
    assert not guide.hosted_note.isHidden()
    assert "hosted model only" in guide.hosted_note.text()
    guide.use_hosted.setChecked(True)
    assert guide.provider.isEnabled() and guide.model_name.isEnabled()
    assert guide.api_key.isEnabled()
    assert guide.hosted_note.isHidden()
    guide.use_embedded.setChecked(True)
    assert not any(field.isEnabled() for field in fields)
    assert not guide.hosted_note.isHidden()


def _walk_through(guide: FirstRunGuide) -> None:
    guide_tests.walk(guide)
    assert guide.result() == guide.DialogCode.Accepted


def test_all_set_mentions_a_restart_only_when_the_chat_model_changed(
    qapp: QApplication, config_file: Path, memory_keyring: MemoryKeyring
) -> None:
    from app.ui import MainWindow, Shell
    from tests.test_ui import ScriptedSession

    for change in (False, True):
        settings = Settings()
        window = MainWindow(ScriptedSession())
        shell = Shell(window.session, window, ui=settings.ui, use_tray=False, settings=settings)
        try:
            guide = shell.open_first_run()
            assert guide is not None
            if change:  # the small embedded model instead of the default one
                guide.embedded_model.setCurrentIndex(guide.embedded_model.findData("smollm2"))
            _walk_through(guide)
            QApplication.processEvents()
            shown = window.status_text()
            assert "All set" in shown, shown
            assert ("restarts" in shown) is change, shown
            assert guide.chat_model_changed is change
        finally:
            shell.dispose()
            window.close()

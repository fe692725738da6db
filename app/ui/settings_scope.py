"""What in the settings dialog depends on something else shown with it: the chat-model
fields that only some providers use (greyed out, with one line saying why, while
another provider is chosen), the microphone mode as it is *now* (the window's
mic button mutes without touching the setting), and the dialog's first size.

Kept apart from `app.ui.settings_dialog` so each stays readable; the dialog calls
`ProviderScope.show` whenever the provider changes and `show_live_mic_mode` once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QSize
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from app.ui.settings_editors import FieldEditor
from app.ui.settings_fields import EMBEDDED, TAKES_BASE_URL

NOT_USED_STYLE = "color: palette(placeholder-text); font-style: italic;"


def _tr(text: str) -> str:
    return QCoreApplication.translate("SettingsDialog", text)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which providers use a field, and what to say while another one is chosen."""

    applies: Callable[[str], bool]
    reason: str  # marked for translation; translated when shown


# Why a chat-model field is greyed out (lupdate reads these; shown translated).
HOSTED_ONLY = QT_TRANSLATE_NOOP(
    "SettingsDialog",
    "Not used by the embedded model: choose another provider above to fill this in.",
)
BASE_URL_ONLY = QT_TRANSLATE_NOOP(
    "SettingsDialog", "Only for Ollama or another OpenAI-compatible server."
)
OPENAI_ONLY = QT_TRANSLATE_NOOP("SettingsDialog", "Only for OpenAI.")
BEDROCK_ONLY = QT_TRANSLATE_NOOP("SettingsDialog", "Only for Amazon Bedrock.")
EMBEDDED_ONLY = QT_TRANSLATE_NOOP("SettingsDialog", "Only for the embedded model.")

# The chat-model fields by the providers that use them (a field not listed: all).
CHAT_SCOPES: dict[str, Scope] = {
    "chat.api_key": Scope(lambda p: p != EMBEDDED, str(HOSTED_ONLY)),
    "chat.base_url": Scope(lambda p: p in TAKES_BASE_URL, str(BASE_URL_ONLY)),
    "chat.api_style": Scope(lambda p: p == "openai", str(OPENAI_ONLY)),
    "chat.aws_region": Scope(lambda p: p == "bedrock", str(BEDROCK_ONLY)),
    "chat.aws_profile": Scope(lambda p: p == "bedrock", str(BEDROCK_ONLY)),
    "chat.local_model_path": Scope(lambda p: p == EMBEDDED, str(EMBEDDED_ONLY)),
    "chat.local_threads": Scope(lambda p: p == EMBEDDED, str(EMBEDDED_ONLY)),
    "chat.local_context": Scope(lambda p: p == EMBEDDED, str(EMBEDDED_ONLY)),
    "chat.local_gpu": Scope(lambda p: p == EMBEDDED, str(EMBEDDED_ONLY)),
}


class ProviderScope:
    """Greys out the fields the chosen provider does not use, each with its reason."""

    def __init__(self, editors: Mapping[str, FieldEditor]) -> None:
        self.notes: dict[str, QLabel] = {}
        self._editors = {path: editors[path] for path in CHAT_SCOPES if path in editors}
        for path, editor in self._editors.items():
            note = QLabel()
            note.setObjectName("fieldNotUsed")
            note.setStyleSheet(NOT_USED_STYLE)
            note.setWordWrap(True)
            note.hide()
            editor.column.insertWidget(1, note)  # right under the field's input
            self.notes[path] = note

    def show(self, provider: str) -> None:
        for path, editor in self._editors.items():
            scope = CHAT_SCOPES[path]
            applies = scope.applies(provider)
            editor.set_enabled(applies)
            note = self.notes[path]
            note.setText("" if applies else _tr(scope.reason))
            note.setVisible(not applies)

    def reason(self, path: str) -> str:
        """The words shown under `path` (empty while the field is used)."""
        note = self.notes.get(path)
        return note.text() if note is not None and not note.isHidden() else ""


def show_live_mic_mode(editor: FieldEditor, live_mode: str | None) -> None:
    """Show how the microphone listens now (the window may have muted it) instead of the
    saved mode; saving without touching it keeps the saved one."""
    box = editor.input
    if live_mode is None or not isinstance(box, QComboBox):
        return
    index = box.findData(live_mode)
    if index < 0 or box.currentIndex() == index:
        return
    box.setCurrentIndex(index)
    editor.initial = editor.value()  # what is shown now is "unchanged"
    note = _tr(
        "This is how the microphone listens now (changed in the window); a choice made "
        "here applies now and when Companion starts."
    )
    editor.set_help("\n".join(t for t in (editor.help.text(), note) if t))


def first_size(widget: QWidget, wanted: QSize) -> QSize:
    """`wanted`, made to fit the screen `widget` is on (90 % of its free area at most)."""
    screen = widget.screen()
    if screen is None:
        return wanted
    area = screen.availableGeometry()
    return QSize(
        min(wanted.width(), int(area.width() * 0.9)),
        min(wanted.height(), int(area.height() * 0.9)),
    )

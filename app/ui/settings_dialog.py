"""The settings dialog, generated from the pydantic config model.

Every field of `Settings` gets an editor chosen by its type (`app.ui.settings_editors`);
nested models become sections, grouped into the tabs Model, Voice in, Voice out,
Avatar, Behaviour and Privacy (`app.ui.settings_fields`). A field nobody placed (a new
one) lands in "Advanced", so the dialog never falls behind the config.

Each field shows its help line under it, in plain words (`app.ui.settings_words`); a
field that a `COMPANION_*` environment variable or a command-line option sets is shown
locked, saying which and how to change it; a key field says whether a key is stored in
the system keyring. Expert tuning is in the Advanced tab.

Save validates the whole thing with pydantic and shows each problem next to its
field; nothing is written until everything is valid. The file then gets only what it
already held plus what the user changed here (`app.config.settings_to_save`): a value
that came from a `COMPANION_*` environment variable is never written into it. Keys go
to the system keyring; the file holds a `keyring:NAME` reference.

The "Test" buttons (model, microphone, voice) are `app.ui.checks` panels, run as
asyncio tasks on the qasync loop; the dialog stays responsive and cancels them when
it closes. The Avatar tab previews a Live2D model live (`app.ui.live2d_settings`).
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from PySide6.QtCore import QCoreApplication, QSize, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import config
from app.config import (
    ConfigFileUnreadable,
    Settings,
    config_path,
    env_variable,
    keep_fields_set,
    save_settings,
    validate_plain,
)
from app.config.secret_store import keyring_paths
from app.ui import checks
from app.ui.live2d_settings import Live2DPreview
from app.ui.settings_editors import (
    DeviceEditor,
    EditorError,
    FieldEditor,
    ModelRouteEditor,
    SecretEditor,
)
from app.ui.settings_fields import (
    ADVANCED,
    EMBEDDED,
    ERROR_STYLE,
    FIRST_SECTIONS,
    HELP,
    HIDDEN,
    LABELS,
    NEEDS_BASE_URL,
    PROVIDERS,
    SECTION_TITLES,
    TABS,
    field_kind,
    humanize,
    key_place_text,
    tab_of,
    walk_fields,
)
from app.ui.settings_scope import ProviderScope, first_size, show_live_mic_mode
from app.ui.settings_tables import make_editor

log = logging.getLogger(__name__)


def _tr(text: str) -> str:
    return QCoreApplication.translate("SettingsDialog", text)


def settings_to_save(original: Settings, edited: Settings, path: Path | None = None) -> Settings:
    """`app.config.settings_to_save`, with a broken file's problem in the user's language."""
    try:
        return config.settings_to_save(original, edited, path)
    except ConfigFileUnreadable as exc:
        raise ValueError(
            _tr("{path} cannot be read ({error}); fix or delete it.").format(
                path=exc.path, error=exc.error
            )
        ) from exc


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    keys = path.split(".")
    table = data
    for key in keys[:-1]:
        inner = table.get(key)
        if isinstance(inner, BaseModel):
            inner = inner.model_dump(exclude_unset=True)
        if not isinstance(inner, dict):
            inner = {}
        table[key] = inner
        table = inner
    table[keys[-1]] = value


# -- the dialog ---------------------------------------------------------------------------

SaveFunction = Callable[[Settings], Any]


class SettingsDialog(QDialog):
    """Edits a copy of the settings; Save validates, writes the file and emits `accepted`
    (`result_settings` then holds the new settings)."""

    memory_requested = Signal()  # "Open the Memory page…" (the shell opens it)

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        save: SaveFunction | None = save_settings,
        path: Path | None = None,
        mic_mode: str | None = None,
    ) -> None:
        """`mic_mode`: how the microphone listens now, when the window changed it."""
        super().__init__(parent)
        self.setWindowTitle(self.tr("Companion settings"))
        self.setObjectName("settingsDialog")
        self.resize(first_size(self, QSize(820, 940)))  # the Model tab without scrolling
        self._original = settings
        self._save = save
        self._path = path
        self.result_settings: Settings | None = None
        self.editors: dict[str, FieldEditor] = {}
        self._tab_index: dict[str, int] = {}

        box = QVBoxLayout(self)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("settingsTabs")
        box.addWidget(self.tabs, 1)
        self._build_tabs(settings)
        self._show_key_storage()
        self.error_label = QLabel()
        self.error_label.setObjectName("settingsError")
        self.error_label.setStyleSheet(ERROR_STYLE)
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

        # The fields the shell and the tests reach directly.
        route = self.editors["chat.model"]
        assert isinstance(route, ModelRouteEditor)
        self.provider = route.provider
        self.model_name = route.name
        self.base_url = self._input("chat.base_url", QLineEdit)
        self.api_key = self._input("chat.api_key", QLineEdit)
        self.rate = self._input("tts.rate", QSpinBox)
        self.mic_mode = self._input("audio.mic_mode", QComboBox)
        self.confirm_screenshots = self._input("agent.confirm_screenshots", QCheckBox)
        show_live_mic_mode(self.editors["audio.mic_mode"], mic_mode)
        self.scope = ProviderScope(self.editors)
        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        self._on_provider_changed()

    def _input(self, path: str, kind: type[Any]) -> Any:
        widget = self.editors[path].input
        assert isinstance(widget, kind), (path, widget)
        return widget

    # -- building ---------------------------------------------------------------------------

    def _build_tabs(self, settings: Settings) -> None:
        forms: dict[tuple[str, str], QFormLayout] = {}
        pages: dict[str, QVBoxLayout] = {}
        for key, title in TABS:
            page = QWidget()
            page.setObjectName(f"tab_{key}")
            column = QVBoxLayout(page)
            pages[key] = column
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            self._tab_index[key] = self.tabs.addTab(scroll, self.tr(title))
        self._add_intro(pages)
        for section, path, field, kind, value in walk_fields(type(settings), settings):
            tab = tab_of(path)
            form = forms.get((tab, section))
            if form is None:
                group = QGroupBox(self._section_title(section))
                group.setObjectName(f"section_{section or 'general'}")
                doc = self._section_doc(section)
                if doc:
                    group.setToolTip(doc)
                form = QFormLayout(group)
                forms[(tab, section)] = form
                if FIRST_SECTIONS.get(tab) == section:
                    pages[tab].insertWidget(0, group)
                else:
                    pages[tab].addWidget(group)
            editor = make_editor(path, field, kind, value)
            self.editors[path] = editor
            label = QLabel(self._label(path, field))
            label.setWordWrap(True)
            hint = self._hint(path, field)
            editor.set_help(hint)
            label.setToolTip(hint)
            reason = self._locked_because(path)
            if reason:
                editor.lock(reason)
            form.addRow(label, editor.widget)
        self._add_tests(pages)
        self._add_preview(pages["avatar"])
        for key, column in pages.items():
            column.addStretch(1)
            if column.count() == 1:  # nothing in it (a stretch only)
                self.tabs.setTabVisible(self._tab_index[key], False)

    def _add_intro(self, pages: dict[str, QVBoxLayout]) -> None:
        privacy = QLabel(
            self.tr(
                "Companion looks at your screen only when you ask about it or the model asks "
                "for a screenshot, and you always see a notice when it does."
            )
            + " "
            + key_place_text()
        )
        privacy.setWordWrap(True)
        pages["privacy"].addWidget(privacy)
        self.memory_button = QPushButton(self.tr("Open the Memory page…"))
        self.memory_button.setObjectName("openMemory")
        self.memory_button.setToolTip(
            self.tr("See, edit, export or erase what the companion remembers about you")
        )
        self.memory_button.clicked.connect(self.memory_requested.emit)
        self.memory_button.hide()  # shown when the shell can open it
        pages["privacy"].addWidget(self.memory_button)
        advanced = QLabel(
            self.tr(
                "Fine tuning and everything else the settings file holds. The usual "
                "values suit most people."
            )
        )
        advanced.setWordWrap(True)
        pages[ADVANCED].addWidget(advanced)

    def _section_title(self, section: str) -> str:
        if section in SECTION_TITLES:
            return self.tr(SECTION_TITLES[section])
        return _tr(humanize(section.rsplit(".", 1)[-1]))

    def _section_doc(self, section: str) -> str:
        model: type[BaseModel] = type(self._original)
        for part in [p for p in section.split(".") if p]:
            kind = field_kind(model.model_fields[part].annotation)
            if kind.model is None:
                return ""
            model = kind.model
        doc = model.__doc__ or ""
        if section == "" or doc == BaseModel.__doc__:
            return ""
        return _tr(" ".join(doc.split()))

    @staticmethod
    def _label(path: str, field: FieldInfo) -> str:
        if path in LABELS:
            return _tr(LABELS[path])
        return _tr(field.title or humanize(path.rsplit(".", 1)[-1]))

    @staticmethod
    def _hint(path: str, field: FieldInfo) -> str:
        """The field's help line, in plain words."""
        if path in HELP:
            return _tr(HELP[path])
        return _tr(field.description) if field.description else ""

    def _locked_because(self, path: str) -> str:
        """Why the field cannot be changed here (empty when it can)."""
        variable = env_variable(path)
        if variable:
            return _tr(
                "Set by the environment variable {name}, which wins over this file: "
                "change or remove the variable to change this."
            ).format(name=variable)
        option = self._original.command_line.get(path)
        if option:
            return _tr(
                "Set by the command-line option {option} for this run: start Companion "
                "without it to change this here."
            ).format(option=option)
        return ""

    def _show_key_storage(self) -> None:
        """Tell each key field whether its key is in the system keyring."""
        try:
            data = tomllib.loads((self._path or config_path()).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        in_keyring = keyring_paths(data)
        for path, editor in self.editors.items():
            if not isinstance(editor, SecretEditor):
                continue
            if editor.saved is not None or path in in_keyring:
                editor.show_stored(path in in_keyring)

    def _add_tests(self, pages: dict[str, QVBoxLayout]) -> None:
        get = checks.weak_getter(self, SettingsDialog._settings_for_test)
        self.model_check = checks.ModelCheck(get)
        self.mic_check = checks.MicCheck(get)
        self.voice_check = checks.VoiceCheck(get)
        pages["model"].addWidget(self.model_check)
        pages["voice_in"].addWidget(self.mic_check)
        pages["voice_out"].addWidget(self.voice_check)

    def _add_preview(self, page: QVBoxLayout) -> None:
        """The Live2D model's live preview, under its section."""
        self.live2d_preview = Live2DPreview(self.editors)
        after = page.count() - 1
        for i in range(page.count()):
            item = page.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None and widget.objectName() == "section_avatar.live2d":
                after = i
        page.insertWidget(after + 1, self.live2d_preview)

    def _on_provider_changed(self) -> None:
        self.scope.show(str(self.provider.currentData()))

    def mic_mode_chosen(self) -> str | None:
        """The microphone mode chosen here, when it differs from the one shown at first."""
        editor = self.editors["audio.mic_mode"]
        return str(editor.value()) if editor.changed() else None

    # -- validating ---------------------------------------------------------------------------

    def edited_settings(self) -> Settings:
        """The settings as the dialog shows them; each problem is shown next to its field
        and raised as `ValueError` (all problems, in words)."""
        for editor in self.editors.values():
            editor.show_error("")
        problems: dict[str, str] = {}
        data = self._original.model_dump()
        for path, editor in self.editors.items():
            try:
                value = editor.value()
            except EditorError as exc:
                problems[path] = str(exc)
                continue
            if editor.changed():
                _put(data, path, value)
        for path, message in self._cross_checks().items():
            problems.setdefault(path, message)
        new: Settings | None = None
        try:
            new = validate_plain(data, type(self._original))
            keep_fields_set(self._original, new)
        except ValidationError as exc:
            for err in exc.errors():
                path, rest = self._editor_for(err["loc"])
                message = str(err["msg"])
                if rest:  # inside a map or list: say where
                    message = f"{rest}: {message}"
                if path not in problems:
                    problems[path] = message
                elif message not in problems[path]:
                    problems[path] = f"{problems[path]}; {message}"
        if problems or new is None:
            self._show_problems(problems)
            raise ValueError(self.error_label.text())
        return new

    def _cross_checks(self) -> dict[str, str]:
        problems: dict[str, str] = {}
        provider = str(self.provider.currentData())
        if provider != EMBEDDED and not self.model_name.text().strip():
            problems["chat.model"] = self.tr("Enter the model's name (as the provider spells it).")
        base_url = self.base_url.text().strip()
        if provider in NEEDS_BASE_URL and not base_url:
            problems["chat.base_url"] = self.tr("An OpenAI-compatible server needs its base URL.")
        elif base_url and not base_url.startswith(("http://", "https://")):
            problems["chat.base_url"] = self.tr("The base URL starts with http:// or https://.")
        return problems

    def _editor_for(self, loc: tuple[int | str, ...]) -> tuple[str, str]:
        """The editor's path for an error's location, and the rest of the location."""
        parts = [str(p) for p in loc]
        for end in range(len(parts), 0, -1):
            path = ".".join(parts[:end])
            if path in self.editors:
                return path, ".".join(parts[end:])
        return ".".join(parts), ""

    def _show_problems(self, problems: dict[str, str]) -> None:
        lines: list[str] = []
        first_tab: int | None = None
        order = {path: i for i, path in enumerate(self.editors)}

        def place(path: str) -> tuple[int, int]:
            if path not in self.editors:
                return (len(self._tab_index), 0)
            return (self._tab_index[tab_of(path)], order[path])

        for path, message in sorted(problems.items(), key=lambda item: place(item[0])):
            editor = self.editors.get(path)
            if editor is None:
                lines.append(f"{path}: {message}")
                continue
            editor.show_error(message)
            label = self._label(path, editor.field)
            lines.append(f"{label}: {message}")
            if first_tab is None:
                first_tab = self._tab_index[tab_of(path)]
        if first_tab is not None:
            self.tabs.setCurrentIndex(first_tab)
        self.show_error(
            self.tr("Not saved. Please fix: {problems}").format(problems=" • ".join(lines))
            if lines
            else ""
        )

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    # -- saving -------------------------------------------------------------------------------

    def accept(self) -> None:
        try:
            new = self.edited_settings()
        except ValueError:
            return
        if self._save is not None:
            try:
                self._save(settings_to_save(self._original, new, self._path))
            except (OSError, ValueError) as exc:
                self.show_error(self.tr("Could not save the settings: {error}").format(error=exc))
                return
        self.result_settings = new
        self.show_error("")
        super().accept()

    def done(self, result: int) -> None:
        for check in (self.model_check, self.mic_check, self.voice_check):
            check.cancel()
        self.live2d_preview.close_model()
        super().done(result)

    # -- the Test buttons ---------------------------------------------------------------------

    def _settings_for_test(self) -> Settings | None:
        """The settings as shown (not saved), or None with the problems shown."""
        try:
            return self.edited_settings()
        except ValueError:
            return None


__all__ = [
    "HIDDEN",
    "PROVIDERS",
    "TABS",
    "DeviceEditor",
    "ModelRouteEditor",
    "SecretEditor",
    "SettingsDialog",
    "field_kind",
    "settings_to_save",
    "tab_of",
    "walk_fields",
]

"""The settings dialog's field editors: one per kind of field (a checkbox, a list of
choices, a number with its bounds, a line of text, a folder, a sound device, a key, the
chat model's provider and name; tables and lists are in `app.ui.settings_tables`, whose
`make_editor` picks one for a field). Each gives its widget, with the field's help line
under it, and the value pydantic gets (`EditorError` when it cannot even be read); a
field the environment or a command-line option sets is shown locked, saying why."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.audio.capture import device_names
from app.ui.settings_fields import (
    CHECKBOX_TEXT,
    CHOICE_LABELS,
    DECIMALS,
    EMBEDDED,
    ERROR_STYLE,
    FLOAT_MAX,
    FOLDER_CHOICES,
    FOLDER_TITLES,
    INT_MAX,
    PLACEHOLDERS,
    PROVIDERS,
    FieldKind,
    key_kept_text,
    provider_label,
    suffix_of,
)


def _tr(text: str) -> str:
    return QCoreApplication.translate("SettingsDialog", text)


def _bounds(field: FieldInfo, integer: bool) -> tuple[float | None, float | None]:
    low: float | None = None
    high: float | None = None
    step = 1 if integer else 10**-DECIMALS
    for item in field.metadata:
        if isinstance(item, annotated_types.Ge):
            low = float(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Gt):
            low = float(item.gt) + step  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Le):
            high = float(item.le)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Lt):
            high = float(item.lt) - step  # type: ignore[arg-type]
    return low, high


# -- editors ------------------------------------------------------------------------------


class EditorError(ValueError):
    """What the user typed cannot even be read (before pydantic sees it)."""


HELP_STYLE = "color: palette(placeholder-text); font-size: small;"
LOCKED_STYLE = "color: #8a5a00;"


def _note(name: str, style: str) -> QLabel:
    """A line of words under a field: wrapped, never cut; hidden while empty."""
    label = QLabel()
    label.setObjectName(name)
    label.setStyleSheet(style)
    label.setWordWrap(True)
    label.hide()
    return label


class FieldEditor:
    """One field's widgets: `widget` goes into the form; `value()` is what pydantic gets."""

    def __init__(self, path: str, field: FieldInfo, kind: FieldKind, value: Any) -> None:
        self.path = path
        self.field = field
        self.kind = kind
        self.locked = ""  # why the field cannot be changed here; empty: it can
        self.widget = QWidget()
        self.help = _note("fieldHelp", HELP_STYLE)
        self.lock_note = _note("fieldLocked", LOCKED_STYLE)
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        self.error.hide()
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        column = self.column = QVBoxLayout(self.widget)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(self._row)
        column.addWidget(self.lock_note)
        column.addWidget(self.help)
        column.addWidget(self.error)
        self.input: QWidget = self._build(value)
        self._row.insertWidget(0, self.input, 1)
        self.initial: Any = self._safe_value()

    def _build(self, value: Any) -> QWidget:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def _safe_value(self) -> Any:
        try:
            return self.value()
        except EditorError:
            return None

    def changed(self) -> bool:
        try:
            return bool(self.value() != self.initial)
        except EditorError:
            return True

    def set_tooltip(self, text: str) -> None:
        self.input.setToolTip(text)

    def set_help(self, text: str) -> None:
        """The field's help, shown under it (and as its tooltip)."""
        self.help.setText(text)
        self.help.setVisible(bool(text))
        self.set_tooltip(text)

    def lock(self, reason: str) -> None:
        """Set elsewhere (an environment variable, a command-line option): shown, not
        editable, with `reason` under it."""
        self.locked = reason
        self.lock_note.setText("🔒 " + reason)
        self.lock_note.show()
        self.set_tooltip("\n".join(t for t in (self.help.text(), reason) if t))
        self.set_enabled(False)

    def set_enabled(self, enabled: bool) -> None:
        """Enable the field's own widgets (never a locked one)."""
        on = enabled and not self.locked
        for i in range(self._row.count()):
            item = self._row.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setEnabled(on)

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))


class BoolEditor(FieldEditor):
    def _build(self, value: Any) -> QWidget:
        self.box = QCheckBox(_tr(CHECKBOX_TEXT.get(self.path, "")))
        self.box.setChecked(bool(value))
        return self.box

    def value(self) -> Any:
        return self.box.isChecked()


class ChoiceEditor(FieldEditor):
    def _build(self, value: Any) -> QWidget:
        self.box = QComboBox()
        labels = CHOICE_LABELS.get(self.path, {})
        if self.kind.optional:
            self.box.addItem(_tr("Automatic"), None)
        if self.kind.kind == "bool":
            self.box.addItem(_tr("Yes"), True)
            self.box.addItem(_tr("No"), False)
        for choice in self.kind.choices:
            self.box.addItem(_tr(labels[choice]) if choice in labels else str(choice), choice)
        index = self.box.findData(value)
        self.box.setCurrentIndex(max(index, 0))
        return self.box

    def value(self) -> Any:
        return self.box.currentData()


class NumberEditor(FieldEditor):
    def _build(self, value: Any) -> QWidget:
        integer = self.kind.kind == "int"
        low, high = _bounds(self.field, integer)
        default = self.field.default if isinstance(self.field.default, (int, float)) else 0
        if low is None:
            low = 0.0 if default >= 0 else -FLOAT_MAX
        if high is None:
            high = INT_MAX if integer else FLOAT_MAX
        spin: QSpinBox | QDoubleSpinBox
        if integer:
            spin = QSpinBox()
            spin.setRange(int(max(low, -INT_MAX)), int(min(high, INT_MAX)))
        else:
            spin = QDoubleSpinBox()
            spin.setDecimals(DECIMALS)
            spin.setRange(low, high)
            span = high - low
            spin.setSingleStep(0.05 if span <= 2 else 0.5 if span <= 50 else 1.0)
        suffix = suffix_of(self.path)
        spin.setSuffix(_tr(suffix) if suffix else "")
        self.spin = spin
        self.automatic: QCheckBox | None = None
        if self.kind.optional:
            self.automatic = QCheckBox(_tr("Automatic"))
            self.automatic.setChecked(value is None)
            # Automatic shows no number: a greyed one would look like the value used.
            self.automatic.toggled.connect(lambda on: spin.setVisible(not on))
            spin.setVisible(value is not None)
            self._row.addWidget(self.automatic)
        shown = value if value is not None else (default if default else low)
        if isinstance(spin, QSpinBox):
            spin.setValue(int(shown))
        else:
            spin.setValue(float(shown))
        return spin

    def value(self) -> Any:
        if self.automatic is not None and self.automatic.isChecked():
            return None
        return self.spin.value()


class TextEditor(FieldEditor):
    def _build(self, value: Any) -> QWidget:
        if isinstance(value, list):  # a command as a list of words: one line, quoted
            value = shlex.join(str(word) for word in value)
        self.line = QLineEdit("" if value is None else str(value))
        if self.path in PLACEHOLDERS:
            self.line.setPlaceholderText(_tr(PLACEHOLDERS[self.path]))
        return self.line

    def value(self) -> Any:
        text = self.line.text().strip()
        if not text:
            return None if self.kind.optional else ""
        if self.kind.int_text and text.isdigit():
            return int(text)
        if self.kind.path:
            return Path(text).expanduser()
        return text


class FolderEditor(FieldEditor):
    """A folder, typed or picked with "Choose…". With a choice in front (`FOLDER_CHOICES`,
    such as Built-in / Live2D model…) the first choice means no folder; the typed folder
    is kept meanwhile, so switching back finds it."""

    def __init__(self, path: str, field: FieldInfo, kind: FieldKind, value: Any) -> None:
        self.mode: QComboBox | None = None
        super().__init__(path, field, kind, value)
        choices = FOLDER_CHOICES.get(path)
        if choices is not None:
            self.mode = QComboBox()
            for label in choices:
                self.mode.addItem(_tr(label))
            self.mode.setCurrentIndex(1 if value else 0)
            self.mode.activated.connect(self._mode_chosen)
            self._row.insertWidget(0, self.mode)
        self._enable()
        self.initial = self._safe_value()

    def _build(self, value: Any) -> QWidget:
        self.line = QLineEdit("" if value is None else str(value))
        if self.path in PLACEHOLDERS:
            self.line.setPlaceholderText(_tr(PLACEHOLDERS[self.path]))
        self.choose = QToolButton()
        self.choose.setText(_tr("Choose…"))
        self.choose.clicked.connect(self.pick)
        self._row.addWidget(self.choose)
        self.picker: QFileDialog | None = None
        return self.line

    @property
    def chosen(self) -> bool:
        """Whether a folder is meant (not the first choice, when there is one)."""
        return self.mode is None or self.mode.currentIndex() == 1

    def _mode_chosen(self, index: int) -> None:
        self._enable()
        if index == 1 and not self.line.text().strip():
            self.pick()

    def _enable(self) -> None:
        self.line.setEnabled(self.chosen)

    def pick(self) -> QFileDialog:
        """The folder picker (not modal: the app keeps running behind it)."""
        start = self.line.text().strip() or str(Path.home())
        title = FOLDER_TITLES.get(self.path)
        picker = QFileDialog(self.widget, _tr(title) if title else _tr("Choose a folder"))
        picker.setFileMode(QFileDialog.FileMode.Directory)
        picker.setOption(QFileDialog.Option.ShowDirsOnly, True)
        picker.setDirectory(start)
        picker.fileSelected.connect(self.set_folder)
        self.picker = picker
        picker.open()
        return picker

    def set_folder(self, folder: str) -> None:
        self.line.setText(folder)
        if self.mode is not None:
            self.mode.setCurrentIndex(1)
        self._enable()

    def value(self) -> Any:
        text = self.line.text().strip()
        if not self.chosen or not text:
            return None if self.kind.optional else ""
        return Path(text).expanduser()


DEVICE_KINDS = {"audio.input_device": "input", "audio.output_device": "output"}


class DeviceEditor(FieldEditor):
    """A sound device: the system default, one of the devices the system lists now, or
    a name or index typed by hand (a device that is unplugged at the moment)."""

    def _build(self, value: Any) -> QWidget:
        self.box = QComboBox()
        self.box.setEditable(True)
        self.box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.default_text = _tr("System default")
        self.box.addItem(self.default_text)
        names = device_names(DEVICE_KINDS[self.path])
        for name in names:
            self.box.addItem(name)
        if value is None or value == "":
            self.box.setCurrentIndex(0)
        else:
            self.box.setEditText(str(value))
        if not names:
            self.box.setToolTip(_tr("No sound devices are listed right now."))
        return self.box

    def value(self) -> Any:
        text = self.box.currentText().strip()
        if not text or text == self.default_text:
            return None
        return int(text) if text.isdigit() else text


class SecretEditor(FieldEditor):
    """A password field: empty keeps the saved key; "Forget" removes it."""

    def _build(self, value: Any) -> QWidget:
        self.saved: SecretStr | None = value if isinstance(value, SecretStr) else None
        self.forgotten = False
        self.line = QLineEdit()
        self.line.setEchoMode(QLineEdit.EchoMode.Password)
        self.forget = QToolButton()
        self.forget.setText(_tr("Forget"))
        self.forget.setToolTip(_tr("Remove the saved key"))
        self.forget.clicked.connect(self._forget)
        self._row.addWidget(self.forget)
        self.stored = _note("keyStored", HELP_STYLE)
        self.column.insertWidget(1, self.stored)
        self._in_keyring: bool | None = None
        self._placeholder()
        return self.line

    def _placeholder(self) -> None:
        kept = self.saved is not None and not self.forgotten
        self.line.setPlaceholderText(key_kept_text() if kept else "")
        self.forget.setEnabled(kept and not self.locked)
        self._say_stored()

    def _forget(self) -> None:
        self.forgotten = True
        self.line.clear()
        self._placeholder()

    def set_enabled(self, enabled: bool) -> None:
        super().set_enabled(enabled)
        self._placeholder()

    def show_stored(self, in_keyring: bool) -> None:
        """Say where the saved key is: `in_keyring` when the settings file refers to the
        system keyring for it, else the file holds it itself."""
        self._in_keyring = in_keyring
        self._say_stored()

    def _say_stored(self) -> None:
        text = ""
        if self.forgotten:
            text = _tr("The saved key is removed when you save.")
        elif self._in_keyring and self.saved is not None:
            text = _tr("A key is stored in the system keyring.")
        elif self._in_keyring:
            text = _tr(
                "The settings file refers to a key in the system keyring, but the keyring "
                "has none: enter the key again."
            )
        elif self._in_keyring is False and self.saved is not None:
            text = _tr("A key is stored in the settings file (no system keyring works here).")
        self.stored.setText(text)
        self.stored.setVisible(bool(text))

    def value(self) -> Any:
        text = self.line.text().strip()
        if text:
            return SecretStr(text)
        if self.forgotten:
            return None if self.kind.optional else SecretStr("")
        return self.saved

    def changed(self) -> bool:
        new, old = self.value(), self.initial
        raw_new = new.get_secret_value() if isinstance(new, SecretStr) else new
        raw_old = old.get_secret_value() if isinstance(old, SecretStr) else old
        return bool(raw_new != raw_old)


# The embedded models a person chooses between (app.llm.wire.local_files has their files).
EMBEDDED_CHOICES = (
    ("qwen2.5-coder-1.5b", QT_TRANSLATE_NOOP("SettingsDialog", "Smart (1.5B, 1.1 GB)")),
    ("smollm2", QT_TRANSLATE_NOOP("SettingsDialog", "Small (135M, 100 MB)")),
)
EMBEDDED_DEFAULT = EMBEDDED_CHOICES[0][0]


def embedded_choice_box() -> QComboBox:
    """A list of the embedded models, by what they are like ("Smart", "Small")."""
    box = QComboBox()
    box.setObjectName("embeddedModel")
    for name, label in EMBEDDED_CHOICES:
        box.addItem(_tr(str(label)), name)
    return box


class ModelRouteEditor(FieldEditor):
    """`chat.model` as a provider list plus the model's name (for the embedded provider,
    a list of the embedded models; another name typed in the file is kept)."""

    def __init__(self, path: str, field: FieldInfo, kind: FieldKind, value: Any) -> None:
        super().__init__(path, field, kind, value)
        self._row.setStretch(0, 0)  # the provider list as wide as it needs, the name wider

    def _build(self, value: Any) -> QWidget:
        provider, _, name = str(value or "").partition("/")
        self.provider = QComboBox()
        for item in PROVIDERS:
            self.provider.addItem(provider_label(item), item)
        if self.provider.findData(provider) < 0 and provider:
            self.provider.addItem(provider, provider)
        self.provider.setCurrentIndex(max(self.provider.findData(provider), 0))
        self.name = QLineEdit(name if provider != EMBEDDED else "")
        self.name.setPlaceholderText(_tr("for example gpt-4o-mini"))
        self.embedded = embedded_choice_box()
        if provider == EMBEDDED and name and self.embedded.findData(name) < 0:
            self.embedded.addItem(name, name)
        self.embedded.setCurrentIndex(max(self.embedded.findData(name), 0))
        self._row.addWidget(self.name, 1)
        self._row.addWidget(self.embedded, 1)
        self.provider.currentIndexChanged.connect(self._show_name)
        self._show_name()
        return self.provider

    def _show_name(self) -> None:
        embedded = self.provider.currentData() == EMBEDDED
        self.name.setVisible(not embedded)
        self.embedded.setVisible(embedded)

    def value(self) -> Any:
        provider = str(self.provider.currentData())
        if provider == EMBEDDED:
            return f"{provider}/{self.embedded.currentData() or EMBEDDED_DEFAULT}"
        return f"{provider}/{self.name.text().strip()}"

"""The settings dialog, generated from the pydantic config model.

Every field of `Settings` gets an editor chosen by its type (a checkbox for a bool, a
list for a `Literal`, a spin box with the field's bounds for a number, a password
field for a key, a line for text, a small JSON box for maps and lists); nested models
become sections, grouped into the tabs Model, Voice in, Voice out, Avatar, Behaviour
and Privacy by `PLACEMENT`. A field nobody placed (a new one) lands in "Advanced", so
the dialog never falls behind the config.

Save validates the whole thing with pydantic and shows each problem next to its
field; nothing is written until everything is valid. The file then gets only what it
already held plus what the user changed here: a value that came from a `COMPANION_*`
environment variable is never written into it. Keys go to the system keyring; the
file holds a `keyring:NAME` reference (see `app.config.save_settings`).

The "Test" buttons (model, microphone, voice) run `app.ui.checks` as asyncio tasks on
the qasync loop; the dialog stays responsive and cancels them when it closes.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import tomllib
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, create_model
from pydantic.fields import FieldInfo
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.config import Settings, config_path, save_settings
from app.ui import checks

log = logging.getLogger(__name__)

CONTEXT = "SettingsDialog"
ERROR_STYLE = "color: #c62828;"
HINT_STYLE = "color: palette(mid);"


def _tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


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
NEEDS_BASE_URL = ("openai-compatible",)
TAKES_BASE_URL = ("openai-compatible", "ollama")


def provider_label(provider: str) -> str:
    if provider == EMBEDDED:
        return _tr("Embedded (offline, on this computer)")
    return provider


def key_kept_text() -> str:
    return _tr("(saved — leave empty to keep it)")


# -- where each field goes ----------------------------------------------------------------

TABS: tuple[tuple[str, str], ...] = (
    ("model", "Model"),
    ("voice_in", "Voice in"),
    ("voice_out", "Voice out"),
    ("avatar", "Avatar"),
    ("behaviour", "Behaviour"),
    ("privacy", "Privacy"),
    ("advanced", "Advanced"),
)
ADVANCED = "advanced"

# A dotted field path (or a prefix of one) -> its tab; the longest match wins; a field
# no entry matches goes to "Advanced".
PLACEMENT: dict[str, str] = {
    "chat": "model",
    "agent.vision_model": "model",
    "agent.vision_base_url": "model",
    "agent.vision_api_key": "model",
    "agent.vision_api_style": "model",
    "agent.chat_supports_vision": "model",
    "agent.context_window": "model",
    "speech": "voice_in",
    "vad": "voice_in",
    "audio": "voice_in",
    "audio.output_device": "voice_out",
    "audio.volume": "voice_out",
    "tts": "voice_out",
    "avatar": "avatar",
    "expression_idle_s": "avatar",
    "persona": "behaviour",
    "agent": "behaviour",
    "ui": "behaviour",
    "agent.confirm_screenshots": "privacy",
    "agent.allow_clipboard": "privacy",
}
# The shell's own state, not settings a person edits.
HIDDEN = frozenset({"ui.window_geometry", "ui.pet_geometry", "ui.first_run_done"})

SECTION_TITLES: dict[str, str] = {
    "": "General",
    "chat": "Chat model",
    "speech": "Speech recognition",
    "vad": "Voice detection",
    "audio": "Sound",
    "tts": "Voice",
    "persona": "Character",
    "agent": "Agent",
    "avatar": "Avatar",
    "avatar.vtube_studio": "VTube Studio",
    "ui": "Desktop",
    "mcp": "MCP servers",
}
LABELS: dict[str, str] = {
    "chat.model": "Model",
    "chat.base_url": "Base URL",
    "chat.api_key": "API key",
    "chat.api_style": "API style",
    "speech.adapter": "Speech recognition",
    "audio.input_device": "Microphone",
    "audio.output_device": "Speaker",
    "audio.mic_mode": "Microphone mode",
    "tts.engine": "Engine",
    "tts.rate": "Rate",
    "avatar.pack": "Avatar pack folder",
    "agent.confirm_screenshots": "Screenshots",
    "agent.allow_clipboard": "Clipboard",
}
CHECKBOX_TEXT: dict[str, str] = {
    "agent.confirm_screenshots": "Ask me before each screenshot",
    "agent.allow_clipboard": "Let the companion read the clipboard",
}
CHOICE_LABELS: dict[str, dict[Any, str]] = {
    "audio.mic_mode": {
        "always_on": "Always on",
        "push_to_talk": "Push to talk",
        "muted": "Muted",
    },
}
SUFFIXES: dict[str, str] = {"tts.rate": " words/min"}
# Sensible ranges where the model sets none.
RANGES: dict[str, tuple[float, float]] = {"tts.rate": (60, 400)}
PLACEHOLDERS: dict[str, str] = {
    "chat.base_url": "only for an OpenAI-compatible server",
    "audio.input_device": "the system default",
    "audio.output_device": "the system default",
    "tts.voice": "the engine's default voice",
    "avatar.pack": "the default character",
}
INT_MAX = 2**31 - 1
FLOAT_MAX = 1e9
DECIMALS = 2


ACRONYMS = {"api": "API", "url": "URL", "id": "ID", "mcp": "MCP", "tts": "TTS", "ui": "UI"}
# The section shown first in a tab (the one a person looks for first).
FIRST_SECTIONS = {"voice_in": "audio", "voice_out": "tts"}


def humanize(name: str) -> str:
    """`max_tool_rounds` -> "Max tool rounds", `timeout_s` -> "Timeout (s)"."""
    unit = ""
    for suffix, text in (("_ms", " (ms)"), ("_s", " (s)")):
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], text
            break
    words = [ACRONYMS.get(w, w) for w in name.replace("_", " ").split()]
    if not words:
        return name
    text = " ".join(words)
    return text[:1].upper() + text[1:] + unit


def tab_of(path: str) -> str:
    best, tab = -1, ADVANCED
    for prefix, target in PLACEMENT.items():
        if (path == prefix or path.startswith(prefix + ".")) and len(prefix) > best:
            best, tab = len(prefix), target
    return tab


def env_variable(path: str) -> str | None:
    """The `COMPANION_*` variable that sets this field, if one is set."""
    parts = path.split(".")
    wanted = {"COMPANION_" + "__".join(parts[: i + 1]).upper() for i in range(len(parts))}
    for name in os.environ:
        if name.upper() in wanted:
            return name
    return None


# -- reading a field's type ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldKind:
    """What editor a field gets."""

    kind: Literal["bool", "choice", "int", "float", "secret", "text", "model", "json"]
    optional: bool = False
    choices: tuple[Any, ...] = ()
    int_text: bool = False  # text that is an int when it is all digits (a device number)
    path: bool = False
    model: type[BaseModel] | None = None


def field_kind(annotation: Any) -> FieldKind:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return field_kind(typing.get_args(annotation)[0])
    args: tuple[Any, ...] = (annotation,)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
    optional = type(None) in args
    rest = tuple(a for a in args if a is not type(None))
    if len(rest) == 1:
        only = rest[0]
        only_origin = typing.get_origin(only)
        if only is bool:
            return FieldKind("bool", optional)
        if only_origin is Literal:
            return FieldKind("choice", optional, tuple(typing.get_args(only)))
        if isinstance(only, type) and issubclass(only, enum.Enum):
            return FieldKind("choice", optional, tuple(m.value for m in only))
        if only is int:
            return FieldKind("int", optional)
        if only is float:
            return FieldKind("float", optional)
        if only is SecretStr:
            return FieldKind("secret", optional)
        if only is str:
            return FieldKind("text", optional)
        if isinstance(only, type) and issubclass(only, Path):
            return FieldKind("text", optional, path=True)
        if isinstance(only, type) and issubclass(only, BaseModel) and not optional:
            return FieldKind("model", False, model=only)
    if set(rest) == {str, int}:
        return FieldKind("text", optional, int_text=True)
    return FieldKind("json", optional)


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


class FieldEditor:
    """One field's widgets: `widget` goes into the form; `value()` is what pydantic gets."""

    def __init__(self, path: str, field: FieldInfo, kind: FieldKind, value: Any) -> None:
        self.path = path
        self.field = field
        self.kind = kind
        self.widget = QWidget()
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        self.error.hide()
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        column = QVBoxLayout(self.widget)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(self._row)
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
        if self.path in RANGES:
            low, high = RANGES[self.path] if low is None and high is None else (low, high)
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
        spin.setSuffix(_tr(SUFFIXES.get(self.path, "")))
        self.spin = spin
        self.automatic: QCheckBox | None = None
        if self.kind.optional:
            self.automatic = QCheckBox(_tr("Automatic"))
            self.automatic.setChecked(value is None)
            self.automatic.toggled.connect(lambda on: spin.setEnabled(not on))
            spin.setEnabled(value is not None)
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


DEVICE_KINDS = {"audio.input_device": "input", "audio.output_device": "output"}


class DeviceEditor(FieldEditor):
    """A sound device: the system default, one of the devices the system lists now, or
    a name or index typed by hand (a device that is unplugged at the moment)."""

    def _build(self, value: Any) -> QWidget:
        from app.audio.capture import _device_names

        self.box = QComboBox()
        self.box.setEditable(True)
        self.box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.default_text = _tr("System default")
        self.box.addItem(self.default_text)
        names = _device_names(DEVICE_KINDS[self.path])
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
        self._placeholder()
        return self.line

    def _placeholder(self) -> None:
        kept = self.saved is not None and not self.forgotten
        self.line.setPlaceholderText(key_kept_text() if kept else "")
        self.forget.setEnabled(kept)

    def _forget(self) -> None:
        self.forgotten = True
        self.line.clear()
        self._placeholder()

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


class JsonEditor(FieldEditor):
    """Maps, lists and anything else: a small JSON text."""

    def _build(self, value: Any) -> QWidget:
        self.text = QPlainTextEdit()
        self.text.setObjectName("jsonEditor")
        self.text.setTabChangesFocus(True)
        self.text.setFixedHeight(80)
        self.text.setPlainText(self._dump(value))
        return self.text

    @staticmethod
    def _dump(value: Any) -> str:
        if value is None:
            return ""
        plain = _jsonable(value)
        return json.dumps(plain, ensure_ascii=False, indent=1)

    def value(self) -> Any:
        text = self.text.toPlainText().strip()
        if not text:
            return None if self.kind.optional else _empty_like(self.initial)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise EditorError(
                _tr("This is not valid JSON (line {line}: {msg}).").format(
                    line=exc.lineno, msg=exc.msg
                )
            ) from exc


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=True)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return value


def _empty_like(value: Any) -> Any:
    return [] if isinstance(value, list) else {}


class ModelRouteEditor(FieldEditor):
    """`chat.model` as a provider list plus the model's name."""

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
        self.name = QLineEdit(name)
        self.name.setPlaceholderText(_tr("for example gpt-4o-mini"))
        self._row.addWidget(self.name, 1)
        return self.provider

    def value(self) -> Any:
        provider = str(self.provider.currentData())
        name = self.name.text().strip()
        if provider == EMBEDDED and not name:
            name = "smollm2"
        return f"{provider}/{name}"


def make_editor(path: str, field: FieldInfo, kind: FieldKind, value: Any) -> FieldEditor:
    if path == "chat.model":
        return ModelRouteEditor(path, field, kind, value)
    if kind.kind == "bool" and not kind.optional:
        return BoolEditor(path, field, kind, value)
    if kind.kind in ("choice", "bool"):
        return ChoiceEditor(path, field, kind, value)
    if kind.kind in ("int", "float"):
        return NumberEditor(path, field, kind, value)
    if kind.kind == "secret":
        return SecretEditor(path, field, kind, value)
    if path in DEVICE_KINDS:
        return DeviceEditor(path, field, kind, value)
    if kind.kind == "text":
        return TextEditor(path, field, kind, value)
    return JsonEditor(path, field, kind, value)


def walk_fields(
    model: type[BaseModel], values: BaseModel | None, prefix: str = ""
) -> Iterator[tuple[str, str, FieldInfo, FieldKind, Any]]:
    """(section, path, field, kind, value) of every leaf field, depth first."""
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if path in HIDDEN:
            continue
        value = getattr(values, name, None) if values is not None else field.default
        kind = field_kind(field.annotation)
        if kind.kind == "model" and kind.model is not None:
            yield from walk_fields(
                kind.model, value if isinstance(value, BaseModel) else None, path
            )
        else:
            yield prefix, path, field, kind, value


# -- validating and saving without the environment -----------------------------------------

_PLAIN: dict[type[BaseModel], type[BaseModel]] = {}


def _plain_model(cls: type[BaseModel]) -> type[BaseModel]:
    """`cls` (a `Settings`) as a plain model: validating it never reads `COMPANION_*`."""
    if cls not in _PLAIN:
        fields: dict[str, Any] = {
            name: (field.annotation, field) for name, field in cls.model_fields.items()
        }
        _PLAIN[cls] = create_model(
            "Plain" + cls.__name__, __config__=ConfigDict(extra="ignore"), **fields
        )
    return _PLAIN[cls]


def validate_plain(data: dict[str, Any], cls: type[Settings] = Settings) -> Settings:
    """`cls` from `data` alone (no environment, no file); `ValidationError` if bad."""
    plain = _plain_model(cls).model_validate(data)
    values = {name: getattr(plain, name) for name in plain.model_fields_set}
    return cls.model_construct(**values)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, SecretStr) or isinstance(b, SecretStr):
        raw_a = a.get_secret_value() if isinstance(a, SecretStr) else a
        raw_b = b.get_secret_value() if isinstance(b, SecretStr) else b
        return bool(raw_a == raw_b)
    return bool(a == b)


def changes(
    original: BaseModel, edited: BaseModel, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(field path, new value) of every leaf that differs between two settings."""
    for name in type(edited).model_fields:
        old, new = getattr(original, name, None), getattr(edited, name)
        if isinstance(old, BaseModel) and isinstance(new, BaseModel) and type(old) is type(new):
            yield from changes(old, new, (*prefix, name))
        elif not _same(old, new):
            yield (*prefix, name), new


def keep_fields_set(original: BaseModel, edited: BaseModel) -> bool:
    """Mark in `edited` as set only what `original` had set plus what changed (some
    code asks whether a field was set explicitly, e.g. the persona's name). Returns
    whether anything in `edited` is set."""
    names = set(original.model_fields_set)
    for name in type(edited).model_fields:
        old, new = getattr(original, name, None), getattr(edited, name)
        if isinstance(old, BaseModel) and isinstance(new, BaseModel) and type(old) is type(new):
            if keep_fields_set(old, new):
                names.add(name)
        elif not _same(old, new):
            names.add(name)
    object.__setattr__(edited, "__pydantic_fields_set__", names)
    return bool(names)


def settings_to_save(original: Settings, edited: Settings, path: Path | None = None) -> Settings:
    """What the file should hold: what it holds now plus what differs between `original`
    (as loaded, environment included) and `edited`. Values that only came from
    `COMPANION_*` variables are left out. Raises `ValueError` when the file is broken."""
    path = path or config_path()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ValueError(
                _tr("{path} cannot be read ({error}); fix or delete it.").format(
                    path=path, error=exc
                )
            ) from exc
    for keys, value in changes(original, edited):
        table = data
        for key in keys[:-1]:
            inner = table.get(key)
            if not isinstance(inner, dict):
                inner = {}
                table[key] = inner
            table = inner
        table[keys[-1]] = value
    try:
        return validate_plain(data, type(edited))
    except ValidationError as exc:
        raise ValueError(describe_validation(exc)) from exc


def describe_validation(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
    )


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

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        save: SaveFunction | None = save_settings,
        path: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Companion settings"))
        self.setObjectName("settingsDialog")
        self.resize(620, 560)
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
            hint = self._hint(path, field)
            if hint:
                editor.set_tooltip(hint)
                label.setToolTip(hint)
            form.addRow(label, editor.widget)
        self._add_tests(pages)
        for key, column in pages.items():
            column.addStretch(1)
            if column.count() == 1:  # nothing in it (a stretch only)
                self.tabs.setTabVisible(self._tab_index[key], False)

    def _add_intro(self, pages: dict[str, QVBoxLayout]) -> None:
        privacy = QLabel(
            self.tr(
                "Companion looks at your screen only when the model asks for a screenshot, "
                "and you always see a notice when it does. Keys are kept in your system's "
                "keyring, never in the settings file."
            )
        )
        privacy.setWordWrap(True)
        pages["privacy"].addWidget(privacy)
        advanced = QLabel(
            self.tr("Everything else the settings file holds. Maps and lists are written as JSON.")
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
        parts = [_tr(field.description) if field.description else ""]
        variable = env_variable(path)
        if variable:
            parts.append(
                _tr("Set by the environment variable {name}, which wins over this file.").format(
                    name=variable
                )
            )
        return "\n".join(p for p in parts if p)

    def _add_tests(self, pages: dict[str, QVBoxLayout]) -> None:
        get = checks.weak_getter(self, SettingsDialog._settings_for_test)
        self.model_check = checks.ModelCheck(get)
        self.mic_check = checks.MicCheck(get)
        self.voice_check = checks.VoiceCheck(get)
        pages["model"].addWidget(self.model_check)
        pages["voice_in"].addWidget(self.mic_check)
        pages["voice_out"].addWidget(self.voice_check)

    def _on_provider_changed(self) -> None:
        provider = self.provider.currentData()
        self.api_key.setEnabled(provider != EMBEDDED)
        self.editors["chat.api_key"].widget.setEnabled(provider != EMBEDDED)
        self.base_url.setEnabled(provider in TAKES_BASE_URL)

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
        super().done(result)

    # -- the Test buttons ---------------------------------------------------------------------

    def _settings_for_test(self) -> Settings | None:
        """The settings as shown (not saved), or None with the problems shown."""
        try:
            return self.edited_settings()
        except ValueError:
            return None


__all__ = [
    "PROVIDERS",
    "SettingsDialog",
    "changes",
    "field_kind",
    "settings_to_save",
    "tab_of",
    "validate_plain",
]

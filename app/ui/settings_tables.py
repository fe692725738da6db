"""The settings dialog's editors for collections: a key/value table for a map of names
to plain values (such as the VTube Studio hotkey for each expression), a list for a list
of plain values, a box per entry for a map of names to small tables (each MCP server,
with its own fields: its program, arguments, environment variables...), and a JSON text
for anything deeper (your own tools, whose parameters are tables again). `make_editor`
picks the editor for any field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.settings_editors import (
    DEVICE_KINDS,
    BoolEditor,
    ChoiceEditor,
    DeviceEditor,
    EditorError,
    FieldEditor,
    FolderEditor,
    ModelRouteEditor,
    NumberEditor,
    SecretEditor,
    TextEditor,
)
from app.ui.settings_fields import (
    DEFAULT_HEADERS,
    FOLDERS,
    HELP,
    LABELS,
    TABLE_HEADERS,
    FieldKind,
    field_kind,
    humanize,
)

ROWS_SHOWN = 4  # a table or list this many rows high before it scrolls


def _tr(text: str) -> str:
    return QCoreApplication.translate("SettingsDialog", text)


def _plain(text: str, kind: type, where: str) -> Any:
    """`text` as the collection's value type (text, a whole number, a number)."""
    if kind is str:
        return text
    try:
        return kind(text)
    except ValueError as exc:
        wanted = _tr("a whole number") if kind is int else _tr("a number")
        raise EditorError(
            _tr("{where}: “{text}” is not {wanted}.").format(where=where, text=text, wanted=wanted)
        ) from exc


class _CollectionEditor(FieldEditor):
    """The shared part: Add and Remove buttons beside the table or list."""

    def _buttons(self, add: Any, remove: Any) -> None:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        self.add_button = QToolButton()
        self.add_button.setText(_tr("Add"))
        self.add_button.setObjectName("addRow")
        self.add_button.clicked.connect(add)
        self.remove_button = QToolButton()
        self.remove_button.setText(_tr("Remove"))
        self.remove_button.setObjectName("removeRow")
        self.remove_button.clicked.connect(remove)
        column.addWidget(self.add_button)
        column.addWidget(self.remove_button)
        column.addStretch(1)
        self._row.addWidget(box)

    @property
    def value_type(self) -> type:
        kind = self.kind.choices[0] if self.kind.choices else str
        return kind if isinstance(kind, type) else str


class KeyValueEditor(_CollectionEditor):
    """A map of names to plain values as a two-column table; empty rows are left out."""

    def _build(self, value: Any) -> QWidget:
        headers = TABLE_HEADERS.get(self.path, DEFAULT_HEADERS)
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("keyValueTable")
        self.table.setHorizontalHeaderLabels([_tr(h) for h in headers])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table, as in a form
        row_height = self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(row_height * (ROWS_SHOWN + 1) + 4)
        for key, item in (value or {}).items():
            self.add_row(str(key), str(item))
        self._buttons(lambda: self.add_row("", "", edit=True), self.remove_row)
        return self.table

    def add_row(self, key: str, item: str, *, edit: bool = False) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        name = QTableWidgetItem(key)
        self.table.setItem(row, 0, name)
        self.table.setItem(row, 1, QTableWidgetItem(item))
        if edit:
            self.table.setCurrentCell(row, 0)
            self.table.editItem(name)

    def remove_row(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        for row in rows:
            self.table.removeRow(row)

    def rows(self) -> list[tuple[str, str]]:
        def text(row: int, column: int) -> str:
            item = self.table.item(row, column)
            return item.text().strip() if item is not None else ""

        return [(text(r, 0), text(r, 1)) for r in range(self.table.rowCount())]

    def value(self) -> Any:
        result: dict[str, Any] = {}
        for key, item in self.rows():
            if not key and not item:
                continue
            if not key:
                raise EditorError(_tr("A row has a value but no name: give it a name."))
            if key in result:
                raise EditorError(_tr("“{key}” is there twice.").format(key=key))
            result[key] = _plain(item, self.value_type, key)
        return result


class ListEditor(_CollectionEditor):
    """A list of plain values, one a line (double-click to edit); empty lines are left out."""

    def _build(self, value: Any) -> QWidget:
        self.list = QListWidget()
        self.list.setObjectName("listEditor")
        self.list.setFixedHeight(self.list.fontMetrics().height() * (ROWS_SHOWN + 2))
        for item in value or []:
            self.add_item(str(item))
        self._buttons(lambda: self.add_item("", edit=True), self.remove_item)
        return self.list

    def add_item(self, text: str, *, edit: bool = False) -> None:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.list.addItem(item)
        if edit:
            self.list.setCurrentItem(item)
            self.list.editItem(item)

    def remove_item(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)

    def items(self) -> list[str]:
        return [self.list.item(i).text().strip() for i in range(self.list.count())]

    def value(self) -> Any:
        where = _tr("Line {number}")
        return [
            _plain(text, self.value_type, where.format(number=i + 1))
            for i, text in enumerate(self.items())
            if text
        ]


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


class _Entry:
    """One entry of an `EntriesEditor`: its name and an editor for each of its fields."""

    def __init__(self, owner: EntriesEditor, name: str, item: BaseModel | None) -> None:
        model = owner.kind.model
        assert model is not None
        self.box = QGroupBox()
        self.box.setObjectName("entry")
        form = QFormLayout(self.box)
        self.name = QLineEdit(name)
        self.name.setObjectName("entryName")
        remove = QToolButton()
        remove.setText(_tr("Remove"))
        remove.clicked.connect(lambda: owner.remove_entry(self))
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.name, 1)
        line.addWidget(remove)
        form.addRow(_tr("Name"), row)
        self.editors: dict[str, FieldEditor] = {}
        for field_name, field in model.model_fields.items():
            path = f"{owner.path}.*.{field_name}"  # the words for every entry's field
            if item is not None:
                value = getattr(item, field_name)
            elif field.default is not PydanticUndefined:
                value = field.default
            else:
                value = field.default_factory() if field.default_factory else None  # type: ignore[call-arg]
            editor = make_editor(path, field, field_kind(field.annotation), value)
            shown = HELP.get(path) or field.description or ""
            editor.set_help(_tr(shown) if shown else "")
            label = QLabel(_tr(LABELS.get(path, humanize(field_name))))
            label.setWordWrap(True)
            form.addRow(label, editor.widget)
            self.editors[field_name] = editor

    def value(self) -> dict[str, Any]:
        return {name: editor.value() for name, editor in self.editors.items()}


class EntriesEditor(FieldEditor):
    """A map of names to small tables: a box per entry with its name and its fields,
    "Add" for a new one, "Remove" in each box."""

    def _build(self, value: Any) -> QWidget:
        self.box = QWidget()
        self.column = QVBoxLayout(self.box)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.entries: list[_Entry] = []
        self.add_button = QToolButton()
        self.add_button.setText(_tr("Add"))
        self.add_button.setObjectName("addEntry")
        self.add_button.clicked.connect(lambda: self.add_entry("", None))
        self.column.addWidget(self.add_button)
        for name, item in (value or {}).items():
            self.add_entry(str(name), item if isinstance(item, BaseModel) else None)
        return self.box

    def add_entry(self, name: str, item: BaseModel | None) -> _Entry:
        entry = _Entry(self, name, item)
        self.entries.append(entry)
        self.column.insertWidget(self.column.count() - 1, entry.box)  # above "Add"
        if not name:
            entry.name.setFocus()
        return entry

    def remove_entry(self, entry: _Entry) -> None:
        self.entries.remove(entry)
        entry.box.hide()
        entry.box.deleteLater()

    def value(self) -> Any:
        result: dict[str, Any] = {}
        for entry in self.entries:
            name = entry.name.text().strip()
            if not name:
                raise EditorError(_tr("An entry has no name: give it one."))
            if name in result:
                raise EditorError(_tr("“{key}” is there twice.").format(key=name))
            try:
                result[name] = entry.value()
            except EditorError as exc:
                raise EditorError(f"{name}: {exc}") from exc
        return result


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
    if path in FOLDERS:
        return FolderEditor(path, field, kind, value)
    if kind.kind == "text":
        return TextEditor(path, field, kind, value)
    if kind.kind == "mapping":
        return KeyValueEditor(path, field, kind, value)
    if kind.kind == "list":
        return ListEditor(path, field, kind, value)
    if kind.kind == "entries":
        return EntriesEditor(path, field, kind, value)
    return JsonEditor(path, field, kind, value)

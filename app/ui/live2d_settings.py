"""The Live2D preview in the settings' Avatar tab: the model in the folder being edited,
drawn live with the scale, place and frame rate being edited, and what the app makes of
it in words (its expression tags and where to edit them, or why it cannot be shown).

The model is read (files checked, the core's probe, the expression table) off the UI
thread; only drawing happens on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout, QWidget

from app.avatar.live2d_model import Live2DModel, load_live2d_or_none
from app.config import data_dir
from app.config.models import Live2DSettings
from app.ui.avatar_widget import AvatarWidget
from app.ui.settings_editors import EditorError, FieldEditor, FolderEditor
from app.ui.settings_fields import ERROR_STYLE

__all__ = ["FOLDER", "Live2DPreview"]

log = logging.getLogger(__name__)

FOLDER = "avatar.live2d.folder"
VIEW_PREFIX = "avatar.live2d."
SETTLE_MS = 400  # typing a folder: read it once the typing pauses


def _tr(text: str) -> str:
    return QCoreApplication.translate("Live2DPreview", text)


Loaded = tuple[Live2DModel | None, list[str]]


class Live2DPreview(QGroupBox):
    """The preview, following the editors of `avatar.live2d.*`."""

    def __init__(self, editors: Mapping[str, FieldEditor], parent: QWidget | None = None) -> None:
        super().__init__(_tr("Preview"), parent)
        self.setObjectName("live2dPreview")
        self._editors = editors
        self.avatar = AvatarWidget()
        self.avatar.setMinimumSize(200, 280)
        self.avatar.setMaximumHeight(360)
        self.status = QLabel()
        self.status.setObjectName("live2dStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = QVBoxLayout(self)
        box.addWidget(self.avatar, 1)
        box.addWidget(self.status)
        self._generation = 0
        self._folder: Path | None = None
        self.pending: asyncio.Future[Loaded] | Future[Loaded] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.reload)
        self._connect()
        self.reload()

    def _connect(self) -> None:
        folder = self._editors.get(FOLDER)
        if isinstance(folder, FolderEditor):
            folder.line.textChanged.connect(lambda _: self._timer.start())
            if folder.mode is not None:
                folder.mode.currentIndexChanged.connect(lambda _: self._timer.start())
        for path, editor in self._editors.items():
            if path.startswith(VIEW_PREFIX) and path != FOLDER:
                for signal in ("valueChanged", "toggled"):
                    changed = getattr(editor.input, signal, None)
                    if changed is not None:
                        changed.connect(lambda *_: self.apply_view())

    # -- what the editors say ----------------------------------------------------------------

    def folder(self) -> Path | None:
        editor = self._editors.get(FOLDER)
        try:
            value = editor.value() if editor is not None else None
        except EditorError:
            return None
        return Path(value) if value else None

    def view(self) -> Live2DSettings:
        values: dict[str, Any] = {}
        for path, editor in self._editors.items():
            if path.startswith(VIEW_PREFIX) and path != FOLDER:
                try:
                    values[path.removeprefix(VIEW_PREFIX)] = editor.value()
                except EditorError:
                    continue
        try:
            return Live2DSettings(**values)
        except ValidationError:
            return Live2DSettings()

    def apply_view(self) -> None:
        self.avatar.set_live2d_view(self.view())

    # -- reading and showing the model --------------------------------------------------------

    def reload(self) -> None:
        """Read the folder the editor holds now (off the UI thread when the app's loop
        runs) and show it."""
        folder = self.folder()
        if folder == self._folder and self.pending is None and self.avatar.live2d is not None:
            return
        self._folder = folder
        self._generation += 1
        generation = self._generation
        if folder is None:
            self._show((None, []), generation)
            return
        self._say(_tr("Reading the model…"))
        data_folder = data_dir()

        def load() -> Loaded:
            return load_live2d_or_none(folder, data_folder=data_folder)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._show(load(), generation)
            return
        pending = loop.run_in_executor(None, load)
        self.pending = pending
        pending.add_done_callback(lambda done: self._loaded(done, generation))

    def _loaded(self, done: asyncio.Future[Loaded], generation: int) -> None:
        if generation != self._generation:
            return  # another folder was typed meanwhile
        self.pending = None
        try:
            result = done.result()
        except Exception as exc:  # the preview says it; the dialog goes on
            log.warning("the Live2D preview failed: %s", exc)
            result = (None, [str(exc)])
        self._show(result, generation)

    def _show(self, loaded: Loaded, generation: int) -> None:
        if generation != self._generation:
            return
        model, problems = loaded
        if model is None:
            self.avatar.set_live2d(None)
            if problems:
                self._say(" ".join(problems), error=True)
            else:
                self._say(_tr("The built-in avatar."))
            return
        problem = self.avatar.set_live2d(model, self.view())
        if problem is not None:
            self._say(problem, error=True)
            return
        tags = ", ".join(f"[{t}]" for t in model.names)
        where = str(model.table_path) if model.table_path else _tr("(no folder could be written)")
        text = _tr("{name}: the expression tags {tags}. Edit them in {file}.").format(
            name=model.name, tags=tags, file=where
        )
        self._say(" ".join([text, *problems]), error=bool(problems))

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(ERROR_STYLE if error else "")

    def close_model(self) -> None:
        """Let the model go (the dialog closes)."""
        self._generation += 1
        self._timer.stop()
        self.avatar.set_live2d(None)

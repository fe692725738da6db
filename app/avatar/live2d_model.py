"""A user's Live2D model, ready to show: its files checked (`live2d_files`), what the
Cubism core reads in it (`live2d_probe`) and its expression table (`live2d_expressions`).

Read without Qt and without OpenGL, so the session can tell the chat model the model's
expression tags, and a model that cannot be shown is refused in words before anything
tries to render it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.avatar.live2d_expressions import ExpressionTable, load_table
from app.avatar.live2d_files import Live2DFiles, Live2DModelError, read_files
from app.avatar.live2d_library import Live2DUnavailable
from app.avatar.live2d_probe import Live2DFacts, read_facts

__all__ = [
    "Live2DModel",
    "Live2DModelError",
    "Live2DUnavailable",
    "load_live2d_model",
    "load_live2d_or_none",
]

MOUTH_OPEN = ("ParamMouthOpenY", "PARAM_MOUTH_OPEN_Y")  # when the model names no LipSync group


@dataclass(frozen=True, slots=True)
class Live2DModel:
    """A model that can be shown, with how it shows each expression tag."""

    files: Live2DFiles
    facts: Live2DFacts
    table: ExpressionTable
    table_path: Path | None = None  # where the user edits the table (None: nowhere writable)
    problems: tuple[str, ...] = ()  # what in the table could not be used, in words

    @property
    def name(self) -> str:
        return self.files.name

    @property
    def model_json(self) -> Path:
        return self.files.model_json

    @property
    def names(self) -> tuple[str, ...]:
        """The expression tags, `neutral` first (what the chat model is told)."""
        return self.table.tags

    def __contains__(self, tag: object) -> bool:
        return tag in self.table

    @property
    def lip_sync(self) -> tuple[str, ...]:
        """The parameters the voice opens: the model's LipSync group, else its mouth."""
        if self.files.lip_sync:
            return tuple(p for p in self.files.lip_sync if p in self.facts.parameters)
        return tuple(p for p in MOUTH_OPEN if p in self.facts.parameters)[:1]

    def motion_group(self, *names: str) -> str | None:
        """The model's motion group called one of `names` (any case; `tap` also finds
        `TapBody`), or None."""
        for wanted in names:
            for group in self.facts.motions:
                if group.lower() == wanted.lower():
                    return group
        for wanted in names:
            for group in self.facts.motions:
                if group.lower().startswith(wanted.lower()):
                    return group
        return None


def load_live2d_model(path: Path | str, *, data_folder: Path | None = None) -> Live2DModel:
    """The model in `path` (its folder or `.model3.json`); raises `Live2DModelError` or
    `Live2DUnavailable` in words. In `data_folder` (the app's), `live2d/checked/` keeps
    what the core read (a model is probed once) and `live2d/` holds the expression table
    of a model whose own folder is read-only."""
    place = data_folder / "live2d" if data_folder is not None else None
    files = read_files(path, decode_textures=False)  # the probe decodes them, once
    facts = read_facts(files, cache_dir=place / "checked" if place is not None else None)
    table, table_path, problems = load_table(files, facts, fallback_dir=place)
    return Live2DModel(files, facts, table, table_path, tuple(problems))


def load_live2d_or_none(
    path: Path | str | None, *, data_folder: Path | None = None
) -> tuple[Live2DModel | None, list[str]]:
    """The user's model (None when none is chosen) and what to tell the user: why it is
    not shown (the built-in avatar is, then), or what in its expression table is ignored."""
    if path is None or str(path).strip() == "":
        return None, []
    try:
        model = load_live2d_model(path, data_folder=data_folder)
    except (Live2DModelError, Live2DUnavailable) as exc:
        return None, [f"{exc} Showing the built-in avatar instead."]
    return model, list(model.problems)

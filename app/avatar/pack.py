"""Avatar packs: a folder of frames and an `avatar.toml` manifest saying which frame is which.

Read without Qt, so the session can tell the model exactly the expressions the art
has. A manifest looks like `assets/avatar/default/avatar.toml`::

    name = "Mika"
    size = [357, 512]           # optional: the frames' size in pixels
    eyes = [92, 189, 172, 92]   # optional: where the eyes are (x, y, w, h)

    [expressions.neutral]       # "neutral" is required: the face at rest
    closed = "neutral_closed.png"
    half = "neutral_half.png"   # optional: defaults to `open`, then `closed`
    open = "neutral_open.png"   # optional: defaults to `half`, then `closed`
    blink = "neutral_blink.png" # optional: eyes closed (mouth closed)

With `eyes`, a blink while talking paints only that part of the blink frame over
the talking frame; without it the whole blink frame shows.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.assets import asset_path
from app.avatar.state import EXPRESSIONS

__all__ = [
    "DEFAULT_PACK_DIR",
    "MANIFEST_NAME",
    "MOUTH_STATES",
    "AvatarPack",
    "AvatarPackError",
    "ExpressionFrames",
    "ExpressionSource",
    "expressions_for",
    "load_pack",
    "load_pack_or_default",
]

DEFAULT_PACK_DIR = asset_path("avatar/default")
MANIFEST_NAME = "avatar.toml"
MOUTH_STATES: tuple[str, ...] = ("closed", "half", "open")


class AvatarPackError(Exception):
    """The pack cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class ExpressionFrames:
    """The frame files of one expression (absolute paths)."""

    closed: Path
    half: Path
    open: Path
    blink: Path | None = None

    def mouth(self, state: str) -> Path:
        """The frame for a mouth state: `closed`, `half` or `open`."""
        return {"closed": self.closed, "half": self.half, "open": self.open}[state]

    def files(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys(p for p in (self.closed, self.half, self.open, self.blink) if p))


@dataclass(frozen=True, slots=True)
class AvatarPack:
    """A loaded manifest whose every frame file exists."""

    name: str
    folder: Path
    expressions: dict[str, ExpressionFrames]
    size: tuple[int, int] | None = None
    eyes: tuple[int, int, int, int] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The expression names, in the manifest's order."""
        return tuple(self.expressions)

    def __contains__(self, expression: object) -> bool:
        return expression in self.expressions


class _FramesEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    closed: str
    half: str | None = None
    open: str | None = None
    blink: str | None = None


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = "avatar"
    size: tuple[int, int] | None = None
    eyes: tuple[int, int, int, int] | None = None
    expressions: dict[str, _FramesEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _has_neutral(self) -> _Manifest:
        if "neutral" not in self.expressions:
            raise ValueError("there must be a [expressions.neutral] table (the face at rest)")
        return self


def load_pack(folder: Path | str) -> AvatarPack:
    """The pack in `folder` (or the manifest file itself); raises `AvatarPackError`."""
    path = Path(folder).expanduser()
    manifest_path = path if path.suffix == ".toml" else path / MANIFEST_NAME
    folder_path = manifest_path.parent
    try:
        data = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AvatarPackError(f"Could not read the avatar manifest {manifest_path}: {exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AvatarPackError(
            f"The avatar manifest {manifest_path} is not valid TOML: {exc}"
        ) from exc
    try:
        manifest = _Manifest.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'manifest'}: {e['msg']}" for e in exc.errors()
        )
        raise AvatarPackError(
            f"The avatar manifest {manifest_path} is invalid: {problems}"
        ) from exc

    expressions: dict[str, ExpressionFrames] = {}
    missing: list[str] = []
    for name, entry in manifest.expressions.items():
        half = entry.half or entry.open or entry.closed
        opened = entry.open or entry.half or entry.closed
        frames = ExpressionFrames(
            closed=folder_path / entry.closed,
            half=folder_path / half,
            open=folder_path / opened,
            blink=folder_path / entry.blink if entry.blink else None,
        )
        missing.extend(f"{name}: {p.name}" for p in frames.files() if not p.is_file())
        expressions[name.strip()] = frames
    if missing:
        raise AvatarPackError(
            f"The avatar pack {folder_path} is missing frame files ({', '.join(missing)})"
        )
    return AvatarPack(manifest.name, folder_path, expressions, manifest.size, manifest.eyes)


def load_pack_or_default(folder: Path | str | None) -> tuple[AvatarPack, str | None]:
    """The user's pack, or the default pack and a notice saying why the user's was not used."""
    if folder:
        try:
            return load_pack(folder), None
        except AvatarPackError as exc:
            return load_pack(DEFAULT_PACK_DIR), f"{exc}. Showing the default avatar instead."
    return load_pack(DEFAULT_PACK_DIR), None


class ExpressionSource(Protocol):
    """Art that shows named expressions: a sprite pack, or a Live2D model's table."""

    @property
    def names(self) -> tuple[str, ...]: ...

    def __contains__(self, expression: object) -> bool: ...


def expressions_for(
    pack: ExpressionSource, character_expressions: Sequence[str] = EXPRESSIONS
) -> tuple[str, ...]:
    """The expression tags the model is told about: the art's (a pack's, or a Live2D
    model's), narrowed to the character's own list when a character file names some of
    them. A character that names none of the art's keeps its own (the caller tells the
    user the art cannot show them)."""
    own = tuple(character_expressions)
    if own == EXPRESSIONS:
        return pack.names
    return tuple(e for e in own if e in pack) or own

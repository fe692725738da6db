"""Sprite packs in Qt: the frames of an `app.avatar` pack decoded into images.

`load_sprites_or_default` never fails for a user's broken pack: it falls back to
the default pack and returns a notice saying, in words, what was wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QImage, QImageReader

from app.avatar.pack import (
    DEFAULT_PACK_DIR,
    MOUTH_STATES,
    AvatarPack,
    AvatarPackError,
    load_pack,
)

__all__ = ["FRAME_KINDS", "Sprites", "load_sprites", "load_sprites_or_default"]

# A frame is (expression, kind): a mouth state, or "blink" (eyes closed).
FRAME_KINDS: tuple[str, ...] = (*MOUTH_STATES, "blink")


@dataclass(slots=True)
class Sprites:
    """A pack's frames, all shown in one `size`; each is decoded the first time it is used
    (decoding all of them up front would add a fifth of a second to the app's start)."""

    pack: AvatarPack
    size: QSize
    files: dict[tuple[str, str], Path]
    eyes: QRect | None  # where a blink frame is painted over a talking frame
    _decoded: dict[Path, QImage] = field(default_factory=dict)

    @property
    def expressions(self) -> tuple[str, ...]:
        return self.pack.names

    def frame(self, expression: str, kind: str) -> QImage | None:
        """The frame, or None for one the pack does not draw (such as a blink)."""
        path = self.files.get((expression, kind))
        if path is None:
            return None
        image = self._decoded.get(path)
        if image is None:
            image = QImage(str(path))
            if image.isNull():  # checked readable at load time; changed on disk since
                image = QImage(self.size, QImage.Format.Format_ARGB32_Premultiplied)
                image.fill(0)
            else:
                image = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
            self._decoded[path] = image
        return image


def load_sprites(pack: AvatarPack | Path | str) -> Sprites:
    """The frames of `pack` (a loaded pack or its folder), each checked to be an image Qt
    can read; raises `AvatarPackError`."""
    if not isinstance(pack, AvatarPack):
        pack = load_pack(pack)
    files: dict[tuple[str, str], Path] = {}
    sizes: dict[Path, QSize] = {}
    for name, frames in pack.expressions.items():
        for kind in FRAME_KINDS:
            path = frames.blink if kind == "blink" else frames.mouth(kind)
            if path is None:
                continue
            if path not in sizes:
                reader = QImageReader(str(path))
                size = reader.size()
                if not reader.canRead() or not size.isValid():
                    raise AvatarPackError(
                        f"The avatar frame {path} could not be read as an image "
                        "(PNG, JPEG, WebP or another format Qt reads)"
                    )
                sizes[path] = size
            files[(name, kind)] = path
    size = QSize(*pack.size) if pack.size else sizes[files[(pack.names[0], "closed")]]
    eyes = QRect(*pack.eyes) if pack.eyes else None
    return Sprites(pack, size, files, eyes)


def load_sprites_or_default(pack: AvatarPack | Path | str | None) -> tuple[Sprites, str | None]:
    """The user's pack, or the default one and a notice saying why the user's is not shown."""
    if pack is None or pack == "":
        return load_sprites(DEFAULT_PACK_DIR), None
    try:
        return load_sprites(pack), None
    except AvatarPackError as exc:
        return load_sprites(DEFAULT_PACK_DIR), f"{exc}. Showing the default avatar instead."

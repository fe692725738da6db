"""The Live2D model as the avatar widget shows it: the scene (`live2d_scene`) with the
user's view settings (scale, place, frame rate, eyes following the mouse), the last frame
drawn, where the model is opaque (the pet lets clicks through elsewhere), and clicks.

`open_face` never raises: a model that cannot be drawn gives None and the reason in words,
and the avatar shows its sprites instead.
"""

from __future__ import annotations

import logging

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QBitmap, QImage, QPainter, QRegion, QTransform

from app.avatar.live2d_library import Live2DUnavailable
from app.avatar.live2d_model import Live2DModel
from app.config.models import Live2DSettings
from app.ui.live2d_scene import Live2DScene

__all__ = ["MASK_CELL", "Live2DFace", "open_face"]

log = logging.getLogger(__name__)

MASK_CELL = 4  # the click-through shape is found on a grid this coarse (pixels) ...
MASK_ALPHA = 8  # ... from pixels at least this opaque (of 255)
SETTLE_S = 1.0  # the model's pose and physics come to rest before the first frame


class Live2DFace:
    """A model, drawn at the avatar's size. Build it with `open_face`."""

    def __init__(self, scene: Live2DScene, view: Live2DSettings) -> None:
        self.scene = scene
        self.view = view
        self._image: QImage | None = None
        self.set_view(view)
        scene.puppet.advance(0.0)
        for _ in range(int(SETTLE_S * 30)):
            scene.puppet.advance(1 / 30)

    @property
    def model(self) -> Live2DModel:
        return self.scene.model

    @property
    def expressions(self) -> tuple[str, ...]:
        return self.model.names

    def __contains__(self, tag: object) -> bool:
        return tag in self.model

    @property
    def frame_ms(self) -> int:
        return max(1, round(1000 / self.view.frame_rate))

    def set_view(self, view: Live2DSettings) -> None:
        """Scale, place and frame rate (the settings' preview changes them live)."""
        self.view = view
        self.scene.place(view.scale, view.x, view.y)

    def show(self, expression: str, intensity: float) -> None:
        self.scene.puppet.show(expression, intensity)

    def step(self, dt: float, mouth: float, look: QPointF | None, size: QSize) -> None:
        """Advance `dt` seconds with the mouth this open; `look`: the mouse in the widget's
        pixels (None: straight ahead, or the setting is off)."""
        puppet = self.scene.puppet
        puppet.set_mouth(mouth)
        if look is not None and self.view.follow_mouse and size.width() and size.height():
            x = 2.0 * look.x() / size.width() - 1.0
            y = 1.0 - 2.0 * look.y() / size.height()
            puppet.look_at(x, y)
        else:
            puppet.look_at(0.0, 0.0)
        puppet.advance(dt)

    def paint(self, p: QPainter, rect: QRectF, ratio: float) -> None:
        """Draw the model's current frame over `rect`."""
        width = max(1, round(rect.width() * ratio))
        height = max(1, round(rect.height() * ratio))
        image = self.scene.draw(width, height)
        image.setDevicePixelRatio(ratio)
        self._image = image
        p.drawImage(rect.topLeft(), image)

    @property
    def last_image(self) -> QImage | None:
        """The frame painted last (device pixels)."""
        return self._image

    def opaque_at(self, point: QPointF) -> bool:
        """Whether the model covers `point` (widget pixels) in the last frame."""
        image = self._image
        if image is None:
            return False
        ratio = image.devicePixelRatio()
        x, y = int(point.x() * ratio), int(point.y() * ratio)
        if not (0 <= x < image.width() and 0 <= y < image.height()):
            return False
        return image.pixelColor(x, y).alpha() >= MASK_ALPHA

    def opaque_region(self) -> QRegion:
        """Where the model covers the widget in the last frame (widget pixels), on a
        `MASK_CELL` grid and one cell wider, so a model that moves a little between two
        shapes is still inside the shape."""
        image = self._image
        if image is None:
            return QRegion()
        alpha = image.convertToFormat(QImage.Format.Format_Alpha8)
        rows = alpha.height() // MASK_CELL
        cols = alpha.width() // MASK_CELL
        if not rows or not cols:
            return QRegion()
        pixels = np.frombuffer(alpha.constBits(), np.uint8).reshape(
            alpha.height(), alpha.bytesPerLine()
        )[: rows * MASK_CELL, : cols * MASK_CELL]
        cells = pixels.reshape(rows, MASK_CELL, cols, MASK_CELL).max(axis=(1, 3)) >= MASK_ALPHA
        grown = cells.copy()
        grown[1:] |= cells[:-1]
        grown[:-1] |= cells[1:]
        grown[:, 1:] |= cells[:, :-1]
        grown[:, :-1] |= cells[:, 1:]
        packed = np.ascontiguousarray(np.packbits(grown, axis=1))
        mask = QImage(packed.data, cols, rows, packed.shape[1], QImage.Format.Format_Mono).copy()
        mask.setColorTable([0xFFFFFFFF, 0xFF000000])  # a set bit is black: inside
        scale = MASK_CELL / image.devicePixelRatio()
        return QTransform.fromScale(scale, scale).map(QRegion(QBitmap.fromImage(mask)))

    def tap(self, point: QPointF) -> bool:
        """A click at `point`: the Tap motion plays when the click is on the model."""
        return self.opaque_at(point) and self.scene.puppet.tap()

    def close(self) -> None:
        self.scene.close()


def open_face(
    model: Live2DModel, view: Live2DSettings | None = None, *, animate: bool = True
) -> tuple[Live2DFace | None, str | None]:
    """The model ready to draw, or None and why not (in words)."""
    try:
        scene = Live2DScene(model, animate=animate)
    except Live2DUnavailable as exc:
        return None, f"{exc} Showing the built-in avatar instead."
    return Live2DFace(scene, view or Live2DSettings()), None

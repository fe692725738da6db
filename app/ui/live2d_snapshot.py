"""One frame of the avatar, rendered offscreen for `companion avatar snapshot`: the sprite
avatar as the window shows it, or a Live2D model on a transparent background, with a
given expression and mouth, through the same widget the window uses."""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from app.ui.avatar_widget import AvatarWidget

__all__ = ["Snapshot", "SnapshotError", "snapshot"]

SETTLE_STEPS = 12  # of 1/12 s: the mouth and the expression's fade reach where they go
SEED = 0  # a sprite avatar that does not happen to blink in the first second


class SnapshotError(Exception):
    """The snapshot cannot be made; `code` is the exit status (2: a wrong argument)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Snapshot:
    image: QImage
    description: str


def snapshot(
    settings: Any,
    *,
    model: Path | None,
    expression: str | None,
    mouth: float,
    size: tuple[int, int],
) -> Snapshot:
    """The avatar in `settings` (or the Live2D `model`), showing `expression` with the
    mouth `mouth` open; raises `SnapshotError` in words."""
    _application()
    widget = AvatarWidget(pack=settings.avatar.pack, rng=random.Random(SEED))
    try:
        what = "the sprite avatar"
        if model is not None:
            what = _show_live2d(widget, settings, model)
        if expression is not None and not widget.set_expression(expression):
            raise SnapshotError(
                f"the avatar has no expression {expression!r}; it has "
                f"{', '.join(widget.expressions)}",
                2,
            )
        for _ in range(SETTLE_STEPS):
            widget.set_mouth_level(mouth)
            widget.step(1 / SETTLE_STEPS)
        image = widget.render_image(QSize(*size))
        return Snapshot(
            image,
            f"{what}, {widget.expression}, mouth {mouth:g}, {size[0]}×{size[1]}",
        )
    finally:
        widget.set_live2d(None)
        widget.deleteLater()


def _show_live2d(widget: AvatarWidget, settings: Any, folder: Path) -> str:
    from app.avatar.live2d_model import Live2DModelError, Live2DUnavailable, load_live2d_model
    from app.config import data_dir

    try:
        model = load_live2d_model(folder, data_folder=data_dir())
    except (Live2DModelError, Live2DUnavailable) as exc:
        raise SnapshotError(str(exc)) from exc
    problem = widget.set_live2d(model, settings.avatar.live2d, animate=False)
    if problem is not None:
        raise SnapshotError(problem.removesuffix(" Showing the built-in avatar instead."))
    widget.background = False  # the model's own alpha, for the picture's user to place
    return f"the Live2D model {model.name}"


def _application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1] or ["companion"])
    if not isinstance(app, QApplication):
        raise SnapshotError("a non-widget Qt application already runs in this process")
    return app

"""Live2D checks that need OpenGL, each run in a process of its own by
tests/test_ui_live2d.py (`python -m tests.live2d_checks CASE MODEL DATA [MORE]`).

A process of their own because the offscreen OpenGL context talks to a private Xvfb
that the test starts and stops: the test process itself never opens an X connection that
would outlive its server. Each case prints one line, `result: {json}`, with what it saw.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QSize, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication

from app.avatar.live2d_model import Live2DModel, load_live2d_model
from app.config import Settings, UiSettings
from app.events import ExpressionChanged, MouthLevel
from app.ui.live2d_scene import Live2DScene

MARKER = "result: "


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : image.width() * 4].reshape(image.height(), image.width(), 4).copy()


def spin(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def frames(model: Live2DModel, **_: Any) -> dict[str, Any]:
    """Frames of the still model: the mouth open against closed (where they differ, and
    which of the model's drawables are there), each expression against neutral."""
    scene = Live2DScene(model, animate=False)
    scene.place(1.0, 0.0, 0.0)
    size = (380, 560)

    def shot(expression: str, mouth: float) -> np.ndarray:
        scene.puppet.show(expression, at_once=True)
        scene.puppet.set_mouth(mouth)
        for _ in range(30):  # the pose and physics come to rest, the same way each time
            scene.puppet.advance(1 / 30)
        return pixels(scene.draw(*size))

    closed, opened = shot("neutral", 0.0), shot("neutral", 1.0)
    changed = np.argwhere((closed != opened).any(axis=2))
    sample = changed[:: max(1, len(changed) // 200)]
    on_mouth = sum(any("MOUTH" in d for d in scene.drawables_at(x, y)) for y, x in sample)
    expressions = {}
    for tag in model.names:
        face = shot(tag, 0.0)
        expressions[tag] = int((face != closed).any(axis=2).sum())
    return {
        "mouth_changed": len(changed),
        "mouth_sampled": len(sample),
        "mouth_on_mouth_drawables": int(on_mouth),
        "expression_changed": expressions,
        "corner_alpha": int(closed[2, 2, 3]),
        "opaque": int((closed[:, :, 3] > 0).sum()),
    }


def _session(model: Live2DModel | None) -> Any:
    from tests.ui_sessions import ScriptedSession

    session = ScriptedSession()
    session.live2d_model = model
    session.settings = Settings()
    session.expressions = model.names if model is not None else session.expressions
    return session


def window_and_pet(model: Live2DModel, app: QApplication, **_: Any) -> dict[str, Any]:
    """The window and the pet both show the model; the pet is transparent around it, and
    the X server gives a click on that transparency to the window below."""
    from Xlib import display as xdisplay

    from app.ui import MainWindow
    from app.ui.pet import PetWindow

    session = _session(model)
    window = MainWindow(session)
    window.show()
    spin(app, 0.5)
    window.avatar.background = False  # the model alone: what it drew
    in_window = pixels(window.avatar.render_image(QSize(300, 400)))
    pet = PetWindow(session, UiSettings(pet_geometry={"default": [200, 100, 280, 440]}))
    pet.show()
    spin(app, 1.5)
    pet.update_shape()
    spin(app, 0.3)
    grabbed = pixels(pet.grab().toImage())
    mask = pet.mask()
    geometry = pet.geometry()
    centre = pet.avatar.geometry().center()
    # A point of the pet's own rectangle that the model does not cover (its top corner).
    empty = QPoint(pet.avatar.x() + 3, pet.avatar.y() + 3)
    x = xdisplay.Display(os.environ["DISPLAY"])
    root = x.screen().root
    under: dict[str, int] = {}
    for name, point in (("model", centre), ("transparent", empty)):
        root.warp_pointer(geometry.x() + point.x(), geometry.y() + point.y())
        x.sync()
        spin(app, 0.2)
        child = root.query_pointer().child
        under[name] = int(child.id) if child else 0
    window_after = pixels(window.avatar.render_image(QSize(300, 400)))
    # A click on the model plays its Tap motion; a drag moves the pet and plays nothing.
    pet_centre = QPointF(centre)
    press(app, pet, pet_centre, QEvent.Type.MouseButtonPress)
    press(app, pet, pet_centre, QEvent.Type.MouseButtonRelease)
    face = pet.avatar.live2d
    taps_after_click = face.scene.puppet.taps if face is not None else -1
    before = pet.pos()
    press(app, pet, pet_centre, QEvent.Type.MouseButtonPress)
    press(app, pet, pet_centre + QPointF(60, 30), QEvent.Type.MouseMove)
    press(app, pet, pet_centre + QPointF(60, 30), QEvent.Type.MouseButtonRelease)
    spin(app, 0.2)
    return {
        "pet_taps_after_click": taps_after_click,
        "pet_taps_after_drag": face.scene.puppet.taps if face is not None else -1,
        "pet_moved": [pet.pos().x() - before.x(), pet.pos().y() - before.y()],
        "window_live2d": window.avatar.live2d is not None,
        "pet_live2d": pet.avatar.live2d is not None,
        "window_opaque": int((in_window[:, :, 3] > 0).sum()),
        "window_opaque_with_pet": int((window_after[:, :, 3] > 0).sum()),
        "pet_corner_alpha": int(grabbed[3, 3, 3]),
        "pet_centre_alpha": int(grabbed[centre.y(), centre.x(), 3]),
        "pet_transparent_pixels": int((grabbed[:, :, 3] == 0).sum()),
        "mask_has_centre": mask.contains(centre),
        "mask_has_corner": mask.contains(empty),
        "pet_window": int(pet.winId()),
        "under": under,
        "platform": app.platformName(),
    }


def press(app: QApplication, widget: Any, at: QPointF, kind: QEvent.Type) -> None:
    """A left-button mouse event at `at` (the widget's pixels), as the system sends it."""
    held = (
        Qt.MouseButton.NoButton
        if kind == QEvent.Type.MouseButtonRelease
        else Qt.MouseButton.LeftButton
    )
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    event = QMouseEvent(
        kind, at, widget.mapToGlobal(at), button, held, Qt.KeyboardModifier.NoModifier
    )
    app.sendEvent(widget, event)


def events(model: Live2DModel, app: QApplication, **_: Any) -> dict[str, Any]:
    """The session's events move the model: the expression tag, the voice's level on the
    lip-sync parameter, and a click on the model plays its Tap motion."""
    from app.ui import MainWindow

    session = _session(model)
    window = MainWindow(session)
    window.show()
    spin(app, 0.3)
    face = window.avatar.live2d
    assert face is not None
    puppet = face.scene.puppet
    mouth = model.lip_sync[0]
    window.present(ExpressionChanged("joy", 1.0))
    spin(app, 0.6)
    shown = puppet.expression
    levels = []
    for _ in range(15):
        window.present(MouthLevel(0.9))
        spin(app, 0.03)
        levels.append(puppet.cubism.GetParamValueById(mouth))
    window.present(MouthLevel(0.0))
    spin(app, 0.3)
    after = puppet.cubism.GetParamValueById(mouth)
    avatar = window.avatar
    window.avatar.render_image(avatar.size())  # the frame the click lands on
    centre = QPointF(avatar.width() / 2, avatar.height() / 2)
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        press(app, avatar, centre, kind)
    return {
        "expression": shown,
        "mouth_while_speaking": max(levels),
        "mouth_after": after,
        "openness_after": window.avatar.mouth_openness,
        "taps": puppet.taps,
    }


def frame_rates(model: Live2DModel, app: QApplication, **_: Any) -> dict[str, Any]:
    """The avatar's frame interval: idle (only the slow motion), talking, after a new
    face, after a tap, and idle again; and the frames painted while idle."""
    from app.ui import MainWindow

    window = MainWindow(_session(model))
    window.show()
    avatar = window.avatar
    seen: dict[str, Any] = {}
    spin(app, 1.5)
    seen["idle"] = avatar._timer.interval()
    painted = [0]
    paint = avatar.paintEvent

    def counting(event: Any) -> None:
        painted[0] += 1
        paint(event)

    avatar.paintEvent = counting  # type: ignore[method-assign]
    spin(app, 2.0)
    avatar.paintEvent = paint  # type: ignore[method-assign]
    seen["idle_painted"] = painted[0]
    for _ in range(10):
        window.present(MouthLevel(0.7))
        spin(app, 0.03)
    seen["talking"] = avatar._timer.interval()
    window.present(MouthLevel(0.0))
    spin(app, 1.5)
    seen["after_talking"] = avatar._timer.interval()
    window.present(ExpressionChanged("joy", 1.0))
    spin(app, 0.1)
    seen["new_face"] = avatar._timer.interval()
    spin(app, 1.5)
    seen["after_new_face"] = avatar._timer.interval()
    face = avatar.live2d
    assert face is not None
    seen["tapped"] = face.scene.puppet.tap()
    spin(app, 0.2)
    seen["tap"] = avatar._timer.interval()
    return seen


def no_opengl(model: Live2DModel, app: QApplication, **_: Any) -> dict[str, Any]:
    """Without OpenGL the window shows the sprites and says why, once."""
    from app.ui import MainWindow

    window = MainWindow(_session(model))
    return {
        "live2d": window.avatar.live2d is not None,
        "expressions": list(window.avatar.expressions),
        "notice": window.notice_label.text(),
    }


def preview(model: Live2DModel, app: QApplication, broken: str = "", **_: Any) -> dict[str, Any]:
    """The settings' preview follows the folder being edited."""
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.settings_editors import FolderEditor

    settings = Settings()
    settings.avatar.live2d.folder = model.files.folder
    dialog = SettingsDialog(settings, save=None)
    shown = dialog.live2d_preview
    seen = {"first": shown.avatar.live2d is not None, "first_text": shown.status.text()}
    editor = dialog.editors["avatar.live2d.folder"]
    assert isinstance(editor, FolderEditor) and editor.mode is not None
    editor.mode.setCurrentIndex(0)  # "Built-in"
    shown.reload()
    seen |= {"builtin": shown.avatar.live2d is not None, "builtin_text": shown.status.text()}
    editor.mode.setCurrentIndex(1)
    editor.line.setText(broken)
    shown.reload()
    seen |= {"broken": shown.avatar.live2d is not None, "broken_text": shown.status.text()}
    dialog.editors["avatar.live2d.scale"].input.setValue(2.0)  # type: ignore[attr-defined]
    seen["scale"] = dialog.live2d_preview.view().scale
    dialog.reject()
    return seen


def saved_settings(model: Live2DModel, app: QApplication, **_: Any) -> dict[str, Any]:
    """Saved settings reach the window and the pet at once: Built-in, then the model again,
    then a new scale."""
    from app.config.models import Live2DSettings
    from app.ui import MainWindow
    from app.ui.shell import Shell

    session = _session(model)
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=False)
    shell.show_pet()
    spin(app, 0.5)
    chosen = Live2DSettings(folder=model.files.folder)
    seen = {"start": [window.avatar.live2d is not None, shell.pet.avatar.live2d is not None]}
    shell.apply_live2d(chosen, Live2DSettings())
    seen["built_in"] = [window.avatar.live2d is not None, shell.pet.avatar.live2d is not None]
    seen["pet_background"] = shell.pet.avatar.background
    shell.apply_live2d(Live2DSettings(), chosen)
    seen["again"] = [window.avatar.live2d is not None, shell.pet.avatar.live2d is not None]
    bigger = chosen.model_copy(update={"scale": 2.5, "frame_rate": 12})
    shell.apply_live2d(chosen, bigger)
    face = window.avatar.live2d
    seen["scale"] = face.view.scale if face is not None else None
    seen["frame_ms"] = window.avatar._timer.interval()
    shell.dispose()
    return seen


CASES: dict[str, Callable[..., dict[str, Any]]] = {
    "saved_settings": saved_settings,
    "frames": frames,
    "frame_rates": frame_rates,
    "window_and_pet": window_and_pet,
    "events": events,
    "no_opengl": no_opengl,
    "preview": preview,
}


def main(argv: list[str]) -> int:
    case, folder, data = argv[1], Path(argv[2]), Path(argv[3])
    app = QApplication.instance() or QApplication(argv[:1])
    assert isinstance(app, QApplication)
    model = load_live2d_model(folder, data_folder=data)
    extra = {"broken": argv[4]} if len(argv) > 4 else {}
    result = CASES[case](model=model, app=app, **extra)
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

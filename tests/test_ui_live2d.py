"""The Live2D model on screen: rendered by live2d-py in an offscreen OpenGL context on a
private Xvfb (Mesa's software renderer), through `companion avatar snapshot`, the window,
the desktop pet and the settings' preview.

Each check runs in a process of its own (tests/live2d_checks.py, or the command line):
the OpenGL context holds an X connection to the test's Xvfb, which this process must not
keep past the server's end."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # this process's own Qt, if any

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from tests.live2d_models import FIXTURE, copy_model, needs_model, runtime
from tests.test_media_screenshot import xvfb_display  # noqa: F401  (a fixture)

pytestmark = needs_model
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def display(xvfb_display: str) -> str:  # noqa: F811 - the shared fixture, imported above
    """A private Xvfb for the test (only the checking processes connect to it)."""
    return xvfb_display


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app's data folder for the module (the core reads the model once)."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_model(tmp_path_factory.mktemp("models"))


def environment(display: str | None, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env |= {"COMPANION_DATA_DIR": str(data), "PYTHONPATH": str(REPO)}
    if display is not None:
        env["DISPLAY"] = display
        env.pop("QT_QPA_PLATFORM", None)  # the real X11 platform: a window manager's view
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def check(case: str, model: Path, data: Path, display: str | None, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.live2d_checks", case, str(model), str(data), *extra],
        cwd=REPO,
        env=environment(display, data),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("result: "))
    result: dict[str, Any] = json.loads(line.removeprefix("result: "))
    return result


def companion(*args: str, display: str | None, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=REPO,
        env=environment(display, data)
        | {"COMPANION_CONFIG": str(data / "config.toml"), "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=180,
    )


def rgba(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA")).copy()


# -- companion avatar snapshot -----------------------------------------------------------------


def test_snapshots_of_expressions_and_mouths_differ_and_are_transparent_around_the_model(
    model: Path, data: Path, display: str, tmp_path: Path
) -> None:
    shots: dict[tuple[str, str], np.ndarray] = {}
    for expression, mouth in (("neutral", "0"), ("neutral", "1"), ("joy", "0"), ("sadness", "1")):
        out = tmp_path / f"{expression}-{mouth}.png"
        done = companion(
            "avatar", "snapshot", "--model", str(model), "--expression", expression,
            "--mouth", mouth, "--out", str(out), display=display, data=data,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"the Live2D model shizuku, {expression}, mouth {mouth}" in done.stdout
        shots[(expression, mouth)] = rgba(out)
    first = shots[("neutral", "0")]
    assert first.shape == (560, 380, 4)
    assert first[2, 2, 3] == 0 and first[2, -3, 3] == 0  # nothing around the model
    assert first[:, :, 3].max() == 255 and (first[:, :, 3] == 0).mean() > 0.2
    pictures = list(shots.items())
    for i, (a, pa) in enumerate(pictures):
        for b, pb in pictures[i + 1 :]:
            assert (pa != pb).any(), f"{a} and {b} look the same"
    again = tmp_path / "again.png"
    companion(
        "avatar", "snapshot", "--model", str(model), "--expression", "sadness", "--mouth", "1",
        "--out", str(again), display=display, data=data,
    )  # fmt: skip
    assert (rgba(again) == shots[("sadness", "1")]).all()  # one frame, the same each time


def test_the_sprite_avatar_is_snapshot_without_a_model(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "sprite.png"
    done = companion(
        "avatar", "snapshot", "--mouth", "0.8", "--out", str(out), display=None, data=data
    )
    assert done.returncode == 0, done.stderr
    assert "the sprite avatar, neutral, mouth 0.8" in done.stdout
    assert rgba(out)[:, :, 3].min() == 0 and rgba(out).std() > 10  # a picture, not a blank


def test_a_broken_model_folder_is_refused_in_words_and_nothing_is_written(
    data: Path, display: str, tmp_path: Path
) -> None:
    broken = copy_model(tmp_path)
    (runtime(broken) / "shizuku.1024" / "texture_04.png").unlink()
    out = tmp_path / "never.png"
    done = companion("avatar", "snapshot", "--model", str(broken), "--out", str(out),
                     display=display, data=data)  # fmt: skip
    assert done.returncode == 1
    assert "texture_04.png" in done.stderr and "missing" in done.stderr
    assert not out.exists()


def test_wrong_arguments_say_what_is_expected(
    model: Path, data: Path, display: str, tmp_path: Path
) -> None:
    out = str(tmp_path / "x.png")
    unknown = companion("avatar", "snapshot", "--model", str(model), "--expression", "pout",
                        "--out", out, display=display, data=data)  # fmt: skip
    assert unknown.returncode == 2
    assert "no expression 'pout'; it has neutral, joy, sadness" in unknown.stderr
    wide = companion("avatar", "snapshot", "--mouth", "3", "--out", out, display=None, data=data)
    assert wide.returncode == 2 and "from 0 to 1" in wide.stderr


def test_without_a_display_the_snapshot_says_opengl_is_missing(
    model: Path, data: Path, tmp_path: Path
) -> None:
    done = companion("avatar", "snapshot", "--model", str(model), "--out", str(tmp_path / "x.png"),
                     display=None, data=data)  # fmt: skip
    assert done.returncode == 1
    assert "OpenGL is not available" in done.stderr


def test_avatar_check_names_the_tags_and_the_file_to_edit(
    model: Path, data: Path, tmp_path: Path
) -> None:
    done = companion("avatar", "check", str(model), display=None, data=data)
    assert done.returncode == 0, done.stderr
    assert "expression tags: [neutral], [joy], [sadness]" in done.stdout
    assert f"{runtime(model) / 'companion-expressions.toml'}" in done.stdout
    assert "motions: FlickUp (1), Tap (1), Flick3 (1), Idle (1)" in done.stdout
    broken = copy_model(tmp_path)
    moc = runtime(broken) / "shizuku.moc3"
    moc.write_bytes(moc.read_bytes()[:5000])  # only the core itself can tell: it crashes
    refused = companion("avatar", "check", str(broken), display=None, data=data)
    assert refused.returncode == 1
    assert "could not read shizuku.moc3" in refused.stderr


# -- drawn frames --------------------------------------------------------------------------------


def test_the_open_mouth_differs_from_the_closed_one_where_the_mouth_is(
    model: Path, data: Path, display: str
) -> None:
    seen = check("frames", model, data, display)
    assert seen["mouth_changed"] > 100
    assert seen["mouth_on_mouth_drawables"] >= 0.95 * seen["mouth_sampled"]
    assert seen["corner_alpha"] == 0 and seen["opaque"] > 50_000


def test_every_expression_preset_changes_the_face(model: Path, data: Path, display: str) -> None:
    changed = check("frames", model, data, display)["expression_changed"]
    assert changed.pop("neutral") == 0
    assert all(n > 200 for n in changed.values()), changed


def test_the_window_and_the_pet_show_the_model_and_clicks_pass_around_it(
    model: Path, data: Path, display: str
) -> None:
    seen = check("window_and_pet", model, data, display)
    assert seen["platform"] == "xcb"
    assert seen["window_live2d"] and seen["pet_live2d"]
    assert seen["window_opaque"] > 10_000
    assert seen["window_opaque_with_pet"] > 10_000  # both draw, in the one shared context
    assert seen["pet_corner_alpha"] == 0 and seen["pet_centre_alpha"] == 255
    assert seen["pet_transparent_pixels"] > 10_000
    assert seen["mask_has_centre"] and not seen["mask_has_corner"]
    assert seen["under"]["model"] == seen["pet_window"]
    assert seen["under"]["transparent"] != seen["pet_window"]  # the X server passes it on
    assert seen["pet_taps_after_click"] == 1  # a click on the model plays its Tap motion
    assert seen["pet_taps_after_drag"] == 1 and seen["pet_moved"] == [60, 30]  # a drag moves


def test_the_sessions_events_move_the_model(model: Path, data: Path, display: str) -> None:
    seen = check("events", model, data, display)
    assert seen["expression"] == "joy"
    assert seen["mouth_while_speaking"] == pytest.approx(0.9, abs=0.05)
    assert seen["openness_after"] == 0.0  # silence: the motion has the mouth again
    assert seen["mouth_after"] != pytest.approx(0.9, abs=0.05)
    assert seen["taps"] == 1


def test_an_idle_model_is_drawn_less_often_and_moving_at_its_full_rate(
    model: Path, data: Path, display: str
) -> None:
    from app.ui.avatar_widget import LIVE2D_IDLE_FRAME_MS

    seen = check("frame_rates", model, data, display)
    full = round(1000 / 30)
    assert seen["idle"] == LIVE2D_IDLE_FRAME_MS > full  # only the idle motion moves
    assert seen["idle_painted"] <= 2000 / LIVE2D_IDLE_FRAME_MS + 3  # not 60 in 2 s
    assert seen["talking"] == full
    assert seen["after_talking"] == LIVE2D_IDLE_FRAME_MS
    assert seen["new_face"] == full and seen["after_new_face"] == LIVE2D_IDLE_FRAME_MS
    if seen["tapped"]:  # the fixture has a Tap motion
        assert seen["tap"] == full


def test_without_opengl_the_window_shows_the_sprites_and_says_why(model: Path, data: Path) -> None:
    seen = check("no_opengl", model, data, None)
    assert not seen["live2d"]
    assert seen["expressions"][0] == "neutral"
    assert seen["notice"].startswith("OpenGL is not available here")
    assert seen["notice"].endswith("Showing the built-in avatar instead.")


def test_the_settings_preview_follows_the_folder_being_edited(
    model: Path, data: Path, display: str, tmp_path: Path
) -> None:
    broken = copy_model(tmp_path)
    (runtime(broken) / "shizuku.moc3").unlink()
    seen = check("preview", model, data, display, str(broken))
    assert seen["first"] and "[neutral], [joy]" in seen["first_text"]
    assert "companion-expressions.toml" in seen["first_text"]
    assert not seen["builtin"] and seen["builtin_text"] == "The built-in avatar."
    assert not seen["broken"] and "shizuku.moc3" in seen["broken_text"]
    assert seen["scale"] == 2.0


def test_saved_settings_reach_the_window_and_the_pet_at_once(
    model: Path, data: Path, display: str
) -> None:
    seen = check("saved_settings", model, data, display)
    assert seen["start"] == [True, True]
    assert seen["built_in"] == [False, False] and seen["pet_background"] is True
    assert seen["again"] == [True, True]
    assert seen["scale"] == 2.5 and seen["frame_ms"] == 83


def test_the_shared_model_itself_draws(data: Path, display: str) -> None:
    """Straight from the read-only shared folder (its table goes to the data folder)."""
    seen = check("frames", FIXTURE, data, display)
    assert seen["opaque"] > 50_000


# -- the settings' editor (offscreen, no OpenGL: the folder holds no model) -----------------


def test_the_avatar_setting_is_built_in_or_a_live2d_model_folder(tmp_path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from app.config import Settings
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.settings_editors import FolderEditor

    assert QApplication.instance() or QApplication([])
    chosen = tmp_path / "not-a-model"
    dialog = SettingsDialog(Settings(avatar={"live2d": {"folder": chosen}}), save=None)
    editor = dialog.editors["avatar.live2d.folder"]
    assert isinstance(editor, FolderEditor) and editor.mode is not None
    assert editor.mode.currentText() == "Live2D model…" and editor.value() == chosen
    assert "does not exist. Showing the built-in avatar" in dialog.live2d_preview.status.text()
    editor.mode.setCurrentIndex(0)  # Built-in: no folder, the typed one kept for later
    editor._mode_chosen(0)
    assert editor.value() is None and editor.line.text() == str(chosen)
    assert not editor.line.isEnabled()
    assert dialog.edited_settings().avatar.live2d.folder is None
    picker = editor.pick()
    picker.fileSelected.emit(str(tmp_path / "other"))
    picker.close()
    assert editor.mode.currentIndex() == 1 and editor.line.isEnabled()
    assert dialog.edited_settings().avatar.live2d.folder == tmp_path / "other"
    dialog.reject()

"""The sprite avatar, rendered offscreen: every expression × mouth state × blink shows its
own frame where it should, and a user's pack replaces the default one."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from app.avatar import DEFAULT_PACK_DIR, load_pack
from app.ui import AvatarWidget

PACK = load_pack(DEFAULT_PACK_DIR)
assert PACK.size is not None and PACK.eyes is not None
SIZE = QSize(*PACK.size)  # one frame pixel = one image pixel
# The widget draws a frame a few pixels low (room for the idle bob); in image pixels:
TOP = 3
EYES = QRect(PACK.eyes[0], PACK.eyes[1] + TOP, PACK.eyes[2], PACK.eyes[3])
MOUTH = QRect(140, 282 + TOP, 85, 70)
LEVELS = {"closed": 0.0, "half": 0.35, "open": 1.0}


class NoBlinks(random.Random):
    """Blinks only when told to, so frames are reproducible."""

    def random(self) -> float:
        return 0.99

    def uniform(self, a: float, b: float) -> float:
        return 1e9


@pytest.fixture(scope="module")
def qapp() -> Iterator[QApplication]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    yield app


def render(expression: str, mouth: str = "closed", *, blink: bool = False) -> QImage:
    """The widget's picture with the same clock for every state (the idle bob is equal)."""
    widget = AvatarWidget(rng=NoBlinks())
    widget.resize(SIZE)
    assert widget.set_expression(expression)
    if LEVELS[mouth]:
        widget.set_mouth_level(LEVELS[mouth])
    widget.step(0.25)
    if blink:
        widget.blink()
    widget.step(0.05)
    assert widget.shown_frame == (expression, mouth, blink)
    return widget.render_image(SIZE)


def same(a: QImage, b: QImage, region: QRect | None = None) -> bool:
    if region is None:
        return a == b
    return a.copy(region) == b.copy(region)


def outside(region: QRect) -> list[QRect]:
    """The image minus `region`, as four bands."""
    w, h = SIZE.width(), SIZE.height()
    return [
        QRect(0, 0, w, region.top()),
        QRect(0, region.bottom() + 1, w, h - region.bottom() - 1),
        QRect(0, region.top(), region.left(), region.height()),
        QRect(region.right() + 1, region.top(), w - region.right() - 1, region.height()),
    ]


@pytest.fixture(scope="module")
def frames(qapp: QApplication) -> dict[tuple[str, str, bool], QImage]:
    states = [(e, m, False) for e in PACK.names for m in LEVELS]
    states += [(e, "closed", True) for e in PACK.names]
    return {s: render(s[0], s[1], blink=s[2]) for s in states}


def test_the_default_pack_has_the_expressions_the_model_is_told_about() -> None:
    assert PACK.names == (
        "neutral", "joy", "sadness", "anger", "surprise", "fear", "smirk", "thinking"
    )  # fmt: skip


@pytest.mark.parametrize("expression", PACK.names)
def test_the_mouth_states_differ_in_the_mouth_and_nowhere_else(
    frames: dict[tuple[str, str, bool], QImage], expression: str
) -> None:
    for a, b in itertools.combinations(LEVELS, 2):
        first, second = frames[(expression, a, False)], frames[(expression, b, False)]
        assert not same(first, second, MOUTH), f"{expression}: mouth {a} looks like {b}"
        assert all(same(first, second, band) for band in outside(MOUTH))


@pytest.mark.parametrize("expression", PACK.names)
def test_a_blink_closes_the_eyes_and_leaves_the_mouth(
    frames: dict[tuple[str, str, bool], QImage], expression: str
) -> None:
    opened, shut = frames[(expression, "closed", False)], frames[(expression, "closed", True)]
    assert not same(opened, shut, EYES)
    assert same(opened, shut, MOUTH)


def test_a_blink_while_talking_keeps_the_talking_mouth(
    frames: dict[tuple[str, str, bool], QImage],
) -> None:
    widget = AvatarWidget(rng=NoBlinks())
    widget.resize(SIZE)
    widget.set_mouth_level(1.0)
    widget.step(0.25)
    widget.blink()
    widget.step(0.05)
    assert widget.shown_frame == ("neutral", "open", True)
    talking_blink = widget.render_image(SIZE)
    assert same(talking_blink, frames[("neutral", "open", False)], MOUTH)
    assert same(talking_blink, frames[("neutral", "closed", True)], EYES)


def test_every_expression_looks_different(frames: dict[tuple[str, str, bool], QImage]) -> None:
    for a, b in itertools.combinations(PACK.names, 2):
        assert not same(frames[(a, "closed", False)], frames[(b, "closed", False)]), (a, b)
        assert not same(frames[(a, "closed", False)], frames[(b, "closed", False)], EYES), (a, b)


def test_thinking_shows_the_thinking_frame_and_returns(qapp: QApplication) -> None:
    widget = AvatarWidget(rng=NoBlinks())
    widget.set_expression("joy")
    widget.set_thinking(True)
    assert widget.shown_frame[0] == "thinking"
    widget.set_thinking(False)
    assert widget.shown_frame[0] == "joy"


def test_a_silent_level_closes_the_mouth_within_one_frame(qapp: QApplication) -> None:
    widget = AvatarWidget(rng=NoBlinks())
    widget.set_mouth_level(1.0)
    widget.step(0.1)
    assert widget.mouth_state == "open"
    widget.set_mouth_level(0.0)  # playback stopped
    widget.step(0.016)
    assert widget.mouth_state == "closed"


# -- a user's own pack ---------------------------------------------------------------------


def solid(path: Path, color: str) -> str:
    image = QImage(QSize(40, 50), QImage.Format.Format_ARGB32)
    image.fill(QColor(color))
    assert image.save(str(path))
    return path.name


def user_pack(folder: Path) -> Path:
    folder.mkdir()
    lines = ['name = "Blocks"']
    for name, color in (("neutral", "#ff0000"), ("wink", "#0000ff")):
        lines += [
            f"[expressions.{name}]",
            f'closed = "{solid(folder / f"{name}.png", color)}"',
            f'open = "{solid(folder / f"{name}_open.png", "#00ff00")}"',
        ]
    (folder / "avatar.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder


def centre_colour(widget: AvatarWidget) -> str:
    image = widget.render_image(QSize(200, 250))
    return image.pixelColor(100, 125).name()


def test_a_users_pack_replaces_the_default(qapp: QApplication, tmp_path: Path) -> None:
    widget = AvatarWidget(rng=NoBlinks(), pack=user_pack(tmp_path / "blocks"))
    assert widget.pack_problem is None and widget.pack.name == "Blocks"
    assert widget.expressions == ("neutral", "wink")
    assert centre_colour(widget) == "#ff0000"
    assert not widget.set_expression("joy")  # the default art's names mean nothing here
    assert widget.set_expression("wink")
    widget.step(0.2)
    assert centre_colour(widget) == "#0000ff"
    widget.set_mouth_level(1.0)
    widget.step(0.1)
    assert widget.mouth_state == "open" and centre_colour(widget) == "#00ff00"


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ("name = = 1", "not valid TOML"),
        ('[expressions.joy]\nclosed = "joy.png"', "neutral"),
        ('[expressions.neutral]\nclosed = "nowhere.png"', "missing frame files (neutral: nowhere"),
        ("[expressions.neutral]\nclosed = 3", "expressions.neutral.closed"),
    ],
    ids=["toml", "no neutral", "missing file", "wrong type"],
)
def test_a_broken_pack_falls_back_to_the_default_with_a_notice(
    qapp: QApplication, tmp_path: Path, manifest: str, says: str
) -> None:
    (tmp_path / "joy.png").write_bytes(b"")
    (tmp_path / "avatar.toml").write_text(manifest, encoding="utf-8")
    widget = AvatarWidget(pack=tmp_path)
    assert widget.pack.folder == DEFAULT_PACK_DIR
    assert widget.pack_problem is not None
    assert str(tmp_path) in widget.pack_problem and says in widget.pack_problem
    assert "default avatar" in widget.pack_problem
    assert widget.expressions == PACK.names


def test_a_frame_that_is_not_an_image_falls_back_with_a_notice(
    qapp: QApplication, tmp_path: Path
) -> None:
    (tmp_path / "face.png").write_text("not a picture", encoding="utf-8")
    (tmp_path / "avatar.toml").write_text(
        '[expressions.neutral]\nclosed = "face.png"', encoding="utf-8"
    )
    widget = AvatarWidget(pack=tmp_path)
    assert widget.pack.folder == DEFAULT_PACK_DIR
    assert widget.pack_problem is not None and "could not be read as an image" in (
        widget.pack_problem
    )

"""Render the default avatar (an original character drawn with QPainter) into a sprite pack.

    python scripts/render_avatar.py                 # writes assets/avatar/default/
    python scripts/render_avatar.py --sheet out.png # also a contact sheet of every state

The vector drawing below is the source of the art; the PNGs and `avatar.toml` in
`assets/avatar/default/` are its output, kept in the repository so the app needs no
drawing code at run time. Runs offscreen (no display needed).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import argparse
import io
import itertools
import math
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
    QRadialGradient,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "assets" / "avatar" / "default"
EXPRESSION_NAMES = ("neutral", "joy", "sadness", "anger", "surprise", "fear", "smirk", "thinking")
MOUTHS = {"closed": 0.0, "half": 0.5, "open": 1.0}
# The frame shows this part of the 400x530 drawing canvas, at SCALE.
CROP = QRectF(30, 12, 340, 488)
SCALE = 1.05
FRAME_W, FRAME_H = round(CROP.width() * SCALE), round(CROP.height() * SCALE)
# Where the eyes are in a frame (pixels): a blink paints this part of the eyes-closed frame.
EYES = QRectF(92, 189, 172, 92)

SKIN = QColor("#ffe7da")
SKIN_SHADE = QColor("#f6cdbd")
HAIR_TOP = QColor("#8a6fe0")
HAIR_BOTTOM = QColor("#4f3a9e")
HAIR_LINE = QColor("#3b2a78")
LASH = QColor("#2a1b3d")
BROW = QColor("#3a2763")
MOUTH_LINE = QColor("#7a3b46")
MOUTH_INSIDE = QColor("#7d2636")
TONGUE = QColor("#f07b8b")


@dataclass(frozen=True, slots=True)
class Look:
    """The numbers that shape a face; blended smoothly when the expression changes."""

    eye_open_l: float = 1.0  # 0 closed .. 1 open (above 1: wide)
    eye_open_r: float = 1.0
    happy_eyes: float = 0.0  # above 0.5 the eyes are drawn as ^ ^
    lid_slant: float = 0.0  # + inner corners down (angry), - outer corners down (sad)
    pupil: float = 1.0
    gaze_x: float = 0.0  # -1 left .. 1 right
    gaze_y: float = 0.0  # -1 up .. 1 down
    brow_raise_l: float = 0.0  # pixels up
    brow_raise_r: float = 0.0
    brow_slant: float = 0.0  # + inner ends down (angry), - inner ends up (worried)
    smile: float = 0.35  # -1 frown .. 1 wide smile
    mouth_open: float = 0.0  # open even when silent
    mouth_width: float = 1.0
    mouth_skew: float = 0.0  # + right corner up (smirk)
    mouth_x: float = 0.0
    blush: float = 0.35

    def blend(self, other: Look, amount: float) -> Look:
        values = {
            f.name: getattr(self, f.name)
            + (getattr(other, f.name) - getattr(self, f.name)) * amount
            for f in fields(Look)
        }
        return Look(**values)


NEUTRAL = Look()

# fmt: off
LOOKS: dict[str, Look] = {
    "neutral": NEUTRAL,
    "joy": replace(
        NEUTRAL, happy_eyes=1.0, brow_raise_l=4, brow_raise_r=4, smile=1.0,
        mouth_open=0.42, mouth_width=1.25, blush=0.85,
    ),
    "sadness": replace(
        NEUTRAL, eye_open_l=0.78, eye_open_r=0.78, lid_slant=-0.8, gaze_y=0.45,
        brow_slant=-1.0, brow_raise_l=2, brow_raise_r=2, smile=-0.8, mouth_width=0.8, blush=0.15,
    ),
    "anger": replace(
        NEUTRAL, eye_open_l=0.82, eye_open_r=0.82, lid_slant=1.0, pupil=0.75, brow_slant=1.2,
        brow_raise_l=-2, brow_raise_r=-2, smile=-0.6, mouth_open=0.18, mouth_width=0.95, blush=0.5,
    ),
    "surprise": replace(
        NEUTRAL, eye_open_l=1.12, eye_open_r=1.12, pupil=0.55, brow_raise_l=11, brow_raise_r=11,
        smile=0.0, mouth_open=0.75, mouth_width=0.75, blush=0.4,
    ),
    "fear": replace(
        NEUTRAL, eye_open_l=1.05, eye_open_r=1.05, lid_slant=-0.35, pupil=0.5, gaze_x=-0.2,
        brow_slant=-1.0, brow_raise_l=7, brow_raise_r=7, smile=-0.45, mouth_width=0.75, blush=0.0,
    ),
    "smirk": replace(
        NEUTRAL, eye_open_l=0.62, eye_open_r=0.92, lid_slant=0.25, gaze_x=0.35, brow_raise_l=-1,
        brow_raise_r=7, smile=0.55, mouth_skew=1.0, mouth_width=0.9, mouth_x=5, blush=0.45,
    ),
    "thinking": replace(
        NEUTRAL, eye_open_l=0.9, eye_open_r=0.9, gaze_x=-0.65, gaze_y=-0.7, brow_raise_l=8,
        brow_slant=-0.25, smile=0.05, mouth_width=0.6, mouth_skew=0.5, mouth_x=9, blush=0.3,
    ),
}
# fmt: on


# -- the drawing, layer by layer (canvas coordinates) ------------------------------------


def _pen(color: QColor, width: float) -> QPen:
    return QPen(
        QBrush(color),
        width,
        Qt.PenStyle.SolidLine,
        Qt.PenCapStyle.RoundCap,
        Qt.PenJoinStyle.RoundJoin,
    )


def _paint_body(p: QPainter) -> None:
    p.setPen(_pen(QColor("#e7b9a8"), 1.2))
    p.setBrush(SKIN)
    p.drawRect(QRectF(182, 300, 36, 100))  # neck
    neck_shadow = QPainterPath()
    neck_shadow.moveTo(182, 318)
    neck_shadow.quadTo(200, 352, 218, 318)
    neck_shadow.lineTo(218, 300)
    neck_shadow.lineTo(182, 300)
    p.setPen(Qt.PenStyle.NoPen)
    p.fillPath(neck_shadow, SKIN_SHADE)

    torso = QPainterPath()
    torso.moveTo(96, 505)
    torso.cubicTo(100, 432, 138, 404, 180, 392)
    torso.lineTo(220, 392)
    torso.cubicTo(262, 404, 300, 432, 304, 505)
    torso.closeSubpath()
    p.setPen(_pen(QColor("#d6d0ea"), 1.5))
    p.setBrush(QColor("#fbfbff"))
    p.drawPath(torso)

    neckline = QPainterPath()
    neckline.moveTo(182, 392)
    neckline.lineTo(200, 428)
    neckline.lineTo(218, 392)
    neckline.closeSubpath()
    p.setPen(Qt.PenStyle.NoPen)
    p.fillPath(neckline, SKIN)

    collar = QPainterPath()
    collar.moveTo(140, 406)
    collar.lineTo(200, 462)
    collar.lineTo(260, 406)
    collar.lineTo(222, 392)
    collar.lineTo(200, 430)
    collar.lineTo(178, 392)
    collar.closeSubpath()
    p.fillPath(collar, QColor("#34407a"))
    p.setPen(_pen(QColor(255, 255, 255, 200), 2.0))
    p.drawLine(QPointF(152, 410), QPointF(200, 454))
    p.drawLine(QPointF(248, 410), QPointF(200, 454))

    bow = QColor("#e5484d")
    p.setPen(_pen(QColor("#b4232a"), 1.2))
    p.setBrush(bow)
    for sign in (-1, 1):
        wing = QPainterPath()
        wing.moveTo(200, 452)
        wing.lineTo(200 + sign * 26, 440)
        wing.lineTo(200 + sign * 22, 468)
        wing.closeSubpath()
        p.drawPath(wing)
        tail = QPainterPath()
        tail.moveTo(200, 456)
        tail.lineTo(200 + sign * 14, 492)
        tail.lineTo(200 + sign * 4, 488)
        tail.closeSubpath()
        p.drawPath(tail)
    p.drawEllipse(QPointF(200, 454), 6, 6)


def _hair_brush() -> QBrush:
    grad = QLinearGradient(0, 60, 0, 450)
    grad.setColorAt(0.0, HAIR_TOP)
    grad.setColorAt(1.0, HAIR_BOTTOM)
    return QBrush(grad)


def _paint_back_hair(p: QPainter) -> None:
    back = QPainterPath()
    back.moveTo(200, 62)
    back.cubicTo(112, 62, 70, 128, 72, 215)
    back.cubicTo(74, 300, 60, 380, 48, 446)
    back.quadTo(92, 464, 128, 428)
    back.lineTo(272, 428)
    back.quadTo(308, 464, 352, 446)
    back.cubicTo(340, 380, 326, 300, 328, 215)
    back.cubicTo(330, 128, 288, 62, 200, 62)
    back.closeSubpath()
    p.setPen(_pen(HAIR_LINE, 1.5))
    p.setBrush(_hair_brush())
    p.drawPath(back)


def _face_path() -> QPainterPath:
    face = QPainterPath()
    face.moveTo(110, 205)
    face.cubicTo(110, 275, 158, 336, 200, 344)
    face.cubicTo(242, 336, 290, 275, 290, 205)
    face.cubicTo(290, 128, 250, 98, 200, 98)
    face.cubicTo(150, 98, 110, 128, 110, 205)
    face.closeSubpath()
    return face


def _forehead_path() -> QPainterPath:
    """The skin between the bangs, where manga gloom lines go."""
    return _face_path().subtracted(_bangs_path())


def _bangs_path() -> QPainterPath:
    bangs = QPainterPath()
    bangs.moveTo(90, 226)
    bangs.cubicTo(82, 118, 140, 64, 200, 64)
    bangs.cubicTo(260, 64, 318, 118, 310, 226)
    # The lower edge, right to left: pointed strands that sweep slightly to one side.
    # fmt: off
    edge = [(310, 226), (292, 168), (268, 206), (250, 150), (228, 200), (210, 146), (188, 204),
            (168, 150), (146, 202), (128, 156), (112, 212), (90, 226)]
    # fmt: on
    for (x0, y0), (x1, y1) in itertools.pairwise(edge):
        bangs.quadTo((x0 + x1) / 2 + 5, (y0 + y1) / 2 + 4, x1, y1)
    bangs.closeSubpath()
    return bangs


def _paint_face(p: QPainter) -> None:
    face = _face_path()
    shade = QRadialGradient(QPointF(200, 230), 150)
    shade.setColorAt(0.0, SKIN)
    shade.setColorAt(0.75, SKIN)
    shade.setColorAt(1.0, SKIN_SHADE)
    p.setPen(_pen(QColor("#e2ad9c"), 1.5))
    p.setBrush(QBrush(shade))
    p.drawPath(face)

    p.save()  # the shadow the bangs cast on the forehead
    p.setClipPath(face)
    p.translate(0, 7)
    p.fillPath(_bangs_path(), QColor(214, 140, 140, 60))
    p.restore()

    p.setPen(_pen(QColor("#e0a08e"), 2.0))
    p.drawLine(QPointF(201, 262), QPointF(199, 266))  # nose


def _paint_blush(p: QPainter, look: Look) -> None:
    if look.blush <= 0.02:
        return
    p.setPen(Qt.PenStyle.NoPen)
    for cx in (146.0, 254.0):
        glow = QRadialGradient(QPointF(cx, 272), 24)
        glow.setColorAt(0.0, QColor(255, 120, 150, int(150 * min(look.blush, 1.0))))
        glow.setColorAt(1.0, QColor(255, 120, 150, 0))
        p.setBrush(QBrush(glow))
        p.drawEllipse(QPointF(cx, 272), 26, 14)
    p.setPen(_pen(QColor(240, 110, 130, int(160 * min(look.blush, 1.0))), 1.4))
    for cx in (140.0, 252.0):  # the little hatch marks anime faces blush with
        for i in range(3):
            x = cx + i * 6
            p.drawLine(QPointF(x + 2, 267), QPointF(x - 2, 276))


def _paint_eye(p: QPainter, cx: float, side: int, look: Look, opened: float) -> None:
    """One eye; `side` is -1 for the one on the left of the screen."""
    w, h, cy = 50.0, 58.0, 234.0
    outer_x, inner_x = cx + side * w / 2, cx - side * w / 2
    lash = _pen(LASH, 4.5)

    if look.happy_eyes > 0.5 or opened < 0.12:
        arc = QPainterPath()
        arc.moveTo(outer_x - side * 3, cy + 6)
        if look.happy_eyes > 0.5:  # ^ ^
            arc.quadTo(cx, cy - 18, inner_x + side * 4, cy + 6)
        else:  # closed for a blink: a soft downward curve
            arc.quadTo(cx, cy + 14, inner_x + side * 4, cy + 4)
        p.setPen(lash)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(arc)
        p.drawLine(QPointF(outer_x - side * 3, cy + 6), QPointF(outer_x + side * 5, cy + 1))
        return

    top = cy + h / 2 - h * min(opened, 1.2)
    inner_y = cy - h * 0.1 + look.lid_slant * 10
    outer_y = cy - h * 0.16 - look.lid_slant * 5
    control_y = 2 * top - (inner_y + outer_y) / 2
    lid = QPainterPath()
    lid.moveTo(outer_x, outer_y)
    lid.quadTo(cx, control_y, inner_x, inner_y)

    below_lid = QPainterPath(lid)
    below_lid.lineTo(inner_x, cy + h)
    below_lid.lineTo(outer_x, cy + h)
    below_lid.closeSubpath()
    ball = QPainterPath()
    ball.addEllipse(QRectF(cx - w / 2, cy - h / 2, w, h))
    eye = ball.intersected(below_lid)

    p.save()
    p.setClipPath(eye)
    p.fillPath(eye, QColor("#fffdfd"))
    ix, iy = cx + look.gaze_x * 8, cy + 4 + look.gaze_y * 7
    iris = QLinearGradient(ix, iy - 23, ix, iy + 23)
    iris.setColorAt(0.0, QColor("#2f2170"))
    iris.setColorAt(0.55, QColor("#6a55d8"))
    iris.setColorAt(1.0, QColor("#c3b4ff"))
    p.setPen(_pen(QColor("#2a1d5c"), 1.5))
    p.setBrush(QBrush(iris))
    p.drawEllipse(QPointF(ix, iy), 17, 23)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#1b1233"))
    p.drawEllipse(QPointF(ix, iy - 2), 7.5 * look.pupil, 11 * look.pupil)
    p.setBrush(QColor(230, 220, 255, 150))
    p.drawEllipse(QPointF(ix, iy + 14), 10, 5)
    p.setBrush(QColor("#ffffff"))
    p.drawEllipse(QPointF(ix - 6, iy - 9), 5.5, 6.5)
    p.drawEllipse(QPointF(ix + 6, iy + 8), 2.5, 2.5)
    p.strokePath(lid, _pen(QColor(80, 50, 140, 70), 10))  # the lid's shadow on the eye
    p.restore()

    p.setPen(lash)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawPath(lid)
    p.drawLine(QPointF(outer_x, outer_y), QPointF(outer_x + side * 7, outer_y - 6))
    p.setPen(_pen(QColor("#8a6a80"), 1.6))
    p.drawArc(QRectF(cx - w / 2, cy - h / 2, w, h), 245 * 16, 50 * 16)


def _paint_brows(p: QPainter, look: Look) -> None:
    p.setPen(_pen(QColor(BROW.red(), BROW.green(), BROW.blue(), 225), 4.2))
    p.setBrush(Qt.BrushStyle.NoBrush)
    for side, cx, lift in ((-1, 155.0, look.brow_raise_l), (1, 245.0, look.brow_raise_r)):
        base = 190.0 - lift
        inner = QPointF(cx - side * 19, base + look.brow_slant * 7)
        outer = QPointF(cx + side * 27, base + 3 - look.brow_slant * 3)
        brow = QPainterPath(inner)
        brow.quadTo(cx + side * 4, base - 5 - look.brow_slant * 1.5, outer.x(), outer.y())
        p.drawPath(brow)


def _paint_mouth(p: QPainter, look: Look, opened: float, *, wavy: bool) -> None:
    cx, cy = 200.0 + look.mouth_x, 298.0
    half = 15.0 * look.mouth_width
    left = QPointF(cx - half, cy - look.smile * 4 + look.mouth_skew * 1.5)
    right = QPointF(cx + half, cy - look.smile * 4 - look.mouth_skew * 6)
    line = _pen(MOUTH_LINE, 2.6)

    if opened < 0.06:
        mouth = QPainterPath(left)
        if wavy:  # a nervous wobble
            step = (right.x() - left.x()) / 4
            for i in range(1, 5):
                mouth.quadTo(
                    left.x() + step * (i - 0.5),
                    cy + (4 if i % 2 else -4),
                    left.x() + step * i,
                    left.y() + (right.y() - left.y()) * i / 4,
                )
        else:
            mouth.quadTo(cx + look.mouth_skew * 4, cy + look.smile * 9, right.x(), right.y())
        p.setPen(line)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(mouth)
        return

    mouth = QPainterPath(left)
    mouth.quadTo(cx, cy + look.smile * 3 - opened * 7, right.x(), right.y())
    bottom = cy + 4 + look.smile * 8 + opened * 40  # a quad's apex is halfway to this
    mouth.quadTo(cx, bottom, left.x(), left.y())
    mouth.closeSubpath()
    p.setPen(Qt.PenStyle.NoPen)
    p.fillPath(mouth, MOUTH_INSIDE)
    p.save()
    p.setClipPath(mouth)
    p.setBrush(TONGUE)
    p.drawEllipse(QPointF(cx, (cy + bottom) / 2 + 4), half * 0.75, 3 + opened * 5)
    if opened > 0.15:  # a hint of upper teeth
        p.setBrush(QColor("#fffafa"))
        p.drawRect(QRectF(cx - half, min(left.y(), right.y()) - 4, half * 2, 7))
    p.restore()
    p.setPen(line)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawPath(mouth)


def _paint_front_hair(p: QPainter) -> None:
    brush = _hair_brush()
    outline = _pen(HAIR_LINE, 1.5)
    p.setPen(outline)
    p.setBrush(brush)
    for sign in (-1, 1):  # the locks in front of the ears
        lock = QPainterPath()
        x = 200 + sign * 86
        lock.moveTo(x, 138)
        lock.cubicTo(x + sign * 16, 210, x + sign * 12, 290, x + sign * 24, 384)
        lock.cubicTo(x + sign * 2, 352, x - sign * 14, 290, x - sign * 18, 200)
        lock.closeSubpath()
        p.drawPath(lock)
    p.drawPath(_bangs_path())

    p.setPen(_pen(QColor(255, 255, 255, 95), 5))
    p.setBrush(Qt.BrushStyle.NoBrush)
    for start, span in ((112, 22), (82, 20), (56, 16)):  # the shine ring on the hair
        p.drawArc(QRectF(118, 86, 164, 90), start * 16, span * 16)

    clip = _star_path(QPointF(272, 122), 12, 5.5)
    p.setPen(_pen(QColor("#e0a800"), 1.3))
    p.setBrush(QColor("#ffd54f"))
    p.drawPath(clip)


def _paint_ahoge(p: QPainter, clock: float) -> None:
    p.setPen(_pen(HAIR_LINE, 1.5))
    p.setBrush(_hair_brush())
    sway = math.sin(clock * 2 * math.pi / 2.9) * 3
    ahoge = QPainterPath()  # the one strand that never lies flat
    ahoge.moveTo(196, 70)
    ahoge.quadTo(206 + sway, 30, 236 + sway, 34)
    ahoge.quadTo(214 + sway, 44, 208, 70)
    ahoge.closeSubpath()
    p.drawPath(ahoge)


def _star_path(center: QPointF, outer: float, inner: float, points: int = 5) -> QPainterPath:
    star = QPainterPath()
    for i in range(points * 2):
        r = outer if i % 2 == 0 else inner
        a = -math.pi / 2 + i * math.pi / points
        pt = QPointF(center.x() + r * math.cos(a), center.y() + r * math.sin(a))
        if i == 0:
            star.moveTo(pt)
        else:
            star.lineTo(pt)
    star.closeSubpath()
    return star


def _sparkle(p: QPainter, x: float, y: float, r: float, color: QColor) -> None:
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(color)
    p.drawPath(_star_path(QPointF(x, y), r, r * 0.28, points=4))


def _drop(p: QPainter, x: float, y: float, size: float, color: QColor) -> None:
    drop = QPainterPath()
    drop.moveTo(x, y - size)
    drop.cubicTo(
        x + size * 0.2, y - size * 0.4, x + size * 0.7, y, x + size * 0.55, y + size * 0.45
    )
    drop.cubicTo(
        x + size * 0.3,
        y + size * 0.9,
        x - size * 0.3,
        y + size * 0.9,
        x - size * 0.55,
        y + size * 0.45,
    )
    drop.cubicTo(x - size * 0.7, y, x - size * 0.2, y - size * 0.4, x, y - size)
    p.setPen(_pen(color.darker(130), 1.2))
    p.setBrush(color)
    p.drawPath(drop)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(255, 255, 255, 190))
    p.drawEllipse(QPointF(x - size * 0.2, y + size * 0.15), size * 0.12, size * 0.2)


def _paint_extras(p: QPainter, expression: str, clock: float) -> None:
    """The manga symbols that make an expression read at a glance."""
    twinkle = 0.75 + 0.25 * math.sin(clock * 5)
    if expression == "joy":
        _sparkle(p, 88, 150, 12 * twinkle, QColor("#ffd166"))
        _sparkle(p, 318, 176, 9, QColor("#ffd166"))
        _sparkle(p, 306, 112, 6 * twinkle, QColor("#ffffff"))
    elif expression == "sadness":
        _drop(p, 262, 276 + (clock * 14) % 10, 9, QColor(160, 210, 255, 230))
        p.save()
        p.setClipPath(_forehead_path())
        gloom = QLinearGradient(0, 180, 0, 230)
        gloom.setColorAt(0.0, QColor(110, 130, 220, 70))
        gloom.setColorAt(1.0, QColor(110, 130, 220, 0))
        p.fillRect(QRectF(100, 180, 200, 50), gloom)
        p.restore()
    elif expression == "anger":
        p.setPen(_pen(QColor("#e53950"), 4.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        mx, my = 112.0, 132.0
        for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
            toward_centre = math.degrees(math.atan2(dy, -dx))
            rect = QRectF(mx + dx * 11 - 9, my + dy * 11 - 9, 18, 18)
            p.drawArc(rect, int((toward_centre - 45) * 16), 90 * 16)
    elif expression == "surprise":
        p.setPen(_pen(QColor("#5b4a9e"), 3))
        for angle in (-60.0, -35.0, -10.0):
            a = math.radians(angle)
            p.drawLine(
                QPointF(300 + 22 * math.cos(a), 110 + 22 * math.sin(a)),
                QPointF(300 + 40 * math.cos(a), 110 + 40 * math.sin(a)),
            )
            b = math.radians(180 - angle)
            p.drawLine(
                QPointF(100 + 22 * math.cos(b), 110 + 22 * math.sin(b)),
                QPointF(100 + 40 * math.cos(b), 110 + 40 * math.sin(b)),
            )
    elif expression == "fear":
        p.save()
        p.setClipPath(_forehead_path())
        gloom = QLinearGradient(0, 150, 0, 240)
        gloom.setColorAt(0.0, QColor(90, 110, 210, 120))
        gloom.setColorAt(1.0, QColor(90, 110, 210, 0))
        p.fillRect(QRectF(100, 150, 200, 90), gloom)
        p.setPen(_pen(QColor(80, 90, 190, 120), 2))
        for x in range(150, 260, 14):
            p.drawLine(QPointF(x, 200), QPointF(x, 214))
        p.restore()
        _drop(p, 300, 196 + math.sin(clock * 3) * 2, 10, QColor(170, 220, 255, 230))
    elif expression == "thinking":
        p.setPen(_pen(QColor("#b9a8ff"), 1.6))
        p.setBrush(QColor("#ffffff"))
        for i, (x, y, r) in enumerate(((300, 104, 5.0), (320, 78, 8.0), (348, 44, 13.0))):
            grow = 1.0 + 0.12 * math.sin(clock * 3 - i)
            p.drawEllipse(QPointF(x, y), r * grow, r * grow)


# -- frames, the manifest and the contact sheet ------------------------------------------


def render_frame(expression: str, mouth: float, *, blink: bool = False) -> QImage:
    """One frame on a transparent background: `mouth` 0 closed .. 1 open; `blink`: eyes shut."""
    look = LOOKS[expression]
    image = QImage(FRAME_W, FRAME_H, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.scale(SCALE, SCALE)
        p.translate(-CROP.x(), -CROP.y())
        _paint_body(p)
        _paint_back_hair(p)
        _paint_face(p)
        _paint_blush(p, look)
        _paint_mouth(
            p, look, look.mouth_open + (1.0 - look.mouth_open) * mouth, wavy=expression == "fear"
        )
        for side, cx in ((-1, 155.0), (1, 245.0)):
            opened = look.eye_open_l if side < 0 else look.eye_open_r
            _paint_eye(
                p,
                cx,
                side,
                replace(look, happy_eyes=0.0) if blink else look,
                0.0 if blink else opened,
            )
        _paint_front_hair(p)
        _paint_brows(p, look)
        _paint_ahoge(p, 0.0)
        _paint_extras(p, expression, 0.0)
    finally:
        p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    """`image` as a PNG, recompressed by Pillow when it is installed (lossless: a 256-colour
    palette would band the hair's gradient)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    raw = bytes(buffer.data().data())
    try:
        from PIL import Image
    except ImportError:
        return raw
    with Image.open(io.BytesIO(raw)) as im:
        out = io.BytesIO()
        im.convert("RGBA").save(out, "PNG", optimize=True)
    return min(raw, out.getvalue(), key=len)


def manifest(name: str) -> str:
    """The pack's `avatar.toml`."""
    eyes = [round(v) for v in (EYES.x(), EYES.y(), EYES.width(), EYES.height())]
    lines = [
        "# The default avatar, rendered by scripts/render_avatar.py (do not edit by hand).",
        f'name = "{name}"',
        f"size = [{FRAME_W}, {FRAME_H}]",
        "# A blink paints this part (x, y, w, h in pixels) of the expression's blink frame.",
        f"eyes = {eyes}",
        "",
    ]
    for expression in EXPRESSION_NAMES:
        lines.append(f"[expressions.{expression}]")
        for mouth in MOUTHS:
            lines.append(f'{mouth} = "{expression}_{mouth}.png"')
        lines.append(f'blink = "{expression}_blink.png"')
        lines.append("")
    return "\n".join(lines)


def write_pack(out: Path, name: str = "Mika") -> int:
    """Render every frame into `out`; returns the total size in bytes."""
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for expression in EXPRESSION_NAMES:
        frames = {m: render_frame(expression, v) for m, v in MOUTHS.items()}
        frames["blink"] = render_frame(expression, 0.0, blink=True)
        for kind, image in frames.items():
            data = png_bytes(image)
            (out / f"{expression}_{kind}.png").write_bytes(data)
            total += len(data)
    (out / "avatar.toml").write_text(manifest(name), encoding="utf-8")
    return total


def contact_sheet(path: Path) -> None:
    """Every expression (rows) by mouth closed/half/open and eyes closed (columns)."""
    cell_w, cell_h, label_w, head_h = FRAME_W // 2, FRAME_H // 2, 110, 28
    columns = [*MOUTHS, "blink"]
    sheet = QImage(
        label_w + cell_w * len(columns),
        head_h + cell_h * len(EXPRESSION_NAMES),
        QImage.Format.Format_ARGB32_Premultiplied,
    )
    sheet.fill(QColor("#f4f1fb"))
    p = QPainter(sheet)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        font = QFont()
        font.setPixelSize(16)
        p.setFont(font)
        p.setPen(QColor("#2a1b3d"))
        for col, kind in enumerate(columns):
            label = "eyes closed" if kind == "blink" else f"mouth {kind}"
            p.drawText(
                QRectF(label_w + col * cell_w, 0, cell_w, head_h),
                Qt.AlignmentFlag.AlignCenter,
                label,
            )
        for row, expression in enumerate(EXPRESSION_NAMES):
            y = head_h + row * cell_h
            p.drawText(
                QRectF(8, y, label_w - 8, cell_h),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                expression,
            )
            for col, kind in enumerate(columns):
                image = (
                    render_frame(expression, 0.0, blink=True)
                    if kind == "blink"
                    else render_frame(expression, MOUTHS[kind])
                )
                p.drawImage(QRectF(label_w + col * cell_w, y, cell_w, cell_h), image)
    finally:
        p.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(str(path), "PNG")  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the pack folder to write")
    parser.add_argument("--sheet", type=Path, help="also write a contact sheet PNG here")
    parser.add_argument("--no-pack", action="store_true", help="only write the contact sheet")
    args = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    if not args.no_pack:
        total = write_pack(args.out)
        print(
            f"wrote {len(EXPRESSION_NAMES) * 4} frames + avatar.toml to {args.out} "
            f"({total / 1024:.0f} KiB)"
        )
    if args.sheet:
        contact_sheet(args.sheet)
        print(f"wrote the contact sheet {args.sheet}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

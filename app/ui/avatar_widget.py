"""The default sprite-style avatar: an anime face drawn with QPainter, no art files needed.

It shows what it is told (expression, thinking, mouth level) and animates the rest
itself: natural blinking, a slow idle bob and a smoothed mouth.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QBrush,
    QColor,
    QHideEvent,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPixmap,
    QRadialGradient,
    QResizeEvent,
    QShowEvent,
    QTransform,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.avatar.state import EXPRESSIONS, ExpressionState

# The face is drawn on a virtual 400x500 canvas, scaled to fit the widget.
CANVAS_W, CANVAS_H = 400.0, 530.0
CANVAS_CROP_X = 36.0
FRAME_MS = 33  # while something moves quickly: blinking, talking, changing face
IDLE_FRAME_MS = 80  # the slow idle bob needs no more
BUSY_AFTER_CHANGE_S = 0.5
BLINK_S = 0.15
BLINK_INTERVAL_S = (2.0, 6.0)
MOUTH_ATTACK_S = 0.035  # opening follows the voice quickly ...
MOUTH_RELEASE_S = 0.09  # ... closing a little slower, so it does not flutter
MOUTH_SILENCE_S = 0.35  # no level for this long means the sound stopped
LOOK_BLEND_S = 0.07

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


class AvatarWidget(QWidget):
    """The avatar. `set_expression`, `set_thinking` and `set_mouth_level` say what to show."""

    def __init__(self, parent: QWidget | None = None, *, rng: random.Random | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(240, 300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._rng = rng or random.Random()
        self._state = ExpressionState()
        self._thinking = False
        self._look = NEUTRAL
        self._clock = 0.0
        self._next_blink = self._blink_interval()
        self._blink_left = 0.0
        self._mouth_target = 0.0
        self._mouth = 0.0
        self._mouth_heard_at = -1.0
        self._busy_until = 0.0
        self._last_frame = time.monotonic()
        self._layers: _Layers | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._on_frame)

    # -- what to show ------------------------------------------------------------

    @property
    def expression(self) -> str:
        """The current (sticky) expression."""
        return self._state.current

    @property
    def shown_expression(self) -> str:
        """What the face shows now: the thinking look while thinking, else `expression`."""
        return "thinking" if self._thinking else self._state.current

    @property
    def thinking(self) -> bool:
        return self._thinking

    @property
    def mouth_openness(self) -> float:
        """The smoothed mouth opening from the voice, 0..1."""
        return self._mouth

    @property
    def is_blinking(self) -> bool:
        return self._blink_left > 0.0

    def set_expression(self, expression: str, intensity: float = 1.0) -> bool:
        """Show `expression` until told otherwise; unknown names are ignored (returns False)."""
        intensity = min(1.0, max(0.0, intensity))
        if expression not in EXPRESSIONS:
            return False
        self._state.set(expression, intensity)
        self._busy_until = self._clock + BUSY_AFTER_CHANGE_S
        self.update()
        return True

    def set_thinking(self, thinking: bool) -> None:
        if thinking != self._thinking:
            self._busy_until = self._clock + BUSY_AFTER_CHANGE_S
        self._thinking = thinking
        self.update()

    def set_mouth_level(self, level: float) -> None:
        self._mouth_target = min(1.0, max(0.0, level))
        self._mouth_heard_at = self._clock
        self._busy_until = self._clock + BUSY_AFTER_CHANGE_S

    # -- animation -----------------------------------------------------------------

    def step(self, dt: float) -> None:
        """Advance the animation by `dt` seconds (the frame timer calls this; tests may too)."""
        dt = min(max(dt, 0.0), 0.25)  # after a stall, catch up gently instead of jumping
        self._clock += dt
        if self._blink_left > 0.0:
            self._blink_left = max(0.0, self._blink_left - dt)
        else:
            self._next_blink -= dt
            if self._next_blink <= 0.0:
                self._blink_left = BLINK_S
                self._next_blink = self._blink_interval()
        if self._clock - self._mouth_heard_at > MOUTH_SILENCE_S:
            self._mouth_target = 0.0
        tau = MOUTH_ATTACK_S if self._mouth_target > self._mouth else MOUTH_RELEASE_S
        self._mouth += (self._mouth_target - self._mouth) * (1.0 - math.exp(-dt / tau))
        self._look = self._look.blend(self._target_look(), 1.0 - math.exp(-dt / LOOK_BLEND_S))

    def _blink_interval(self) -> float:
        if self._rng.random() < 0.12:  # now and then a quick double blink, as people do
            return 0.25
        return self._rng.uniform(*BLINK_INTERVAL_S)

    def _blink_amount(self) -> float:
        if self._blink_left <= 0.0:
            return 0.0
        phase = 1.0 - self._blink_left / BLINK_S
        if phase < 0.4:
            return phase / 0.4
        if phase < 0.6:
            return 1.0
        return (1.0 - phase) / 0.4

    def _target_look(self) -> Look:
        name = self.shown_expression
        intensity = 1.0 if self._thinking else self._state.intensity
        return NEUTRAL.blend(LOOKS.get(name, NEUTRAL), intensity)

    def _on_frame(self) -> None:
        now = time.monotonic()
        self.step(now - self._last_frame)
        self._last_frame = now
        busy = self._clock < self._busy_until or self.is_blinking or self._mouth > 0.01
        interval = FRAME_MS if busy else IDLE_FRAME_MS  # spare the CPU when little moves
        if self._timer.interval() != interval:
            self._timer.setInterval(interval)
        self.update()

    def showEvent(self, event: QShowEvent) -> None:
        self._last_frame = time.monotonic()
        self._timer.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()  # no repainting, no CPU, while nobody can see it
        super().hideEvent(event)

    # -- drawing -------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            self._paint(p)
        finally:
            p.end()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._layers = None
        super().resizeEvent(event)

    def _paint(self, p: QPainter) -> None:
        # The parts that never change shape are cached as pixmaps per widget size;
        # only the eyes, mouth, brows and symbols are drawn each frame.
        layers = self._cached_layers()
        scale = layers.canvas.m11()
        bob = math.sin(self._clock * 2 * math.pi / 3.6) * 3.0
        look = self._look
        shown = self.shown_expression
        head = QTransform.fromTranslate(0, bob) * layers.canvas

        p.drawPixmap(0, 0, layers.background)
        p.drawPixmap(QPointF(0, bob * 0.35 * scale), layers.body)  # the body only breathes
        p.drawPixmap(QPointF(0, bob * scale), layers.head_back)
        p.setTransform(head)
        _paint_blush(p, look)
        mouth_open = look.mouth_open + (1.0 - look.mouth_open) * self._mouth
        _paint_mouth(p, look, mouth_open, wavy=shown == "fear")
        blink = self._blink_amount()
        for side, cx in ((-1, 155.0), (1, 245.0)):
            opened = look.eye_open_l if side < 0 else look.eye_open_r
            _paint_eye(p, cx, side, look, opened * (1.0 - blink))
        p.resetTransform()
        p.drawPixmap(QPointF(0, bob * scale), layers.head_front)
        p.setTransform(head)
        _paint_brows(p, look)
        _paint_ahoge(p, self._clock)
        if self._thinking or self._state.intensity >= 0.4:
            _paint_extras(p, shown, self._clock)

    def _cached_layers(self) -> _Layers:
        ratio = self.devicePixelRatioF()
        if self._layers is None or self._layers.ratio != ratio:
            self._layers = _Layers.draw(QRectF(self.rect()), ratio)
        return self._layers


@dataclass(frozen=True, slots=True)
class _Layers:
    """The unchanging parts of the picture, drawn once for one widget size."""

    ratio: float
    canvas: QTransform  # canvas coordinates -> widget coordinates
    background: QPixmap
    body: QPixmap
    head_back: QPixmap
    head_front: QPixmap

    @classmethod
    def draw(cls, rect: QRectF, ratio: float) -> _Layers:
        # The sides of the canvas are background; a narrow widget may crop them.
        scale = min(rect.width() / (CANVAS_W - 2 * CANVAS_CROP_X), rect.height() / CANVAS_H)
        canvas = (
            QTransform.fromTranslate(0, 30)  # headroom for the hair strand and symbols
            * QTransform.fromScale(scale, scale)
            * QTransform.fromTranslate(
                rect.center().x() - CANVAS_W * scale / 2, rect.bottom() - CANVAS_H * scale
            )
        )

        def layer(paint: Callable[[QPainter], None], *, on_canvas: bool = True) -> QPixmap:
            size = (max(1, round(rect.width() * ratio)), max(1, round(rect.height() * ratio)))
            pixmap = QPixmap(*size)
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            p = QPainter(pixmap)
            try:
                p.setRenderHint(QPainter.RenderHint.Antialiasing)
                if on_canvas:
                    p.setTransform(canvas)
                paint(p)
            finally:
                p.end()
            return pixmap

        def background(p: QPainter) -> None:
            frame = QPainterPath()
            frame.addRoundedRect(rect, 16, 16)
            p.setClipPath(frame)
            _paint_background(p, rect)

        def head_back(p: QPainter) -> None:
            _paint_back_hair(p)
            _paint_face(p)

        return cls(
            ratio=ratio,
            canvas=canvas,
            background=layer(background, on_canvas=False),
            body=layer(_paint_body),
            head_back=layer(head_back),
            head_front=layer(_paint_front_hair),
        )


# -- the drawing, layer by layer (canvas coordinates) ------------------------------------


def _pen(color: QColor, width: float) -> QPen:
    return QPen(
        QBrush(color),
        width,
        Qt.PenStyle.SolidLine,
        Qt.PenCapStyle.RoundCap,
        Qt.PenJoinStyle.RoundJoin,
    )


def _paint_background(p: QPainter, rect: QRectF) -> None:
    sky = QLinearGradient(rect.topLeft(), rect.bottomLeft())
    sky.setColorAt(0.0, QColor("#fde8f1"))
    sky.setColorAt(1.0, QColor("#e2e0fb"))
    p.fillRect(rect, sky)
    p.setPen(Qt.PenStyle.NoPen)
    for fx, fy, fr, alpha in (
        (0.15, 0.18, 0.16, 70),
        (0.85, 0.3, 0.1, 60),
        (0.75, 0.08, 0.06, 80),
        (0.1, 0.62, 0.07, 50),
        (0.92, 0.7, 0.13, 45),
    ):
        r = fr * min(rect.width(), rect.height())
        p.setBrush(QColor(255, 255, 255, alpha))
        p.drawEllipse(
            QPointF(rect.left() + fx * rect.width(), rect.top() + fy * rect.height()), r, r
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


__all__ = ["EXPRESSIONS", "LOOKS", "AvatarWidget", "Look"]

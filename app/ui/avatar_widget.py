"""The default avatar: a sprite pack's frames shown in a widget, animated.

It shows what it is told (expression, thinking, mouth level) and animates the rest
itself: natural blinking, a slow idle bob, a smoothed mouth (closed / half / open
frames) and a short cross-fade when the face changes. The frames come from an
`app.avatar` pack: the default character in `assets/avatar/default/` (rendered by
`scripts/render_avatar.py`) or the user's own.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QCursor,
    QHideEvent,
    QImage,
    QLinearGradient,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPixmap,
    QRegion,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.avatar.pack import AvatarPack
from app.avatar.state import EXPRESSIONS, ExpressionState
from app.ui.sprites import Sprites, load_sprites_or_default

if TYPE_CHECKING:  # the Live2D parts load only when a model is shown
    from app.avatar.live2d_model import Live2DModel
    from app.config.models import Live2DSettings
    from app.ui.live2d_face import Live2DFace

FRAME_MS = 33  # while something moves quickly: blinking, talking, changing face
IDLE_FRAME_MS = 80  # the slow idle bob needs no more
# A Live2D model's idle motion, blink and breath never stop, but are slow: 15 fps then
# (half the CPU); talking, a new face, the gaze or a tap get the full rate at once.
LIVE2D_IDLE_FRAME_MS = 66
BUSY_AFTER_CHANGE_S = 0.5
BLINK_S = 0.15
BLINK_INTERVAL_S = (2.0, 6.0)
MOUTH_ATTACK_S = 0.035  # opening follows the voice quickly ...
MOUTH_RELEASE_S = 0.09  # ... closing a little slower, so it does not flutter
MOUTH_SILENCE_S = 0.35  # no level for this long means the sound stopped
MOUTH_HALF_AT = 0.3  # smoothed openness from which the half-open frame shows
MOUTH_OPEN_AT = 0.7  # ... and the open one (speech sits around 0.5..0.9)
FADE_S = 0.12  # cross-fade between two faces
WEAK_INTENSITY = 0.3  # a fainter expression than this shows the face at rest
BOB_PERIOD_S = 3.6
BOB_PX = 3.0  # in frame pixels
CLICK_SLOP_PX = 6  # a press and release this close together are a click
CARD_RADIUS = 16

Face = tuple[str, str]  # (expression, frame kind: closed / half / open)


class AvatarWidget(QWidget):
    """The avatar. `set_expression`, `set_thinking` and `set_mouth_level` say what to show."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        rng: random.Random | None = None,
        pack: AvatarPack | Path | str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setMinimumSize(240, 300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._rng = rng or random.Random()
        self._sprites, self._pack_problem = load_sprites_or_default(pack)
        self._state = ExpressionState(expressions=self._sprites.expressions)
        self._thinking = False
        self._clock = 0.0
        self._next_blink = self._blink_interval()
        self._blink_left = 0.0
        self._mouth_target = 0.0
        self._mouth = 0.0
        self._mouth_heard_at = -1.0
        self._busy_until = 0.0
        self._face: Face = ("neutral", "closed")
        self._previous_face: Face | None = None
        self._fade_from = 0.0
        self._last_frame = time.monotonic()
        self._layers: _Layers | None = None
        self._live2d: Live2DFace | None = None  # the user's Live2D model, when shown
        self.background = True  # the pet shows a Live2D model on nothing at all
        self.taps_on_click = True  # the pet, which drags on a press, taps by itself
        self._pressed_at: QPointF | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._on_frame)

    # -- the pack ------------------------------------------------------------------

    @property
    def pack(self) -> AvatarPack:
        """The sprite pack shown (the default one when the user's could not be used)."""
        return self._sprites.pack

    @property
    def pack_problem(self) -> str | None:
        """Why the requested pack is not shown, in words; None when it is."""
        return self._pack_problem

    @property
    def expressions(self) -> tuple[str, ...]:
        """The expressions this avatar can show (its Live2D model's, or its pack's)."""
        return self._live2d.expressions if self._live2d is not None else self._sprites.expressions

    @property
    def live2d(self) -> Live2DFace | None:
        """The Live2D model shown instead of the sprites; None when the sprites show."""
        return self._live2d

    def set_live2d(
        self, model: Live2DModel | None, view: Live2DSettings | None = None, *, animate: bool = True
    ) -> str | None:
        """Show a Live2D model instead of the sprites (None: the sprites again); returns
        why it cannot be drawn (the sprites show then), in words. `animate=False`: no idle
        motion, blinking or breathing (one exact frame)."""
        from app.ui.live2d_face import open_face

        if self._live2d is not None:
            self._live2d.close()
            self._live2d = None
        problem = None
        if model is not None:
            self._live2d, problem = open_face(model, view, animate=animate)
        self._art_changed()
        return problem

    def set_live2d_view(self, view: Live2DSettings) -> None:
        """The Live2D model's scale, place, frame rate and mouse following, at once."""
        if self._live2d is not None:
            self._live2d.set_view(view)
            self._timer.setInterval(self._frame_ms())

    def opaque_region(self) -> QRegion | None:
        """Where the Live2D model covers the widget (None: the sprites cover all of it)."""
        return self._live2d.opaque_region() if self._live2d is not None else None

    def tap(self, point: QPointF) -> bool:
        """A click at `point`: a Live2D model on it plays its Tap motion (True)."""
        return self._live2d is not None and self._live2d.tap(point)

    def set_pack(self, pack: AvatarPack | Path | str | None) -> str | None:
        """Show another pack (None: the default); returns a notice if it fell back."""
        self._sprites, self._pack_problem = load_sprites_or_default(pack)
        self._art_changed()
        return self._pack_problem

    def _art_changed(self) -> None:
        """The sprites or the Live2D model changed: the expressions they have, the frame rate."""
        self._state.expressions = self.expressions
        if self._state.current not in self.expressions:
            self._state.set("neutral")
        self._show_live2d()
        self._timer.setInterval(self._frame_ms())
        self._layers = None
        self.update()

    # -- what to show ----------------------------------------------------------------

    @property
    def expression(self) -> str:
        """The current (sticky) expression."""
        return self._state.current

    @property
    def shown_expression(self) -> str:
        """What the face shows now: the thinking look while thinking, else `expression`."""
        if self._thinking and "thinking" in self._art:
            return "thinking"
        return self._state.current

    @property
    def _art(self) -> Live2DFace | AvatarPack:
        return self._live2d if self._live2d is not None else self._sprites.pack

    @property
    def thinking(self) -> bool:
        return self._thinking

    @property
    def mouth_openness(self) -> float:
        """The smoothed mouth opening from the voice, 0..1."""
        return self._mouth

    @property
    def mouth_state(self) -> str:
        """The mouth frame shown: `closed`, `half` or `open`."""
        if self._mouth >= MOUTH_OPEN_AT:
            return "open"
        return "half" if self._mouth >= MOUTH_HALF_AT else "closed"

    @property
    def is_blinking(self) -> bool:
        return self._blink_left > 0.0

    @property
    def shown_frame(self) -> tuple[str, str, bool]:
        """(expression, mouth state, eyes closed) as drawn now."""
        expression, mouth = self._target_face()
        return expression, mouth, self._eyes_closed()

    def set_expression(self, expression: str, intensity: float = 1.0) -> bool:
        """Show `expression` until told otherwise; unknown names are ignored (returns False)."""
        intensity = min(1.0, max(0.0, intensity))
        if expression not in self._art:
            return False
        self._state.set(expression, intensity)
        self._busy_until = self._clock + BUSY_AFTER_CHANGE_S
        self._sync_face()  # the cross-fade starts now, not at the next frame
        self._show_live2d()
        self.update()
        return True

    def set_thinking(self, thinking: bool) -> None:
        if thinking != self._thinking:
            self._busy_until = self._clock + BUSY_AFTER_CHANGE_S
        self._thinking = thinking
        self._sync_face()
        self._show_live2d()
        self.update()

    def set_mouth_level(self, level: float) -> None:
        """The loudness of what is playing now, 0..1; exactly 0 (silence, or playback
        stopped) closes the mouth at once rather than letting it drift shut."""
        self._mouth_target = min(1.0, max(0.0, level))
        self._mouth_heard_at = self._clock
        self._busy_until = self._clock + BUSY_AFTER_CHANGE_S
        if self._mouth_target == 0.0:
            self._mouth = 0.0
            self._sync_face()

    def blink(self) -> None:
        """Blink now (the widget also blinks by itself)."""
        self._blink_left = BLINK_S
        self.update()

    # -- animation -------------------------------------------------------------------

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
        if self._mouth_target == 0.0 and self._mouth < 0.01:
            self._mouth = 0.0
        self._sync_face()
        if self._live2d is not None:
            look = QPointF(self.mapFromGlobal(QCursor.pos())) if self.isVisible() else None
            self._live2d.step(dt, self._mouth, look, self.size())

    def _blink_interval(self) -> float:
        if self._rng.random() < 0.12:  # now and then a quick double blink, as people do
            return 0.25
        return self._rng.uniform(*BLINK_INTERVAL_S)

    def _eyes_closed(self) -> bool:
        # The eyes are shut through the middle of a blink; the lids' travel is too quick to see.
        return self._blink_left > BLINK_S * 0.15 and self._blink_left < BLINK_S * 0.9

    def _target_face(self) -> Face:
        expression = self.shown_expression
        if not self._thinking and self._state.intensity < WEAK_INTENSITY:
            expression = "neutral"
        return expression, self.mouth_state

    def _show_live2d(self) -> None:
        """The Live2D model shows what the face shows (the thinking look, a weak one...)."""
        if self._live2d is not None:
            expression = self._target_face()[0]
            same = expression == self._state.current
            self._live2d.show(expression, self._state.intensity if same else 1.0)

    def _frame_ms(self) -> int:
        return self._live2d.frame_ms if self._live2d is not None else FRAME_MS

    def _sync_face(self) -> None:
        face = self._target_face()
        if face[0] != self._face[0]:  # a new expression fades in; mouth frames just switch
            self._previous_face, self._fade_from = self._face, self._clock
        self._face = face

    def _on_frame(self) -> None:
        now = time.monotonic()
        self.step(now - self._last_frame)
        self._last_frame = now
        busy = self._clock < self._busy_until or self._mouth > 0.01  # else spare the CPU
        face = self._live2d
        moving = not face.scene.puppet.settled if face is not None else self.is_blinking
        slow = LIVE2D_IDLE_FRAME_MS if face is not None else IDLE_FRAME_MS
        interval = self._frame_ms() if busy or moving else max(self._frame_ms(), slow)
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

    def mousePressEvent(self, event: QMouseEvent) -> None:
        left = event.button() == Qt.MouseButton.LeftButton
        if self.taps_on_click and self._live2d is not None and left:
            self._pressed_at = event.position()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        pressed, self._pressed_at = self._pressed_at, None
        if pressed is None:
            super().mouseReleaseEvent(event)
        elif (event.position() - pressed).manhattanLength() < CLICK_SLOP_PX:
            self.tap(event.position())

    # -- drawing ---------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            self._paint(p, QRectF(self.rect()), self.devicePixelRatioF())
        finally:
            p.end()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._layers = None
        super().resizeEvent(event)

    def render_image(self, size: QSize | None = None) -> QImage:
        """The picture as it would be painted now, at `size` (default: the widget's)."""
        size = size or self.size()
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        p = QPainter(image)
        try:
            self._paint(p, QRectF(0, 0, size.width(), size.height()), 1.0)
        finally:
            p.end()
        return image

    def _paint(self, p: QPainter, rect: QRectF, ratio: float) -> None:
        # Frames are scaled once per widget size and cached; a frame then costs one or
        # two pixmap blits.
        self._sync_face()
        layers = self._cached_layers(rect, ratio)
        if self._live2d is not None:
            if self.background:
                p.drawPixmap(rect.topLeft(), layers.background)
                card = QPainterPath()
                card.addRoundedRect(rect, CARD_RADIUS, CARD_RADIUS)
                p.setClipPath(card)  # the model stays inside the card's rounded corners
            self._live2d.paint(p, rect, ratio)
            return
        p.drawPixmap(rect.topLeft(), layers.background)
        bob = math.sin(self._clock * 2 * math.pi / BOB_PERIOD_S) * BOB_PX * layers.scale
        top_left = layers.target.topLeft() + QPointF(0, bob)
        fade = 1.0
        if self._previous_face is not None:
            fade = (self._clock - self._fade_from) / FADE_S
            if fade >= 1.0:
                self._previous_face, fade = None, 1.0
        if self._previous_face is not None:
            p.drawPixmap(top_left, layers.frame(self._sprites, *self._previous_face))
            p.setOpacity(max(0.0, fade))
        expression, mouth = self._face
        p.drawPixmap(top_left, layers.frame(self._sprites, expression, mouth))
        if self._eyes_closed() and self._sprites.frame(expression, "blink") is not None:
            blink = layers.frame(self._sprites, expression, "blink")
            eyes = self._sprites.eyes
            if eyes is None or mouth == "closed":
                p.drawPixmap(top_left, blink)
            else:  # only the eyes of the blink frame, over the talking mouth
                source = layers.to_pixmap(eyes, ratio)
                target = QRectF(
                    top_left.x() + eyes.x() * layers.scale,
                    top_left.y() + eyes.y() * layers.scale,
                    eyes.width() * layers.scale,
                    eyes.height() * layers.scale,
                )
                p.drawPixmap(target, blink, source)
        p.setOpacity(1.0)

    def _cached_layers(self, rect: QRectF, ratio: float) -> _Layers:
        layers = self._layers
        if layers is None or layers.rect != rect or layers.ratio != ratio:
            layers = self._layers = _Layers.draw(rect, ratio, self._sprites.size)
        return layers


@dataclass(slots=True)
class _Layers:
    """The background and the scaled frames, for one widget size."""

    rect: QRectF
    ratio: float
    scale: float  # frame pixels -> widget pixels
    target: QRectF  # where a frame goes
    background: QPixmap
    frames: dict[tuple[str, str], QPixmap]

    @classmethod
    def draw(cls, rect: QRectF, ratio: float, frame_size: QSize) -> _Layers:
        scale = min(
            rect.width() / max(1, frame_size.width()), rect.height() / max(1, frame_size.height())
        )
        w, h = frame_size.width() * scale, frame_size.height() * scale
        # Bottom-aligned, with room for the bob below the frame's edge.
        target = QRectF(rect.center().x() - w / 2, rect.bottom() - h + BOB_PX * scale, w, h)
        pixmap = QPixmap(max(1, round(rect.width() * ratio)), max(1, round(rect.height() * ratio)))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        p = QPainter(pixmap)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            local = QRectF(0, 0, rect.width(), rect.height())
            frame = QPainterPath()
            frame.addRoundedRect(local, CARD_RADIUS, CARD_RADIUS)
            p.setClipPath(frame)
            _paint_background(p, local)
        finally:
            p.end()
        return cls(rect, ratio, scale, target, pixmap, {})

    def frame(self, sprites: Sprites, expression: str, kind: str) -> QPixmap:
        key = (expression, kind)
        pixmap = self.frames.get(key)
        if pixmap is None:
            image = sprites.frame(expression, kind) or sprites.frame("neutral", "closed")
            assert image is not None
            size = QSize(
                max(1, round(self.target.width() * self.ratio)),
                max(1, round(self.target.height() * self.ratio)),
            )
            scaled = image.scaled(
                size,
                Qt.AspectRatioMode.IgnoreAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
            pixmap = QPixmap.fromImage(scaled)
            pixmap.setDevicePixelRatio(self.ratio)
            self.frames[key] = pixmap
        return pixmap

    def to_pixmap(self, region: QRect, ratio: float) -> QRectF:
        """`region` (frame pixels) in a scaled frame pixmap's own pixels."""
        k = self.scale * ratio
        return QRectF(region.x() * k, region.y() * k, region.width() * k, region.height() * k)


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


__all__ = ["EXPRESSIONS", "AvatarWidget"]

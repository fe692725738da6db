"""What a Live2D model does each frame, decided here without Qt or OpenGL: the idle
motion loops, a tap plays the model's Tap motion, the expression tag shows (the model's
own expression, or a preset faded in), the eyes and head turn towards where they look,
and the voice opens the mouth.

The Cubism model is any object with live2d-py's `Model` methods (`CubismModel`); the
renderer calls `advance(dt)` and then draws.
"""

from __future__ import annotations

import math
from typing import Protocol

from app.avatar.live2d_expressions import PresetValue
from app.avatar.live2d_model import Live2DModel

__all__ = ["FADE_S", "CubismModel", "Live2DPuppet"]

FADE_S = 0.3  # a preset fades in (and the previous one out) over this long
LOOK_S = 0.15  # the gaze follows its target with this time constant
TAP_MOVING_S = 3.0  # a Tap motion counts as quick movement this long (most last 1-3 s)
SETTLED_LOOK = 0.01  # a gaze this close to its target has arrived
MOTION_IDLE, MOTION_NORMAL = 1, 2  # live2d-py's priorities: a tap interrupts the idle loop

# Where a look goes, per parameter (Cubism 3+ name first): degrees of head turn, or the
# eyeballs' travel. The same weights as Live2D's own samples use for dragging.
_LOOK: tuple[tuple[tuple[str, ...], float, float, float], ...] = (
    # (ids, times x, times y, times x*y)
    (("ParamAngleX", "PARAM_ANGLE_X"), 30.0, 0.0, 0.0),
    (("ParamAngleY", "PARAM_ANGLE_Y"), 0.0, 30.0, 0.0),
    (("ParamAngleZ", "PARAM_ANGLE_Z"), 0.0, 0.0, -30.0),
    (("ParamBodyAngleX", "PARAM_BODY_ANGLE_X", "PARAM_BODY_X"), 10.0, 0.0, 0.0),
    (("ParamEyeBallX", "PARAM_EYE_BALL_X"), 1.0, 0.0, 0.0),
    (("ParamEyeBallY", "PARAM_EYE_BALL_Y"), 0.0, 1.0, 0.0),
)


# Breathing, as Live2D's framework does it (offset, peak, cycle in seconds, weight). The
# framework breathes through the Cubism 3 names itself; a model that has only the Cubism 2
# names (PARAM_BREATH, ...) breathes through these.
_BREATH: tuple[tuple[str, str, float, float, float, float], ...] = (
    # (the Cubism 3 name, the Cubism 2 name, offset, peak, cycle, weight)
    ("ParamAngleX", "PARAM_ANGLE_X", 0.0, 15.0, 6.5345, 0.5),
    ("ParamAngleY", "PARAM_ANGLE_Y", 0.0, 8.0, 3.5345, 0.5),
    ("ParamAngleZ", "PARAM_ANGLE_Z", 0.0, 10.0, 5.5345, 0.5),
    ("ParamBodyAngleX", "PARAM_BODY_ANGLE_X", 0.0, 4.0, 15.5345, 0.5),
    ("ParamBreath", "PARAM_BREATH", 0.5, 0.5, 3.2345, 0.5),
)


class CubismModel(Protocol):
    """The part of live2d-py's `Model` a puppet uses (its method names are the library's)."""

    def Update(self, deltaSecs: float = -1.0) -> None: ...
    def SetParamById(self, id: str, value: float, weight: float = 1.0) -> None: ...
    def AddParamById(self, id: str, value: float) -> None: ...
    def GetParamValueById(self, id: str) -> float: ...
    def SetExpression(self, expressionId: str, fadeoutMs: float = -1.0) -> None: ...
    def ResetExpression(self) -> None: ...
    def StartRandomMotion(self, group: str | None = None, priority: int = 3) -> None: ...
    def IsMotionFinished(self) -> bool: ...
    def SetAutoBlink(self, on: bool) -> None: ...
    def SetAutoBreath(self, on: bool) -> None: ...
    def SetScale(self, scale: float) -> None: ...
    def SetOffset(self, dx: float, dy: float) -> None: ...


class Live2DPuppet:
    """One Cubism model, driven. `animate=False` keeps it still (no idle motion, no blink,
    no breath): one exact frame, as `companion avatar snapshot` renders."""

    def __init__(self, model: Live2DModel, cubism: CubismModel, *, animate: bool = True) -> None:
        self.model = model
        self.cubism = cubism
        self.animate = animate
        cubism.SetAutoBlink(animate)
        cubism.SetAutoBreath(animate)
        self._idle = model.motion_group("idle") if animate else None
        self._tap = model.motion_group("tap")
        self.taps = 0  # Tap motions started
        self.expression = "neutral"
        self.intensity = 1.0
        self._own_expression = False  # one of the model's expressions is showing
        self._leaving: tuple[PresetValue, ...] = ()
        self._showing: tuple[PresetValue, ...] = ()
        self._fade = 1.0
        self._mouth = 0.0
        self._look = (0.0, 0.0)
        self._look_target = (0.0, 0.0)
        parameters = model.facts.parameters
        self._breath = [
            (old, offset, peak, cycle, weight)
            for new, old, offset, peak, cycle, weight in _BREATH
            if animate and new not in parameters and old in parameters
        ]
        self._clock = 0.0
        self._tap_until = 0.0
        self._look_ids = [
            (next((i for i in ids if i in model.facts.parameters), None), kx, ky, kxy)
            for ids, kx, ky, kxy in _LOOK
        ]

    # -- what to show ----------------------------------------------------------------------

    def show(self, tag: str, intensity: float = 1.0, *, at_once: bool = False) -> bool:
        """Show expression `tag` (the table's); unknown tags are ignored (False)."""
        if tag not in self.model.table:
            return False
        intensity = min(1.0, max(0.0, intensity))
        if tag == self.expression and intensity == self.intensity:
            return True
        name = self.model.table.expressions.get(tag)
        if name:
            self.cubism.SetExpression(name)
        elif self._own_expression:
            self.cubism.ResetExpression()  # back to the face at rest
        self._own_expression = bool(name)
        self._leaving = self._current_preset() if not at_once else ()
        self.expression, self.intensity = tag, intensity
        self._showing = self.model.table.presets.get(tag, ())
        self._fade = 1.0 if at_once else 0.0
        return True

    def set_mouth(self, openness: float) -> None:
        """How open the mouth is, 0..1 (the voice's smoothed level)."""
        self._mouth = min(1.0, max(0.0, openness))

    def look_at(self, x: float, y: float, *, at_once: bool = False) -> None:
        """Where to look: -1..1 across the view, left to right and bottom to top."""
        self._look_target = (min(1.0, max(-1.0, x)), min(1.0, max(-1.0, y)))
        if at_once:
            self._look = self._look_target

    def tap(self) -> bool:
        """Play the model's Tap motion (True), if it has one."""
        if self._tap is None:
            return False
        self.cubism.StartRandomMotion(self._tap, MOTION_NORMAL)
        self.taps += 1
        self._tap_until = self._clock + TAP_MOVING_S
        return True

    @property
    def settled(self) -> bool:
        """Only the slow movement is left: the idle motion, blink and breath. No face
        fading in, no gaze on its way, the mouth shut, no Tap motion playing (the avatar
        then draws fewer frames: `app.ui.avatar_widget`)."""
        look = max(
            abs(now - target) for now, target in zip(self._look, self._look_target, strict=True)
        )
        return (
            self._fade >= 1.0
            and look < SETTLED_LOOK
            and self._mouth == 0.0
            and self._clock >= self._tap_until
        )

    def place(self, scale: float, x: float, y: float) -> None:
        """How big, and where (in view units, up and right positive), the model is drawn."""
        self.cubism.SetScale(scale)
        self.cubism.SetOffset(x, y)

    # -- each frame ----------------------------------------------------------------------------

    def advance(self, dt: float) -> None:
        """Move `dt` seconds on: motions, blink and breath (the model's), then our expression,
        gaze and mouth on top. Draw after this."""
        dt = min(max(dt, 0.0), 0.25)
        if self._idle is not None and self.cubism.IsMotionFinished():
            self.cubism.StartRandomMotion(self._idle, MOTION_IDLE)
        self.cubism.Update(dt)
        self._clock += dt
        for pid, offset, peak, cycle, weight in self._breath:
            wave = offset + peak * math.sin(2 * math.pi * self._clock / cycle)
            self.cubism.AddParamById(pid, wave * weight)
        self._fade = min(1.0, self._fade + dt / FADE_S) if dt > 0 else self._fade
        k = 1.0 - math.exp(-dt / LOOK_S) if dt > 0 else 0.0
        self._look = tuple(  # type: ignore[assignment]
            now + (target - now) * k
            for now, target in zip(self._look, self._look_target, strict=True)
        )
        eased = self._fade * self._fade * (3 - 2 * self._fade)
        self._apply(self._leaving, 1.0 - eased)
        self._apply(self._showing, eased * self.intensity)
        self._apply_look()
        self._apply_mouth()

    def _current_preset(self) -> tuple[PresetValue, ...]:
        return self._showing if self._fade >= 0.5 else self._leaving

    def _apply(self, preset: tuple[PresetValue, ...], weight: float) -> None:
        if weight <= 0.0:
            return
        parameters = self.model.facts.parameters
        for v in preset:
            parameter = parameters.get(v.parameter)
            if parameter is None:
                continue
            if v.blend == "add":
                self.cubism.AddParamById(v.parameter, v.value * weight)
                continue
            value = v.value
            if v.blend == "multiply":
                value = self.cubism.GetParamValueById(v.parameter) * (
                    1.0 + (v.value - 1.0) * weight
                )
                weight_now = 1.0
            else:
                weight_now = weight
            self.cubism.SetParamById(v.parameter, parameter.clamp(value), weight_now)

    def _apply_look(self) -> None:
        x, y = self._look
        if abs(x) < 1e-4 and abs(y) < 1e-4:
            return
        for pid, kx, ky, kxy in self._look_ids:
            if pid is not None:
                self.cubism.AddParamById(pid, kx * x + ky * y + kxy * x * y)

    def _apply_mouth(self) -> None:
        if self._mouth <= 0.005:
            return  # silent: the motion's and the expression's mouth show
        for pid in self.model.lip_sync:
            parameter = self.model.facts.parameters[pid]
            top = min(1.0, parameter.maximum) if parameter.maximum > 0 else parameter.maximum
            self.cubism.SetParamById(pid, parameter.clamp(self._mouth * top), 1.0)

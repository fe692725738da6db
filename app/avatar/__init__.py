"""The avatar's state: which expression shows, blinking, idle motion and the mouth.

Renderers (the Qt sprite widget in `app.ui`, the VTube Studio bridge here) draw
this state; they never decide it.
"""

from app.avatar.pack import (
    DEFAULT_PACK_DIR,
    MOUTH_STATES,
    AvatarPack,
    AvatarPackError,
    ExpressionFrames,
    expressions_for,
    load_pack,
    load_pack_or_default,
)
from app.avatar.state import EXPRESSIONS, ExpressionState

__all__ = [
    "DEFAULT_PACK_DIR",
    "EXPRESSIONS",
    "MOUTH_STATES",
    "AvatarPack",
    "AvatarPackError",
    "ExpressionFrames",
    "ExpressionState",
    "expressions_for",
    "load_pack",
    "load_pack_or_default",
]

"""The avatar's state: which expression shows, blinking, idle motion and the mouth.

Renderers (the Qt sprite widget in `app.ui`, later a VTube Studio bridge) draw
this state; they never decide it.
"""

from app.avatar.state import EXPRESSIONS, ExpressionState

__all__ = ["EXPRESSIONS", "ExpressionState"]

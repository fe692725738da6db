"""The system prompt: persona, speaking style, and the expression tags that exist."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.avatar.state import EXPRESSIONS

DEFAULT_PROMPT_FILE = Path(__file__).resolve().parents[2] / "assets" / "prompts" / "system.txt"
_FALLBACK = (
    "You are {name}, a friendly desktop companion who talks with the user out loud. "
    "Keep replies short and spoken, no markdown. Show feelings with one tag in square "
    "brackets at the start of a sentence; the tags are: {tags}."
)


def build_system_prompt(
    name: str = "Mika",
    *,
    template: str | None = None,
    expressions: Sequence[str] = EXPRESSIONS,
) -> str:
    """The persona prompt with `{name}` and `{tags}` filled in."""
    if template is None:
        try:
            template = DEFAULT_PROMPT_FILE.read_text(encoding="utf-8")
        except OSError:
            template = _FALLBACK
    tags = ", ".join(f"[{e}]" for e in expressions)
    return template.replace("{name}", name).replace("{tags}", tags).strip()

"""The system prompt: persona, speaking style, and the expression tags that exist.

The default text is the shipped character's (`assets/characters/default.toml`);
`assets/prompts/system.txt` is still read when the character file is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.agent.persona import CharacterError, load_character
from app.avatar.state import EXPRESSIONS

DEFAULT_PROMPT_FILE = Path(__file__).resolve().parents[2] / "assets" / "prompts" / "system.txt"
TOOLS_HINT = (
    "When the user asks about something on their screen, call the take_screenshot tool "
    "to look before you answer."
)
_FALLBACK = (
    "You are {name}, a friendly desktop companion who talks with the user out loud. "
    "Keep replies short and spoken, no markdown. Show feelings with one tag in square "
    "brackets at the start of a sentence; the tags are: {tags}."
)


def _default_template() -> str:
    try:
        template = load_character().system_prompt
        if template.strip():
            return template
    except CharacterError:
        pass
    try:
        return DEFAULT_PROMPT_FILE.read_text(encoding="utf-8")
    except OSError:
        return _FALLBACK


def build_system_prompt(
    name: str = "Mika",
    *,
    template: str | None = None,
    expressions: Sequence[str] = EXPRESSIONS,
) -> str:
    """The persona prompt with `{name}` and `{tags}` filled in."""
    if template is None:
        template = _default_template()
    tags = ", ".join(f"[{e}]" for e in expressions)
    return template.replace("{name}", name).replace("{tags}", tags).strip()

"""The system prompt: persona, speaking style, and the expression tags that exist.

The default text is the shipped character's (`assets/characters/default.toml`);
`assets/prompts/system.txt` is still read when the character file is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.agent.persona import Character, CharacterError, load_character
from app.assets import asset_path
from app.avatar.state import EXPRESSIONS

DEFAULT_PROMPT_FILE = asset_path("prompts/system.txt")
# Nothing here calls the one the companion talks with "the user": a small model that
# reads "the user" in its prompt talks of "the user" to them ("I see the user is asking").
TOOLS_HINT = (
    "When you are asked about something on the screen, call the take_screenshot tool "
    "to look before you answer."
)
# For a model that calls tools: what it should not guess.
RECKONING_HINT = (
    "For the time or a date (here, in another place, tomorrow), call get_time; for any "
    "arithmetic, call calculate. Never guess them."
)
_FALLBACK = (
    "You are {name}, a friendly desktop companion. You talk out loud with one person: "
    'speak to them as "you", and by their name when you know it. '
    "Every reply begins with one expression tag in square brackets, one of: {tags}. "
    "The tag shows how you feel about what they said: [sadness] when they are worried "
    "or sad, [joy] when they are happy, [neutral] for plain facts. "
    "After the tag, always say your answer out loud in words: {sentences} short spoken "
    "sentences, no markdown."
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
    max_sentences: int = 3,
) -> str:
    """The persona prompt with `{name}`, `{tags}` and `{sentences}` filled in."""
    if template is None:
        template = _default_template()
    character = Character(name=name, system_prompt=template, expressions=tuple(expressions))
    return character.prompt(max_sentences=max_sentences)

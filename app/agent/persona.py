"""Characters: a name, a system prompt and an expression set, from a TOML file.

A character file looks like `assets/characters/default.toml`::

    name = "Mika"
    expressions = ["neutral", "joy", ...]
    system_prompt = \"\"\"You are {name} ... The tags you can use are: {tags}.\"\"\"

`{name}`, `{tags}` and `{sentences}` in the prompt are filled in by `Character.prompt()`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.assets import asset_path
from app.avatar.state import EXPRESSIONS

__all__ = ["DEFAULT_CHARACTER_FILE", "Character", "CharacterError", "load_character"]

DEFAULT_CHARACTER_FILE = asset_path("characters/default.toml")


class CharacterError(Exception):
    """The character file cannot be used; the message names the file and the problem."""


class Character(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = "Mika"
    system_prompt: str = ""
    expressions: tuple[str, ...] = Field(default=EXPRESSIONS)

    @field_validator("expressions")
    @classmethod
    def _some_expressions(cls, value: Sequence[str]) -> tuple[str, ...]:
        names = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
        if not names:
            raise ValueError("a character needs at least one expression")
        return names

    def prompt(self, *, extra: str = "", max_sentences: int = 3) -> str:
        """The system prompt with `{name}`, `{tags}` and `{sentences}` (how many
        sentences a reply has: "one to three") filled in, and `extra` after it."""
        tags = ", ".join(f"[{e}]" for e in self.expressions)
        text = (
            self.system_prompt.replace("{name}", self.name)
            .replace("{tags}", tags)
            .replace("{sentences}", sentence_count_words(max_sentences))
            .strip()
        )
        return f"{text}\n{extra.strip()}".strip() if extra.strip() else text


def sentence_count_words(max_sentences: int) -> str:
    """How many sentences a reply has, as the prompt says it ("one to three")."""
    if max_sentences <= 0:
        return "as few as you need"
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    if max_sentences == 1:
        return "one"
    most = words[max_sentences - 1] if max_sentences <= len(words) else str(max_sentences)
    return f"one or {most}" if max_sentences == 2 else f"one to {most}"


def load_character(path: Path | str | None = None) -> Character:
    """The character in `path` (default: the shipped default character)."""
    path = Path(path).expanduser() if path else DEFAULT_CHARACTER_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CharacterError(f"Could not read the character file {path}: {exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CharacterError(f"{path} is not valid TOML: {exc}") from exc
    try:
        return Character.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise CharacterError(f"The character file {path} is invalid: {problems}") from exc

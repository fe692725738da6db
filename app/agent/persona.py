"""Characters: a name, a system prompt and an expression set, from a TOML file.

A character file looks like `assets/characters/default.toml`::

    name = "Mika"
    expressions = ["neutral", "joy", ...]
    system_prompt = \"\"\"You are {name} ... The tags you can use are: {tags}.\"\"\"

`{name}` and `{tags}` in the prompt are filled in by `Character.prompt()`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.avatar.state import EXPRESSIONS

__all__ = ["DEFAULT_CHARACTER_FILE", "Character", "CharacterError", "load_character"]

DEFAULT_CHARACTER_FILE = (
    Path(__file__).resolve().parents[2] / "assets" / "characters" / "default.toml"
)


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

    def prompt(self, *, extra: str = "") -> str:
        """The system prompt with `{name}` and `{tags}` filled in (and `extra` after it)."""
        tags = ", ".join(f"[{e}]" for e in self.expressions)
        text = self.system_prompt.replace("{name}", self.name).replace("{tags}", tags).strip()
        return f"{text}\n{extra.strip()}".strip() if extra.strip() else text


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

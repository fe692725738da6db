"""Characters from TOML: the shipped default, a user's own file, and a broken one."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.agent.persona import DEFAULT_CHARACTER_FILE, CharacterError, load_character
from app.agent.prompt import build_system_prompt
from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.session import VoiceSession, build_character


def test_the_default_character_is_shipped_in_assets() -> None:
    assert DEFAULT_CHARACTER_FILE.parent.name == "characters"
    character = load_character()
    prompt = character.prompt()
    assert character.name == "Mika" and "joy" in character.expressions
    assert "You play Mika" in prompt and "[joy]" in prompt and "{" not in prompt
    assert build_system_prompt("Mika", expressions=character.expressions) == prompt


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_character_file_sets_name_prompt_and_expressions(tmp_path: Path) -> None:
    path = write(
        tmp_path / "kai.toml",
        'name = "Kai"\nexpressions = ["calm", "grin"]\n'
        'system_prompt = "You are {name}. Tags: {tags}."\n',
    )
    settings = Settings()
    settings.chat.model = "openai-compatible/x"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    settings.persona.character_file = path
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    assert session.expressions == ("calm", "grin")
    assert session.agent.expressions == ("calm", "grin")
    assert session.agent.core.system_prompt.startswith("You are Kai. Tags: [calm], [grin].")


def test_settings_override_the_character_file_explicitly(tmp_path: Path) -> None:
    path = write(tmp_path / "kai.toml", 'name = "Kai"\nsystem_prompt = "I am {name}."\n')
    settings = Settings(persona={"character_file": path, "name": "Rin"})
    character, problem = build_character(settings)
    assert problem is None and character.prompt() == "I am Rin."


@pytest.mark.parametrize(
    "text", ['name = "x"\nexpressions = []\n', "name = = broken"], ids=["no expressions", "toml"]
)
def test_a_broken_character_file_is_refused_in_words(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(CharacterError, match=r"bad\.toml"):
        load_character(path)
    settings = Settings(persona={"character_file": path})
    character, problem = build_character(settings)
    assert character.name == "Mika" and problem and "default character" in problem

"""The config file the settings write reads as people write TOML: a blank line between
tables, the user's comments kept with the table they belong to (issue 15, item 10)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from app.config import Settings, save_settings
from app.config.loading import load_settings_file
from app.config.saving import tables_apart


def test_every_table_the_settings_write_is_set_apart(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = Settings()
    settings.ui.pet_geometry = {"default": [10, 20, 280, 440]}
    settings.ui.first_run_done = True
    settings.tts.rate = 190
    settings.persona.name = "Mika"
    save_settings(settings, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("[")]
    assert len(headers) >= 3, lines
    for i in headers[1:]:
        assert lines[i - 1] == "", f"no blank line before {lines[i]!r}:\n" + "\n".join(lines)
    again = load_settings_file(path)
    assert again.tts.rate == 190 and again.ui.pet_geometry == {"default": [10, 20, 280, 440]}


def test_a_comment_above_a_header_stays_with_its_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[chat]\nmax_tokens = 100\n# my voice\n[tts]\nrate = 150\n", encoding="utf-8")
    settings = load_settings_file(path)
    settings.tts.rate = 160
    save_settings(settings, path)
    text = path.read_text(encoding="utf-8")
    assert "max_tokens = 100\n\n# my voice\n[tts]\n" in text, text
    assert tomllib.loads(text)["tts"]["rate"] == 160


def test_a_header_like_line_inside_a_string_is_left_alone() -> None:
    text = 'a = """\n[not a table]\n"""\n[b]\nc = 1\n'
    spaced = tables_apart(text)
    assert tomllib.loads(spaced) == tomllib.loads(text)

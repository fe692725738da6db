"""Config: defaults, the user's TOML file, environment overrides, masked display."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import ConfigError, config_path, load_settings, masked_dump

SECRET = "sk-" + "test-VERYSECRETKEY0123456789"


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_embedded_models() -> None:
    s = load_settings()
    assert s.chat.model == "local/smollm2"
    assert s.speech.adapter == "whisper_local"


def test_file_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        '[chat]\nmodel = "openai/gpt-4o-mini"\ntemperature = 0.2\n[vad]\nend_silence_ms = 700\n'
    )
    s = load_settings()
    assert (s.chat.model, s.chat.temperature, s.vad.end_silence_ms) == (
        "openai/gpt-4o-mini",
        0.2,
        700,
    )
    monkeypatch.setenv("COMPANION_CHAT__MODEL", "ollama/llama3.2")
    assert load_settings().chat.model == "ollama/llama3.2"


def test_broken_file_names_itself() -> None:
    path = write_config("[chat\nmodel = ")
    with pytest.raises(ConfigError, match=str(path)):
        load_settings()


def test_invalid_value_names_the_field() -> None:
    write_config("[vad]\nend_silence_ms = 5\n")
    with pytest.raises(ConfigError, match=r"vad\.end_silence_ms"):
        load_settings()


def test_keys_are_masked() -> None:
    write_config(f'[chat]\napi_key = "{SECRET}"\n')
    dumped = json.dumps(masked_dump(load_settings()))
    assert SECRET not in dumped and "****" in dumped


def test_config_commands(tmp_path: Path) -> None:
    path = write_config(f'[chat]\napi_key = "{SECRET}"\n')
    run = [sys.executable, "-m", "app", "config"]
    out = subprocess.run([*run, "path"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(path)
    shown = subprocess.run([*run, "show"], capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)["chat"]["model"] == "local/smollm2"
    assert SECRET not in shown.stdout + shown.stderr

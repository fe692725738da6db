"""Config: defaults, the user's TOML file, environment overrides, masked display."""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from app.config import ConfigError, Settings, config_path, load_settings, masked_dump
from app.ui.settings_dialog import HIDDEN

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




def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The models a field holds: itself, or the values of its dicts and lists."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def _leaf_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, FieldInfo) of every field that is not a section, sections walked into;
    a model inside a map or list (a tool, an MCP server) is walked as `name.*`."""
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            assert (field.annotation.__doc__ or "").strip(), f"section {path} has no docstring"
            yield from _leaf_fields(field.annotation, path)
            continue
        yield path, field
        for inner in _models_in(field.annotation):
            yield from _leaf_fields(inner, f"{path}.*")


def test_every_setting_explains_itself() -> None:
    """The settings dialog shows each field's description as its help text."""
    paths = dict(_leaf_fields(Settings))
    assert {
        "chat.model",
        "vad.end_silence_ms",
        "tools.*.command",
        "tools.*.parameters.*.type",
        "mcp.servers.*.timeout_s",
        "avatar.vtube_studio.port",
    } <= set(paths)
    missing = sorted(
        path
        for path, field in paths.items()
        if path not in HIDDEN
        and not (field.description or "").strip()
    )
    assert missing == [], f"settings without a description: {missing}"
    for path in set(paths) - HIDDEN:
        text = str(paths[path].description)
        assert "\n" not in text and text.endswith("."), (path, text)  # one sentence

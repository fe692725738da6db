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

from app.config import (
    ConfigError,
    ConfigFileUnreadable,
    Settings,
    config_path,
    env_variable,
    load_settings,
    masked_dump,
    save_settings,
    settings_to_save,
)
from app.ui.settings_dialog import HIDDEN

SECRET = "sk-" + "test-VERYSECRETKEY0123456789"


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_embedded_models() -> None:
    s = load_settings()
    assert s.chat.model == "local/qwen2.5-coder-1.5b"
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


def test_a_file_nested_too_deeply_is_one_line_naming_it() -> None:
    path = write_config("x = " + "[" * 900 + "]" * 900 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply") as told:
        load_settings()
    assert str(path) in str(told.value) and "\n" not in str(told.value)
    done = subprocess.run(
        [sys.executable, "-m", "app", "config", "show"], capture_output=True, text=True
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "nested too deeply" in done.stderr


def test_broken_json_in_a_variable_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPANION_TOOLS", '{"notes": {"command": ')
    with pytest.raises(ConfigError, match=r"^COMPANION_TOOLS is not valid JSON \("):
        load_settings()
    done = subprocess.run(
        [sys.executable, "-m", "app", "config", "show"], capture_output=True, text=True
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "COMPANION_TOOLS is not valid JSON" in done.stderr


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
    assert json.loads(shown.stdout)["chat"]["model"] == "local/qwen2.5-coder-1.5b"
    assert SECRET not in shown.stdout + shown.stderr


def test_saving_writes_what_changed_and_nothing_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_config('# my settings\n[persona]\nname = "Nova"  # her name\n')
    monkeypatch.setenv("COMPANION_TTS__RATE", "99")
    monkeypatch.setenv("COMPANION_CHAT__MODEL", "openai/gpt-from-env")
    launched = load_settings()
    launched.chat.model = "local/smollm2"  # like --model on the command line
    baseline = launched.model_copy(deep=True)
    launched.ui.first_run_done = True
    save_settings(settings_to_save(baseline, launched))
    text = path.read_text()
    assert text.startswith("# my settings\n") and 'name = "Nova"  # her name' in text
    assert "first_run_done = true" in text
    assert "rate" not in text and "model" not in text
    monkeypatch.delenv("COMPANION_TTS__RATE")
    monkeypatch.delenv("COMPANION_CHAT__MODEL")
    loaded = load_settings()
    assert loaded.ui.first_run_done and loaded.tts.rate == 175 and loaded.persona.name == "Nova"


def test_a_broken_file_is_never_saved_over() -> None:
    original, edited = Settings(), Settings()
    edited.ui.first_run_done = True
    path = write_config("[chat\nmodel = ")
    with pytest.raises(ConfigFileUnreadable, match="cannot be read") as caught:
        settings_to_save(original, edited)
    assert caught.value.path == path
    assert path.read_text() == "[chat\nmodel = "


def test_the_variable_that_sets_a_field_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_VAD__END_SILENCE_MS", "700")
    monkeypatch.setenv("COMPANION_AUDIO", '{"volume": 0.5}')
    assert env_variable("vad.end_silence_ms") == "COMPANION_VAD__END_SILENCE_MS"
    assert env_variable("audio.volume") == "COMPANION_AUDIO"  # the whole section
    assert env_variable("vad.start_threshold") is None


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
        if path not in HIDDEN and not (field.description or "").strip()
    )
    assert missing == [], f"settings without a description: {missing}"
    for path in set(paths) - HIDDEN:
        text = str(paths[path].description)
        assert "\n" not in text and text.endswith("."), (path, text)  # one sentence


def _is_number(annotation: Any) -> bool:
    """int or float (optional or not); not bool, not a name-or-number such as a device."""
    args = [a for a in typing.get_args(annotation) or (annotation,) if a is not type(None)]
    return bool(args) and all(a in (int, float) for a in args)


def _shown(bound: float) -> list[str]:
    number = int(bound) if float(bound).is_integer() else bound
    return [str(number), f"{number:,}"] if isinstance(number, int) else [str(number)]


def test_every_number_setting_is_bounded_and_its_description_says_so() -> None:
    import annotated_types

    numbers = {p: f for p, f in _leaf_fields(Settings) if _is_number(f.annotation)}
    assert {"chat.timeout_s", "chat.max_tokens", "chat.temperature", "tts.rate"} <= set(numbers)
    for path, field in numbers.items():
        low = [m for m in field.metadata if isinstance(m, annotated_types.Ge | annotated_types.Gt)]
        high = [m for m in field.metadata if isinstance(m, annotated_types.Le | annotated_types.Lt)]
        assert low and high, f"{path} has no {'lower' if not low else 'upper'} bound"
        text = str(field.description)
        for bound in (*low, *high):
            value = next(getattr(bound, k) for k in ("ge", "gt", "le", "lt") if hasattr(bound, k))
            assert any(s in text for s in _shown(value)), (path, value, text)


@pytest.mark.parametrize(
    ("line", "key", "allowed"),
    [
        ("timeout_s = -3", "chat.timeout_s", "more than 0, at most 3,600"),
        ("max_tokens = -5", "chat.max_tokens", "from 1 to 1,000,000"),
        ("temperature = 99", "chat.temperature", "from 0 to 2"),
        ("local_context = 10", "chat.local_context", "from 256 to 262,144"),
    ],
)
def test_a_value_out_of_range_is_refused_with_the_key_the_file_and_the_range(
    line: str, key: str, allowed: str
) -> None:
    path = write_config(f'# mine\n[chat]\nmodel = "openai/gpt-4o"\n{line}\n')
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert str(path) in message and f"{key} (line 4): " in message
    assert f"is out of range: it must be {allowed}" in message
    assert "\n" not in message


def test_a_value_out_of_range_from_the_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPANION_TTS__RATE", "5000")
    with pytest.raises(ConfigError, match=r"tts\.rate \(from COMPANION_TTS__RATE\): 5000 is out"):
        load_settings()


def test_unknown_keys_are_told_with_the_file_the_line_and_a_did_you_mean() -> None:
    path = write_config(
        "max_tokens = 100\n"
        '[chatt]\nmodel = "x"\n'
        '[chat]\nmodle = "openai/gpt-4o"\n'
        '[tools.weather]\ncommand = "weather"\ncomand = "y"\n'
        "[vad]\nsomething_else = 1\n"
    )
    settings = load_settings()
    assert settings.chat.model == Settings().chat.model  # the typo is ignored, and said
    assert settings.file_warnings == [
        f'{path}:1: unknown setting "max_tokens", ignored. Did you mean "max_tokens" in [chat]?',
        f"{path}:2: unknown section [chatt], ignored. Did you mean [chat]?",
        f'{path}:5: unknown setting "modle" in [chat], ignored. Did you mean "model" in [chat]?',
        f'{path}:8: unknown setting "comand" in [tools.weather], ignored. Did you mean '
        '"command" in [tools.weather]?',
        f'{path}:10: unknown setting "something_else" in [vad], ignored.',
    ]
    write_config('[chat]\nmodel = "openai/gpt-4o"\n')
    assert load_settings().file_warnings == []


def test_unknown_keys_are_shown_by_config_show_and_once_when_the_session_starts() -> None:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.session import VoiceSession

    path = write_config('[chat]\nmodle = "openai/gpt-4o"\n')
    run = [sys.executable, "-m", "app", "config", "show"]
    shown = subprocess.run(run, capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)["chat"]["model"] == Settings().chat.model
    assert f'companion: warning: {path}:2: unknown setting "modle" in [chat]' in shown.stderr
    assert 'Did you mean "model" in [chat]?' in shown.stderr
    settings = load_settings()
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    assert [n for n in session.notices if "modle" in n] == settings.file_warnings

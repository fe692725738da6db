"""Reading the settings: the file checked first so a broken one is named in words
(the file, the line, the key and the range allowed), `COMPANION_*` variables over it,
keys fetched from the keyring, keys the settings do not have told as warnings with a
did-you-mean; and showing them with every secret masked."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsError

from app.config.locations import config_path
from app.config.models import ENV_NESTING, ENV_PREFIX, Settings
from app.config.problems import key_line, unknown_keys, validation_problems
from app.config.secret_store import resolve_secrets


class ConfigError(Exception):
    """The config file cannot be used; the message says where and what to fix."""


def describe_validation(exc: ValidationError) -> str:
    """Each problem pydantic found as `dotted.field: message` (a value out of range
    with the range allowed), joined by "; "."""
    return "; ".join(f"{'.'.join(k)}: {words}" for k, words in validation_problems(exc, Settings))


def _where(keys: tuple[str, ...], line: int | None) -> str:
    """Where a bad value came from: the variable that set it, or its line in the file."""
    variable = env_variable(".".join(keys))
    if variable is not None:
        return f" (from {variable})"
    return f" (line {line})" if line else ""


def _named(path: tuple[str, ...], section: bool) -> str:
    """`[chatt]`, `"modle" in [chat]`, `"max_tokens"`: a key as the file writes it."""
    if section:
        return f"[{'.'.join(path)}]"
    return f'"{path[-1]}" in [{".".join(path[:-1])}]' if len(path) > 1 else f'"{path[0]}"'


def file_warnings(data: dict[str, Any], text: str, path: Path) -> list[str]:
    """One line per key in the file that the settings do not have: ignored, and said."""
    out = []
    for keys, suggestion, section in unknown_keys(data, Settings):
        line = key_line(text, keys)
        where = f"{path}:{line}" if line else str(path)
        kind = "section" if section else "setting"
        words = f"{where}: unknown {kind} {_named(keys, section)}, ignored."
        if suggestion:
            parts = tuple(suggestion.split("."))
            words += f" Did you mean {_named(parts, section and len(parts) == len(keys))}?"
        out.append(words)
    return out


_TOO_DEEP = "is not a config file Companion can read (its values are nested too deeply)"
_FIELD = re.compile(r'field "([^"]+)"')


def _variable_problem(exc: SettingsError) -> str:
    """A `COMPANION_*` variable that could not be read (broken JSON, say), in one line
    naming it."""
    found = _FIELD.search(str(exc))
    name = (env_variable(found.group(1)) if found else None) or "A COMPANION_* variable"
    cause = exc.__cause__
    why = f" ({cause})" if cause is not None else ""
    return f"{name} is not valid JSON{why}: fix it or unset it"


def load_settings(**overrides: Any) -> Settings:
    """Load settings; a broken config file becomes a `ConfigError` naming the file, the
    line and the field; keys it does not know become `Settings.file_warnings`."""
    path = config_path()
    if path.exists() and not path.is_file():
        what = "a folder" if path.is_dir() else "not a regular file"
        raise ConfigError(f"{path} is {what}, not a config file: remove it or rename it")
    text: str | None = None
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML ({exc}); fix or delete it") from exc
        except RecursionError as exc:
            raise ConfigError(f"{path} {_TOO_DEEP}; fix or delete it") from exc
        except OSError as exc:
            raise ConfigError(f"{path} cannot be read ({exc.strerror or exc})") from exc
    try:
        settings = resolve_secrets(Settings(**overrides))
    except SettingsError as exc:
        raise ConfigError(_variable_problem(exc)) from exc
    except ValidationError as exc:
        found = [
            (key_line(text, keys) if text else None, keys, words)
            for keys, words in validation_problems(exc, Settings)
        ]
        found.sort(key=lambda item: item[0] or 0)  # in the order the file has them
        problems = [f"{'.'.join(k)}{_where(k, line)}: {words}" for line, k, words in found]
        where = f" in {path}" if text is not None else ""
        raise ConfigError(
            f"The settings{where} cannot be used: {'; '.join(problems)}. Fix it and start again."
        ) from exc
    if text is not None:
        settings._file_warnings = file_warnings(data, text, path)
    return settings


class _FileSettings(Settings):
    """Settings read from a file given by path: its values come in as init values, ranked
    under `COMPANION_*` as the app ranks its own file; the user's own file is not read."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (env_settings, init_settings)


def load_settings_file(path: str | os.PathLike[str]) -> Settings:
    """The settings the app would use with `COMPANION_CONFIG=path`: that file, the
    `COMPANION_*` variables over it, keys fetched from the keyring. A missing, unreadable
    or broken file is a `ConfigError` naming it."""
    path = Path(path).expanduser()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(
            f"{path} does not exist: give the path of a Companion config file "
            "(`companion config path` prints the app's own)"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read ({exc.strerror or exc})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} {_TOO_DEEP}; fix it") from exc
    try:
        loaded = _FileSettings(**data)
    except SettingsError as exc:
        raise ConfigError(_variable_problem(exc)) from exc
    except ValidationError as exc:
        problems = describe_validation(exc)
        raise ConfigError(f"Settings in {path} or COMPANION_* are invalid: {problems}") from exc
    values = {name: getattr(loaded, name) for name in Settings.model_fields}
    settings = Settings.model_construct(_fields_set=set(loaded.model_fields_set), **values)
    return resolve_secrets(settings)


def env_variable(path: str) -> str | None:
    """The `COMPANION_*` variable that sets the field at dotted `path` (or one of the
    sections holding it), if one is set."""
    parts = path.split(".")
    wanted = {ENV_PREFIX + ENV_NESTING.join(parts[: i + 1]).upper() for i in range(len(parts))}
    for name in os.environ:
        if name.upper() in wanted:
            return name
    return None


def masked_dump(settings: Settings) -> dict[str, Any]:
    """Settings as plain data with every secret masked (for `companion config show`)."""

    def mask(value: Any) -> Any:
        if isinstance(value, SecretStr):
            raw = value.get_secret_value()
            return "" if not raw else "****" + (raw[-4:] if len(raw) >= 12 else "")
        if isinstance(value, dict):
            return {k: mask(v) for k, v in value.items()}
        if isinstance(value, Path):
            return str(value)
        return value

    data: dict[str, Any] = mask(settings.model_dump())
    return data

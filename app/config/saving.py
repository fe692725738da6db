"""Writing the settings back: only what the file already held plus what the user
changed (never a value that came from a `COMPANION_*` variable or a command-line flag),
keys into the keyring, and the user's comments and layout kept (tomlkit)."""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, create_model

from app.config.loading import describe_validation
from app.config.locations import config_path
from app.config.models import Settings
from app.config.secret_store import KEYRING_PREFIX, store_secret


class ConfigFileUnreadable(ValueError):
    """The settings file exists but cannot be read back; saving over it would lose it."""

    def __init__(self, path: Path, error: Exception) -> None:
        super().__init__(f"{path} cannot be read ({error}); fix or delete it.")
        self.path = path
        self.error = error


# -- settings without the environment ------------------------------------------------


@functools.cache
def _plain_model(cls: type[BaseModel]) -> type[BaseModel]:
    """`cls` (a `Settings`) as a plain model: validating it never reads `COMPANION_*`."""
    fields: dict[str, Any] = {
        name: (field.annotation, field) for name, field in cls.model_fields.items()
    }
    return create_model("Plain" + cls.__name__, __config__=ConfigDict(extra="ignore"), **fields)


def validate_plain(data: dict[str, Any], cls: type[Settings] = Settings) -> Settings:
    """`cls` from `data` alone (no environment, no file); `ValidationError` if bad."""
    plain = _plain_model(cls).model_validate(data)
    values = {name: getattr(plain, name) for name in plain.model_fields_set}
    return cls.model_construct(**values)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, SecretStr) or isinstance(b, SecretStr):
        raw_a = a.get_secret_value() if isinstance(a, SecretStr) else a
        raw_b = b.get_secret_value() if isinstance(b, SecretStr) else b
        return bool(raw_a == raw_b)
    return bool(a == b)


def changes(
    original: BaseModel, edited: BaseModel, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(field path, new value) of every leaf that differs between two settings."""
    for name in type(edited).model_fields:
        old, new = getattr(original, name, None), getattr(edited, name)
        if isinstance(old, BaseModel) and isinstance(new, BaseModel) and type(old) is type(new):
            yield from changes(old, new, (*prefix, name))
        elif not _same(old, new):
            yield (*prefix, name), new


def keep_fields_set(original: BaseModel, edited: BaseModel) -> bool:
    """Mark in `edited` as set only what `original` had set plus what changed (some
    code asks whether a field was set explicitly, e.g. the persona's name). Returns
    whether anything in `edited` is set."""
    names = set(original.model_fields_set)
    for name in type(edited).model_fields:
        old, new = getattr(original, name, None), getattr(edited, name)
        if isinstance(old, BaseModel) and isinstance(new, BaseModel) and type(old) is type(new):
            if keep_fields_set(old, new):
                names.add(name)
        elif not _same(old, new):
            names.add(name)
    object.__setattr__(edited, "__pydantic_fields_set__", names)
    return bool(names)


def settings_to_save(original: Settings, edited: Settings, path: Path | None = None) -> Settings:
    """What the file should hold: what it holds now plus what differs between `original`
    (as loaded, environment and command line included) and `edited`. Values that only
    came from `COMPANION_*` variables or flags are left out. Raises `ValueError`
    (`ConfigFileUnreadable` when the file is broken)."""
    path = path or config_path()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigFileUnreadable(path, exc) from exc
    for keys, value in changes(original, edited):
        table = data
        for key in keys[:-1]:
            inner = table.get(key)
            if not isinstance(inner, dict):
                inner = {}
                table[key] = inner
            table = inner
        table[keys[-1]] = value
    try:
        return validate_plain(data, type(edited))
    except ValidationError as exc:
        raise ValueError(describe_validation(exc)) from exc


# -- the file -------------------------------------------------------------------------


def _file_values(value: Any, secret_name: str, secrets: bool) -> Any:
    """`value` as TOML data; with `secrets`, each key goes to the keyring under its
    dotted name and the file gets the reference."""
    if isinstance(value, SecretStr):
        raw = value.get_secret_value()
        if not raw or raw.startswith(KEYRING_PREFIX) or not secrets:
            return raw
        return store_secret(secret_name, raw)
    if isinstance(value, BaseModel):
        return {
            k: _file_values(getattr(value, k), _join(secret_name, k), secrets)
            for k in type(value).model_fields
        }
    if isinstance(value, dict):
        return {
            str(k): _file_values(v, _join(secret_name, str(k)), secrets) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_file_values(v, secret_name, secrets) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _merge(table: Any, values: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Write `values` into a tomlkit table, keeping the user's comments and order: a
    value equal to its default is written only if the file already had the key."""
    import tomlkit

    for key, value in values.items():
        default = defaults.get(key) if isinstance(defaults, dict) else None
        if isinstance(value, dict):
            if key in table and isinstance(table[key], dict):
                _merge(table[key], value, default if isinstance(default, dict) else {})
            elif value != default:
                sub = tomlkit.table()
                _merge(sub, value, default if isinstance(default, dict) else {})
                if len(sub):
                    table[key] = sub
        elif value is None:
            if key in table:
                del table[key]
        elif value != default or key in table:
            table[key] = value
    if isinstance(defaults, dict) and not defaults and isinstance(values, dict):
        for key in [k for k in table if k not in values]:  # a map entry the user removed
            del table[key]


_HEADER = re.compile(r"^\s*\[")  # a table's header line: [name], [a.b] or [[name]]


def tables_apart(text: str) -> str:
    """A blank line before each table (and the comments right above its header) that
    follows other lines, as people write TOML; tomlkit adds none for a new table.
    The values are the same afterwards, or the text is left as it was."""
    import tomlkit

    lines = text.splitlines(keepends=True)
    out: list[str] = []
    for line in lines:
        if _HEADER.match(line) and out:
            start = len(out)
            while start > 0 and out[start - 1].lstrip().startswith("#"):
                start -= 1  # the header's own comments stay with it
            if start > 0 and out[start - 1].strip():
                out.insert(start, "\n")
        out.append(line)
    spaced = "".join(out)
    try:
        same = tomlkit.parse(spaced).unwrap() == tomlkit.parse(text).unwrap()
    except Exception:
        same = False
    return spaced if same else text


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write `settings` to the config file (default `config_path()`), keeping the user's
    comments and layout. Secrets go to the system keyring when it works (the file
    holds `keyring:NAME`); only without a keyring are they written to the file."""
    import tomlkit

    path = path or config_path()
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    doc = tomlkit.parse(text)
    values = _file_values(settings, "", secrets=True)
    defaults = _file_values(Settings.model_construct(), "", secrets=False)
    _merge(doc, values, defaults)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_privately(path, tables_apart(tomlkit.dumps(doc)))
    return path


def write_privately(path: Path, text: str) -> None:
    """`path` replaced by `text` at once, readable by the user only (it may hold a key
    when there is no keyring): see `app.agent.durable.replace_whole`."""
    from app.agent.durable import replace_whole

    replace_whole(path, text)

"""What is wrong in a config file, in words a person can act on: keys the settings do
not have (a typo such as `modle`, a section such as `[chatt]`, a key in the wrong
section) with the file, the line and a did-you-mean; values out of range with the
range allowed; and where in the file a key is written."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

__all__ = [
    "field_at",
    "key_line",
    "range_words",
    "unknown_keys",
    "validation_problems",
]

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_BARE = r"[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'"
_KEY = re.compile(rf"^\s*((?:{_BARE})(?:\s*\.\s*(?:{_BARE}))*)\s*=")


def _parts(dotted: str) -> tuple[str, ...]:
    """`a."b.c".d` as ("a", "b.c", "d")."""
    return tuple(
        bare or quoted or single
        for bare, quoted, single in re.findall(r"([A-Za-z0-9_-]+)|\"([^\"]*)\"|'([^']*)'", dotted)
    )


def key_line(text: str, path: tuple[str, ...]) -> int | None:
    """The line (from 1) where `path` is written in TOML `text`: its own key, its table
    header, or the nearest line that writes a part of it (an inline table)."""
    table: tuple[str, ...] = ()
    best: tuple[int, int] | None = None  # (how much of the path the line writes, line)
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            written = table
        else:
            key = _KEY.match(line)
            if not key:
                continue
            written = table + _parts(key.group(1))
        common = 0
        for a, b in zip(written, path, strict=False):
            if a != b:
                break
            common += 1
        if common == len(path) and len(written) >= len(path):
            return number
        if common == len(written) and common and (best is None or common > best[0]):
            best = (common, number)
    return best[1] if best else None


def _plain(annotation: Any) -> Any:
    """`X` for `X | None`, `Optional[X]`, `Annotated[X, ...]`."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _plain(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _plain(args[0]) if len(args) == 1 else annotation
    return annotation


def _model(annotation: Any) -> type[BaseModel] | None:
    plain = _plain(annotation)
    return plain if isinstance(plain, type) and issubclass(plain, BaseModel) else None


def _models_of_map(annotation: Any) -> type[BaseModel] | None:
    """`M` for `dict[str, M]` (a map of named sections, such as tools)."""
    plain = _plain(annotation)
    if typing.get_origin(plain) is dict:
        args = typing.get_args(plain)
        return _model(args[1]) if len(args) == 2 else None
    return None


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, field in model.model_fields.items():
        inner = _model(field.annotation)
        if inner is not None:
            yield from _leaf_paths(inner, (*prefix, name))
        else:
            yield (*prefix, name)


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _suggestion(
    key: str, path: tuple[str, ...], model: type[BaseModel], root: type[BaseModel]
) -> str:
    """A did-you-mean for `key` (at `path`) among the keys of `model`, else among every
    setting of `root` (a key put in the wrong section)."""
    siblings = list(model.model_fields)
    close = difflib.get_close_matches(key, siblings, n=1, cutoff=0.6)
    if close:
        return _dotted((*path[:-1], close[0]))
    everywhere: dict[str, tuple[str, ...]] = {}
    for leaf in _leaf_paths(root):
        everywhere.setdefault(leaf[-1], leaf)  # the first section holding it (chat first)
    close = difflib.get_close_matches(key, list(everywhere), n=1, cutoff=0.75)
    return _dotted(everywhere[close[0]]) if close else ""


def unknown_keys(
    data: dict[str, Any], root: type[BaseModel]
) -> Iterator[tuple[tuple[str, ...], str, bool]]:
    """(path, did-you-mean or "", whether it is a section) of every key in `data` that
    `root` does not have, sections and maps of sections walked into."""

    def walk(
        values: dict[str, Any], model: type[BaseModel], prefix: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], str, bool]]:
        for key, value in values.items():
            path = (*prefix, key)
            field = model.model_fields.get(key)
            if field is None:
                yield path, _suggestion(key, path, model, root), isinstance(value, dict)
                continue
            inner = _model(field.annotation)
            if inner is not None and isinstance(value, dict):
                yield from walk(value, inner, path)
                continue
            each = _models_of_map(field.annotation)
            if each is not None and isinstance(value, dict):
                for name, item in value.items():
                    if isinstance(item, dict):
                        yield from walk(item, each, (*path, str(name)))

    yield from walk(data, root, ())


def field_at(root: type[BaseModel], loc: tuple[Any, ...]) -> FieldInfo | None:
    """The field at a validation error's `loc` (map keys such as a tool's name skipped)."""
    model: type[BaseModel] | None = root
    field: FieldInfo | None = None
    for part in loc:
        if model is None:
            return None
        if field is not None and _models_of_map(field.annotation) is model:
            field = None
            continue  # the name of an entry in a map of sections
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        model = _model(field.annotation) or _models_of_map(field.annotation)
    return field


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def range_words(field: FieldInfo) -> str:
    """The values `field` allows, as in "from 0 to 2" or "more than 0, at most 3,600"."""
    low = high = ""
    for item in field.metadata:
        if isinstance(item, annotated_types.Ge):
            low = f"at least {_number(item.ge)}"
        elif isinstance(item, annotated_types.Gt):
            low = f"more than {_number(item.gt)}"
        elif isinstance(item, annotated_types.Le):
            high = f"at most {_number(item.le)}"
        elif isinstance(item, annotated_types.Lt):
            high = f"less than {_number(item.lt)}"
    if low.startswith("at least") and high.startswith("at most"):
        return f"from {low.removeprefix('at least ')} to {high.removeprefix('at most ')}"
    return ", ".join(part for part in (low, high) if part)


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def validation_problems(
    exc: ValidationError, root: type[BaseModel]
) -> list[tuple[tuple[str, ...], str]]:
    """(key path, what is wrong) of each problem; a value out of range is told with the
    range allowed."""
    out: list[tuple[tuple[str, ...], str]] = []
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"])
        words = str(err["msg"])
        field = field_at(root, tuple(err["loc"]))
        if err["type"] in _RANGE_ERRORS and field is not None:
            given = err["input"]
            given = given if isinstance(given, str) else repr(given)
            words = f"{given} is out of range: it must be {range_words(field)}"
        out.append((loc, words))
    return out

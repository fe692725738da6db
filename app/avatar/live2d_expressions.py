"""How a Live2D model shows each expression tag: a small TOML table beside the model that
the user may edit, made on first load from the model's own expressions.

A model with expression files (`.exp3.json`) gets a tag per expression: the companion's
usual tags (`joy`, `sadness`, ...) take the model's expression whose name says the same
(`Smile`, `Sad`, ...), and the model's other expressions keep their own names as tags
(`f01`: rename it in the file). A model without expression files gets the usual tags
as parameter presets (mouth form, eye smile, brows, ...) made from the parameters it
has. The tags in the table are the ones the chat model is told about.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit

from app.agent.markup import is_tag_name
from app.avatar.live2d_files import Live2DFiles
from app.avatar.live2d_probe import Live2DFacts
from app.avatar.state import EXPRESSIONS

__all__ = [
    "TABLE_NAME",
    "ExpressionTable",
    "PresetValue",
    "generate_table",
    "load_table",
    "parse_table",
    "table_text",
]

TABLE_NAME = "companion-expressions.toml"
Blend = Literal["set", "add", "multiply"]
_BLEND: dict[str, Blend] = {"set": "set", "add": "add", "multiply": "multiply"}
BLENDS = tuple(_BLEND)

# Words in a model's expression names that say which usual tag they show.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "neutral": ("neutral", "normal", "default", "idle", "calm", "通常", "普通"),
    "joy": ("joy", "happy", "smile", "laugh", "glad", "fun", "笑", "喜"),
    "sadness": ("sad", "cry", "tear", "sorrow", "悲", "泣"),
    "anger": ("anger", "angry", "mad", "annoy", "怒"),
    "surprise": ("surprise", "shock", "astonish", "驚", "惊"),
    "fear": ("fear", "scare", "afraid", "fright", "怖"),
    "smirk": ("smirk", "smug", "grin", "wink", "得意"),
    "thinking": ("think", "ponder", "wonder", "confus", "考", "思"),
}

# The presets, per usual tag: (parameter ids to try, in naming order Cubism 3+ / Cubism 2,
# value, blend). The first id the model has is used; eye openness multiplies, so the
# model still blinks.
_EYE_OPEN = (("ParamEyeLOpen", "PARAM_EYE_L_OPEN"), ("ParamEyeROpen", "PARAM_EYE_R_OPEN"))
_EYE_SMILE = (("ParamEyeLSmile", "PARAM_EYE_L_SMILE"), ("ParamEyeRSmile", "PARAM_EYE_R_SMILE"))
_BROW_Y = (("ParamBrowLY", "PARAM_BROW_L_Y"), ("ParamBrowRY", "PARAM_BROW_R_Y"))
_BROW_ANGLE = (("ParamBrowLAngle", "PARAM_BROW_L_ANGLE"), ("ParamBrowRAngle", "PARAM_BROW_R_ANGLE"))
_BROW_FORM = (("ParamBrowLForm", "PARAM_BROW_L_FORM"), ("ParamBrowRForm", "PARAM_BROW_R_FORM"))
_MOUTH_FORM = ("ParamMouthForm", "PARAM_MOUTH_FORM")
_CHEEK = ("ParamCheek", "PARAM_TERE", "PARAM_CHEEK")


_Preset = list[tuple[tuple[str, ...], float, Blend]]


def _both(
    pair: tuple[tuple[str, str], tuple[str, str]], value: float, blend: Blend = "set"
) -> _Preset:
    return [(pair[0], value, blend), (pair[1], value, blend)]


_PRESETS: dict[str, _Preset] = {
    "joy": [
        (_MOUTH_FORM, 1.0, "set"),
        *_both(_EYE_SMILE, 0.8),
        *_both(_BROW_Y, 0.3),
        (_CHEEK, 0.6, "set"),
    ],
    "sadness": [
        (_MOUTH_FORM, -1.0, "set"),
        *_both(_BROW_Y, -0.3),
        *_both(_BROW_ANGLE, -0.8),
        *_both(_BROW_FORM, -0.6),
        *_both(_EYE_OPEN, 0.85, "multiply"),
    ],
    "anger": [
        (_MOUTH_FORM, -0.8, "set"),
        *_both(_BROW_Y, -0.5),
        *_both(_BROW_ANGLE, 0.8),
        *_both(_BROW_FORM, -1.0),
        *_both(_EYE_OPEN, 0.85, "multiply"),
    ],
    "surprise": [
        (_MOUTH_FORM, 0.0, "set"),
        *_both(_BROW_Y, 0.9),
        *_both(_EYE_OPEN, 1.25, "multiply"),
    ],
    "fear": [
        (_MOUTH_FORM, -0.6, "set"),
        *_both(_BROW_Y, 0.6),
        *_both(_BROW_ANGLE, -0.7),
        *_both(_EYE_OPEN, 1.15, "multiply"),
    ],
    "smirk": [
        (_MOUTH_FORM, 0.6, "set"),
        (_EYE_SMILE[0], 0.5, "set"),
        (_EYE_SMILE[1], 0.2, "set"),
        (_BROW_Y[0], 0.4, "set"),
        (_BROW_Y[1], -0.2, "set"),
    ],
    "thinking": [(_MOUTH_FORM, -0.3, "set"), (_BROW_Y[0], 0.5, "set"), (_BROW_Y[1], -0.1, "set")],
}


@dataclass(frozen=True, slots=True)
class PresetValue:
    """One parameter of a preset: `set` to the value, `add` it, or `multiply` by it."""

    parameter: str
    value: float
    blend: Blend = "set"


@dataclass(frozen=True, slots=True)
class ExpressionTable:
    """Tag -> the model's expression (`""`: the face at rest), or tag -> preset values."""

    expressions: dict[str, str] = field(default_factory=dict)
    presets: dict[str, tuple[PresetValue, ...]] = field(default_factory=dict)

    @property
    def tags(self) -> tuple[str, ...]:
        """Every tag, `neutral` first, then in the table's order."""
        seen = dict.fromkeys(("neutral", *self.expressions, *self.presets))
        return tuple(seen)

    def __contains__(self, tag: object) -> bool:
        return tag == "neutral" or tag in self.expressions or tag in self.presets


def _tag_for(name: str, taken: Iterable[str]) -> str:
    tag = name.strip().lower().replace(" ", "_")
    if not is_tag_name(tag):
        tag = re.sub(r"[^\w-]", "_", tag)
        tag = tag if is_tag_name(tag) else f"expression_{tag}".rstrip("_")
    base, n, used = tag, 2, set(taken)
    while tag in used:
        tag, n = f"{base}_{n}", n + 1
    return tag


def _usual_tag(name: str) -> str | None:
    lowered = name.lower()
    for tag, words in SYNONYMS.items():
        if any(word in lowered for word in words):
            return tag
    return None


def generate_table(files: Live2DFiles, facts: Live2DFacts) -> ExpressionTable:
    """The table a model gets on first load (see the module's docstring)."""
    names = list(files.expressions) or list(facts.expressions)
    if names:
        expressions: dict[str, str] = {}
        for name in names:  # the usual tags first: they read best to the chat model
            tag = _usual_tag(name)
            if tag is not None and tag not in expressions:
                expressions[tag] = name
        for name in names:
            if name not in expressions.values():
                expressions[_tag_for(name, [*expressions, *EXPRESSIONS])] = name
        expressions.setdefault("neutral", "")
        ordered = {"neutral": expressions.pop("neutral"), **expressions}
        return ExpressionTable(expressions=ordered)
    presets: dict[str, tuple[PresetValue, ...]] = {}
    for tag in EXPRESSIONS:
        values = []
        for candidates, value, blend in _PRESETS.get(tag, []):
            found = next((c for c in candidates if c in facts.parameters), None)
            if found is not None:
                values.append(PresetValue(found, value, blend))
        if values or tag == "neutral":
            presets[tag] = tuple(values)
    return ExpressionTable(presets=presets)


_HEADER = """\
How Companion shows each expression tag on the Live2D model "{name}".
The chat model is told these tags; it puts one before a sentence, like [joy].
  [expressions]   tag = "one of the model's own expressions" ("" is its face at rest)
  [presets.TAG]   parameter values: PARAM = 0.5, or PARAM = {{ value = 1.2, blend = "multiply" }}
                  (blend: set, add or multiply; values are in the parameter's own range)
Rename a tag, delete one, or add your own. Delete this file to make it again from the model.
"""


def table_text(table: ExpressionTable, model_name: str) -> str:
    """The table as the commented TOML file the user edits."""
    doc = tomlkit.document()
    for line in _HEADER.format(name=model_name).splitlines():
        doc.add(tomlkit.comment(line))
    if table.expressions:
        expressions = tomlkit.table()
        for tag, name in table.expressions.items():
            expressions.add(tag, name)
        doc.add("expressions", expressions)
    if table.presets:
        presets = tomlkit.table(is_super_table=True)
        for tag, values in table.presets.items():
            preset = tomlkit.table()
            for v in values:
                if v.blend == "set":
                    preset.add(v.parameter, v.value)
                else:
                    inline = tomlkit.inline_table()
                    inline.update({"value": v.value, "blend": v.blend})
                    preset.add(v.parameter, inline)
            presets.add(tag, preset)
        doc.add("presets", presets)
    return tomlkit.dumps(doc)


def parse_table(
    text: str, files: Live2DFiles, facts: Live2DFacts
) -> tuple[ExpressionTable, list[str]]:
    """The table in `text` and what in it cannot be used, in words (those entries are left
    out); raises `ValueError` when it is not TOML at all."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"it is not valid TOML ({exc})") from exc
    problems: list[str] = []
    known = set(files.expressions) | set(facts.expressions)
    expressions: dict[str, str] = {}
    for tag, name in _mapping(data.get("expressions"), "expressions", problems).items():
        if not is_tag_name(tag):
            problems.append(f"the tag {tag!r} cannot be written as [{tag}] (letters, digits, _)")
        elif not isinstance(name, str):
            problems.append(f"{tag} = {name!r} is not the name of an expression")
        elif name and name not in known:
            has = ", ".join(sorted(known)) or "none"
            problems.append(f"{tag} = {name!r}: the model has no such expression (it has {has})")
        else:
            expressions[tag] = name
    presets: dict[str, tuple[PresetValue, ...]] = {}
    for tag, values in _mapping(data.get("presets"), "presets", problems).items():
        if not is_tag_name(tag):
            problems.append(f"the tag {tag!r} cannot be written as [{tag}] (letters, digits, _)")
            continue
        presets[tag] = tuple(
            _preset(tag, _mapping(values, f"presets.{tag}", problems), facts, problems)
        )
    return ExpressionTable(expressions, presets), problems


def _mapping(value: Any, where: str, problems: list[str]) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"[{where}] is not a table")
        return {}
    return value


def _preset(
    tag: str, values: Mapping[str, Any], facts: Live2DFacts, problems: list[str]
) -> list[PresetValue]:
    out: list[PresetValue] = []
    for parameter, raw in values.items():
        value, blend = raw, "set"
        if isinstance(raw, Mapping):
            value, blend = raw.get("value"), raw.get("blend", "set")
        if parameter not in facts.parameters:
            problems.append(f"[presets.{tag}] {parameter}: the model has no such parameter")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            problems.append(f"[presets.{tag}] {parameter} = {raw!r} is not a number")
        elif blend not in BLENDS:
            problems.append(f"[presets.{tag}] {parameter}: blend is one of set, add, multiply")
        else:
            out.append(PresetValue(parameter, float(value), _BLEND[blend]))
    return out


def _writable(folder: Path) -> bool:
    """Whether we may add a file to `folder`: the system says so and the folder is not
    marked read-only (which the system ignores for root)."""
    try:
        return os.access(folder, os.W_OK) and bool(folder.stat().st_mode & 0o222)
    except OSError:
        return False


def load_table(
    files: Live2DFiles, facts: Live2DFacts, *, fallback_dir: Path | None = None
) -> tuple[ExpressionTable, Path | None, list[str]]:
    """The model's table, its file and what the user should be told about it.

    It is read from `companion-expressions.toml` beside the `.model3.json`, else from
    `fallback_dir` (for a model in a folder we may not write to); without either, it is
    made from the model and written beside it (or in `fallback_dir` when the model's folder
    is read-only). A file that cannot
    be read as TOML is never overwritten: the made table is used and the user told."""
    beside = files.folder / TABLE_NAME
    spare = fallback_dir / f"{files.name}-{TABLE_NAME}" if fallback_dir is not None else None
    for path in (beside, spare):
        if path is None or not path.is_file():
            continue
        try:
            table, problems = parse_table(path.read_text(encoding="utf-8"), files, facts)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return (
                generate_table(files, facts),
                path,
                [
                    f"{path} cannot be used ({exc}); the expressions are made from the model "
                    "instead until it is fixed or deleted."
                ],
            )
        return table, path, [f"{path}: {p}." for p in problems]
    table = generate_table(files, facts)
    text = table_text(table, files.name)
    for path in (beside if _writable(files.folder) else None, spare):
        if path is None:
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return table, path, []
        except OSError:
            continue  # a read-only model folder: the spare place
    return table, None, []

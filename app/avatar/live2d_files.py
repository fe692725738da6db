"""A Live2D model folder read and checked before anything renders it.

The Cubism core does not fail politely: a truncated `.moc3`, a missing texture or a
malformed JSON file can crash the whole process. So every file the `.model3.json` names is
checked here first, in Python (it is inside the model's folder and exists, its JSON
parses within a size and a depth, the moc has its magic, each texture is a PNG of at most
`MAX_TEXTURE_PIXELS`, told by its header before anything is decoded, that decodes), and a
folder that fails is refused in words naming the file and the problem: a model from
anywhere can neither read the user's other files nor take the memory. Cubism 3 and
later models (`.model3.json`) are read; Cubism 2 ones (`.model.json`) are refused with a
sentence saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MODEL_SUFFIX",
    "Live2DFiles",
    "Live2DModelError",
    "check_textures",
    "find_model_json",
    "read_files",
]

MODEL_SUFFIX = ".model3.json"
CUBISM2_SUFFIX = ".model.json"
MOC_MAGIC = b"MOC3"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SEARCH_DEPTH = 3  # a downloaded model often keeps its files in runtime/ or a named folder
SEARCH_LIMIT = 400  # folders looked into at most (the user may have picked a big one)
MAX_JSON_BYTES = 16 * 1024 * 1024  # a model's description, physics, motion files
MAX_TEXTURE_PIXELS = 8192 * 8192  # the largest texture the Cubism editor exports
MAX_TEXTURES_PIXELS = 4 * MAX_TEXTURE_PIXELS  # all of them (each is kept decoded)


class Live2DModelError(Exception):
    """The model cannot be used; the message names the file and what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Live2DFiles:
    """The files of a model folder, every one checked to exist and to parse."""

    model_json: Path
    moc: Path
    textures: tuple[Path, ...]
    expressions: dict[str, Path] = field(default_factory=dict)  # the model's names, in order
    motions: dict[str, int] = field(default_factory=dict)  # group -> how many motions
    lip_sync: tuple[str, ...] = ()  # parameter ids of the `LipSync` group
    eye_blink: tuple[str, ...] = ()  # parameter ids of the `EyeBlink` group

    @property
    def folder(self) -> Path:
        return self.model_json.parent

    @property
    def name(self) -> str:
        return self.model_json.name.removesuffix(MODEL_SUFFIX)


def _walk(folder: Path) -> Iterator[Path]:
    """Folders from `folder` down to `SEARCH_DEPTH`, shallowest first, at most
    `SEARCH_LIMIT` of them."""
    level, seen = [folder], 0
    for _ in range(SEARCH_DEPTH + 1):
        next_level: list[Path] = []
        for path in level:
            seen += 1
            if seen > SEARCH_LIMIT:
                return
            yield path
            try:
                next_level.extend(sorted(p for p in path.iterdir() if p.is_dir()))
            except OSError:
                continue
        level = next_level


def find_model_json(path: Path | str) -> Path:
    """The `.model3.json` of a model: `path` itself, or the one in the folder (or the
    folders inside it, shallowest first); raises `Live2DModelError`."""
    path = Path(path).expanduser()
    if path.is_file():
        if path.name.endswith(MODEL_SUFFIX):
            return path
        if path.name.endswith(CUBISM2_SUFFIX):
            raise _cubism2(path)
        raise Live2DModelError(f"{path} is not a Live2D model file (a {MODEL_SUFFIX} file).")
    if not path.is_dir():
        raise Live2DModelError(f"The Live2D model folder {path} does not exist.")
    older: Path | None = None
    for folder in _walk(path):
        try:
            names = sorted(p for p in folder.iterdir() if p.is_file())
        except OSError as exc:
            raise Live2DModelError(f"The folder {folder} cannot be read: {exc}") from exc
        found = [p for p in names if p.name.endswith(MODEL_SUFFIX)]
        if len(found) == 1:
            return found[0]
        if found:
            named = [p for p in found if p.name.removesuffix(MODEL_SUFFIX) == folder.name]
            if len(named) == 1:
                return named[0]
            raise Live2DModelError(
                f"{folder} holds several models ({', '.join(p.name for p in found)}): "
                f"choose one of the {MODEL_SUFFIX} files itself."
            )
        older = older or next((p for p in names if p.name.endswith(CUBISM2_SUFFIX)), None)
    if older is not None:
        raise _cubism2(older)
    raise Live2DModelError(
        f"There is no {MODEL_SUFFIX} file in {path} or the folders inside it: choose the "
        "folder of a Live2D model made with Cubism 3 or later."
    )


def _cubism2(path: Path) -> Live2DModelError:
    return Live2DModelError(
        f"{path.name} is a Cubism 2 model; Companion shows Live2D models made with Cubism 3 "
        f"or later (a {MODEL_SUFFIX} file). Cubism Editor 3 and later can convert it."
    )


def _json(path: Path, what: str) -> Any:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise Live2DModelError(
                f"The model's {what} {path.name} is larger than a Live2D file can be "
                f"({path.stat().st_size // (1024 * 1024)} MB)."
            )
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise Live2DModelError(
            f"The model's {what} {path.name} is missing from {path.parent}."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise Live2DModelError(f"The model's {what} {path} cannot be read: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Live2DModelError(
            f"The model's {what} {path.name} is not valid JSON (line {exc.lineno}: {exc.msg})."
        ) from exc
    except RecursionError:
        raise Live2DModelError(
            f"The model's {what} {path.name} is not a Live2D file (nested too deeply)."
        ) from None


def _named(folder: Path, value: Any, what: str, model_json: Path) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise Live2DModelError(f"{model_json.name} names no {what}.")
    path = (folder / value).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise Live2DModelError(
            f"{model_json.name} names the {what} {value}, which is outside the model's "
            "folder: a model may only use its own files."
        )
    if not path.is_file():
        raise Live2DModelError(
            f"{model_json.name} names the {what} {value}, which is missing from {folder}."
        )
    return path


def _check_moc(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise Live2DModelError(f"The model file {path} cannot be read: {exc}") from exc
    if head[:4] != MOC_MAGIC or len(head) < 8:
        raise Live2DModelError(f"{path.name} is not a Cubism model file (.moc3).")


def _check_png_header(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            if handle.read(8) != PNG_MAGIC:
                raise Live2DModelError(f"The texture {path.name} is not a PNG image.")
    except OSError as exc:
        raise Live2DModelError(f"The texture {path.name} cannot be read: {exc}") from exc


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (right after the signature)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(24)
    except OSError as exc:
        raise Live2DModelError(f"The texture {path.name} cannot be read: {exc}") from exc
    if len(head) < 24 or head[:8] != PNG_MAGIC or head[12:16] != b"IHDR":
        raise Live2DModelError(f"The texture {path.name} is not a PNG image.")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def check_textures(files: Live2DFiles) -> None:
    """Decode every texture (a truncated one fails here, not in the core); raises
    `Live2DModelError`. `read_files` does it unless told that it was done before."""
    from PIL import Image, UnidentifiedImageError

    total = 0
    for path in files.textures:
        width, height = _png_size(path)  # from its header: nothing decoded yet
        total += width * height
        if width * height > MAX_TEXTURE_PIXELS or total > MAX_TEXTURES_PIXELS:
            raise Live2DModelError(
                f"The texture {path.name} is {width}×{height}: larger than a Live2D model "
                "uses (at most 8192×8192, four of them in all)."
            )
        try:
            with Image.open(path) as image:
                image.load()
        except (OSError, UnidentifiedImageError, SyntaxError, Image.DecompressionBombError) as exc:
            raise Live2DModelError(
                f"The texture {path.name} cannot be read as an image: {exc}"
            ) from exc


def _references(data: Any, model_json: Path) -> dict[str, Any]:
    refs = data.get("FileReferences") if isinstance(data, dict) else None
    if not isinstance(refs, dict):
        raise Live2DModelError(
            f"{model_json.name} is not a Live2D model file: it has no FileReferences."
        )
    return refs


def _group_ids(data: Any, name: str) -> tuple[str, ...]:
    groups = data.get("Groups") if isinstance(data, dict) else None
    for group in groups if isinstance(groups, list) else ():
        if isinstance(group, dict) and str(group.get("Name", "")).lower() == name.lower():
            ids = group.get("Ids")
            return tuple(str(i) for i in ids if isinstance(i, str)) if isinstance(ids, list) else ()
    return ()


def read_files(path: Path | str, *, decode_textures: bool = True) -> Live2DFiles:
    """The model in `path` (its folder or its `.model3.json`), every file it names checked;
    raises `Live2DModelError` saying what is wrong. `decode_textures=False` leaves the
    slowest check, decoding the textures, to `check_textures` (the probe does it once)."""
    model_json = find_model_json(path)
    folder = model_json.parent
    data = _json(model_json, "description")
    refs = _references(data, model_json)
    moc: Path = _named(folder, refs.get("Moc"), "model file (.moc3)", model_json)
    _check_moc(moc)
    texture_names = refs.get("Textures")
    if not isinstance(texture_names, list) or not texture_names:
        raise Live2DModelError(f"{model_json.name} names no textures.")
    textures = tuple(_named(folder, t, "texture", model_json) for t in texture_names)
    for texture in textures:
        _check_png_header(texture)
    for key, what in (("Physics", "physics file"), ("Pose", "pose file")):
        if refs.get(key):
            _json(_named(folder, refs[key], what, model_json), what)
    expressions: dict[str, Path] = {}
    for entry in refs.get("Expressions") or []:
        name = entry.get("Name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise Live2DModelError(f"{model_json.name} has an expression without a Name.")
        file = _named(folder, entry.get("File"), f"expression {name}", model_json)
        _json(file, f"expression {name}")
        expressions[name] = file
    motions: dict[str, int] = {}
    groups = refs.get("Motions") or {}
    for group, entries in groups.items() if isinstance(groups, dict) else ():
        count = 0
        for entry in entries if isinstance(entries, list) else ():
            named = entry.get("File") if isinstance(entry, dict) else None
            _json(_named(folder, named, f"{group} motion", model_json), f"{group} motion")
            count += 1
        if count:
            motions[str(group)] = count
    files = Live2DFiles(
        model_json=model_json,
        moc=moc,
        textures=textures,
        expressions=expressions,
        motions=motions,
        lip_sync=_group_ids(data, "LipSync"),
        eye_blink=_group_ids(data, "EyeBlink"),
    )
    if decode_textures:
        check_textures(files)
    return files

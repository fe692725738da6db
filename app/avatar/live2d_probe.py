"""What the Cubism core itself reads in a model (its parameters with their ranges, its
expressions and motion groups), found out in a child process the first time.

The core crashes the process on a `.moc3` it cannot read (truncated, or from a newer
Cubism Editor than the core knows), and no check in Python can tell beforehand. So a
model is first loaded by a separate process (`companion avatar check --facts FILE`); if that
one dies, the user is told in words and the app goes on. What the child read is kept in
a small cache keyed by the files' contents, so a model that loaded once is not probed
again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.avatar.live2d_files import Live2DFiles, Live2DModelError, check_textures

__all__ = [
    "PROBE_TIMEOUT_S",
    "Live2DFacts",
    "Parameter",
    "facts_in_this_process",
    "facts_of",
    "probe_command",
    "read_facts",
]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 60.0
CACHE_VERSION = "1"  # bump when Live2DFacts changes shape


@dataclass(frozen=True, slots=True)
class Parameter:
    """One of the model's parameters and its range."""

    id: str
    minimum: float
    maximum: float
    default: float

    def clamp(self, value: float) -> float:
        return min(self.maximum, max(self.minimum, value))


@dataclass(frozen=True, slots=True)
class Live2DFacts:
    """The model as the Cubism core sees it."""

    parameters: dict[str, Parameter] = field(default_factory=dict)
    expressions: tuple[str, ...] = ()
    motions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "parameters": [asdict(p) for p in self.parameters.values()],
            "expressions": list(self.expressions),
            "motions": dict(self.motions),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Live2DFacts:
        parameters = {
            str(p["id"]): Parameter(
                str(p["id"]), float(p["minimum"]), float(p["maximum"]), float(p["default"])
            )
            for p in data["parameters"]
        }
        motions = {str(k): int(v) for k, v in data["motions"].items()}
        return cls(parameters, tuple(str(e) for e in data["expressions"]), motions)


def facts_of(model: Any) -> Live2DFacts:
    """The facts of a loaded `live2d.Model`."""
    parameters = {
        pid: Parameter(
            pid,
            float(model.GetParamMinById(pid)),
            float(model.GetParamMaxById(pid)),
            float(model.GetParamDefaultById(pid)),
        )
        for pid in model.GetParamIds()
    }
    groups = {str(k): int(v) for k, v in dict(model.GetMotionGroups()).items()}
    return Live2DFacts(parameters, tuple(model.GetExpressions()), groups)


def facts_in_this_process(model_json: Path) -> Live2DFacts:
    """Load the model here, without a renderer, and read its facts. Only for the child
    (`companion avatar check`): a model the core cannot read ends this process."""
    from app.avatar.live2d_library import live2d_library

    model = live2d_library().Model()
    model.LoadModelJson(str(model_json), create_renderer=False)
    return facts_of(model)


def probe_command(model_json: Path, answer_file: Path) -> tuple[list[str], dict[str, str]]:
    """The command (and environment) that runs `companion avatar check --facts FILE` on the
    model: the frozen app's own executable, or this Python with this copy of the app."""
    arguments = ["avatar", "check", "--facts", str(answer_file), str(model_json)]
    env = dict(os.environ)
    if getattr(sys, "frozen", False):
        return [sys.executable, *arguments], env
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds `app/`
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return [sys.executable, "-m", "app", *arguments], env


def _fingerprint(files: Live2DFiles) -> str:
    """The model's identity: its description and moc by content, its textures by size
    and time (a texture changed since it was checked is checked again)."""
    digest = hashlib.sha256(CACHE_VERSION.encode())
    for path in (files.model_json, files.moc):
        digest.update(path.read_bytes())
    for texture in files.textures:
        stat = texture.stat()
        digest.update(f"{texture.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def read_facts(files: Live2DFiles, *, cache_dir: Path | None = None) -> Live2DFacts:
    """The model's facts from the cache, or (its textures decoded first) from a child
    process that loads it; raises `Live2DModelError` (a texture or the moc cannot be
    read) or `Live2DUnavailable`."""
    from app.avatar.live2d_library import Live2DUnavailable

    try:
        key = _fingerprint(files)
    except OSError as exc:
        raise Live2DModelError(f"The model file {files.moc} cannot be read: {exc}") from exc
    cached = cache_dir / f"{key}.json" if cache_dir is not None else None
    if cached is not None and cached.is_file():
        try:
            return Live2DFacts.from_json(json.loads(cached.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.info("ignoring the unreadable Live2D cache %s: %s", cached, exc)
    check_textures(files)  # not checked before (the cache would know): decode them now
    answer = _probe(files)
    if "unavailable" in answer:
        raise Live2DUnavailable(str(answer["unavailable"]))
    facts = Live2DFacts.from_json(answer["facts"])
    if not facts.parameters:
        raise Live2DModelError(
            f"The Live2D core read no parameters in {files.moc.name}: the file may be damaged."
        )
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(".tmp")
            tmp.write_text(json.dumps(facts.to_json()), encoding="utf-8")
            tmp.replace(cached)
        except OSError as exc:  # only the next start is slower
            log.info("could not keep the Live2D model's facts in %s: %s", cached, exc)
    return facts


def _probe(files: Live2DFiles) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="companion-live2d-") as folder:
        answer_file = Path(folder) / "facts.json"  # a file: a windowed app has no stdout
        command, env = probe_command(files.model_json, answer_file)
        try:
            done = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Live2DModelError(
                f"The Live2D model {files.name} could not be checked: {exc}"
            ) from exc
        try:
            answer: dict[str, Any] = json.loads(answer_file.read_text(encoding="utf-8"))
            return answer
        except (OSError, ValueError):
            pass  # the child died before it answered
    log.info("the Live2D check of %s ended with %s: %s", files.moc, done.returncode, done.stderr)
    how = f" (it stopped with code {done.returncode})" if done.returncode else ""
    raise Live2DModelError(
        f"The Live2D core could not read {files.moc.name}{how}: the file may be damaged, "
        "or made by a newer Cubism Editor than this app's Cubism 5 core reads."
    )

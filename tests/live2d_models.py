"""The Live2D test model and variants of it made in a test's own folder.

The model is Live2D's sample "Shizuku" in `../shared/fixtures/live2d/` (beside the repo,
as `../shared/fixtures/wire/` is): for tests only, under Live2D's Free Material License,
never copied into the app, its assets or its installers. Tests that change or add files
work on a copy in their temporary folder; without the shared folder they are skipped.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "live2d" / "shizuku"
TABLE = "companion-expressions.toml"  # written by the app beside a model, never shipped
needs_model = pytest.mark.skipif(
    not (FIXTURE / "runtime" / "shizuku.model3.json").is_file(),
    reason=f"the shared Live2D test model is not at {FIXTURE}",
)


def copy_model(folder: Path) -> Path:
    """A writable copy of the test model in `folder`; returns the copy's top folder."""
    target = folder / "shizuku"
    # The model as Live2D ships it: an expression table the app once wrote beside the
    # shared copy (a run when it was writable) is not part of it.
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns(TABLE))
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def runtime(model: Path) -> Path:
    return model / "runtime"


def description(model: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((runtime(model) / "shizuku.model3.json").read_text())
    return data


def write_description(model: Path, data: dict[str, Any]) -> None:
    (runtime(model) / "shizuku.model3.json").write_text(json.dumps(data, indent=1))


# What each expression file does, Cubism's exp3 format (Overwrite / Add / Multiply).
EXPRESSION_FILES: dict[str, list[dict[str, Any]]] = {
    "Smile": [{"Id": "PARAM_MOUTH_FORM", "Value": 1.0, "Blend": "Overwrite"}],
    "Sad": [{"Id": "PARAM_MOUTH_FORM", "Value": -1.0, "Blend": "Overwrite"}],
    "f03": [{"Id": "PARAM_BROW_L_Y", "Value": 1.0, "Blend": "Overwrite"}],
}


def add_expressions(model: Path, names: dict[str, list[dict[str, Any]]] = EXPRESSION_FILES) -> None:
    """Give the model expression files (`.exp3.json`) and name them in its description."""
    folder = runtime(model) / "expressions"
    folder.mkdir(exist_ok=True)
    entries = []
    for name, parameters in names.items():
        (folder / f"{name}.exp3.json").write_text(
            json.dumps(
                {
                    "Type": "Live2D Expression",
                    "FadeInTime": 0.2,
                    "FadeOutTime": 0.2,
                    "Parameters": parameters,
                },
                indent=1,
            )
        )
        entries.append({"Name": name, "File": f"expressions/{name}.exp3.json"})
    data = description(model)
    data["FileReferences"]["Expressions"] = entries
    write_description(model, data)

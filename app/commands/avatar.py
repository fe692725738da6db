"""`companion avatar ...`: the avatar without the app.

`avatar snapshot [--model FOLDER] [--expression NAME] [--mouth 0..1] --out FILE.png`
renders one frame offscreen (the sprite avatar without `--model`): for users checking a
model, for pack authors, for the README and for tests.
`avatar check FOLDER` says whether a Live2D model can be shown, and with which expression
tags; with `--facts FILE` it is the child the app runs to read a model safely (see
`app.avatar.live2d_probe`), writing what the Cubism core read into FILE.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from app.commands.common import EXIT_USAGE, fail

SNAPSHOT_SIZE = (380, 560)  # the avatar's place in the main window, about


def run_check(model: Path, *, facts_to: Path | None = None) -> int:
    from app.avatar.live2d_files import Live2DModelError, read_files
    from app.avatar.live2d_library import Live2DUnavailable

    if facts_to is not None:
        from app.avatar.live2d_probe import facts_in_this_process

        try:
            answer: dict[str, Any] = {
                "facts": facts_in_this_process(read_files(model).model_json).to_json()
            }
        except Live2DUnavailable as exc:
            answer = {"unavailable": str(exc)}
        except Live2DModelError as exc:
            return fail(str(exc))
        facts_to.write_text(json.dumps(answer), encoding="utf-8")
        return 0
    from app.avatar.live2d_model import load_live2d_model
    from app.config import data_dir

    try:
        loaded = load_live2d_model(model, data_folder=data_dir())
    except (Live2DModelError, Live2DUnavailable) as exc:
        return fail(str(exc))
    groups = ", ".join(f"{g} ({n})" for g, n in loaded.facts.motions.items()) or "none"
    own = ", ".join(loaded.files.expressions) or "none (parameter presets are used)"
    print(f"{loaded.name}: {loaded.model_json}")
    lips = ", ".join(loaded.lip_sync) or "none"
    print(f"  parameters: {len(loaded.facts.parameters)}; lip sync: {lips}")
    print(f"  motions: {groups}")
    print(f"  the model's expressions: {own}")
    print(f"  expression tags: {', '.join(f'[{t}]' for t in loaded.names)}")
    print(f"  the table you can edit: {loaded.table_path or 'none (no folder could be written)'}")
    for problem in loaded.problems:
        print(f"  ignored: {problem}")
    return 0


def run_snapshot(
    settings: Any,
    *,
    model: Path | None,
    expression: str | None,
    mouth: float,
    out: Path,
    size: tuple[int, int] = SNAPSHOT_SIZE,
) -> int:
    if not 0.0 <= mouth <= 1.0:
        return fail(f"--mouth is how open the mouth is, from 0 to 1 (not {mouth:g})", EXIT_USAGE)
    if not out.parent.exists():
        return fail(f"{out.parent}: no such folder for --out", EXIT_USAGE)
    if sys.platform.startswith("linux"):
        # Never a window; on X11 the offscreen platform still has OpenGL (GLX).
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.ui.live2d_snapshot import SnapshotError, snapshot

    try:
        shown = snapshot(settings, model=model, expression=expression, mouth=mouth, size=size)
    except SnapshotError as exc:
        return fail(str(exc), exc.code)
    if not shown.image.save(str(out), "PNG"):  # type: ignore[call-overload]  # the stub wants bytes
        return fail(f"could not write {out}")
    print(f"{out}: {shown.description}")
    return 0

"""Where the bundled files of `assets/` are found: beside the source, or inside a
frozen (PyInstaller) bundle."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["asset_path", "frozen_path"]


def asset_path(relative: str) -> Path:
    """A file of `assets/`, from source or from a frozen bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        candidate = Path(bundle) / "assets" / relative
        if candidate.exists():
            return candidate
    return Path(__file__).resolve().parent.parent / "assets" / relative


def frozen_path(relative: str) -> Path | None:
    """A file or folder a frozen (PyInstaller) bundle carries at `relative` (the built-in
    speech models, packaging/build.py), or None when not frozen or not there."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        candidate = Path(bundle) / relative
        if candidate.exists():
            return candidate
    return None

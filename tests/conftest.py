"""Shared fixtures: isolated config/data folders and real speech made by espeak-ng."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ESPEAK = shutil.which("espeak-ng")


@pytest.fixture(autouse=True)
def memory_learning_off(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Learning asks the chat model after each turn; tests that count or script the chat
    requests are not about that, so it is off outside the memory's own tests (test_memory_*
    and tests marked `memory_learning`), which keep the user's default (on)."""
    module = request.node.module.__name__.rsplit(".", 1)[-1] if request.node.module else ""
    if not module.startswith("test_memory") and not request.node.get_closest_marker(
        "memory_learning"
    ):
        monkeypatch.setenv("COMPANION_MEMORY__LEARN", "false")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own config file location and data folder, and no real keys."""
    monkeypatch.setenv("COMPANION_CONFIG", str(tmp_path / "config" / "config.toml"))
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path / "data"))
    for var in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    yield tmp_path


def speak_to_wav(text: str, path: Path, *, rate: int = 16_000, channels: int = 1) -> Path:
    """Real speech from espeak-ng, converted by sox to the given rate and channel count."""
    if ESPEAK is None:
        pytest.fail("espeak-ng is not installed: run scripts/setup.sh")
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(raw), text], check=True)
    subprocess.run(
        ["sox", str(raw), "-r", str(rate), "-c", str(channels), "-b", "16", str(path)], check=True
    )
    raw.unlink()
    return path


@pytest.fixture(scope="session")
def question_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("speech")
    return speak_to_wav("What is the weather like today?", folder / "question.wav")

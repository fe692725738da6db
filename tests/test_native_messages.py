"""ALSA's and JACK's own messages go to the log, not to the terminal (issue 15, item 10):
each library is made to complain for real (an unknown ALSA device; a JACK client with
no JACK server), in a fresh process that runs the app's command line, as `companion`
does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COMPLAIN = textwrap.dedent(
    """
    import ctypes, logging, sys
    from app.audio.native_messages import routed_to_log

    records = []
    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    logger = logging.getLogger("app.audio.native")
    logger.addHandler(Keep())
    logger.setLevel(logging.DEBUG)
    logger.propagate = False

    def complain():
        alsa = ctypes.CDLL("libasound.so.2")
        pcm = ctypes.c_void_p()
        alsa.snd_pcm_open(ctypes.byref(pcm), b"no_such_device_here", 0, 0)
        jack = ctypes.CDLL("libjack.so.0")
        jack.jack_client_open.restype = ctypes.c_void_p
        status = ctypes.c_int()
        jack.jack_client_open(b"probe", 1, ctypes.byref(status))  # 1: JackNoStartServer

    if sys.argv[1] == "routed":
        with routed_to_log():
            complain()
    else:
        complain()
    print("LOGGED " + " | ".join(records), flush=True)
    """
)


def run(mode: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PULSE_SERVER": "unix:/nowhere"}
    return subprocess.run(
        [sys.executable, "-c", COMPLAIN, mode],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_libraries_complain_on_stderr_by_themselves(tmp_path: Path) -> None:
    done = run("plain", tmp_path)
    assert "ALSA lib" in done.stderr and "no_such_device_here" in done.stderr, done.stderr
    assert "server" in done.stderr.lower(), done.stderr  # JACK's "cannot connect to server"


def test_routed_their_messages_reach_the_log_and_not_stderr(tmp_path: Path) -> None:
    done = run("routed", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr
    logged = done.stdout.split("LOGGED ", 1)[1]
    assert "ALSA pcm.c:" in logged and "Unknown PCM" in logged, logged
    assert "JACK" in logged and "server" in logged.lower(), logged

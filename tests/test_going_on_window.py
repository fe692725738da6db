"""A user who pauses and goes on, with the window app as `make run` starts it (issue 36):
a newcomer's desktop (Xvfb, a fresh profile, the first-run guide done), the embedded chat
model, real Whisper, and a private PulseAudio with two null sinks: `mic`, whose monitor is
the default microphone, and `test_sink`, where the app speaks. The user's two sentences,
with a pause between them, are played into both at once (a combine sink), so that the
user's words and the companion's voice lie in one recording on one clock.

The two sentences are one turn, in the window's history; the reply never sounds over
the second sentence."""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from app.audio.wav import read_wav_16k
from tests.conftest import speak_to_wav
from tests.desktop import Desktop, DesktopUnavailable
from tests.pulse import MONITOR, SINK, MonitorTap

pytestmark = pytest.mark.timeout(900)

RATE = 16_000
MODEL_LOAD_S = 300  # the embedded models on a busy 2-core machine: a bound, not a budget
FIRST = "Hello, my name is Anna."
SECOND = "I work as a nurse at the city hospital."
PAUSE_S = 0.8  # within the 0.3-0.9 s people leave between sentences
FRAME = RATE // 100  # 10 ms


def _frames_rms(samples: np.ndarray) -> np.ndarray:
    n = samples.size // FRAME
    frames = samples[: n * FRAME].astype(np.float32).reshape(n, FRAME)
    return np.sqrt((frames**2).mean(axis=1))


def _speech(text: str, path: Path) -> np.ndarray:
    samples = np.frombuffer(read_wav_16k(speak_to_wav(text, path)), "<i2")
    loud = np.flatnonzero(np.abs(samples) > 300)
    return samples[loud[0] : loud[-1] + 1]


def _write_wav(samples: np.ndarray, path: Path) -> Path:
    import wave

    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(samples.astype("<i2").tobytes())
    return path


def _settled(desk: Desktop) -> bool:
    """Listening, with nothing heard, thought or said for the last 3 s."""
    status = re.compile(r"^(\S+ \S+) INFO app\.ui\.status_line: status line: (.*)$", re.M)
    lines = status.findall(desk.log())
    if not lines or not lines[-1][1].startswith("Listening"):
        return False
    when = datetime.strptime(lines[-1][0], "%Y-%m-%d %H:%M:%S,%f")
    return (datetime.now() - when).total_seconds() >= 3.0


def _user_messages(history: str) -> list[str]:
    found = []
    for line in history.splitlines():
        try:
            msg = json.loads(line).get("msg", {})
        except (json.JSONDecodeError, AttributeError):
            continue
        if msg.get("role") == "user":
            found.append(str(msg.get("content")))
    return found


def test_two_sentences_with_a_pause_are_one_turn_and_never_talked_over(tmp_path: Path) -> None:
    first = _speech(FIRST, tmp_path / "first.wav")
    second = _speech(SECOND, tmp_path / "second.wav")
    pause = np.zeros(int(PAUSE_S * RATE), dtype="<i2")
    said = np.concatenate([first, pause, second, np.zeros(RATE // 2, dtype="<i2")])
    wav = _write_wav(said, tmp_path / "said.wav")
    try:
        desk = Desktop(tmp_path / "desk").__enter__()
    except DesktopUnavailable as exc:
        pytest.fail(str(exc), False)
    try:
        desk.seed_embedded_model()
        config = desk.home / ".config" / "companion"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text("[ui]\nfirst_run_done = true\n", encoding="utf-8")
        desk.pulse.pactl("load-module", "module-null-sink", "sink_name=mic", f"rate={RATE}")
        desk.pulse.pactl("set-default-source", "mic.monitor")
        both = ("load-module", "module-combine-sink", "sink_name=both", f"slaves=mic,{SINK}")
        desk.pulse.pactl(*both)
        desk.launch()
        desk.wait_for_window("Companion", 120)
        desk.wait_for_log(r"status line: (Listening|Ready)", MODEL_LOAD_S)
        # A user who has talked with it a moment already: a typed greeting first, whose
        # spoken reply warms the echo canceller up (a session's first 1.5 s of voice).
        desk.focus("Companion")
        mark = len(desk.log())
        desk.type("Hi! Could you tell me a little about yourself?")
        desk.keys("Return")
        desk.wait_for_log(r"turn \d+ timings \{'", MODEL_LOAD_S, after=mark)
        desk.wait_for("the app to be listening", lambda: _settled(desk), MODEL_LOAD_S)
        typed = len(_user_messages(desk.history_text()))
        mark = len(desk.log())
        with MonitorTap(desk.pulse, tmp_path / "room.raw", device=MONITOR):
            time.sleep(0.5)
            subprocess.run(
                ["paplay", "--device=both", str(wav)], env=desk.pulse.env(), check=True, timeout=60
            )
            desk.wait_for_log(r"turn \d+ timings \{'", MODEL_LOAD_S, after=mark)
            desk.wait_for("the app to be listening", lambda: _settled(desk), MODEL_LOAD_S)
        log = desk.log()[mark:]
        users = _user_messages(desk.history_text())[typed:]
    finally:
        desk.__exit__(None, None, None)

    # One turn, with both sentences in it.
    assert len(users) == 1, (users, log[-3000:])
    heard = users[0].lower()
    assert "hello" in heard and "city hospital" in heard, (users, log[-3000:])
    # The reply never sounded over the second sentence, past the moment it takes to
    # hear that the user goes on (300 ms): where the user's own sound is quiet (the gaps
    # between words, the moment after), so is the room.
    recorded = np.frombuffer((tmp_path / "room.raw").read_bytes(), "<i2")
    rms = _frames_rms(recorded)
    start = int(np.flatnonzero(rms > 300)[0])  # the user's first loud frame
    ours = _frames_rms(said)
    begins = int(np.flatnonzero(ours > 300)[0])
    after_first = (first.size + pause.size + int(0.3 * RATE)) // FRAME
    quiet = [
        i
        for i in range(after_first, ours.size)
        if ours[max(0, i - 3) : i + 4].max() < 50  # the user is quiet here and around
    ]
    assert quiet, "the utterance has no quiet frames to look at"
    loud = [i for i in quiet if start - begins + i < rms.size and rms[start - begins + i] > 300]
    assert not loud, (
        f"the companion spoke over the user at {[round(i / 100, 2) for i in loud]} s "
        f"into the utterance\n{log[-3000:]}"
    )
    # And it did answer, after the user was done.
    assert rms[start - begins + ours.size :].max() > 300, log[-3000:]

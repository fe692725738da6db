"""It never talks to itself (issue 28, item 1): the window app on a newcomer's desktop
(Xvfb, a fresh profile, the first-run guide done, the microphone always on, echo
handling on its default), the embedded chat model, and a PulseAudio server whose
default microphone hears the app's own speaker:

- `wire`: the null sink's monitor itself, the speaker heard sample for sample and at
  once (no delay, no room), the case that made the companion answer itself;
- `room`: the same sound 120 ms later, reverberant and 6 dB down (`RoomRelay`), as a
  laptop hears itself across a room.

One typed message gets one reply, spoken to its end; the microphone hears the reply
(checked on the microphone's own device), and nothing of it comes back as a turn of
the user's, in the saved conversation or in the long-term memory. (On a busy machine
the canceller lets some of the voice through now and then; those words are known as
its own, by the barge-in or by the turn: tests/test_own_voice_turns.py.)
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from pathlib import Path

import pytest

from tests.desktop import Desktop, DesktopUnavailable
from tests.pulse import MONITOR, MonitorTap
from tests.room_relay import ROOM, RoomRelay

pytestmark = pytest.mark.timeout(900)

MESSAGE = "Hi! My name is Sam and my cat is called Miso. How are you today?"
MODEL_LOAD_S = 300  # the embedded models on a busy 2-core machine: a bound, not a budget
AFTER_REPLY_S = 12.0  # its own voice, had it been taken for the user's, is a turn by then


def _user_messages(history: str) -> list[str]:
    return re.findall(r'"role": "user", "content": "((?:[^"\\]|\\.)*)"', history)


def _idle(desk: Desktop) -> bool:
    statuses = re.findall(r"status line: ([^\n]*)", desk.log())
    return bool(statuses) and statuses[-1].startswith(("Listening", "Ready"))


def _memory_rows(desk: Desktop) -> list[dict[str, object]]:
    """Every memory and every turn queued for memory, as dicts of their columns."""
    path = desk.home / ".data" / "companion" / "memory.sqlite3"
    if not path.exists():
        return []
    rows: list[dict[str, object]] = []
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.row_factory = sqlite3.Row
        for table in ("memories", "pending_turns"):
            with contextlib.suppress(sqlite3.OperationalError):
                rows += [{"table": table, **dict(r)} for r in db.execute(f"SELECT * FROM {table}")]
    return rows


@pytest.mark.parametrize("path", ["wire", "room"])
def test_a_typed_message_gets_one_reply_and_its_own_voice_is_not_a_turn(
    tmp_path: Path, path: str
) -> None:
    try:
        desk = Desktop(tmp_path / "desk").__enter__()
    except DesktopUnavailable as exc:
        pytest.fail(str(exc), False)
    relay = RoomRelay(desk.pulse, delay_ms=120, attenuation_db=-6) if path == "room" else None
    try:
        desk.seed_embedded_model()
        config = desk.home / ".config" / "companion"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text("[ui]\nfirst_run_done = true\n", encoding="utf-8")
        if relay is not None:
            relay.__enter__()
        desk.launch()
        desk.wait_for_window("Companion", 120)
        desk.wait_for_log(r"status line: (Listening|Ready)", MODEL_LOAD_S)
        desk.focus("Companion")
        mark = len(desk.log())
        microphone = f"{ROOM}.monitor" if relay is not None else MONITOR
        with MonitorTap(desk.pulse, tmp_path / "microphone.raw", device=microphone) as mic:
            desk.type(MESSAGE)
            desk.keys("Return")
            desk.wait_for_log(r"turn \d+ timings", MODEL_LOAD_S, after=mark)
            desk.wait_for_log(r"status line: Listening", 60, after=mark)
            time.sleep(AFTER_REPLY_S)
            heard_s = mic.loud_s()
            # Whatever it is hearing or transcribing now ends as a turn or as nothing.
            desk.wait_for("the app to be listening again", lambda: _idle(desk), MODEL_LOAD_S)
        log = desk.log()[mark:]
        history = desk.history_text()

        assert heard_s > 0.5, f"the microphone did not hear the reply ({heard_s:.2f} s loud)"
        assert _user_messages(history) == [MESSAGE], history[-3000:]
        replies = re.findall(r'"role": "assistant"', history)
        assert len(replies) == 1, history[-3000:]
        assert len(re.findall(r"turn \d+ timings", log)) == 1, log[-3000:]
        # Spoken to the end: had its own voice been taken for the user's, the reply
        # would be cut and marked so (a pause while a barge-in's words are checked is
        # not a cut: the reply speaks on).
        assert "interrupted" not in history, history[-3000:]
        for row in _memory_rows(desk):  # nothing stored or queued but the typed turn's
            assert row.get("turn", 0) == 0, row
            if row["table"] == "pending_turns":
                assert row["said"] == MESSAGE, row
    finally:
        if relay is not None:
            relay.__exit__(None, None, None)
        desk.__exit__(None, None, None)

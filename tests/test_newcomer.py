"""A newcomer's first start, end to end (issue 15): a fresh profile, a real X server
(Xvfb, no window manager) and a PulseAudio null sink, the app launched as `make run`
launches it, the first-run guide walked through with real X input, the microphone
tried by speaking into the room, one typed message, the pet and back, and a restart
with a hosted model that cannot be reached.

It checks what the user got: the guide's test phrase never became a turn, the reply
was heard on the FIRST start, the window went back to its face after the reply and
after the error, the error was told once, and nothing of ALSA or JACK reached the
terminal. The screenshots of each step are kept with the test's files; the same walk
renders docs/screenshots/first-run/ (`python scripts/first_run_screenshots.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.desktop import Desktop, DesktopUnavailable
from tests.newcomer_walk import MESSAGE, FirstStart

pytestmark = pytest.mark.timeout(900)


def test_a_newcomers_first_start(tmp_path: Path) -> None:
    try:
        desk = Desktop(tmp_path / "desk").__enter__()
    except DesktopUnavailable as exc:
        pytest.fail(str(exc), False)
    try:
        desk.seed_embedded_model()
        walk = FirstStart(desk, tmp_path / "shots", tmp_path)
        walk.start()
        checks = walk.desk.log()
        assert "Speaker: default" in checks and "Microphone: default" in checks

        walk.test_the_microphone()
        walk.play_the_sample()
        walk.next_pages()
        # The session found the speaker on this first start, with the guide's checks.
        log = desk.log()
        assert "sound output: " in log and "No sound output device" not in log, log[-3000:]

        walk.type_a_message()
        assert walk.heard_reply_s > 0.5, "the reply was not heard on the first start"
        history = desk.history_text()
        assert MESSAGE in history
        for word in ("microphone test", "Testing one two three", "one two three"):
            assert word.lower() not in history.lower(), f"the guide's test became a turn: {word}"
        desk.wait_for_log(r"avatar face: neutral", 60, after=walk._mark)

        walk.pet_and_back()

        walk.restart_with_a_dead_model()
        errors = walk.error_notices_since_mark()
        assert len(errors) == 1 and "Could not reach" in errors[0], errors
        statuses = walk.statuses_since_mark()
        assert "Error" in statuses and not any("Could not reach" in s for s in statuses)
        assert walk.faces_since_mark()[-1] == "neutral", walk.faces_since_mark()
        output = desk.output()
        assert "ALSA lib" not in output and "jack server" not in output.lower(), output[-2000:]
        assert "Traceback" not in output, output[-3000:]
    finally:
        desk.__exit__(None, None, None)

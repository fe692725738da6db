"""A newcomer's first start, step by step, on a `Desktop` (tests/desktop.py): the guide
walked through with the keyboard, the microphone tried by speaking into the room, one
typed message, the pet and back, a restart with a model that cannot be reached. Each
step leaves a screenshot named after it in `shots`.

`tests/test_newcomer.py` walks it and checks what the user got;
`scripts/first_run_screenshots.py` walks it to render `docs/screenshots/first-run/`.
To add a step (a settings page, a guide page), add a method that drives the window
with `self.desk`, waits for what the window says in its log, and calls `self.shot`.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import speak_to_wav
from tests.desktop import Desktop
from tests.pulse import MonitorTap

GUIDE = "Welcome to Companion"
MAIN = "Companion"
TEST_PHRASE = "This is my microphone test. Testing one two three."
MESSAGE = "Hello! What is your name? Tell me a little about yourself."
DEAD_MODEL = ("--model", "openai-compatible/offline", "--base-url", "http://127.0.0.1:9/v1")
MODEL_LOAD_S = 240  # the embedded models on a busy 2-core machine: a bound, not a budget
TRANSLATIONS = Path(__file__).resolve().parents[1] / "assets" / "translations"


def window_words(language: str) -> dict[str, str]:
    """The window's English words (its status line, the guide's title) in `language`,
    from its .ts file: the window logs what it shows in the language it shows."""
    if not language:
        return {}
    words: dict[str, str] = {}
    tree = ET.parse(TRANSLATIONS / f"companion_{language}.ts")
    for context in tree.iter("context"):
        if context.findtext("name") not in ("StatusLine", "FirstRunGuide"):
            continue
        for message in context.iter("message"):
            source, translation = message.findtext("source"), message.findtext("translation")
            if source and translation:
                words.setdefault(source, translation)
    return words


class FirstStart:
    """The walk; `shots` get names like `01-checks.png` in `out`."""

    def __init__(self, desk: Desktop, out: Path, sounds: Path, *, language: str = "") -> None:
        self.desk = desk
        self.words = window_words(language)
        self.guide = self.word(GUIDE)
        self.out = out
        self.sounds = sounds
        self.shots: list[Path] = []
        self.heard_reply_s = 0.0
        self._mark = 0

    def shot(self, name: str) -> Path:
        time.sleep(0.4)  # let the window paint what it was just told
        path = self.desk.shot(self.out / f"{len(self.shots) + 1:02d}-{name}.png")
        self.shots.append(path)
        return path

    def word(self, english: str) -> str:
        """What the window shows for `english` in its language."""
        return self.words.get(english, english)

    def said(self, *english: str) -> str:
        """A pattern for any of the `english` words as the window shows them."""
        return "(?:" + "|".join(re.escape(self.word(w)) for w in english) + ")"

    def mark(self) -> None:
        """From now on, `logged` looks only at what the app logs after this."""
        self._mark = len(self.desk.log())

    def logged(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        return self.desk.wait_for_log(pattern, timeout, after=self._mark)

    def current_status(self) -> str:
        """The status line the app shows now (its latest)."""
        lines = re.findall(r"status line: ([^\n]*)", self.desk.log())
        return lines[-1] if lines else ""

    def status_becomes(self, pattern: str, timeout: float = 60) -> str:
        """Wait until the status line the app shows now (its latest, whenever it was
        set: a model may be ready before the guide closes) matches `pattern`."""
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            lines = re.findall(r"status line: ([^\n]*)", self.desk.log())
            shown = lines[-1] if lines else ""
            if re.match(pattern, shown):
                return shown
            time.sleep(0.2)
        raise AssertionError(f"the status line shows {shown!r}, not {pattern!r}, after {timeout} s")

    # -- the guide ---------------------------------------------------------------------

    def start(self) -> None:
        self.desk.launch()
        self.desk.wait_for_window(self.guide)
        self.logged(r"first-run checks: ")
        self.shot("checks")

    def test_the_microphone(self) -> None:
        """Next has the keyboard; back from it are the system voice's sample, the natural
        voice's sample, the voice choice (one stop for the group), then the microphone's
        button: Space starts the 3-second recording; the user says the test phrase and
        hears it back."""
        phrase = speak_to_wav(TEST_PHRASE, self.sounds / "test-phrase.wav")
        self.desk.focus(self.guide)
        self.mark()
        self.desk.keys("shift+Tab", "shift+Tab", "shift+Tab", "shift+Tab", "space")
        self.logged(r"micCheck started")
        self.desk.say(phrase)
        self.shot("microphone-test")
        self.logged(r"micCheck (passed|failed): ")

    def play_the_sample(self) -> None:
        """The natural voice's sample (the microphone's button, off while it recorded,
        left the keyboard on the voice choice)."""
        self.mark()
        self.desk.keys("Tab", "space")
        self.logged(r"voiceCheck started")
        self.logged(r"voiceCheck (passed|failed): ")
        self.shot("speaker-test")

    def next_pages(self) -> None:
        """Next (the Back button is off on the first page), the listening page (the
        keyboard is on its first way, "Always on": Space chooses it, Return goes on),
        the screenshot page, the model page (the embedded model is chosen), then Start
        talking."""
        # Next, the guide's bottom-right button, clicked as a user would (the keyboard's
        # place after the voice samples depends on which one played last).
        self.desk.click(self.desk.focus(self.guide), -52, -26)
        self.shot("listening-page")
        self.desk.keys("space", "Return")
        self.shot("screenshots-page")
        self.desk.keys("space")
        self.shot("model-page")
        self.mark()
        self.desk.keys("space")
        self.desk.gone(self.guide)
        self.status_becomes(self.said("Listening", "Ready"), MODEL_LOAD_S)
        self.shot("guide-done")

    # -- talking ---------------------------------------------------------------------------

    def type_a_message(self) -> None:
        self.desk.focus(MAIN)
        self.mark()
        with MonitorTap(self.desk.pulse, self.sounds / "reply.raw") as tap:
            self.desk.type(MESSAGE)
            self.desk.keys("Return")
            self.logged(r"status line: " + self.said("Thinking"), 30)
            self.logged(r"status line: " + self.said("Speaking", "Replying"), MODEL_LOAD_S)
            self.desk.wait_for("the reply to be heard", lambda: tap.loud_s() > 0.6, 90)
            self.shot("reply")
            speaking = self.current_status().startswith(self.word("Speaking"))
        self.heard_reply_s = tap.loud_s()
        self.desk.keys("Escape")  # enough: stop it (what was heard is kept)
        if speaking:  # a short reply may be over already: then Esc has nothing to stop
            ready = self.said("Listening", "Ready")
            self.logged(rf"status line: {ready} — {self.said('interrupted')}", 30)
        self.shot("reply-stopped")

    def faces_since_mark(self) -> list[str]:
        return re.findall(r"avatar face: (\S+)", self.desk.log()[self._mark :])

    # -- the pet ---------------------------------------------------------------------------

    def _pet(self) -> str | None:
        for window in self.desk.windows(MAIN):
            if self.desk.geometry(window)[2] < 600:  # the pet is small; the main window is not
                return window
        return None

    def _main(self) -> str | None:
        for window in self.desk.windows(MAIN):
            if self.desk.geometry(window)[2] >= 600:
                return window
        return None

    def pet_and_back(self) -> None:
        """Ctrl+P to the pet, Ctrl+P back; the pet again, a double-click back."""
        self.desk.focus(MAIN)
        self.desk.keys("ctrl+p")
        self.desk.wait_for("the pet", lambda: self._pet() is not None and self._main() is None)
        self.shot("pet")
        pet = self._pet()
        assert pet is not None
        self.desk.xdotool("windowfocus", "--sync", pet)
        self.desk.keys("ctrl+p")
        self.desk.wait_for("the main window back by Ctrl+P", lambda: self._main() is not None)
        window = self._main()
        assert window is not None
        self.desk.xdotool("windowfocus", "--sync", window)
        self.desk.keys("ctrl+p")
        self.desk.wait_for("the pet again", lambda: self._pet() is not None)
        pet = self._pet()
        assert pet is not None
        _, _, width, height = self.desk.geometry(pet)
        self.desk.double_click(pet, width // 2, height * 2 // 3)
        self.desk.wait_for(
            "the main window back by a double-click", lambda: self._main() is not None
        )

    # -- the error path --------------------------------------------------------------------

    def restart_with_a_dead_model(self) -> None:
        """Quit, start again with a hosted model nobody serves, type a message."""
        self.desk.quit_app()
        self.mark()
        self.desk.launch(*DEAD_MODEL)
        self.desk.wait_for_window(MAIN)
        self.status_becomes(self.said("Listening", "Ready"), MODEL_LOAD_S)
        self.desk.focus(MAIN)
        self.mark()
        self.desk.type("Are you there?")
        self.desk.keys("Return")
        self.logged(r"notice \(error\): ", 60)
        self.logged(r"status line: " + self.said("Error"), 30)
        time.sleep(1.5)  # anything else the window would show, it shows by now
        self.shot("error")

    def error_notices_since_mark(self) -> list[str]:
        return re.findall(r"notice \(error\): (.*)", self.desk.log()[self._mark :])

    def statuses_since_mark(self) -> list[str]:
        return re.findall(r"status line: (.*)", self.desk.log()[self._mark :])


__all__ = ["DEAD_MODEL", "MESSAGE", "TEST_PHRASE", "FirstStart"]

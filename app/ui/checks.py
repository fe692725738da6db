"""The "Test" buttons of the settings dialog and the first-run guide, over the Qt-free
checks of `app.checks`: each panel runs its check as an asyncio task on the running
(qasync) loop, never on the UI thread itself, and shows the outcome in the user's
language (`shown` translates the checks' `Words`)."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, TypeVar

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.audio.capture import AudioSource
from app.audio.playback import AudioSink, PlaybackReport
from app.checks import (
    SAMPLE,
    SYSTEM_CHECKS,
    CheckFailed,
    CheckResult,
    MicTestResult,
    Said,
    Words,
    ask_model,
    in_words,
    record_and_play_back,
    speak_sample,
)
from app.checks import check_system as _check_system
from app.config import Settings

log = logging.getLogger(__name__)
_Owner = TypeVar("_Owner")


def _tr(text: str) -> str:
    return QCoreApplication.translate("Checks", text)


def shown(said: Said) -> str:
    """What a check said, in the user's language."""
    if isinstance(said, Words):
        return said.shown(lambda text: QCoreApplication.translate(Words.CONTEXT, text))
    return said


def sample_sentence() -> str:
    return shown(SAMPLE)


def check_system(settings: Settings) -> list[CheckResult]:
    """Every system check, said in the user's language (blocking: run it off the UI thread)."""
    return _check_system(settings, SYSTEM_CHECKS, show=shown)


# -- the Test buttons (shared by the settings dialog and the first-run guide) ---------------

SettingsGetter = Callable[[], Settings | None]


def weak_getter(owner: _Owner, method: Callable[[_Owner], Settings | None]) -> SettingsGetter:
    """`method(owner)` without keeping `owner` alive: a dialog that referred to itself
    through its panels would be freed by the cyclic garbage collector, which may run
    on any thread, and a Qt widget must only be deleted on the UI thread."""
    ref = weakref.ref(owner)

    def get() -> Settings | None:
        target = ref()
        return None if target is None else method(target)

    return get


class CheckPanel(QWidget):
    """A "Test" button and its result in words; the work runs as an asyncio task on the
    running (qasync) loop. `settings()` gives the settings to test, or None when they
    are not valid (the caller has shown why)."""

    BUTTON: ClassVar[str] = str(QT_TRANSLATE_NOOP("Checks", "Test"))
    TIP: ClassVar[str] = ""
    NAME: ClassVar[str] = "check"
    METER: ClassVar[bool] = False
    # A test that records or plays sound: while it runs, the session takes no turns
    # (through `pause_turns`), or its recording and play-back would become one.
    SOUND_TEST: ClassVar[bool] = False

    def __init__(self, settings: SettingsGetter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(self.NAME)
        self._settings = settings
        self.pause_turns: Callable[[bool], None] | None = None
        self._had_focus = False
        self.task: asyncio.Task[None] | None = None
        self.ok: bool | None = None  # the last run's outcome
        self.button = QPushButton(_tr(self.BUTTON))
        self.button.setObjectName(self.NAME + "Button")
        if self.TIP:
            self.button.setToolTip(_tr(self.TIP))
        self.result = QLabel()
        self.result.setObjectName(self.NAME + "Result")
        self.result.setWordWrap(True)
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.addWidget(self.button)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(self.row)
        column.addWidget(self.result)
        self.button.clicked.connect(self.run)
        if self.METER is False:
            self.row.addStretch(1)

    def run(self) -> asyncio.Task[None] | None:
        """Start the check; None when it cannot start (the result label says why)."""
        if self.task is not None and not self.task.done():
            return self.task
        settings = self._settings()
        if settings is None:
            self.result.setText(_tr("Fix the settings marked in red first."))
            return None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.result.setText(_tr("This test needs the app running."))
            return None
        # A disabled button loses the keyboard; a keyboard user gets it back after.
        self._had_focus = self.button.hasFocus()
        self.button.setEnabled(False)
        self.result.setText(self.starting_text())
        log.info("%s started", self.NAME)
        self.task = loop.create_task(self._guarded(self.work(settings)), name=self.NAME)
        return self.task

    def _pause(self, paused: bool) -> None:
        if self.SOUND_TEST and self.pause_turns is not None:
            try:
                self.pause_turns(paused)
            except Exception:  # the test still runs; the log says why turns were not paused
                log.exception("pausing the session's turns failed")

    async def _guarded(self, work: Coroutine[Any, Any, str]) -> None:
        self._pause(True)
        try:
            text = await work
        except CheckFailed as exc:
            self.ok = False
            text = self.failed_text(shown(exc.words))
        except Exception as exc:  # a crash in a check is still shown in words
            log.exception("%s failed", self.NAME)
            self.ok = False
            text = self.failed_text(in_words(exc))
        else:
            self.ok = True
        finally:
            self.button.setEnabled(True)
            if self._had_focus:
                self.button.setFocus()
            self._pause(False)
        log.info("%s %s: %s", self.NAME, "passed" if self.ok else "failed", text)
        self.result.setText(text)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def starting_text(self) -> str:
        return _tr("Testing…")

    def failed_text(self, error: str) -> str:
        return error

    async def work(self, settings: Settings) -> str:
        raise NotImplementedError


class ModelCheck(CheckPanel):
    """One short request to the chat model."""

    BUTTON = str(QT_TRANSLATE_NOOP("Checks", "Test the model"))
    TIP = str(QT_TRANSLATE_NOOP("Checks", "Sends one short message to the model."))
    NAME = "modelCheck"

    def starting_text(self) -> str:
        return _tr("Asking the model…")

    def failed_text(self, error: str) -> str:
        return _tr("It did not answer: {error}").format(error=error)

    async def work(self, settings: Settings) -> str:
        answer = await ask_model(settings)
        return _tr("It answered: “{answer}”").format(answer=answer)


class MicCheck(CheckPanel):
    """A level meter and a 3-second record-and-play-back."""

    BUTTON = str(QT_TRANSLATE_NOOP("Checks", "Test the microphone"))
    TIP = str(QT_TRANSLATE_NOOP("Checks", "Records 3 seconds, then plays them back to you."))
    NAME = "micCheck"
    METER = True
    SOUND_TEST = True

    def __init__(self, settings: SettingsGetter, parent: QWidget | None = None) -> None:
        super().__init__(settings, parent)
        self.meter = QProgressBar()
        self.meter.setObjectName("micLevel")
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.meter.setMaximumHeight(12)
        self.row.addWidget(self.meter, 1)
        self.levels: list[float] = []
        self.last: MicTestResult | None = None
        # Tests may replace the microphone and the speaker.
        self.source_factory: Callable[[Settings], AudioSource] | None = None
        self.sink_factory: Callable[[Settings], AudioSink] | None = None

    def show_level(self, level: float) -> None:
        self.levels.append(level)
        self.meter.setValue(round(max(0.0, min(1.0, level)) * 100))

    def starting_text(self) -> str:
        return _tr("Recording for 3 seconds: say something…")

    async def work(self, settings: Settings) -> str:
        def playing() -> None:
            self.result.setText(_tr("Playing it back…"))

        self.levels.clear()
        try:
            result = await record_and_play_back(
                settings,
                source=self.source_factory(settings) if self.source_factory else None,
                sink=self.sink_factory(settings) if self.sink_factory else None,
                on_level=self.show_level,
                on_playing=playing,
            )
        finally:
            self.meter.setValue(0)
        self.last = result
        if not result.heard_sound:
            raise CheckFailed(
                _tr(
                    "The microphone heard only silence. Is it muted, or is another one "
                    "the system default?"
                )
            )
        return _tr("Done: you should have heard yourself.")


class VoiceCheck(CheckPanel):
    """A sample sentence in the configured voice."""

    BUTTON = str(QT_TRANSLATE_NOOP("Checks", "Speak a sample"))
    TIP = str(QT_TRANSLATE_NOOP("Checks", "Says a sentence with the voice chosen here."))
    NAME = "voiceCheck"
    SOUND_TEST = True

    def __init__(self, settings: SettingsGetter, parent: QWidget | None = None) -> None:
        super().__init__(settings, parent)
        self.sink_factory: Callable[[Settings], AudioSink] | None = None
        self.last: PlaybackReport | None = None

    def starting_text(self) -> str:
        return _tr("Speaking…")

    async def work(self, settings: Settings) -> str:
        report = await speak_sample(
            settings,
            text=sample_sentence(),
            sink=self.sink_factory(settings) if self.sink_factory else None,
        )
        self.last = report
        return _tr("Done: {seconds:.1f} s of speech.").format(seconds=report.total_s)


def pause_turns_during_tests(dialog: QWidget, pause: Callable[[bool], None]) -> None:
    """Every sound test in `dialog` pauses the session's turns while it runs."""
    for panel in dialog.findChildren(CheckPanel):
        panel.pause_turns = pause


__all__ = [
    "CheckPanel",
    "MicCheck",
    "ModelCheck",
    "SettingsGetter",
    "VoiceCheck",
    "check_system",
    "pause_turns_during_tests",
    "sample_sentence",
    "shown",
    "weak_getter",
]

"""What the settings dialog's "Test" buttons and the first-run guide check.

Everything here is async or blocking-in-a-thread: the UI runs it as a task on the
qasync loop, never on the UI thread itself. Every failure is a `CheckFailed` whose
message can be shown as is (no secret ever goes into one).

* `run_system_checks`: is there a microphone, a speaker, are the embedded models
  installed (one check at a time, each in a worker thread, reporting progress).
* `ask_model`: one short request to the configured chat model.
* `record_and_play_back`: a few seconds from the microphone, with levels for a
  meter, played back through the configured output device.
* `speak_sample`: a sample sentence in the configured voice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.audio.capture import AudioSource, MicrophoneSource, MicrophoneUnavailable
from app.audio.playback import (
    AudioSink,
    PlaybackError,
    PlaybackReport,
    SoundDeviceSink,
    chunk_level,
)
from app.audio.wav import SAMPLE_RATE
from app.config import Settings
from app.tts.engine import SynthesizedAudio, TTSEngine

log = logging.getLogger(__name__)
_Owner = TypeVar("_Owner")

MODEL_PROMPT = "Say hello in five words or fewer."
MIC_TEST_S = 3.0
SOUND_LEVEL = 0.05  # a chunk level (0..1) above this is more than room noise


def _tr(text: str) -> str:
    return QCoreApplication.translate("Checks", text)


def sample_sentence() -> str:
    return _tr("Hello! This is how I sound when I talk to you.")


class CheckFailed(Exception):
    """A check did not pass; the message says why, in words."""


def _words(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


# -- the system checks ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One thing the guide looked for: what, whether it is there, and in words."""

    name: str
    ok: bool
    detail: str


def check_microphone(settings: Settings) -> str:
    try:
        return MicrophoneSource.check_available(settings.audio.input_device)
    except MicrophoneUnavailable as exc:
        raise CheckFailed(str(exc)) from exc


def check_speaker(settings: Settings) -> str:
    device = settings.audio.output_device
    try:
        SoundDeviceSink.check_available(device)
        import sounddevice as sd

        return str(sd.query_devices(device, kind="output")["name"])
    except PlaybackError as exc:
        raise CheckFailed(str(exc)) from exc
    except Exception as exc:
        raise CheckFailed(_words(exc)) from exc


def _size(path: Any) -> str:
    try:
        return f"{path.name} ({path.stat().st_size / 1e6:.0f} MB)"
    except OSError:
        return str(path.name)


def check_chat_model(settings: Settings) -> str:
    path = settings.chat.local_model_path
    if path is not None:
        if not path.is_file():
            raise CheckFailed(_tr("The chat model file {path} is missing.").format(path=path))
        return _size(path)
    try:
        from app.llm.wire.local import default_model_path

        return _size(default_model_path())
    except Exception as exc:
        raise CheckFailed(_words(exc)) from exc


def check_vad_model(settings: Settings) -> str:
    try:
        from app.audio.vad import silero_model_path

        return _size(silero_model_path())
    except Exception as exc:
        raise CheckFailed(_words(exc)) from exc


def check_speech_model(settings: Settings) -> str:
    speech = settings.speech
    if speech.adapter != "whisper_local":
        return _tr("a hosted service ({adapter})").format(adapter=speech.adapter)
    if speech.model_path is not None:
        if not speech.model_path.exists():
            raise CheckFailed(
                _tr("The speech model {path} is missing.").format(path=speech.model_path)
            )
        return speech.model_path.name
    try:
        from app.speech.adapters.whisper_local import bundled_model_dir

        folder = bundled_model_dir()
    except Exception as exc:
        raise CheckFailed(_words(exc)) from exc
    return f"{speech.model or 'tiny.en'} ({folder.name})"


SystemCheck = tuple[str, Callable[[Settings], str]]


def system_checks() -> list[SystemCheck]:
    """The checks of the first run, in order, with their names in the user's language."""
    return [
        (_tr("Microphone"), check_microphone),
        (_tr("Speaker"), check_speaker),
        (_tr("Embedded chat model"), check_chat_model),
        (_tr("Voice detection model"), check_vad_model),
        (_tr("Speech recognition model"), check_speech_model),
    ]


def _run_one(name: str, check: Callable[[Settings], str], settings: Settings) -> CheckResult:
    try:
        return CheckResult(name, True, check(settings))
    except Exception as exc:  # a check that breaks is a failed check, in words
        return CheckResult(name, False, _words(exc))


def check_system(settings: Settings) -> list[CheckResult]:
    """Every system check (blocking: run it off the UI thread)."""
    return [_run_one(name, check, settings) for name, check in system_checks()]


ProgressCallback = Callable[[int, int, CheckResult], None]


async def run_system_checks(
    settings: Settings,
    on_result: ProgressCallback | None = None,
    *,
    checks: list[SystemCheck] | None = None,
) -> list[CheckResult]:
    """The system checks one by one in a worker thread; `on_result(done, total, result)`
    is called on the loop's thread after each."""
    todo = system_checks() if checks is None else checks
    results: list[CheckResult] = []
    for name, check in todo:
        result = await asyncio.to_thread(_run_one, name, check, settings)
        results.append(result)
        if on_result is not None:
            on_result(len(results), len(todo), result)
    return results


# -- the chat model ---------------------------------------------------------------------


async def ask_model(settings: Settings, *, prompt: str = MODEL_PROMPT, provider: Any = None) -> str:
    """One short request to the configured chat model; its answer, or `CheckFailed`."""
    from app.llm import LLMRequest, Msg

    if provider is None:
        from app.session import build_provider

        try:
            provider = build_provider(settings)
        except Exception as exc:
            raise CheckFailed(_words(exc)) from exc
    chat = settings.chat
    request = LLMRequest(
        model=chat.model,
        messages=[Msg.user(prompt)],
        max_tokens=32,
        temperature=chat.temperature,
        timeout=chat.timeout_s,
    )
    try:
        await provider.load()
        response = await provider.complete(request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise CheckFailed(_words(exc)) from exc
    finally:
        with contextlib.suppress(Exception):
            await provider.aclose()
    text = " ".join(response.text.split())
    if not text:
        raise CheckFailed(_tr("The model answered, but with no text."))
    return text


# -- the microphone -----------------------------------------------------------------------

LevelCallback = Callable[[float], None]


@dataclass(frozen=True, slots=True)
class MicTestResult:
    """What the microphone test recorded and how its playback went."""

    pcm: bytes
    peak_level: float
    playback: PlaybackReport

    @property
    def recorded_s(self) -> float:
        return len(self.pcm) / 2 / SAMPLE_RATE

    @property
    def heard_sound(self) -> bool:
        return self.peak_level >= SOUND_LEVEL


async def record(
    source: AudioSource, seconds: float, on_level: LevelCallback | None = None
) -> tuple[bytes, float]:
    """Up to `seconds` of 16 kHz PCM from `source` and its peak level (0..1)."""
    need = int(seconds * SAMPLE_RATE) * 2
    buffer = bytearray()
    peak = 0.0
    try:
        async with contextlib.aclosing(source.chunks()) as chunks:  # type: ignore[type-var]
            async for chunk in chunks:
                part = chunk[: need - len(buffer)]
                buffer += part
                level = chunk_level(np.frombuffer(part, dtype="<i2"))
                peak = max(peak, level)
                if on_level is not None:
                    on_level(level)
                if len(buffer) >= need:
                    break
    except MicrophoneUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    finally:
        await source.aclose()
        if on_level is not None:
            on_level(0.0)
    return bytes(buffer), peak


async def record_and_play_back(
    settings: Settings,
    *,
    seconds: float = MIC_TEST_S,
    source: AudioSource | None = None,
    sink: AudioSink | None = None,
    on_level: LevelCallback | None = None,
    on_playing: Callable[[], None] | None = None,
) -> MicTestResult:
    """Record `seconds` from the configured microphone (levels to `on_level` for a
    meter), then play them back through the configured output device."""
    audio = settings.audio
    mic = source if source is not None else MicrophoneSource(audio.input_device)
    pcm, peak = await record(mic, seconds, on_level)
    if not pcm:
        raise CheckFailed(_tr("The microphone sent no sound at all."))
    if on_playing is not None:
        on_playing()
    out = sink if sink is not None else SoundDeviceSink(audio.output_device, audio.volume)
    try:
        report = await out.play(SynthesizedAudio(pcm, SAMPLE_RATE), on_level=on_level)
    except PlaybackError as exc:
        raise CheckFailed(str(exc)) from exc
    finally:
        await out.aclose()
    return MicTestResult(pcm, peak, report)


# -- the voice ---------------------------------------------------------------------------


async def speak_sample(
    settings: Settings,
    *,
    text: str | None = None,
    engine: TTSEngine | None = None,
    sink: AudioSink | None = None,
    on_level: LevelCallback | None = None,
) -> PlaybackReport:
    """Say a sample sentence with the configured voice through the configured output."""
    from app.tts import TTSError

    if engine is None:
        from app.session import build_tts

        try:
            engine = build_tts(settings)
        except Exception as exc:
            raise CheckFailed(_words(exc)) from exc
    audio_settings = settings.audio
    out = (
        sink
        if sink is not None
        else SoundDeviceSink(audio_settings.output_device, audio_settings.volume)
    )
    try:
        try:
            audio = await engine.synthesize(text or sample_sentence())
        except TTSError as exc:
            raise CheckFailed(str(exc)) from exc
        if not audio.pcm:
            raise CheckFailed(_tr("The voice made no sound."))
        try:
            return await out.play(audio, on_level=on_level)
        except PlaybackError as exc:
            raise CheckFailed(str(exc)) from exc
    finally:
        with contextlib.suppress(Exception):
            await engine.aclose()
        with contextlib.suppress(Exception):
            await out.aclose()


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

    def __init__(self, settings: SettingsGetter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(self.NAME)
        self._settings = settings
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
        self.button.setEnabled(False)
        self.result.setText(self.starting_text())
        self.task = loop.create_task(self._guarded(self.work(settings)), name=self.NAME)
        return self.task

    async def _guarded(self, work: Coroutine[Any, Any, str]) -> None:
        try:
            text = await work
        except CheckFailed as exc:
            self.ok = False
            text = self.failed_text(str(exc))
        except Exception as exc:  # a crash in a check is still shown in words
            log.exception("%s failed", self.NAME)
            self.ok = False
            text = self.failed_text(_words(exc))
        else:
            self.ok = True
        finally:
            self.button.setEnabled(True)
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

    def __init__(self, settings: SettingsGetter, parent: QWidget | None = None) -> None:
        super().__init__(settings, parent)
        self.sink_factory: Callable[[Settings], AudioSink] | None = None
        self.last: PlaybackReport | None = None

    def starting_text(self) -> str:
        return _tr("Speaking…")

    async def work(self, settings: Settings) -> str:
        report = await speak_sample(
            settings, sink=self.sink_factory(settings) if self.sink_factory else None
        )
        self.last = report
        return _tr("Done: {seconds:.1f} s of speech.").format(seconds=report.total_s)


__all__ = [
    "MIC_TEST_S",
    "CheckFailed",
    "CheckPanel",
    "CheckResult",
    "MicCheck",
    "MicTestResult",
    "ModelCheck",
    "VoiceCheck",
    "ask_model",
    "check_system",
    "record",
    "record_and_play_back",
    "run_system_checks",
    "sample_sentence",
    "speak_sample",
    "system_checks",
    "weak_getter",
]

"""`companion --self-test`: what a user's first minute needs, checked without a human.

Each check is named, timed and, when it fails, says its problem in words. A check
can also pass with a warning (no audio device on a build machine is not a failure).
The report is JSON; the exit status is 1 when any check failed.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.assets import asset_path
from app.checks.installation import (
    check_config_dir,
    check_data_dir,
    check_live2d,
    check_mss,
    check_portaudio,
)
from app.checks.outcome import CheckFailed, CheckResult, Said, Warn, run_check
from app.checks.trials import ask, synthesize

__all__ = ["CHECKS", "CLIP", "CheckResult", "Report", "Warn", "main", "run_checks"]

PROMPT = "Say hello in one short sentence."
CLIP = "selftest/hello.wav"


@dataclass
class Report:
    ok: bool
    checks: list[CheckResult] = field(default_factory=list)
    frozen: bool = False
    python: str = ""
    platform: str = ""
    version: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_qt() -> str:
    # The self-test's one Qt import: whether Qt loads and shows a window at all,
    # before anything of app.ui is involved.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtCore import QTimer, qVersion
        from PySide6.QtWidgets import QApplication, QWidget
    except ImportError as exc:
        raise CheckFailed(f"the Qt libraries (PySide6) could not be loaded: {exc}") from exc
    app = QApplication.instance() or QApplication(["companion-selftest"])
    widget = QWidget()
    widget.resize(64, 64)
    widget.show()
    seen: list[bool] = []

    def look() -> None:  # app.quit() closes the windows: look while the loop runs
        handle = widget.windowHandle()
        seen.append(widget.isVisible() and handle is not None and handle.isExposed())
        app.quit()

    QTimer.singleShot(50, look)
    app.exec()
    widget.close()
    if not (seen and seen[0]):
        raise CheckFailed("Qt started but a window could not be shown")
    return f"Qt {qVersion()} on the {QApplication.platformName()} platform"


def check_embedded_model_answers() -> str:
    from app.llm import LLMRequest, Msg
    from app.llm.routing import parse_model_route
    from app.llm.wire.local import LocalModelClient, default_model_path
    from app.llm.wire.local_files import DEFAULT_EMBEDDED

    path = default_model_path()
    route = parse_model_route(f"local/{DEFAULT_EMBEDDED}")
    client = LocalModelClient(route, model_path=path)
    request = LLMRequest(model=route.model, messages=[Msg.user(PROMPT)], max_tokens=16)
    text = asyncio.run(ask(client, request)).strip()
    if not text:
        raise CheckFailed(f"the embedded chat model ({path.name}) gave an empty answer")
    return f"{path.name} answered: {text[:60]!r}"


def check_speech_model_transcribes() -> str:
    from app.audio.wav import read_wav_16k
    from app.speech import SpeechConfig
    from app.speech.adapters.whisper_local import WhisperLocalAdapter, bundled_model_dir

    clip = asset_path(CLIP)
    if not clip.is_file():
        raise CheckFailed(f"the self-test clip {clip} is missing from the installation")
    model_dir = bundled_model_dir()
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True, adapter="whisper_local"))
    text = whisper.transcribe_sync(read_wav_16k(clip)).strip()
    if "hello" not in text.lower():
        raise CheckFailed(
            f"the speech model ({model_dir.name}) heard {text!r} instead of 'hello ...'"
        )
    return f"heard {text!r}"


def check_turn_model_decides() -> str:
    from app.audio.turn_model import SmartTurn, TurnModelMissing
    from app.audio.wav import read_wav_16k

    try:
        model = SmartTurn()
    except TurnModelMissing as exc:
        raise CheckFailed(str(exc)) from exc
    probability = model.probability(read_wav_16k(asset_path(CLIP)) + bytes(6400))
    if not 0.0 <= probability <= 1.0:
        raise CheckFailed(f"the turn model answered {probability!r}, not a probability")
    sounds = "finished" if probability >= 0.5 else "unfinished"
    return f"the clip sounds {sounds} ({probability:.2f})"


def check_voice_speaks() -> str:
    from app.config import load_settings
    from app.tts import create_tts_engine

    engine = create_tts_engine(load_settings().tts)
    audio = asyncio.run(synthesize(engine, "Hello."))
    if not audio.pcm or audio.duration_s <= 0.05:
        raise CheckFailed("the voice engine produced no audio")
    return f"{type(engine).__name__}: {audio.duration_s:.2f} s at {audio.sample_rate} Hz"


def check_screen_text_reads() -> str:
    """The offline screen reader (OCR, its models in its package) reads a test image."""
    import tempfile

    from PIL import Image, ImageDraw, ImageFont

    from app.media.screen_text import ScreenTextReader

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "screen.png"
        image = Image.new("RGB", (480, 120), "white")
        font = ImageFont.load_default(48)
        ImageDraw.Draw(image).text((20, 30), "Hello 42", fill="black", font=font)
        image.save(path)
        reader = ScreenTextReader()
        try:
            lines = asyncio.run(reader.read(path))
        finally:
            reader.close()
    text = " ".join(line.text for line in lines)
    if "hello" not in text.lower():
        raise CheckFailed(f"the screen-text reader read {text!r} instead of 'Hello 42'")
    return f"read {text!r}"


SelfCheck = tuple[str, Callable[[], Said]]

CHECKS: list[SelfCheck] = [
    ("config directory writable", check_config_dir),
    ("data directory writable", check_data_dir),
    ("Qt starts", check_qt),
    ("PortAudio loads", check_portaudio),
    ("mss imports", check_mss),
    ("Live2D library loads", check_live2d),
    ("chat model answers", check_embedded_model_answers),
    ("speech model transcribes", check_speech_model_transcribes),
    ("turn model decides", check_turn_model_decides),
    ("voice engine speaks", check_voice_speaks),
    ("screen text reads", check_screen_text_reads),
]


def run_checks(checks: list[SelfCheck] | None = None) -> Report:
    from app import __version__

    report = Report(
        ok=True,
        frozen=bool(getattr(sys, "frozen", False)),
        python=platform.python_version(),
        platform=platform.platform(),
        version=__version__,
    )
    for name, check in checks or CHECKS:
        result = run_check(name, check)
        report.checks.append(result)
        report.ok = report.ok and result.ok
    return report


def _print(report: Report, out: Any) -> None:
    for c in report.checks:
        mark = "FAIL" if not c.ok else ("warn" if c.warning else " ok ")
        print(f"[{mark}] {c.name:<26} {c.seconds:6.2f} s  {c.text}", file=out)
    failed = [c.name for c in report.checks if not c.ok]
    if failed:
        print(f"self-test FAILED: {', '.join(failed)}", file=out)
    else:
        print("self-test passed", file=out)


def main(report_path: Path | None = None) -> int:
    report = run_checks()
    out = sys.stdout if sys.stdout is not None else None
    if out is not None:
        _print(report, out)
        out.flush()
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    return 0 if report.ok else 1

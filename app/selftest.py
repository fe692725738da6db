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
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CheckResult", "Warn", "asset_path", "main", "run_checks"]

PROMPT = "Say hello in one short sentence."
CLIP = "selftest/hello.wav"


class Warn(Exception):
    """A check that passed but has something to say (e.g. no audio device)."""


@dataclass
class CheckResult:
    name: str
    ok: bool
    seconds: float
    detail: str = ""
    problem: str = ""
    warning: str = ""


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


def asset_path(relative: str) -> Path:
    """A file of `assets/`, from source or from a frozen bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        candidate = Path(bundle) / "assets" / relative
        if candidate.exists():
            return candidate
    return Path(__file__).resolve().parent.parent / "assets" / relative


def _words(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ---- the checks ---------------------------------------------------------------------


def check_qt() -> str:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QWidget
    except ImportError as exc:
        raise RuntimeError(f"the Qt libraries (PySide6) could not be loaded: {exc}") from exc
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
        raise RuntimeError("Qt started but a window could not be shown")
    return f"Qt {_qt_version()} on the {QApplication.platformName()} platform"


def _qt_version() -> str:
    from PySide6.QtCore import qVersion

    return str(qVersion())


def check_chat_model() -> str:
    from app.llm import LLMRequest, Msg
    from app.llm.routing import parse_model_route
    from app.llm.wire.local import LocalModelClient, default_model_path

    path = default_model_path()
    client: Any = LocalModelClient(parse_model_route("local/smollm2"), model_path=path)
    request = LLMRequest(model="smollm2", messages=[Msg.user(PROMPT)], max_tokens=16)

    async def ask() -> str:
        try:
            response = await client.complete(request)
        finally:
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()
        return str(response.to_msg().text)

    text = asyncio.run(ask()).strip()
    if not text:
        raise RuntimeError(f"the embedded chat model ({path.name}) gave an empty answer")
    return f"{path.name} answered: {text[:60]!r}"


def check_speech_model() -> str:
    from app.audio.wav import read_wav_16k
    from app.speech import SpeechConfig
    from app.speech.adapters.whisper_local import WhisperLocalClient, bundled_model_dir

    clip = asset_path(CLIP)
    if not clip.is_file():
        raise RuntimeError(f"the self-test clip {clip} is missing from the installation")
    model_dir = bundled_model_dir()
    client = WhisperLocalClient(SpeechConfig(enabled=True, adapter="whisper_local"))
    text = client.transcribe_sync(read_wav_16k(clip)).strip()
    if "hello" not in text.lower():
        raise RuntimeError(
            f"the speech model ({model_dir.name}) heard {text!r} instead of 'hello ...'"
        )
    return f"heard {text!r}"


def check_tts() -> str:
    from app.config import load_settings
    from app.session import build_tts

    engine = build_tts(load_settings())

    async def speak() -> Any:
        try:
            return await engine.synthesize("Hello.")
        finally:
            await engine.aclose()

    audio = asyncio.run(speak())
    if not audio.pcm or audio.duration_s <= 0.05:
        raise RuntimeError("the voice engine produced no audio")
    return f"{type(engine).__name__}: {audio.duration_s:.2f} s at {audio.sample_rate} Hz"


def check_portaudio() -> str:
    try:
        import sounddevice
    except OSError as exc:
        raise RuntimeError(
            f"the PortAudio library could not be loaded ({exc}); install libportaudio2"
        ) from exc
    version = sounddevice.get_portaudio_version()[1]
    try:
        devices = sounddevice.query_devices()
        inputs = [d for d in devices if d["max_input_channels"] > 0]
        outputs = [d for d in devices if d["max_output_channels"] > 0]
    except Exception as exc:
        raise Warn(f"{version} loaded, but audio devices could not be listed: {exc}") from exc
    if not inputs or not outputs:
        raise Warn(
            f"{version} loaded; {len(inputs)} microphone(s), {len(outputs)} speaker(s) "
            "found: talking needs both"
        )
    return f"{version}: {len(inputs)} input(s), {len(outputs)} output(s)"


def check_mss() -> str:
    import mss

    return f"mss {getattr(mss, '__version__', '?')} imported"


def _writable(kind: str, folder: Path) -> str:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".selftest-", delete=True) as f:
            f.write(b"ok")
            f.flush()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RuntimeError(f"the {kind} folder {folder} is not writable: {reason}") from exc
    return str(folder)


def check_config_dir() -> str:
    from app.config import config_path

    return _writable("config", config_path().parent)


def check_data_dir() -> str:
    from app.config import data_dir

    return _writable("data", data_dir())


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("config directory writable", check_config_dir),
    ("data directory writable", check_data_dir),
    ("Qt starts", check_qt),
    ("PortAudio loads", check_portaudio),
    ("mss imports", check_mss),
    ("chat model answers", check_chat_model),
    ("speech model transcribes", check_speech_model),
    ("voice engine speaks", check_tts),
]


def run_checks(checks: list[tuple[str, Callable[[], str]]] | None = None) -> Report:
    from app import __version__

    report = Report(
        ok=True,
        frozen=bool(getattr(sys, "frozen", False)),
        python=platform.python_version(),
        platform=platform.platform(),
        version=__version__,
    )
    for name, check in checks or CHECKS:
        started = time.perf_counter()
        result = CheckResult(name=name, ok=True, seconds=0.0)
        try:
            result.detail = check()
        except Warn as exc:
            result.warning = str(exc)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            result.ok = False
            result.problem = _words(exc) if not isinstance(exc, RuntimeError) else str(exc)
        result.seconds = round(time.perf_counter() - started, 3)
        report.checks.append(result)
        report.ok = report.ok and result.ok
    return report


def _print(report: Report, out: Any) -> None:
    for c in report.checks:
        mark = "FAIL" if not c.ok else ("warn" if c.warning else " ok ")
        text = c.problem or c.warning or c.detail
        print(f"[{mark}] {c.name:<26} {c.seconds:6.2f} s  {text}", file=out)
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

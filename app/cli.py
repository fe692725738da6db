"""The `companion` command: the window (default), one headless turn, and config."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from app import __version__

EXIT_USAGE = 2


def _model_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--model",
        default=default,
        help="chat model as provider/name, e.g. openai/gpt-4o-mini or local/smollm2",
    )
    parser.add_argument(
        "--base-url",
        default=default,
        help="server URL for openai-compatible/NAME (e.g. http://127.0.0.1:8080/v1)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS if suppress else 0,
        help="log more (-vv for debug)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion", description="A desktop voice companion that talks back."
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    _model_flags(parser, suppress=False)
    parser.add_argument(
        "--quit-after", type=float, default=None, help=argparse.SUPPRESS
    )  # smoke tests: close the window after N seconds
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check the models, voice, audio and folders without a human, then exit",
    )
    parser.add_argument(
        "--report", type=Path, default=None, help="with --self-test: write a JSON report here"
    )
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="open the Companion window (the default)")
    _model_flags(run, suppress=True)

    turn = sub.add_parser("turn", help="one spoken turn from a WAV file, without a microphone")
    _model_flags(turn, suppress=True)
    turn.add_argument("--wav", required=True, type=Path, help="the question, as a WAV file")
    turn.add_argument("--out", type=Path, default=None, help="write the spoken reply here (WAV)")
    turn.add_argument("--json", action="store_true", help="print one JSON document")

    config = sub.add_parser("config", help="where the config file is, and what it says")
    config.add_argument("action", choices=["path", "show"])
    return parser


def _settings(args: argparse.Namespace) -> Any:
    from app.config import load_settings

    settings = load_settings()
    register_secrets(settings)
    if args.model:
        settings.chat.model = args.model
    if args.base_url:
        settings.chat.base_url = args.base_url
    return settings


def register_secrets(settings: Any) -> None:
    """Every key in the settings is masked in the logs from now on."""
    from pydantic import BaseModel, SecretStr

    from app.logs import add_secret

    def walk(model: BaseModel) -> None:
        for name in type(model).model_fields:
            value = getattr(model, name)
            if isinstance(value, SecretStr):
                add_secret(value.get_secret_value())
            elif isinstance(value, BaseModel):
                walk(value)

    walk(settings)


def _fail(message: str, code: int = 1) -> int:
    print(f"companion: {message}", file=sys.stderr)
    return code


# A shared library a frozen or installed app needs from the system: what to install.
_SYSTEM_LIBRARIES = (
    ("portaudio", "PortAudio", "libportaudio2 (Debian/Ubuntu) or portaudio (Fedora, Homebrew)"),
    ("espeak", "espeak-ng", "espeak-ng (Debian/Ubuntu: espeak-ng-data and libespeak-ng1)"),
)


def missing_library_message(exc: BaseException) -> str | None:
    """Words naming the package to install when `exc` is a missing PortAudio/espeak-ng."""
    text = str(exc).lower()
    for key, name, package in _SYSTEM_LIBRARIES:
        if key in text:
            return f"the {name} library was not found ({exc}). Install {package}, then start again."
    return None


def _guard_streams() -> None:
    """A windowed (frozen) build has no console: print and logging must not crash."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def main(argv: list[str] | None = None) -> int:
    _guard_streams()
    try:
        return _main(argv)
    except (OSError, ImportError) as exc:
        message = missing_library_message(exc)
        if message is None:
            raise
        return _fail(message)


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app.logs import setup_logging

    setup_logging([logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)])
    if args.self_test:
        from app import selftest

        return selftest.main(args.report)
    from app.config import ConfigError, config_path, masked_dump

    if args.command == "config":
        if args.action == "path":
            print(config_path())
            return 0
        try:
            settings = _settings(args)
        except ConfigError as exc:
            return _fail(str(exc), EXIT_USAGE)
        print(json.dumps(masked_dump(settings), indent=2, ensure_ascii=False))
        return 0
    try:
        settings = _settings(args)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if args.command == "turn":
        return run_turn_command(settings, args.wav, args.out, as_json=args.json)
    return run_window(settings, quit_after=args.quit_after)


def run_window(settings: Any, *, quit_after: float | None = None) -> int:
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if sys.platform.startswith("linux") and headless and not os.environ.get("QT_QPA_PLATFORM"):
        # Qt would abort with a core dump; say it in words instead.
        return _fail(
            "no display found: the window needs a desktop session. Run it from one, "
            "or use `companion turn --wav FILE` for one turn without a window.",
            EXIT_USAGE,
        )
    if sys.platform.startswith("linux") and os.environ.get("WAYLAND_DISPLAY"):
        # Qt's Wayland backend cannot keep a window on top or move it: prefer XWayland.
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb;wayland")
    from app.ui import run_window as ui_run_window

    def make_session() -> Any:
        # Imported after the window shows (preloaded in a worker thread): app.session
        # brings numpy, httpx, the agent and the audio stack.
        try:
            from app.session import VoiceSession

            return VoiceSession(settings)
        except (OSError, ImportError) as exc:
            message = missing_library_message(exc)
            if message is None:
                raise
            raise RuntimeError(message) from exc

    try:
        return ui_run_window(
            make_session, settings=settings, preload=("app.session",), quit_after_s=quit_after
        )
    except Exception as exc:  # pragma: no cover - last resort: say it in words
        message = missing_library_message(exc)
        if message is not None:
            return _fail(message)
        logging.getLogger(__name__).exception("the window failed")
        return _fail(f"the window could not run: {exc}")


def run_turn_command(settings: Any, wav: Path, out: Path | None, *, as_json: bool) -> int:
    from app.audio.wav import AudioFileError, read_wav_16k

    try:
        pcm = read_wav_16k(wav)
    except AudioFileError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if out is not None and not out.parent.exists():
        return _fail(f"{out.parent}: no such folder for --out", EXIT_USAGE)
    try:
        return asyncio.run(_turn(settings, pcm, out, as_json))
    except KeyboardInterrupt:
        return 130


async def _turn(settings: Any, pcm: bytes, out: Path | None, as_json: bool) -> int:
    import time

    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.audio.wav import write_wav
    from app.events import EventHub, Notice
    from app.llm.errors import ProviderError
    from app.session import VoiceSession, trim_to_speech

    notices: list[str] = []
    hub = EventHub()
    hub.subscribe(lambda e: notices.append(e.message) if isinstance(e, Notice) else None)
    sink = MemorySink()
    try:
        session = VoiceSession(settings, sink=sink, storage=InMemoryStorage(), events=hub)
    except (ProviderError, ValueError) as exc:
        return _fail(str(exc))
    try:
        started = time.perf_counter()
        await session.load_models()
        if notices:
            return _fail(notices[0])
        load_ms = (time.perf_counter() - started) * 1000
        speech = await asyncio.to_thread(trim_to_speech, pcm, settings)
        result = await session.turn_from_pcm(speech)
    finally:
        await session.aclose()
    if out is not None and sink.sample_rate:
        write_wav(out, sink.pcm, sink.sample_rate)
    doc = result.to_json()
    doc["load_ms"] = round(load_ms, 1)
    doc["model"] = settings.chat.model
    if out is not None:
        doc["out"] = str(out)
        doc["out_seconds"] = (
            round(len(sink.pcm) / 2 / sink.sample_rate, 2) if sink.sample_rate else 0
        )
    if as_json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        _print_turn(doc)
    if result.error:
        if not as_json:
            print(f"companion: {result.error}", file=sys.stderr)
        return 1
    if not result.heard:
        if not as_json:
            print("companion: no speech was recognised in the WAV file", file=sys.stderr)
        return 1
    return 0


_STAGES = [
    ("transcript_ms", "speech end → transcript"),
    ("first_token_ms", "model first token"),
    ("first_sentence_ms", "first sentence ready"),
    ("first_audio_ms", "first audio ready"),
    ("total_ms", "turn done"),
]


def _print_turn(doc: dict[str, Any]) -> None:
    print(f"heard: {doc['heard']}")
    for s in doc["sentences"]:
        tag = f"[{', '.join(s['expressions'])}] " if s["expressions"] else ""
        prefix = "(thinking) " if s["thinking"] else ""
        print(f"  {prefix}{tag}{s['text']}")
    print("timings (ms from the end of speech):")
    for key, label in _STAGES:
        if key in doc["timings_ms"]:
            print(f"  {label:<26} {doc['timings_ms'][key]:8.0f}")
    print(f"  (models loaded beforehand in {doc['load_ms']:.0f} ms)")
    if "out" in doc:
        print(f"reply audio: {doc['out']} ({doc['out_seconds']} s)")

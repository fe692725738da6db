"""The `companion` command: parses the arguments, sets up logging and the settings, and
runs a subcommand (`app.commands`): the window (default), one headless turn, config, the
avatar."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app import __version__
from app.commands.common import EXIT_USAGE, fail, missing_library_message
from app.commands.one_turn import CONVERSATION_HELP
from app.redaction import Redactor
from app.terminal import VisibleStream


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
    turn.add_argument(
        "--live",
        action="store_true",
        help="feed the file in real time as a microphone would; report every turn heard",
    )
    turn.add_argument(
        "--conversation",
        default=None,
        metavar="new|latest|ID",
        help=CONVERSATION_HELP + " (default: none, the turn is not saved)",
    )

    chat = sub.add_parser("chat", help="one typed turn, saved to the conversation history")
    _model_flags(chat, suppress=True)
    chat.add_argument("--text", required=True, help="what you say to the companion")
    chat.add_argument(
        "--conversation",
        default="latest",
        metavar="new|latest|ID",
        help=CONVERSATION_HELP + " (default: latest)",
    )
    chat.add_argument("--out", type=Path, default=None, help="write the spoken reply here (WAV)")
    chat.add_argument("--json", action="store_true", help="print one JSON document")

    config = sub.add_parser("config", help="where the config file is, and what it says")
    config.add_argument("action", choices=["path", "show"])

    avatar = sub.add_parser("avatar", help="the avatar as a picture; a Live2D model checked")
    avatar_sub = avatar.add_subparsers(dest="avatar_command", required=True)
    snapshot = avatar_sub.add_parser("snapshot", help="render one frame of the avatar offscreen")
    snapshot.add_argument("--model", type=Path, default=None, help="a Live2D model folder")
    snapshot.add_argument("--expression", default=None, help="the expression tag to show")
    snapshot.add_argument("--mouth", type=float, default=0.0, help="how open the mouth is, 0..1")
    snapshot.add_argument("--out", type=Path, required=True, help="the PNG file to write")
    check = avatar_sub.add_parser("check", help="can this Live2D model be shown, with which tags")
    check.add_argument("model", type=Path, help="the Live2D model's folder or .model3.json")
    check.add_argument("--facts", type=Path, default=None, help=argparse.SUPPRESS)  # the probe
    return parser


def _settings(args: argparse.Namespace, redactor: Redactor) -> Any:
    from app.config import load_settings

    settings = load_settings()
    register_secrets(settings, redactor)
    for warning in settings.file_warnings:  # a typo in the file is said, not ignored
        print(f"companion: warning: {warning}", file=sys.stderr)
    if args.model:
        settings.chat.model = args.model
        settings.set_by_option("chat.model", "--model")
    if args.base_url:
        settings.chat.base_url = args.base_url
        settings.set_by_option("chat.base_url", "--base-url")
    return settings


def register_secrets(settings: Any, redactor: Redactor) -> None:
    """Every key in the settings is masked (in the logs) by `redactor` from now on."""
    from app.config import secret_fields

    for _, _, value in secret_fields(settings):
        redactor.add(value.get_secret_value())


def _guard_streams() -> None:
    """A windowed (frozen) build has no console: print and logging must not crash."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


@contextlib.contextmanager
def _visible_streams() -> Iterator[None]:
    """Everything written to stdout and stderr (a reply, a notice, a log line, argparse's
    usage) shows control characters as escapes: a reply cannot take over the terminal."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(out), VisibleStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def main(argv: list[str] | None = None) -> int:
    _guard_streams()
    from app.ending import end_like_ctrl_c

    end_like_ctrl_c()  # a logout or `kill` ends it as Ctrl+C does: nothing said is lost
    from app.audio.native_messages import routed_to_log

    # ALSA's and JACK's chatter goes to the log, not the terminal
    with _visible_streams(), routed_to_log():
        try:
            return _main(argv)
        except (OSError, ImportError) as exc:
            message = missing_library_message(exc)
            if message is None:
                raise
            return fail(message)


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app.config import private_profile
    from app.logs import setup_logging

    private_profile()  # history, memories, captures and logs: the user's alone (0700)
    redactor = Redactor()  # the configured keys join it once the settings are read
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    setup_logging(level, redactor=redactor)
    if args.self_test:
        from app.checks import selftest

        return selftest.main(args.report)
    if args.command == "avatar" and args.avatar_command == "check":  # needs no settings
        from app.commands.avatar import run_check

        return run_check(args.model, facts_to=args.facts)
    from app.config import ConfigError, config_path, masked_dump

    if args.command == "config":
        if args.action == "path":
            print(config_path())
            return 0
        try:
            settings = _settings(args, redactor)
        except ConfigError as exc:
            return fail(str(exc), EXIT_USAGE)
        print(json.dumps(masked_dump(settings), indent=2, ensure_ascii=False))
        return 0
    try:
        settings = _settings(args, redactor)
    except ConfigError as exc:
        return fail(str(exc), EXIT_USAGE)
    if args.command == "turn" and args.live:
        from app.commands.live import run_live_command

        return run_live_command(settings, args.wav, args.out, as_json=args.json)
    if args.command == "turn":
        from app.commands.turn import run_turn_command

        return run_turn_command(
            settings, args.wav, args.out, as_json=args.json, conversation=args.conversation
        )
    if args.command == "chat":
        from app.commands.chat import run_chat_command

        return run_chat_command(
            settings, args.text, conversation=args.conversation, out=args.out, as_json=args.json
        )
    if args.command == "avatar":
        from app.commands.avatar import run_snapshot

        return run_snapshot(
            settings, model=args.model, expression=args.expression, mouth=args.mouth, out=args.out
        )
    from app.commands.window import run_window

    return run_window(settings, quit_after=args.quit_after)

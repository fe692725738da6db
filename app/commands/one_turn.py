"""What `companion turn` and `companion chat` share: the conversation a headless turn
joins (`--conversation new|latest|ID`, in the same history folder the window uses),
the session it runs in, its JSON document, its printout and its exit code.

Without a conversation the turn is a dry run: it is answered in memory and nothing is
saved (what `companion turn` does by default, for trying a WAV file or a benchmark).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.commands.common import EXIT_USAGE, fail, not_saved_words

CONVERSATION_HELP = (
    "the saved conversation to talk in: new, latest (the one the window opens) or an ID "
    "from a --json document"
)


class UsageError(Exception):
    """The command line asks for something that cannot be (exit status 2)."""


class Refused(Exception):
    """The turn cannot be taken (exit status 1): the input has nothing to answer."""


def pick_conversation(storage: Any, choice: str) -> str:
    """The history id `choice` names: a new conversation, the latest one (new if there
    is none, as the window does), or an existing id."""
    from app.agent.building import CONF_UID

    uids = storage.list_histories(CONF_UID)
    if choice == "new" or (choice == "latest" and not uids):
        uid: str = storage.create_history(CONF_UID)
        return uid
    if choice == "latest":
        return str(uids[-1])
    if choice in uids:
        return choice
    raise UsageError(
        f"there is no conversation {choice!r}; use new, latest, or an ID that "
        '`--json` printed ("conversation")'
    )


def check_out_path(out: Path | None) -> str | None:
    """Why `--out` cannot be written (no such folder, not writable, a full disk), or
    None."""
    from app.audio.wav import AudioFileError, check_wav_target

    if out is None:
        return None
    try:
        check_wav_target(out)
    except AudioFileError as exc:
        return str(exc)
    return None


TurnStarter = Callable[[Any], Awaitable[Any]]
# A one-turn command has no quiet time after its turn: closing waits this long for the
# memory to look at it (one extraction takes ~10 s with the embedded 1.5B model on two
# cores; the window's 8 s limit left every `companion chat` turn unlearned).
ONE_TURN_MEMORY_WAIT_S = 60.0


@dataclass(frozen=True, slots=True)
class Report:
    """How a headless turn is run and told: the conversation it joins (None: a dry
    run), where its audio goes, JSON or words, and whether the input was spoken."""

    conversation: str | None
    out: Path | None
    as_json: bool
    spoken: bool


def run_headless_turn(settings: Any, start: TurnStarter, report: Report) -> int:
    """Run one turn (`start(session)` returns its `TurnResult`) and report it."""
    try:
        return asyncio.run(_turn(settings, start, report))
    except KeyboardInterrupt:
        return 130


async def _turn(settings: Any, start: TurnStarter, report: Report) -> int:
    from app.agent.storage import FileStorage, InMemoryStorage
    from app.audio.playback import MemorySink
    from app.config import data_dir
    from app.events import CaptureTaken, EventHub, Notice
    from app.llm.errors import ProviderError
    from app.session import VoiceSession

    conversation = report.conversation
    storage: Any = InMemoryStorage()
    uid = None
    if conversation is not None:
        storage = FileStorage(data_dir() / "history")  # the window's own history
        try:
            uid = pick_conversation(storage, conversation)
        except UsageError as exc:
            return fail(str(exc), EXIT_USAGE)
    problems: list[str] = []

    def heard(event: object) -> None:
        if isinstance(event, CaptureTaken):  # never a capture the user does not see
            where = "all monitors" if event.monitor == 0 else f"monitor {event.monitor}"
            print(
                f"companion: took a screenshot of {where} ({event.width}×{event.height}), "
                f"kept as {event.path}",
                file=sys.stderr,
            )
        elif isinstance(event, Notice):
            if event.error and not event.side:
                problems.append(event.message)
            else:  # told, and the turn goes on (the voice fell back, the memory failed)
                print(f"companion: {event.message}", file=sys.stderr)

    hub = EventHub()
    hub.subscribe(heard)
    sink = MemorySink()
    try:
        session = VoiceSession(settings, sink=sink, storage=storage, events=hub, history_uid=uid)
    except (ProviderError, ValueError) as exc:
        return fail(str(exc))
    try:
        started = time.perf_counter()
        await session.load_models()
        if problems:
            return fail(problems[0])
        load_ms = (time.perf_counter() - started) * 1000
        try:
            result = await start(session)
        except Refused as exc:
            return fail(str(exc))
        uid = session.conversation_id if conversation is not None else None
        # Told before closing: the close then gives the memory its time to look at
        # the turn (its only chance in a one-turn command) while the user reads.
        return _tell(result, settings, sink, report, load_ms=load_ms, uid=uid)
    finally:
        await session.aclose(memory_wait_s=ONE_TURN_MEMORY_WAIT_S)


def _tell(
    result: Any, settings: Any, sink: Any, report: Report, *, load_ms: float, uid: str | None
) -> int:
    """Write the reply's audio, print the turn; the exit code."""
    from app.audio.wav import AudioFileError, write_wav

    out, out_error = report.out, None
    if out is not None and sink.sample_rate:
        try:
            write_wav(out, sink.pcm, sink.sample_rate)
        except AudioFileError as exc:  # a full disk: the reply is still printed
            out_error, out = str(exc), None
    doc = turn_document(result, settings, load_ms=load_ms, conversation=uid)
    if out is not None:
        doc["out"] = str(out)
        doc["out_seconds"] = (
            round(len(sink.pcm) / 2 / sink.sample_rate, 2) if sink.sample_rate else 0
        )
    if report.as_json:
        print(json.dumps(doc, ensure_ascii=False, indent=2), flush=True)
    else:
        print_turn(doc, spoken=report.spoken)
        sys.stdout.flush()
    if out_error:
        return fail(out_error)
    return exit_code(result, quiet=report.as_json, spoken=report.spoken)


def turn_document(
    result: Any, settings: Any, *, load_ms: float, conversation: str | None
) -> dict[str, Any]:
    """The `--json` document: what was heard or typed, each reply sentence with its
    expressions, the stage timings, the model and the conversation (None: not saved)."""
    doc: dict[str, Any] = result.to_json()
    doc["load_ms"] = round(load_ms, 1)
    doc["model"] = settings.chat.model
    doc["conversation"] = conversation
    return doc


def exit_code(result: Any, *, quiet: bool, spoken: bool) -> int:
    """0 answered, 1 the model or the turn failed (or no words were heard)."""
    if result.error:
        if not quiet:
            print(f"companion: {result.error}", file=sys.stderr)
        return 1
    if not result.user_words:
        if not quiet and spoken:
            print("companion: no speech was recognised in the WAV file", file=sys.stderr)
        return 1
    if not result.saved:
        if not quiet:
            print(f"companion: {not_saved_words(result)}", file=sys.stderr)
        return 1
    return 0


_STAGES = [
    ("transcript_ms", "speech end → transcript"),
    ("first_token_ms", "model first token"),
    ("first_sentence_ms", "first sentence ready"),
    ("first_audio_ms", "first audio ready"),
    ("total_ms", "turn done"),
]


def print_turn(doc: dict[str, Any], *, spoken: bool) -> None:
    print(f"{'heard' if spoken else 'you'}: {doc['heard']}")
    for s in doc["sentences"]:
        tag = f"[{', '.join(s['expressions'])}] " if s["expressions"] else ""
        prefix = "(thinking) " if s["thinking"] else ""
        print(f"  {prefix}{tag}{s['text']}")
    since = "the end of speech" if spoken else "sending"
    print(f"timings (ms from {since}):")
    for key, label in _STAGES:
        if key in doc["timings_ms"]:
            print(f"  {label:<26} {doc['timings_ms'][key]:8.0f}")
    print(f"  (models loaded beforehand in {doc['load_ms']:.0f} ms)")
    if doc.get("conversation"):
        print(f"conversation: {doc['conversation']}")
    if "out" in doc:
        print(f"reply audio: {doc['out']} ({doc['out_seconds']} s)")

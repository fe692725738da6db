"""The user's words are never lost to a crash in the middle of a reply.

A turn is written to its conversation when it ends (its reply as far as the user heard
it). Until then the user's message is held in a small file beside the conversation
(`<history>.held.json`, written whole and fsynced); recording the turn lets it go. A
kill, a power cut or a crash mid-reply leaves it behind, and the next time the
conversation is read (`FileStorage.load`) it is added there, with the note that the
reply was cut off before the user heard any of it — unless the conversation already
ends with that very message (the crash came between writing the turn and letting go),
or the process that held it still runs (a turn in flight, here or in another copy).

One message is held per conversation: a turn the user went on with is held again with
all of their words, which replaces it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from app.agent.durable import fsync_dir, replace_whole
from app.agent.history_records import check_id
from app.agent.notes import INTERRUPTED_NOTE
from app.llm import Msg, Role

log = logging.getLogger(__name__)

__all__ = ["HeldWords", "fold_held"]

SUFFIX = ".held.json"


def held_path(conversation: Path) -> Path:
    """The held message of the conversation file `conversation` (`<uid>.jsonl`)."""
    return conversation.with_name(conversation.stem + SUFFIX)


class Conversations(Protocol):
    """What folding a held message needs of the storage (`FileStorage`)."""

    def load_written(self, conf_uid: str, history_uid: str) -> list[Msg]: ...

    def append(self, conf_uid: str, history_uid: str, messages: Sequence[Msg]) -> None: ...


class HeldWords:
    """Holds each conversation's turn in flight (`root`: the history folder)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, conf_uid: str, history_uid: str) -> Path:
        check_id(conf_uid, "configuration")
        return self.root / conf_uid / f"{check_id(history_uid)}{SUFFIX}"

    def hold(self, conf_uid: str, history_uid: str, message: Msg) -> None:
        """Keep `message` until the turn is recorded (a failure is logged: the turn goes
        on, and is written at its end as always)."""
        path = self._path(conf_uid, history_uid)
        data = json.dumps({"pid": os.getpid(), "msg": message.model_dump(mode="json")})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_whole(path, data)
            fsync_dir(path.parent)
        except OSError as exc:
            log.info("could not hold the user's message of the turn (%s)", exc)

    def release(self, conf_uid: str, history_uid: str) -> None:
        """The turn was recorded: nothing to keep any more."""
        with contextlib.suppress(OSError, ValueError):
            self._path(conf_uid, history_uid).unlink(missing_ok=True)


def fold_held(
    storage: Conversations, conf_uid: str, history_uid: str, conversation: Path
) -> None:
    """Add a message a crash left held to its conversation (see the module doc)."""
    path = held_path(conversation)
    try:
        if not path.is_file():
            return
        record = json.loads(path.read_text(encoding="utf-8"))
        message = Msg.model_validate(record["msg"])
        pid = int(record.get("pid") or 0)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("a held message could not be read (%s); it is left as it is", exc)
        return
    if _running(pid):  # a turn in flight here, or in another copy of the app: not a crash
        return
    users = [m for m in storage.load_written(conf_uid, history_uid) if m.role == Role.USER]
    if not users or (users[-1].text, users[-1].timestamp) != (message.text, message.timestamp):
        note = Msg.assistant(INTERRUPTED_NOTE, metadata={"interrupted": True, "heard": ""})
        try:
            storage.append(conf_uid, history_uid, [message, note])
        except OSError:
            return  # kept held: added when it can be
        log.info("a message left by a reply that never ended was added to %s", history_uid)
    with contextlib.suppress(OSError):
        path.unlink()


def _running(pid: int) -> bool:
    """Whether the process that held a message is this one or still runs."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill would end it there: only this process is known to run
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (another user's): leave it
    return True

"""The user's message of a turn in flight is held beside its conversation until the
turn is recorded (`app.agent.held_words`); real files, a real FileStorage."""

from __future__ import annotations

import json
from pathlib import Path

from app.agent.held_words import HeldWords, held_path
from app.agent.storage import FileStorage
from app.llm import Msg


def _setup(tmp_path: Path) -> tuple[FileStorage, HeldWords, str]:
    storage = FileStorage(tmp_path / "history")
    uid = storage.create_history("c")
    storage.append("c", uid, [Msg.user("Hi."), Msg.assistant("Hello!")])
    return storage, HeldWords(tmp_path / "history"), uid


def test_a_turn_in_flight_here_is_never_taken_for_a_crash(tmp_path: Path) -> None:
    storage, held, uid = _setup(tmp_path)
    held.hold("c", uid, Msg.user("My cat is Tom."))
    assert [m.text for m in storage.load("c", uid)] == ["Hi.", "Hello!"]  # this process
    held.release("c", uid)
    assert not held_path(storage._path("c", uid)).exists()


def test_a_message_left_by_a_dead_process_is_added_once(tmp_path: Path) -> None:
    storage, _, uid = _setup(tmp_path)
    message = Msg.user("My cat is Tom.")
    path = held_path(storage._path("c", uid))
    path.write_text(json.dumps({"pid": 2**22 + 12345, "msg": message.model_dump(mode="json")}))
    texts = [m.text for m in storage.load("c", uid)]
    assert texts[:3] == ["Hi.", "Hello!", "My cat is Tom."] and len(texts) == 4
    assert not path.exists() and len(storage.load("c", uid)) == 4


def test_a_message_written_before_the_crash_is_not_added_twice(tmp_path: Path) -> None:
    storage, _, uid = _setup(tmp_path)
    message = Msg.user("My cat is Tom.")
    storage.append("c", uid, [message, Msg.assistant("Tom is a fine name.")])
    path = held_path(storage._path("c", uid))  # the crash came before it was let go
    path.write_text(json.dumps({"pid": 2**22 + 12345, "msg": message.model_dump(mode="json")}))
    texts = [m.text for m in storage.load("c", uid)]
    assert texts[-2:] == ["My cat is Tom.", "Tom is a fine name."] and len(texts) == 4
    assert not path.exists()

"""Conversation history on disk: append-only, crash-tolerant, amendable."""

from __future__ import annotations

from pathlib import Path

from app.agent.storage import FileStorage, InMemoryStorage
from app.llm import Msg


def test_turns_survive_a_reload(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    uid = store.create_history("c")
    store.append("c", uid, [Msg.user("hi"), Msg.assistant("hello!")])
    again = FileStorage(tmp_path).load("c", uid)
    assert [(m.role, m.text) for m in again] == [("user", "hi"), ("assistant", "hello!")]


def test_a_torn_last_line_loses_only_itself(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    uid = store.create_history("c")
    store.append("c", uid, [Msg.user("one"), Msg.assistant("two")])
    path = tmp_path / "c" / f"{uid}.jsonl"
    with path.open("ab") as fh:
        fh.write(b'{"op": "add", "msg": {"role": "user", "cont')  # crash mid-write
    assert [m.text for m in store.load("c", uid)] == ["one", "two"]
    store.append("c", uid, [Msg.user("three")])  # the next write starts on a fresh line
    assert [m.text for m in store.load("c", uid)] == ["one", "two", "three"]


def test_amend_replaces_the_last_message(tmp_path: Path) -> None:
    for store in (FileStorage(tmp_path), InMemoryStorage()):
        uid = store.create_history("c")
        store.append("c", uid, [Msg.user("q"), Msg.assistant("a long answer")])
        store.amend_last("c", uid, Msg.assistant("a long"))
        assert [m.text for m in store.load("c", uid)] == ["q", "a long"]


def test_histories_are_listed_and_deleted(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    a = store.create_history("c")
    assert store.list_histories("c") == [a]
    store.delete_history("c", a)
    assert store.list_histories("c") == []

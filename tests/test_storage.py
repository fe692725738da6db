"""Conversation history on disk: append-only, crash-tolerant, amendable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_each_conversation_is_one_file_and_can_be_renamed(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    first, second = store.create_history("c"), store.create_history("c")
    store.append("c", first, [Msg.user("What is the tallest mountain on Earth, really?")])
    store.append("c", second, [Msg.user("hello")])
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == sorted(
        [f"{first}.jsonl", f"{second}.jsonl"]
    )
    store.rename_history("c", second, "  Greetings ")
    infos = {i.uid: i for i in FileStorage(tmp_path).list_conversations("c")}
    assert infos[first].title == "What is the tallest mountain on Earth, really?"
    assert infos[second].title == "Greetings" and infos[second].message_count == 1
    memory = InMemoryStorage()
    uid = memory.create_history("c")
    memory.rename_history("c", uid, "Named")
    assert memory.list_conversations("c")[0].title == "Named"


WRITER = """
import sys
from pathlib import Path
from app.agent.storage import FileStorage
from app.llm import Msg
store = FileStorage(Path(sys.argv[1]))
n = 0
while True:
    store.append("c", "h", [Msg.user(f"turn {n} " + "x" * 5000), Msg.assistant(f"reply {n}")])
    n += 1
    if n == 5:
        print("writing", flush=True)
"""


def test_killing_the_writer_mid_write_never_loses_earlier_turns(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    for attempt in range(3):
        folder = tmp_path / str(attempt)
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder)], cwd=root, stdout=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"writing\n"
        time.sleep(0.05 * attempt)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        store = FileStorage(folder)
        messages = store.load("c", "h")
        assert len(messages) >= 10
        # Every turn that is there is whole and in order; at most the last one is cut.
        users = [m.text.split()[1] for m in messages if m.role == "user"]
        assert users == [str(n) for n in range(len(users))]
        assert all(len(m.text) == len(f"turn {n} ") + 5000 for n, m in enumerate(
            m for m in messages if m.role == "user"))
        assert store.drain_notices() == []  # a torn tail is expected, not damage
        store.append("c", "h", [Msg.user("after the crash")])
        assert store.load("c", "h")[-1].text == "after the crash"


def test_images_are_stored_as_file_references_never_base64(tmp_path: Path) -> None:
    import re

    from PIL import Image

    from app.llm import ImageBlock, TextBlock, ToolResultBlock
    from app.media import import_image

    picture = tmp_path / "p.png"
    Image.effect_noise((256, 256), 64).convert("RGB").save(picture)
    image = import_image(picture, session_id="s", name="p1", root=tmp_path / "data")
    store = FileStorage(tmp_path / "history")
    uid = store.create_history("c")
    result = ToolResultBlock(tool_use_id="t", content=[TextBlock(text="shot"), image])
    sneaky = "see data:image/png;base64," + "QUFB" * 100
    store.append(
        "c",
        uid,
        [Msg.user([TextBlock(text="look"), image]), Msg(role="tool", content=[result]),
         Msg.assistant(sneaky)],
    )
    raw = (tmp_path / "history" / "c" / f"{uid}.jsonl").read_bytes()
    assert re.search(rb"[A-Za-z0-9+/]{64,}", raw) is None
    assert b"base64,QUFB" not in raw and b"\x89PNG" not in raw
    loaded = store.load("c", uid)
    assert isinstance(loaded[0].blocks[1], ImageBlock)
    assert loaded[0].images[0].original.path == image.original.path


def test_a_damaged_history_file_is_backed_up_and_its_good_turns_kept(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    uid = store.create_history("c")
    store.append("c", uid, [Msg.user("one"), Msg.assistant("two")])
    path = tmp_path / "c" / f"{uid}.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b"\x00\xff garbage in the middle\n" + good)
    fresh = FileStorage(tmp_path)
    assert [m.text for m in fresh.load("c", uid)] == ["one", "two", "one", "two"]
    [notice] = fresh.drain_notices()
    assert "damaged" in notice and ".bad" in notice
    backup = path.with_name(path.name + ".bad")
    assert b"garbage" in backup.read_bytes() and b"garbage" not in path.read_bytes()
    assert fresh.drain_notices() == []
    assert [m.text for m in fresh.load("c", uid)] == ["one", "two", "one", "two"]
    assert fresh.drain_notices() == []  # the repaired file is clean now


def test_conversations_list_in_the_order_they_were_started(tmp_path: Path) -> None:
    # Many in the same second: the newest is still last (it is the one resumed at start).
    storage = FileStorage(tmp_path)
    made = [storage.create_history("c") for _ in range(50)]
    assert storage.list_histories("c") == made
    assert [c.uid for c in storage.list_conversations("c")] == made


BAD_IDS = [".", "..", "../x", "a/b", "a\\b", "", "x" * 101, ".hidden", "con", "NUL.txt", "a.",
           "a\0b", "a b", "é"]


def test_conversation_ids_follow_one_rule_in_every_call(tmp_path: Path) -> None:
    import pytest

    for store in (FileStorage(tmp_path / "history"), InMemoryStorage()):
        for bad in BAD_IDS:
            calls: list[tuple[Any, tuple[Any, ...]]] = [
                (store.load, ("c", bad)),
                (store.append, ("c", bad, [Msg.user("hi")])),
                (store.amend, ("c", bad, -1, Msg.user("hi"))),
                (store.rename_history, ("c", bad, "title")),
                (store.delete_history, ("c", bad)),
                (store.create_history, (bad,)),  # the configuration's id: the same rule
                (store.list_histories, (bad,)),
                (store.list_conversations, (bad,)),
            ]
            for call, args in calls:
                with pytest.raises(ValueError, match=r"is not a (conversation|configuration) id"):
                    call(*args)
    assert not (tmp_path / "history").exists()  # nothing was made on the way
    assert len(repr(BAD_IDS[6])) > 40  # a long id is shown cut short in the message
    with pytest.raises(ValueError) as caught:
        FileStorage(tmp_path).load("c", "x" * 101)
    assert len(str(caught.value)) < 200


def test_renaming_or_deleting_a_conversation_that_does_not_exist_is_an_error(
    tmp_path: Path,
) -> None:
    import pytest

    for store in (FileStorage(tmp_path), InMemoryStorage()):
        real = store.create_history("c")
        store.append("c", real, [Msg.user("hello")])
        calls: list[tuple[Any, tuple[Any, ...]]] = [
            (store.rename_history, ("c", "nonexistent-id", "Nope")),
            (store.amend, ("c", "nonexistent-id", -1, Msg.user("x"))),
            (store.delete_history, ("c", "nonexistent-id")),
        ]
        for call, args in calls:
            with pytest.raises(ValueError, match="there is no conversation 'nonexistent-id'"):
                call(*args)
        assert store.list_histories("c") == [real]
        if isinstance(store, FileStorage):  # and nothing new on disk
            assert [p.name for p in (tmp_path / "c").iterdir()] == [f"{real}.jsonl"]


def test_the_newest_conversation_the_app_made_is_the_last_whatever_other_files_exist(
    tmp_path: Path,
) -> None:
    store = FileStorage(tmp_path)
    older, newer = store.create_history("c"), store.create_history("c")
    for name in ("nonexistent-id", "zzz", ".hidden", "con", "x."):
        (tmp_path / "c" / f"{name}.jsonl").write_text("")
    (tmp_path / "c" / "folder.jsonl").mkdir()
    assert store.list_histories("c") == ["nonexistent-id", "zzz", older, newer]
    memory = InMemoryStorage()
    made = [memory.create_history("c") for _ in range(3)]
    memory.append("c", "hand-made", [Msg.user("x")])
    assert memory.list_histories("c") == ["hand-made", *made]


def test_a_record_that_does_not_fit_its_schema_is_kept_aside_and_named(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    uid = store.create_history("c")
    said = [Msg.user("Tell me about tides"), Msg.assistant("They follow the moon.")]
    store.append("c", uid, said)
    store.rename_history("c", uid, "Tides\nand moons")
    path = tmp_path / "c" / f"{uid}.jsonl"
    bad = [
        b'{"op": "amend", "index": "x", "msg": {"role": "assistant"}}',
        b'{"op": "meta", "title": 5}',
        b'{"op": "add", "msg": {"role": "user", "timestamp": "yesterday"}}',
        b'{"op": "add", "msg": {"role": "user", "metadata": {"image_summaries": ["x"]}}}',
        b'{"op": "add", "msg": {"role": "wizard"}}',
        b'{"op": "delete"}',
        b"[1, 2, 3]",
        b'{"op": "add", "msg": {"role": "user", "content": "\\ud800"}}',
    ]
    path.write_bytes(path.read_bytes() + b"\n".join(bad) + b"\n")
    fresh = FileStorage(tmp_path)
    [info] = fresh.list_conversations("c")
    assert (info.title, info.message_count) == ("Tides and moons", 2)
    [notice] = fresh.drain_notices()
    assert f'"Tides and moons" ({uid})' in notice and "8 unreadable" in notice
    assert "\n" not in notice
    assert all(line in path.with_name(path.name + ".bad").read_bytes() for line in bad)
    assert [m.text for m in fresh.load("c", uid)] == [m.text for m in said]
    assert fresh.drain_notices() == []


def test_one_unreadable_conversation_never_stops_the_list(tmp_path: Path) -> None:
    store = FileStorage(tmp_path)
    first, second = store.create_history("c"), store.create_history("c")
    store.append("c", first, [Msg.user("older")])
    store.append("c", second, [Msg.user("newer")])
    msg = b'"msg": {"role": "assistant", "content": "x"}'
    with (tmp_path / "c" / f"{first}.jsonl").open("ab") as fh:
        fh.write(b'{"op": "amend", "index": 1e999, ' + msg + b"}\n")
        fh.write(b'{"op": "amend", "index": null, ' + msg + b"}\n")
    [older, newer] = FileStorage(tmp_path).list_conversations("c")
    assert (older.uid, older.message_count) == (first, 1)
    assert (newer.uid, newer.message_count) == (second, 1)

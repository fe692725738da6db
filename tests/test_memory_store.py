"""The memory store on a real SQLite file: what it keeps and finds, its schema, and what
happens to a damaged, locked, newer or full file, or a process killed while writing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.memory.schema import SCHEMA_VERSION
from app.memory.store import MemoryDraft, MemoryStore, MemoryStoreError, TurnRecord
from tests.small_disk import SmallDisk, mounted_small_disk

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    memories = MemoryStore(tmp_path / "memory.sqlite3")
    yield memories
    memories.close()


def test_a_memory_is_kept_on_disk_with_where_it_came_from(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    first = MemoryStore(path)
    added = first.add(
        "Mika", MemoryDraft("The user's cat is called Luna.", "fact", 0.8, "explicit", "conv-a", 4)
    )
    first.close()
    again = MemoryStore(path)
    [item] = again.all("Mika")
    again.close()
    assert item == added
    assert (item.text, item.kind, item.source, item.conversation, item.turn) == (
        "The user's cat is called Luna.",
        "fact",
        "explicit",
        "conv-a",
        4,
    )
    assert item.created_at > 0 and item.recalled_count == 0


def test_the_file_is_in_wal_mode_at_the_current_schema(store: MemoryStore) -> None:
    store.open()
    assert store.path is not None
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("The user's cat is called Luna.", "What's my cat's name?"),
        ("The user works as a nurse in Berlin.", "where do I work?"),
        ("The user loves hiking in the mountains.", "Any tips for my hike?"),
        ("用户的猫叫露娜。", "我的猫叫什么？"),
        ("用户喜欢喝乌龙茶", "我喜欢喝什么茶"),
        ("The user's sister Anna lives in Paris.", "I'm visiting ANNA next week"),
    ],
)
def test_full_text_search_finds_a_memory_from_other_words_about_it(
    store: MemoryStore, stored: str, asked: str
) -> None:
    store.add("Mika", MemoryDraft("The user has a red bicycle."))
    wanted = store.add("Mika", MemoryDraft(stored))
    found = [item.id for item, _ in store.search("Mika", asked, limit=5)]
    assert found[:1] == [wanted.id]


def test_search_words_are_never_query_syntax(store: MemoryStore) -> None:
    store.add("Mika", MemoryDraft("The user likes NEAR OR AND NOT * ^ ( quotes"))
    for asked in ['"', "NEAR(", "a AND OR", "*", "col:val", "'); DROP TABLE memories; --"]:
        store.search("Mika", asked, limit=5)  # no FTS syntax error reaches the user
    assert store.count("Mika") == 1


def test_each_character_has_its_own_memories(store: MemoryStore) -> None:
    store.add("Mika", MemoryDraft("The user's cat is called Luna."))
    store.add("Rin", MemoryDraft("The user's dog is called Rex."))
    assert [i.text for i in store.all("Mika")] == ["The user's cat is called Luna."]
    assert [i.character for i, _ in store.search("Rin", "dog cat", limit=5)] == ["Rin"]
    assert store.clear("Mika") == 1
    assert store.count("Rin") == 1


def test_an_update_is_found_by_its_new_words_only(store: MemoryStore) -> None:
    item = store.add("Mika", MemoryDraft("The user's cat is called Luna."))
    store.update(item.id, text="The user's cat is called Nori.")
    assert store.search("Mika", "Luna", limit=5) == []
    assert [i.text for i, _ in store.search("Mika", "Nori", limit=5)] == [
        "The user's cat is called Nori."
    ]


def test_a_deleted_memory_can_be_restored_with_its_id(store: MemoryStore) -> None:
    item = store.add("Mika", MemoryDraft("The user's cat is called Luna."))
    removed = store.delete(item.id)
    assert removed == item and store.get(item.id) is None
    assert store.search("Mika", "cat", limit=5) == []
    assert store.restore(item) == item
    assert [i.id for i, _ in store.search("Mika", "cat", limit=5)] == [item.id]


def test_forgotten_text_is_erased_from_the_file(store: MemoryStore) -> None:
    secret = "The user's bank PIN hint is Zanzibar4417."
    kept = store.add("Mika", MemoryDraft("The user likes tea."))
    gone = store.add("Mika", MemoryDraft(secret))
    store.delete(gone.id)
    store.clear("Mika")
    store.close()
    assert store.path is not None
    files = [store.path, *store.path.parent.glob(store.path.name + "-*")]
    assert not any(b"Zanzibar4417" in f.read_bytes() for f in files if f.exists())
    assert kept.text  # the other one was there too, and also went with "clear"


def test_recalls_are_counted(store: MemoryStore) -> None:
    item = store.add("Mika", MemoryDraft("The user likes tea."))
    store.mark_recalled([item.id], when=1234.0)
    store.mark_recalled([item.id], when=2345.0)
    again = store.get(item.id)
    assert again is not None
    assert (again.recalled_count, again.last_recalled_at) == (2, 2345.0)


def test_turns_waiting_for_extraction_are_kept_until_taken(store: MemoryStore) -> None:
    turns = [TurnRecord("c1", 0, "My cat is Luna", ()), TurnRecord("c1", 2, "I'm a nurse", ("hi",))]
    store.save_pending("Mika", turns)
    assert store.take_pending("Rin") == []
    assert store.take_pending("Mika") == turns
    assert store.take_pending("Mika") == []


def test_an_empty_memory_is_refused_in_words(store: MemoryStore) -> None:
    with pytest.raises(MemoryStoreError, match="needs some text"):
        store.add("Mika", MemoryDraft("   "))
    assert store.count("Mika") == 0


# ----- files that cannot be used ------------------------------------------------------


def _moved_aside(path: Path) -> list[Path]:
    return sorted(
        p
        for p in path.parent.glob(path.name + ".unusable-*")
        if not p.name.endswith(("-wal", "-shm"))
    )


def test_a_file_that_is_not_a_database_is_moved_aside_and_a_fresh_one_started(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.sqlite3"
    path.write_bytes(b"this is not SQLite, it is a shopping list\n" * 100)
    store = MemoryStore(path)
    store.add("Mika", MemoryDraft("The user likes tea."))
    [notice] = store.drain_notices()
    [aside] = _moved_aside(path)
    assert "moved aside" in notice and str(aside) in notice
    assert aside.read_bytes().startswith(b"this is not SQLite")
    assert not store.in_ram and store.count("Mika") == 1
    store.close()


def test_a_database_with_damaged_pages_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    store = MemoryStore(path)
    for n in range(300):
        store.add("Mika", MemoryDraft(f"The user owns plant number {n} of many."))
    store.close()
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(page * 2, min(len(data), page * 6)):
        data[offset] = 0xA5  # the header stays valid; the pages under it are garbage
    path.write_bytes(bytes(data))
    again = MemoryStore(path)
    assert again.count("Mika") == 0
    notices = again.drain_notices()
    assert len(_moved_aside(path)) == 1 and "damaged" in notices[0]
    again.add("Mika", MemoryDraft("The user likes tea."))
    assert again.count("Mika") == 1
    again.close()


def _hold_locked(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another program (a backup tool, a second copy) holding `path` with an exclusive
    lock for `seconds`, once it printed "locked"."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sqlite3, sys, time
                conn = sqlite3.connect({str(path)!r}, isolation_level=None)
                conn.execute("PRAGMA journal_mode = DELETE")
                conn.execute("BEGIN EXCLUSIVE")
                conn.execute("CREATE TABLE IF NOT EXISTS other (x)")
                print("locked", flush=True)
                time.sleep({seconds})
                conn.execute("COMMIT")
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def _one_memory(path: Path) -> None:
    store = MemoryStore(path)
    store.add("Mika", MemoryDraft("The user likes tea."))
    store.close()


def test_a_file_another_program_keeps_locked_is_waited_for_never_moved(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    _one_memory(path)
    holder = _hold_locked(path, 3.0)
    try:
        store = MemoryStore(path, busy_timeout_s=0.2)
        store.open()  # at start, in a thread: the lock is waited for
        assert store.count("Mika") == 1 and not store.in_ram  # opened once it was let go
        assert store.drain_notices() == [] and _moved_aside(path) == []
        store.add("Mika", MemoryDraft("The user has a cat."))
        assert store.count("Mika") == 2
        store.close()
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_that_is_never_let_go_leaves_the_file_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.memory.store as store_module

    monkeypatch.setattr(store_module, "OPEN_WAIT_S", 0.5)
    path = tmp_path / "memory.sqlite3"
    _one_memory(path)
    holder = _hold_locked(path, 60.0)
    try:
        store = MemoryStore(path, busy_timeout_s=0.2)
        store.open()
        store.add("Mika", MemoryDraft("The user has a cat."))
        [notice] = store.drain_notices()
        assert "in use by another program" in notice and "left as it is" in notice
        assert store.in_ram and _moved_aside(path) == []
        store.close()
    finally:
        holder.kill()
        holder.wait()
    again = MemoryStore(path)
    assert [m.text for m in again.all("Mika")] == ["The user likes tea."]  # all still there
    again.close()


def test_a_write_while_another_program_writes_is_refused_whole_then_works(
    store: MemoryStore,
) -> None:
    store.add("Mika", MemoryDraft("The user likes tea."))
    assert store.path is not None
    other = sqlite3.connect(store.path, isolation_level=None)
    store.busy_timeout_s = 0.1
    store.close()  # reopened with the short wait
    store.open()
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(MemoryStoreError, match="in use by another program"):
            store.add("Mika", MemoryDraft("The user likes coffee."))
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.add("Mika", MemoryDraft("The user likes coffee."))
    assert sorted(i.text for i in store.all("Mika")) == [
        "The user likes coffee.",
        "The user likes tea.",
    ]


def test_a_file_from_a_newer_companion_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    store = MemoryStore(path)
    store.add("Mika", MemoryDraft("The user likes tea."))  # kept in RAM this time
    [notice] = store.drain_notices()
    store.close()
    assert "newer Companion" in notice and store.in_ram
    assert path.read_bytes() == before and _moved_aside(path) == []


def test_a_folder_that_cannot_hold_the_file_keeps_memories_in_ram(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    store = MemoryStore(blocker / "memory.sqlite3")
    store.add("Mika", MemoryDraft("The user likes tea."))
    [notice] = store.drain_notices()
    assert store.in_ram and "only until Companion closes" in notice
    assert store.count("Mika") == 1


KILLED_WRITER = """
import sys
from pathlib import Path
from app.memory.store import MemoryDraft, MemoryStore
store = MemoryStore(Path(sys.argv[1]))
n = 0
while True:
    store.add("Mika", MemoryDraft(f"The user said thing number {n}, " + "word " * 40))
    print(n, flush=True)
    n += 1
"""


def test_a_process_killed_while_writing_loses_at_most_the_memory_being_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.sqlite3"
    for attempt in range(3):  # each kill lands somewhere else in a write
        writer = subprocess.Popen(
            [sys.executable, "-c", KILLED_WRITER, str(path)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert writer.stdout is not None
        last = -1
        deadline = time.monotonic() + 60
        while last < 40 + attempt * 17 and time.monotonic() < deadline:
            last = int(writer.stdout.readline())
        writer.kill()  # SIGKILL: no handler, no flush, no close
        writer.wait()
        for line in writer.stdout.read().split():  # what it said it committed, to the end
            last = int(line)
        store = MemoryStore(path)
        texts = [item.text for item in store.all("Mika")]
        store.close()
        numbers = sorted({int(t.split()[5].rstrip(",")) for t in texts})
        assert store.drain_notices() == []  # the file opened fine: nothing moved aside
        assert numbers == list(range(len(numbers)))  # no hole, no half memory
        assert last + 1 <= len(numbers) <= last + 2  # what was committed is all there
        path.unlink()
        for extra in path.parent.glob(path.name + "-*"):
            extra.unlink()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    yield from mounted_small_disk(tmp_path)


def test_a_full_disk_is_reported_and_nothing_is_half_written(small_disk: SmallDisk) -> None:
    store = MemoryStore(small_disk.path / "memory.sqlite3")
    store.add("Mika", MemoryDraft("The user likes tea."))
    small_disk.fill()
    try:
        with pytest.raises(MemoryStoreError, match="disk is full"):
            for n in range(200):  # until the pages SQLite already had run out
                store.add("Mika", MemoryDraft(f"The user told fact {n}: " + "x" * 400))
        written = store.count("Mika")
        assert store.drain_notices() == []  # a full disk is not a damaged file
    finally:
        small_disk.free()
    store.add("Mika", MemoryDraft("The user likes coffee."))
    assert store.count("Mika") == written + 1
    assert (
        sqlite3.connect(small_disk.path / "memory.sqlite3")
        .execute("PRAGMA integrity_check")
        .fetchone()[0]
        == "ok"
    )
    store.close()

"""A full disk, for real: history on a 256 KiB tmpfs filled to the last page. Nothing is
lost silently: the user is told, what could not be written waits in memory and is
written in order when there is room, and a repair never empties a file."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.agent.storage import FileStorage, HistoryNotSaved
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, Notice, SessionEvent
from app.llm import Msg
from app.session import VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer, wait_until
from tests.small_disk import SmallDisk, mounted_small_disk

LONG = "x" * 5000  # more than a page: a write of it always needs room the disk lacks


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    yield from mounted_small_disk(tmp_path)


def texts(messages: list[Msg]) -> list[str]:
    return [m.text for m in messages]


def test_a_write_to_a_full_disk_waits_in_memory_and_goes_out_in_order(
    small_disk: SmallDisk,
) -> None:
    store = FileStorage(small_disk.path / "history")
    uid = store.create_history("c")
    store.append("c", uid, [Msg.user("one"), Msg.assistant("two")])
    path = small_disk.path / "history" / "c" / f"{uid}.jsonl"
    before = path.read_bytes()
    small_disk.fill()

    with pytest.raises(HistoryNotSaved) as caught:
        store.append("c", uid, [Msg.user("three " + LONG), Msg.assistant("four")])
    assert caught.value.unsaved == 2 and "No space left" in str(caught.value)
    with pytest.raises(HistoryNotSaved):
        store.amend_last("c", uid, Msg.assistant("four, heard"))
    assert store.unsaved() == 3
    assert store.write_problem is not None
    # The file is exactly as it was (a write cut short is cut off again) ...
    assert path.read_bytes() == before
    # ... and the conversation, as this app sees it, holds everything.
    assert texts(store.load("c", uid)) == ["one", "two", "three " + LONG, "four, heard"]
    assert store.retry_unsaved() == 3  # still full

    small_disk.free()
    store.append("c", uid, [Msg.user("five")])  # the next write takes the waiting ones first
    assert store.unsaved() == 0 and store.write_problem is None
    again = FileStorage(small_disk.path / "history")  # a restart
    assert texts(again.load("c", uid)) == ["one", "two", "three " + LONG, "four, heard", "five"]
    assert again.drain_notices() == []  # nothing torn, nothing twice


def test_a_retry_writes_what_waited_once_there_is_room(small_disk: SmallDisk) -> None:
    root = small_disk.path / "history"
    store = FileStorage(root)
    uid = store.create_history("c")
    small_disk.fill()
    with pytest.raises(HistoryNotSaved):
        store.append("c", uid, [Msg.user(LONG), Msg.assistant("ok")])
    with pytest.raises(HistoryNotSaved):
        store.rename_history("c", uid, "Named on a full disk")
    assert store.list_conversations("c")[0].title == "Named on a full disk"
    small_disk.free()
    assert store.retry_unsaved() == 0
    assert texts(FileStorage(root).load("c", uid)) == [LONG, "ok"]
    assert store.retry_unsaved() == 0  # written once, never twice
    assert texts(FileStorage(root).load("c", uid)) == [LONG, "ok"]
    assert FileStorage(root).list_conversations("c")[0].title == "Named on a full disk"


def test_a_repair_on_a_full_disk_leaves_the_file_as_it_was(small_disk: SmallDisk) -> None:
    root = small_disk.path / "history"
    store = FileStorage(root)
    uid = store.create_history("c")
    store.append("c", uid, [Msg.user("one " + LONG), Msg.assistant("two")])
    path = root / "c" / f"{uid}.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b'{"op": "amend", "index": "x", "msg": {}}\n' + good)
    damaged = path.read_bytes()
    small_disk.fill()

    fresh = FileStorage(root)
    [info] = fresh.list_conversations("c")
    assert info.message_count == 4  # never 0 for a conversation that has messages
    assert path.read_bytes() == damaged
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no .tmp, no .bad
    [notice] = fresh.drain_notices()
    assert "\n" not in notice
    assert "could not be repaired" in notice and "left as it was" in notice
    assert "No space left" in notice and uid in notice and "one x" in notice  # which one
    assert texts(fresh.load("c", uid)) == ["one " + LONG, "two"] * 2
    assert fresh.drain_notices() == []  # told once

    small_disk.free()
    assert len(fresh.load("c", uid)) == 4  # repaired now
    [repaired] = fresh.drain_notices()
    assert "kept as" in repaired and ".bad" in repaired
    assert path.with_name(path.name + ".bad").read_bytes() == damaged
    assert path.read_bytes() == good + good


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(["All", " right."])]) as srv:
        yield srv


def session_on(
    root: Path, server: ScriptedChatServer, storage: FileStorage | None = None
) -> tuple[VoiceSession, list[SessionEvent]]:
    settings = Settings()
    settings.chat.model = "openai-compatible/scripted"
    settings.chat.base_url = server.base_url
    hub = EventHub()
    seen: list[SessionEvent] = []
    hub.subscribe(seen.append)
    storage = storage or FileStorage(root)
    return VoiceSession(settings, sink=MemorySink(), storage=storage, events=hub), seen


def notices(seen: list[SessionEvent]) -> list[Notice]:
    return [e for e in seen if isinstance(e, Notice)]


async def test_the_window_is_told_and_the_turns_are_saved_when_room_returns(
    small_disk: SmallDisk, server: ScriptedChatServer
) -> None:
    root = small_disk.path / "history"
    session, seen = session_on(root, server)
    try:
        first = await session.send_text("Before the disk filled up.")
        assert first.saved and first.unsaved == 0
        small_disk.fill()
        result = await session.send_text("A long question. " + LONG)
        assert result.error is None and not result.saved and result.unsaved == 2
        assert result.save_problem is not None and "disk is full" in result.save_problem
        assert result.to_json()["saved"] is False
        await asyncio.sleep(0)  # the notice follows the turn's own events
        [told] = notices(seen)
        assert told.error and "not saved" in told.message and "disk is full" in told.message
        assert "The last 2 messages wait in memory" in told.message
        assert "\n" not in told.message
        # A restart now would find only the first turn: the rest waits in memory.
        assert len(FileStorage(root).load("default", session.conversation_id)) == 2

        small_disk.free()
        retrying = asyncio.create_task(session.conversation_list.keep_saving(every_s=0.05))
        try:
            assert await asyncio.to_thread(
                wait_until, lambda: "saved again" in " ".join(n.message for n in notices(seen))
            )
        finally:
            retrying.cancel()
            await asyncio.gather(retrying, return_exceptions=True)
        after = await session.send_text("And after.")
        assert after.saved
    finally:
        await session.aclose()
    saved = FileStorage(root).load("default", session.conversation_id)
    users = [m.text for m in saved if m.role == "user"]
    assert users == ["Before the disk filled up.", "A long question. " + LONG, "And after."]
    assert [m.role for m in saved] == ["user", "assistant"] * 3
    assert len(notices(seen)) == 2  # told once that it stopped, once that it is saved


async def test_a_session_starts_on_a_full_disk(
    small_disk: SmallDisk, server: ScriptedChatServer
) -> None:
    small_disk.fill()
    session, seen = session_on(small_disk.path / "history", server)
    try:
        result = await session.send_text("Hello " + LONG)
        await asyncio.sleep(0)
        assert any("not saved" in n.message for n in notices(seen))
        assert result.error is None and not result.saved
        assert session.conversations()[0].message_count == 2
    finally:
        await session.aclose()


def test_a_full_disk_under_the_log_file_is_said_once_not_a_traceback_per_line(
    small_disk: SmallDisk, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    from app import logs

    path = logs.setup_logging(logging.ERROR, small_disk.path / "logs")
    assert path is not None
    log = logging.getLogger("test.full_disk")
    try:
        log.warning("before")
        small_disk.fill()
        for number in range(50):
            log.warning("while full %d %s", number, LONG)
        told = capsys.readouterr().err
        assert "Logging error" not in told and "Traceback" not in told
        assert told.count("cannot be written") == 1 and "No space left" in told
        small_disk.free()
        log.warning("after, there is room")
        for handler in logging.getLogger().handlers:
            handler.flush()
        assert "after, there is room" in path.read_text()
        small_disk.fill()
        log.warning("full again %s", LONG)
        assert capsys.readouterr().err.count("cannot be written") == 1  # a new episode
    finally:
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "_companion", False):
                logging.getLogger().removeHandler(handler)
                with contextlib.suppress(OSError):
                    handler.close()


def test_the_advice_fits_the_cause_room_only_for_a_full_disk() -> None:
    import errno

    from app.session.conversations import unsaved_words

    full = unsaved_words(2, OSError(errno.ENOSPC, "No space left on device"))
    assert "the disk is full" in full and "make some room" in full
    for cause in (errno.EROFS, errno.EACCES):
        told = unsaved_words(1, OSError(cause, "nope"))
        assert "make some room" not in told and "let Companion write to its data folder" in told

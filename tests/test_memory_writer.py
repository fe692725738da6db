"""The memory's writer schedules two kinds of work off the voice path: turns queued for
extraction (after a quiet moment, and given back to a turn that needs the model) and
the next turn's prompt read ahead (at once after a turn, before the extractions, again
after each, and stopped only by a turn)."""

from __future__ import annotations

import asyncio

from app.memory.writer import MemoryWriter


class Log:
    def __init__(self) -> None:
        self.order: list[str] = []
        self.cancelled: list[str] = []
        self.ahead_s = 0.0

    async def job(self, name: str) -> None:
        self.order.append(name)

    async def ahead(self) -> None:
        self.order.append("ahead")
        try:
            await asyncio.sleep(self.ahead_s)
        except asyncio.CancelledError:
            self.cancelled.append("ahead")
            raise


async def until(condition: object, what: str) -> None:
    for _ in range(1000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never: {what}")


async def test_reading_ahead_starts_when_the_turn_ends_not_after_the_quiet_wait() -> None:
    log = Log()
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=60.0)
    with writer.hold():
        writer.submit("turn 1")
        writer.ahead(log.ahead)
        await asyncio.sleep(0.05)
        assert log.order == []  # nothing while the turn runs
    await until(lambda: log.order == ["ahead"], "read ahead after the turn")
    await asyncio.sleep(0.05)
    assert log.order == ["ahead"]  # the extraction still waits for its quiet minute
    assert writer.pending == 1
    await writer.aclose(wait_s=0.0)


async def test_reading_ahead_runs_before_each_extraction_and_again_after_it() -> None:
    log = Log()
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=0.0)
    with writer.hold():
        writer.submit("turn 1")
        writer.submit("turn 2")
        writer.ahead(log.ahead)
    await until(lambda: len(log.order) == 5, "everything done")
    assert log.order == ["ahead", "turn 1", "ahead", "turn 2", "ahead"]
    await writer.aclose()


async def test_only_a_turn_stops_reading_ahead_not_the_user_speaking() -> None:
    log = Log()
    log.ahead_s = 30.0
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=0.0)
    writer.ahead(log.ahead)
    await until(lambda: log.order == ["ahead"], "reading ahead")
    writer.activity()  # the user started to speak: the turn will need what it reads
    await asyncio.sleep(0.05)
    assert log.cancelled == [] and writer.yielded == 0
    with writer.hold():  # the turn: it reads the rest itself
        await until(lambda: log.cancelled == ["ahead"], "stopped for the turn")
        assert log.order == ["ahead"]
    log.ahead_s = 0.0
    await until(lambda: log.order == ["ahead", "ahead"], "read ahead again after it")
    await writer.aclose()


async def test_a_later_read_ahead_replaces_the_earlier_one() -> None:
    log = Log()
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=0.0)

    async def newer() -> None:
        log.order.append("newer")

    with writer.hold():
        writer.ahead(log.ahead)
        writer.ahead(newer)
    await until(lambda: log.order == ["newer"], "the newer one")
    await asyncio.sleep(0.05)
    assert log.order == ["newer"]
    await writer.aclose()


async def test_closing_stops_reading_ahead_and_still_looks_at_the_queued_turns() -> None:
    log = Log()
    log.ahead_s = 30.0
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=0.0)
    writer.submit("turn 1")
    writer.ahead(log.ahead)
    await until(lambda: log.order == ["ahead"], "reading ahead")
    left = await writer.aclose(wait_s=5.0)
    assert log.cancelled == ["ahead"]
    assert log.order == ["ahead", "turn 1"] and left == []


async def test_a_read_ahead_due_while_an_extraction_waits_for_quiet_goes_first() -> None:
    log = Log()
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=60.0)
    writer.submit("turn 1")  # waiting for its quiet minute
    await asyncio.sleep(0.05)
    with writer.hold():
        writer.ahead(log.ahead)  # the next turn ended meanwhile
    await until(lambda: log.order == ["ahead"], "read ahead at once")
    assert writer.pending == 1
    await writer.aclose(wait_s=0.0)


async def test_no_turn_is_dropped_however_many_wait() -> None:
    log = Log()
    writer: MemoryWriter[str] = MemoryWriter(log.job, yields_to_turns=True, idle_s=60.0)
    for n in range(250):  # 250 facts told back to back, none looked at yet
        writer.submit(f"turn {n}")
    assert writer.pending == 250
    left = await writer.aclose(wait_s=0.0)
    assert left == [f"turn {n}" for n in range(250)]  # all kept for the next start

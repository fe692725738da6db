"""Hearing while the user speaks (app.session.hearing): one transcription at a time,
the newest pause first, interval snapshots left out when transcribing is slow, and the
final words of an ended turn fixed at its end. A recognizer that takes a known time
stands in for whisper here (tests/test_turn_taking.py runs the real one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterable

from app.session.endpointing import Snapshot
from app.session.hearing import Snapshots
from app.speech import TranscriptionEvent


class Timed:
    """Says how many bytes it heard, after `seconds`; counts its calls."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.heard: list[int] = []

    async def load(self) -> None:
        return None

    async def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        size = sum([len(chunk) async for chunk in audio])
        self.heard.append(size)
        await asyncio.sleep(self.seconds)
        yield TranscriptionEvent(text=f"{size} bytes", is_final=True)


def snap(size: int, *, at_pause: bool) -> Snapshot:
    return Snapshot(b"\0" * size, size - 100, at_pause)


async def settle(hearing: Snapshots) -> None:
    async with asyncio.timeout(10):
        while hearing.busy:
            await asyncio.sleep(0.01)


async def test_one_at_a_time_and_only_the_newest_pause_waits() -> None:
    speech = Timed(0.1)
    hearing = Snapshots(speech, interval_s=1.0)
    hearing.begin()
    assert hearing.offer(snap(1000, at_pause=False))
    assert hearing.offer(snap(2000, at_pause=True))  # waits
    # an interval while busy: dropped, and it says so (the detector then snapshots the
    # pause after it again)
    assert not hearing.offer(snap(3000, at_pause=False))
    assert hearing.offer(snap(4000, at_pause=True))  # the newest pause replaces the older
    await settle(hearing)
    await asyncio.sleep(0.2)
    await settle(hearing)
    assert speech.heard == [1000, 4000]
    assert [(h.speech_bytes, h.text) for h in hearing.take()] == [
        (900, "1000 bytes"), (3900, "4000 bytes")
    ]
    assert not hearing.wake.is_set()


async def test_interval_snapshots_are_left_out_while_transcribing_is_slow() -> None:
    speech = Timed(0.5)  # more than a third of the 1 s interval
    hearing = Snapshots(speech, interval_s=1.0)
    hearing.begin()
    hearing.offer(snap(1000, at_pause=False))
    await settle(hearing)
    await asyncio.sleep(1.1)  # rested long enough, but still slow
    hearing.offer(snap(2000, at_pause=False))
    assert not hearing.busy
    hearing.offer(snap(3000, at_pause=True))  # pauses are always heard
    await settle(hearing)
    assert speech.heard == [1000, 3000]


async def test_the_final_words_are_fixed_when_the_turn_ends() -> None:
    speech = Timed(0.2)
    hearing = Snapshots(speech, interval_s=1.0)
    hearing.begin()
    hearing.offer(snap(1000, at_pause=True))
    await settle(hearing)
    known = hearing.final_for(b"\0" * 1000, 900)  # heard already
    hearing.offer(snap(2000, at_pause=True))
    running = hearing.final_for(b"\0" * 2000, 1900)  # being transcribed
    hearing.offer(snap(3000, at_pause=True))  # waits behind it ...
    queued = hearing.final_for(b"\0" * 3000, 2900)  # ... and is the final's to do
    hearing.begin()  # the next turn starts: none of the above changes
    assert await known() == ("1000 bytes", True)
    assert await running() == ("2000 bytes", True)
    assert await queued() == ("3000 bytes", False)
    await settle(hearing)
    assert speech.heard == [1000, 2000, 3000]  # nothing transcribed twice

"""Its own voice heard back is never a turn, whatever the path from the speaker to the
microphone (issue 28, item 1), on the turn path as on the barge-in's:

- a path slower than the echo tail (a Bluetooth speaker, a sound system's buffers):
  the end of the reply is heard after the microphone opens again; its words are the
  companion's own, so they are dropped;
- a listener that fell behind the room (a busy machine): what the microphone heard
  while the companion spoke is judged by when it was heard, not when it was read.

The words of a user who answers right after the reply are still a turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.audio.capture import CapturedSource, ChunkListSource, heard_at
from app.audio.wav import read_wav_16k
from app.config import Settings
from app.session.listen_events import UserStoppedSpeaking
from app.session.speaking import CompanionStartedSpeaking, CompanionStoppedSpeaking
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_barge_in import (
    LONG_REPLY,
    make_session,
    settled,
    transcripts,
)


async def _turns_of(words: str, after_echo_s: float) -> tuple[list[str], int]:
    """The user's turns (and the requests made) when `words` end `after_echo_s` after
    the echo tail of a reply made of LONG_REPLY (a second of speech)."""
    with ScriptedChatServer([Reply.text_stream(["Sure."])]) as srv:
        session, seen = make_session(srv)
        said = "".join(LONG_REPLY)
        session.signals.emit(CompanionStartedSpeaking(1))
        echo_until = time.perf_counter()
        session.signals.emit(CompanionStoppedSpeaking(1, said, echo_until))
        pcm = bytes(16_000 * 2)  # one second of it
        end = echo_until + after_echo_s + 1.0
        try:
            session.user_turns.ended(
                UserStoppedSpeaking(pcm, end, text=words, ended_at=end + 0.2)
            )
            await settled(session, seen, 0)
        finally:
            await session.aclose()
        return transcripts(seen), len(srv.requests)


@pytest.mark.parametrize(
    "words",
    [
        "The second sentence goes on about waves, tides and the moon.",  # heard late
        "nobody should hear if they interrupt",  # its last words, whisper's casing
        "And a third one which nobody should",  # cut where the echo stopped
    ],
)
async def test_its_own_words_heard_after_the_echo_tail_are_not_a_turn(words: str) -> None:
    assert await _turns_of(words, 0.5) == ([], 0)  # late, past the tail: its own voice


async def test_the_users_words_right_after_the_reply_are_a_turn() -> None:
    assert await _turns_of("Tell me more about the moon please", 0.5) == (
        ["Tell me more about the moon please"],
        1,
    )
    # The same words as the companion's, said long after it spoke: the user's.
    words = "nobody should hear if they interrupt"
    assert await _turns_of(words, 10.0) == ([words], 1)


def test_a_chunk_is_judged_by_when_it_was_heard() -> None:
    class Late:
        captured_at = 10.0

    class Unknown:
        captured_at = None

    assert isinstance(Late(), CapturedSource)
    assert heard_at(Late(), 12.5) == 10.0  # read 2.5 s after it was heard
    assert heard_at(Unknown(), 12.5) == 12.5
    assert heard_at(ChunkListSource([]), 12.5) == 12.5  # a file does not know: now
    assert heard_at(Late(), 9.0) == 9.0  # never later than now


class LaggingSource:
    """A microphone read by a listener that is `lag_s` behind: each chunk says it was
    heard `lag_s` before it is handed out."""

    def __init__(self, chunks: list[bytes], lag_s: float) -> None:
        self._chunks, self.lag_s = chunks, lag_s
        self.captured_at: float | None = None

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            await asyncio.sleep(0)
            self.captured_at = time.perf_counter() - self.lag_s
            yield chunk

    async def aclose(self) -> None:
        return None


async def _heard_while_behind(question_wav: Path, lag_s: float) -> list[str]:
    """The question read by a listener `lag_s` behind the room, the companion's voice
    (half-duplex: the microphone is not heard while it plays and for its echo tail)
    having stopped 1.5 s before the reading starts."""
    with ScriptedChatServer([Reply.text_stream(["Sure."])]) as srv:
        settings = Settings()
        settings.audio.barge_in = False
        settings.audio.echo_mode = "half_duplex"
        session, seen = make_session(srv, settings)
        session.signals.emit(CompanionStartedSpeaking(1))
        stopped = time.perf_counter() - 1.5
        session.signals.emit(CompanionStoppedSpeaking(1, "Hello there.", stopped + 0.25))
        pcm = read_wav_16k(question_wav) + bytes(16_000 * 2 * 2)
        chunks = [pcm[i : i + 1024] for i in range(0, len(pcm) - 1023, 1024)]
        try:
            await session.listen(LaggingSource(chunks, lag_s))
            await settled(session, seen, 1 if lag_s == 0 else 0)
        finally:
            await session.aclose()
    return transcripts(seen)


async def test_a_listener_behind_the_room_drops_what_was_heard_over_the_voice(
    question_wav: Path,
) -> None:
    # Read at once, the question (said after the voice stopped) is a turn ...
    assert len(await _heard_while_behind(question_wav, 0.0)) == 1
    # ... read 5 s late, it was heard while the companion spoke: dropped.
    assert await _heard_while_behind(question_wav, 5.0) == []

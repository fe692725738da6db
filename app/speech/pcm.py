"""The PCM input contract shared by every adapter: checking chunks, closing the source, WAV."""

from __future__ import annotations

import contextlib
import io
import wave
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator

from app.speech.errors import SpeechInputError

SAMPLE_RATE = 16_000
SAMPLE_WIDTH = 2
BYTES_PER_SECOND = SAMPLE_RATE * SAMPLE_WIDTH


def check_chunk(chunk: bytes) -> bytes:
    """`chunk` as bytes when it is valid 16-bit PCM; `SpeechInputError` otherwise."""
    if not isinstance(chunk, bytes | bytearray | memoryview):
        raise SpeechInputError(
            f"speech input must be bytes of 16-bit PCM, not {type(chunk).__name__}"
        )
    data = bytes(chunk)
    if not data:
        raise SpeechInputError("speech input chunks must not be empty")
    if len(data) % SAMPLE_WIDTH:
        raise SpeechInputError(
            f"speech input must be 16-bit PCM: a chunk of {len(data)} bytes is not a whole "
            "number of samples (an even byte count)"
        )
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        raise SpeechInputError(
            "speech input must be raw 16 kHz s16le mono PCM, but a chunk starts with a WAV "
            "header: read the file with app.audio.wav.read_wav_16k first"
        )
    return data


@contextlib.asynccontextmanager
async def pcm_input(audio: AsyncIterable[bytes]) -> AsyncIterator[AsyncIterator[bytes]]:
    """The chunks of `audio`, each checked, for the length of the block; then the
    source is closed, however the block ends and even if it was never read.

    Closing matters when the consumer stops early: a microphone source must learn
    that nobody listens any more, at once rather than whenever it is collected.
    """
    source = aiter(audio)
    checked = _checked(source)
    try:
        yield checked
    finally:
        await checked.aclose()
        await aclose_quietly(source)


async def _checked(source: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    async for chunk in source:
        yield check_chunk(chunk)


async def aclose_quietly(source: object) -> None:
    """Close an async iterator if it can be closed (async generators can)."""
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        await aclose()


def pcm_to_wav(pcm: bytes) -> bytes:
    """A 16 kHz mono 16-bit WAV file holding `pcm`."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(SAMPLE_WIDTH)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm)
    return buffer.getvalue()


class Packetizer:
    """Re-cuts PCM chunks of any size into packets of `size` bytes (the last may be shorter).

    Streaming services want audio in packets of a set duration (100–200 ms); the
    microphone delivers whatever its callback had.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        self._pending += chunk
        packets = []
        while len(self._pending) >= self.size:
            packets.append(bytes(self._pending[: self.size]))
            del self._pending[: self.size]
        return packets

    def rest(self) -> bytes:
        rest = bytes(self._pending)
        self._pending.clear()
        return rest

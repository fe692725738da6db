"""The PCM input contract `SpeechClient` enforces (checking chunks, closing the source),
and what adapters share about PCM (WAV wrapping, packets)."""

from __future__ import annotations

import io
import logging
import wave
from collections.abc import AsyncIterable, Callable

from app.audio.format import SAMPLE_RATE, SAMPLE_WIDTH
from app.speech.errors import SpeechInputError

log = logging.getLogger(__name__)


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


class CheckedAudio:
    """The chunks of a source, each checked, as the adapter reads them; it records how
    the source ended (`ended`, `error`) and tells `on_wait` when a reader starts and
    stops waiting for a chunk, so the client knows when the adapter is busy.

    After a failure every further read fails the same way: an adapter that swallowed
    the error cannot read on as if the audio were fine.
    """

    def __init__(
        self, source: AsyncIterable[bytes], on_wait: Callable[[bool], None] | None = None
    ) -> None:
        self._source = aiter(source)
        self._on_wait = on_wait
        self._waiting = 0
        self._closed = False
        self._held: bytes | None = None  # the first chunk, read ahead by `has_audio`
        self.ended = False
        self.error: Exception | None = None

    @property
    def waiting(self) -> bool:
        """Whether a reader is waiting for the next chunk right now."""
        return self._waiting > 0

    def __aiter__(self) -> CheckedAudio:
        return self

    async def has_audio(self) -> bool:
        """Whether the source gives any audio: its first chunk is read (and checked) ahead
        and is the first one a reader then gets."""
        if self._held is None:
            try:
                self._held = await self.__anext__()
            except StopAsyncIteration:
                return False
        return True

    async def __anext__(self) -> bytes:
        if self._held is not None:
            chunk, self._held = self._held, None
            return chunk
        if self.error is not None:
            raise self.error
        if self.ended or self._closed:
            raise StopAsyncIteration
        self._set_waiting(+1)
        try:
            chunk = await anext(self._source)
        except StopAsyncIteration:
            self.ended = True
            raise
        except Exception as exc:  # a cancelled read is no failure of the audio
            self.error = exc
            raise
        finally:
            self._set_waiting(-1)
        try:
            return check_chunk(chunk)
        except SpeechInputError as exc:
            self.error = exc
            raise

    def _set_waiting(self, change: int) -> None:
        before = self._waiting > 0
        self._waiting += change
        if self._on_wait is not None and (self._waiting > 0) != before:
            self._on_wait(self._waiting > 0)

    async def aclose(self) -> None:
        """Close the source (a microphone learns at once that nobody listens any more)."""
        if self._closed:
            return
        self._closed = True
        try:
            await aclose_quietly(self._source)
        except RuntimeError:
            # A reader the adapter left running is inside the source right now; the
            # source then ends when that reader is collected.
            log.warning("the audio source was still being read when the recognizer ended")


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

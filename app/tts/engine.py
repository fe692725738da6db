"""The TTS engine protocol and its data types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class TTSError(Exception):
    """One sentence failed to synthesise; the message is for the user."""


class TTSUnavailableError(TTSError):
    """The engine cannot run on this machine; the message says what to install."""


@dataclass(slots=True, frozen=True)
class Voice:
    id: str
    name: str
    languages: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class SynthesizedAudio:
    """Mono s16le PCM at `sample_rate`."""

    pcm: bytes
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate if self.sample_rate else 0.0


@runtime_checkable
class TTSEngine(Protocol):
    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio: ...

    async def voices(self) -> list[Voice]: ...

    async def aclose(self) -> None: ...

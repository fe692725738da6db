"""Audio in and out: WAV files, the microphone, voice activity, playback.

Everything inside the app is 16 kHz (input) 16-bit little-endian mono PCM. The names
below load on first use, so a light module of the package (the native libraries'
messages, set up before the window shows) does not bring numpy with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.audio.wav import AudioFileError, read_wav_16k, write_wav

__all__ = ["AudioFileError", "read_wav_16k", "write_wav"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from app.audio import wav

        return getattr(wav, name)
    raise AttributeError(f"module 'app.audio' has no attribute {name!r}")

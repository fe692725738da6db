"""A stand-in for PyAV (FFmpeg, ~105 MB) inside the frozen app only.

faster-whisper imports `av` at module level for `decode_audio`, which decodes audio
*files*; Companion hands it 16 kHz PCM arrays and never calls it. Any use of this
stub raises, so a future code path that needs FFmpeg fails loudly in the self-test.
"""

from typing import NoReturn


def __getattr__(name: str) -> NoReturn:
    if name.startswith("__"):  # introspection (hasattr(av, "__wrapped__"), ...)
        raise AttributeError(name)
    raise ImportError(
        f"av.{name}: audio-file decoding (PyAV/FFmpeg) is not included in this build"
    )

"""Speech recognition behind one small contract (the seed's speech transcription).

`create_speech_client(config)` returns a `SpeechClient` (or `None` when disabled).
`client.stream(audio)` takes 16 kHz s16le mono PCM chunks and yields
`TranscriptionEvent(text, is_final)`; `text` is always the whole current text.
Errors (`app.speech.errors` tree):

    SpeechError
    ├── SpeechInputError        bad audio handed to the client (odd byte count, empty chunk)
    └── SpeechModelError        the recognition model cannot be found or loaded
"""

from app.speech.client import (
    SpeechClient,
    SpeechConfig,
    TranscriptionEvent,
    create_speech_client,
)
from app.speech.errors import SpeechError, SpeechInputError, SpeechModelError

__all__ = [
    "SpeechClient",
    "SpeechConfig",
    "SpeechError",
    "SpeechInputError",
    "SpeechModelError",
    "TranscriptionEvent",
    "create_speech_client",
]

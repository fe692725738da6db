"""Speech recognition behind one small contract (the seed's speech transcription).

`create_speech_client(config)` returns a `SpeechClient` (or `None` when disabled).
`client.stream(audio)` takes 16 kHz s16le mono PCM chunks and yields
`TranscriptionEvent(text, is_final)`; `text` is always the whole current text,
a successful end yields exactly one final event, and a failure or cancellation
never does. Adapters (`app.speech.adapters`): `whisper_local` (embedded,
default), `openai_transcribe`, `doubao_asr`, `dashscope_funasr`.

Errors (`app.speech.errors` tree):

    SpeechError
    ├── SpeechInputError        bad audio handed to the client (odd byte count, empty
    │                           chunk, a WAV header)
    ├── SpeechModelError        the recognition model cannot be found or loaded, or cannot
    │                           do the configured language (tiny.en is English-only)
    ├── SpeechAuthError         no key configured, or the service refused it
    ├── SpeechRateLimitError    the service asks to slow down (`retry_after`)
    ├── SpeechConnectionError   unreachable, timed out, or the socket closed mid-utterance
    ├── SpeechProtocolError     the service sent a frame its protocol does not allow
    └── SpeechServiceError      the service reported its own failure (`code`)
"""

from app.speech.client import (
    ADAPTERS,
    SpeechClient,
    SpeechConfig,
    TranscriptionEvent,
    create_speech_client,
)
from app.speech.errors import (
    SpeechAuthError,
    SpeechConnectionError,
    SpeechError,
    SpeechInputError,
    SpeechModelError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
)

__all__ = [
    "ADAPTERS",
    "SpeechAuthError",
    "SpeechClient",
    "SpeechConfig",
    "SpeechConnectionError",
    "SpeechError",
    "SpeechInputError",
    "SpeechModelError",
    "SpeechProtocolError",
    "SpeechRateLimitError",
    "SpeechServiceError",
    "TranscriptionEvent",
    "create_speech_client",
]

"""Speech recognition behind one small contract (the seed's speech transcription).

`create_speech_client(config)` returns a `SpeechClient` (or `None` when disabled);
`config` is a `SpeechConfig` or the user's speech settings (`Settings.speech`).
`client.stream(audio)` takes 16 kHz s16le mono PCM chunks and yields
`TranscriptionEvent(text, is_final)`; `text` is always the whole current text,
a successful end yields exactly one final event, and a failure or cancellation
never does. `SpeechClient(adapter)` enforces all of it in one place
(`app.speech.client`, the event rules in `app.speech.rules`) around a
`SpeechAdapter` (`app.speech.contract`), which only turns checked audio into
events. Adapters (`app.speech.adapters`): `whisper_local` (embedded, default),
`openai_transcribe`, `doubao_asr`, `dashscope_funasr`; `app.speech.factory` picks
one. A custom recognizer is `SpeechClient(MyAdapter())`.

Languages and names: `speech.language` "auto" follows the windows' language
(`create_speech_client(settings, ui_language=...)`, `client.set_ui_language`) unless
the recognizer is sure it hears English or Chinese instead (`app.speech.languages`);
each event says the language it heard (`TranscriptionEvent.language`). The built-in
models (`app.speech.whisper_models`): tiny.en for English, Whisper base for the rest.
`client.set_known_words(words)` (any time) makes it listen for names it was told;
`app.speech.known_words` finds them in remembered facts.

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
    ├── SpeechServiceError      the service reported its own failure (`code`)
    └── SpeechAdapterError      the adapter broke the contract (two finals, pieces of text,
                                an unexpected exception, no answer): caught by the client
"""

from app.speech.client import SpeechClient
from app.speech.contract import ADAPTERS, SpeechAdapter, SpeechConfig, TranscriptionEvent
from app.speech.errors import (
    SpeechAdapterError,
    SpeechAuthError,
    SpeechConnectionError,
    SpeechError,
    SpeechInputError,
    SpeechModelError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
)
from app.speech.factory import create_speech_client

__all__ = [
    "ADAPTERS",
    "SpeechAdapter",
    "SpeechAdapterError",
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

"""Speech synthesis engines behind one protocol: text in, PCM out.

Engines: `auto` (the default: hibari for Latin-alphabet sentences, the system voice for
other scripts and when hibari cannot load), `pyttsx3` (the system voice: espeak-ng,
SAPI5, NSSS), `hibari` (an offline neural voice whose model ships in its PyPI package)
and `openai_speech` (any OpenAI-compatible `/audio/speech` server).
`create_tts_engine(settings.tts)` picks one.

TTSError                 a sentence could not be synthesised (the turn goes on)
└── TTSUnavailableError  the engine cannot run at all (missing voice, package or key)
"""

from app.tts.engine import (
    NORMAL_RATE,
    LoadingTTSEngine,
    StreamingTTSEngine,
    SynthesizedAudio,
    TTSEngine,
    TTSError,
    TTSUnavailableError,
    Voice,
    stream_speech,
)
from app.tts.factory import create_tts_engine

__all__ = [
    "NORMAL_RATE",
    "LoadingTTSEngine",
    "StreamingTTSEngine",
    "SynthesizedAudio",
    "TTSEngine",
    "TTSError",
    "TTSUnavailableError",
    "Voice",
    "create_tts_engine",
    "stream_speech",
]

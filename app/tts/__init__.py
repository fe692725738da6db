"""Speech synthesis engines behind one protocol: text in, PCM out.

TTSError                 a sentence could not be synthesised (the turn goes on)
└── TTSUnavailableError  the engine cannot run at all (missing system voice)
"""

from app.tts.engine import SynthesizedAudio, TTSEngine, TTSError, TTSUnavailableError, Voice

__all__ = ["SynthesizedAudio", "TTSEngine", "TTSError", "TTSUnavailableError", "Voice"]

"""Audio in and out: WAV files, the microphone, voice activity, playback.

Everything inside the app is 16 kHz (input) 16-bit little-endian mono PCM.
"""

from app.audio.wav import AudioFileError, read_wav_16k, write_wav

__all__ = ["AudioFileError", "read_wav_16k", "write_wav"]

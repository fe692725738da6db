"""The one PCM format inside the app: 16 kHz, 16-bit little-endian, mono; and the frame
sizes every stage cuts it into."""

from __future__ import annotations

SAMPLE_RATE = 16_000
SAMPLE_WIDTH = 2  # bytes: s16le
CHANNELS = 1
BYTES_PER_SECOND = SAMPLE_RATE * SAMPLE_WIDTH

# Silero VAD's frame, which is also the microphone's chunk: 512 samples, 32 ms.
FRAME_SAMPLES = 512
FRAME_BYTES = FRAME_SAMPLES * SAMPLE_WIDTH
FRAME_MS = FRAME_SAMPLES * 1000 / SAMPLE_RATE


def pcm_bytes(seconds: float) -> int:
    """How many bytes `seconds` of this format take (whole samples)."""
    return int(seconds * SAMPLE_RATE) * SAMPLE_WIDTH

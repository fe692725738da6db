"""Sample-rate conversion, all of it through soxr (its high-quality linear-phase filter):
a whole signal at once (`resample`) or a stream cut into chunks of any size
(`StreamResampler`).

A stream's output is lined up with its input (output sample k is input time
k / to_rate, as for the whole signal), but soxr filters in blocks and hands a stretch
of output out only once the input after it has arrived: `pending` output samples are
owed at any moment (measured for 48, 44.1, 24 and 22.05 kHz → 16 kHz in chunks of
10-40 ms: about 22 ms on average, at most 40 ms). `flush()` ends the stream and
returns them.
"""

from __future__ import annotations

import numpy as np
import soxr

from app.audio.format import SAMPLE_RATE

QUALITY = "HQ"


def resample(samples: np.ndarray, from_rate: int, to_rate: int = SAMPLE_RATE) -> np.ndarray:
    """A whole float32 mono signal at `to_rate` (round(n * to_rate / from_rate) samples)."""
    x = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
    if from_rate == to_rate or x.size == 0:
        return x
    return np.asarray(soxr.resample(x, from_rate, to_rate, quality=QUALITY), dtype=np.float32)


class StreamResampler:
    """A mono stream in chunks of any size, float32 in and out (int16 values are fine:
    the filter is linear), with no seams between chunks: the chunked output equals the
    whole signal's. The same rate in and out passes the samples through at once."""

    def __init__(self, from_rate: int, to_rate: int = SAMPLE_RATE) -> None:
        if from_rate <= 0 or to_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {from_rate} → {to_rate}")
        self.from_rate, self.to_rate = int(from_rate), int(to_rate)
        self._stream = (
            None
            if self.from_rate == self.to_rate
            else soxr.ResampleStream(
                self.from_rate, self.to_rate, 1, dtype="float32", quality=QUALITY
            )
        )

    def push(self, samples: np.ndarray) -> np.ndarray:
        """The output that is ready (up to `pending` samples of it come with later chunks)."""
        if self._stream is None:  # a copy: the caller's buffer may be reused (PortAudio's)
            return np.array(samples, dtype=np.float32).reshape(-1)
        x = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
        return self._stream.resample_chunk(x)

    @property
    def pending(self) -> int:
        """Output samples owed for the input pushed so far."""
        return 0 if self._stream is None else round(self._stream.delay())

    def flush(self) -> np.ndarray:
        """The owed output; the stream then starts afresh, as if new."""
        if self._stream is None:
            return np.zeros(0, dtype=np.float32)
        tail = self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        self._stream.clear()
        return tail

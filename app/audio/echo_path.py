"""Whether the microphone hears the companion's voice at all.

Through headphones, or a set-up where the speaker does not reach the microphone, there
is no echo to cancel, and AEC3 still suppresses the user's voice wherever it overlaps
the companion's: the first 0.2-0.4 s of speech over the voice came out near silent
(Silero's probability 0.0 for 200 ms), so a user going on with their turn as the reply
began was heard half a second late and their first words were lost. AEC3 has a
"transparent mode" for this that the packaged build does not expose; this is ours.

`EchoPath.push(mic, far)` looks at every 10 ms frame while the voice plays (the
reference, or its last 200 ms, was loud): whether the microphone was above its own
noise floor (the quietest frame of the last 5 s, +4 dB: a steady noise stays under it)
then. With a speaker in the room the echo of speech is above the floor in most frames
(espeak-ng's voice at -26 dB in the microphone: 79 % of them; at -40 dB, 38 %); with no
echo path, the microphone rises only when the user speaks over the voice, and that
pauses the voice within a fraction of a second. So: `absent` once 2 s of voice passed
with the microphone above its floor in at most a fifth of the frames, and no longer
once it was above it in half of the last 2 s of voice (an echo that appears,
headphones taken off; a user's speech over the voice, which pauses it within half a
second, is not that). An echo quieter than the room's noise counts as none: the
listener does not take it for speech either. The envelopes of two voices correlate
too often (up to 0.78 over 1 s of espeak-ng) to tell an echo from the user by.
"""

from __future__ import annotations

import collections
import logging

import numpy as np

log = logging.getLogger(__name__)

FRAME = 160  # 10 ms at 16 kHz
FAR_LOUD_RMS = 300.0  # the voice's frames that count (about -40 dBFS)
FAR_RECENT_FRAMES = 20  # ... or a loud one in the last 200 ms (echo delay, the tail)
FLOOR_FRAMES = 500  # the microphone's noise floor: its quietest frame over 5 s
ABOVE_FLOOR = 10 ** (4 / 20)  # heard: 4 dB over the floor ...
MIN_HEARD_RMS = 30.0  # ... and over about -60 dBFS (a floor of digital silence)
ABSENT_FRAMES = 200  # 2 s of voice to decide there is no echo
ABSENT_SHARE = 0.2
PRESENT_SHARE = 0.5  # ... and the same 2 s to decide there is one after all


def _frame_rms(samples: np.ndarray) -> np.ndarray:
    n = samples.size // FRAME
    frames = samples[: n * FRAME].astype(np.float32).reshape(n, FRAME)
    return np.sqrt((frames**2).mean(axis=1))


class EchoPath:
    """Whether there is an echo of the companion's voice in the microphone (`absent`)."""

    def __init__(self) -> None:
        self.absent = False
        self._mic: collections.deque[float] = collections.deque(maxlen=FLOOR_FRAMES)
        self._far: collections.deque[float] = collections.deque(maxlen=FAR_RECENT_FRAMES)
        self._heard: collections.deque[bool] = collections.deque(maxlen=ABSENT_FRAMES)

    def push(self, mic: np.ndarray, far: np.ndarray) -> None:
        """One stretch of microphone samples and the reference played with them."""
        for mic_rms, far_rms in zip(_frame_rms(mic), _frame_rms(far), strict=True):
            self._mic.append(float(mic_rms))
            self._far.append(float(far_rms))
            if max(self._far) < FAR_LOUD_RMS:
                continue
            floor = min(self._mic)
            self._heard.append(mic_rms > max(floor * ABOVE_FLOOR, MIN_HEARD_RMS))
            self._decide()

    def _decide(self) -> None:
        heard = self._heard
        if self.absent:
            if sum(heard) >= PRESENT_SHARE * ABSENT_FRAMES:
                self.absent = False
                heard.clear()  # deciding it is absent again takes its 2 s again
                log.info("the microphone hears the companion's voice: cancelling its echo")
        elif len(heard) == ABSENT_FRAMES and sum(heard) <= ABSENT_SHARE * ABSENT_FRAMES:
            self.absent = True
            log.info(
                "the microphone does not hear the companion's voice (headphones?): "
                "what it hears is passed on as it is"
            )

    def reset(self) -> None:
        self.absent = False
        self._mic.clear()
        self._far.clear()
        self._heard.clear()


__all__ = ["EchoPath"]

"""Where replies are heard: the sink in use (told to every part by `OutputChanged`), the
sound output device found when the session starts and found again, without a restart,
whenever there is none (there was none at start, or it failed mid-reply: `OutputLost`).

The microphone's side of the same job is `Listener.microphone` (`MicLost`/`MicBack`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from app.audio.capture import refresh_device_list
from app.audio.playback import AudioSink, PlaybackError, SoundDeviceSink
from app.config import AudioSettings
from app.events import EventHub, Notice
from app.session.speaking import OutputChanged, OutputLost, Signals, SpeakingSignal

log = logging.getLogger(__name__)

RETRY_S = 3.0  # how often a missing speaker is looked for


class Speaker:
    """Owns the sink replies are heard through, and finds the configured output device
    for it. `connect_far_end` is given each sink that can feed the echo canceller."""

    def __init__(
        self,
        audio: AudioSettings,
        signals: Signals,
        events: EventHub,
        connect_far_end: Callable[[AudioSink], None],
        *,
        retry_s: float = RETRY_S,
    ) -> None:
        self._audio = audio
        self._signals = signals
        self._events = events
        self._connect_far_end = connect_far_end
        self._sink: AudioSink | None = None
        self.retry_s = retry_s
        signals.watch(self._see)

    @property
    def sink(self) -> AudioSink | None:
        """Where replies are heard (None: shown only)."""
        return self._sink

    def use(self, sink: AudioSink | None) -> None:
        """Replies are heard through `sink` from now on (None: shown only)."""
        self._sink = sink
        if sink is not None:
            self._connect_far_end(sink)
        self._signals.emit(OutputChanged(sink))

    def _see(self, signal: SpeakingSignal) -> None:
        if isinstance(signal, OutputLost) and self._sink is not None:
            self.use(None)  # replies are shown from now on; `keep()` looks again

    def _find(self, *, probe: bool) -> tuple[AudioSink | None, str]:
        """A sink for the device (and its name), or None and why not, in words.
        `probe` opens the device once: a device that is listed but does not play
        (its sound server died) must not be taken back, only to fail again."""
        device = self._audio.output_device
        if probe:
            refresh_device_list()  # a no-op while any stream is open (see capture.py)
        try:
            name = SoundDeviceSink.check_available(device)
            sink = SoundDeviceSink(device, self._audio.volume)
            if probe:
                sink.probe()
        except PlaybackError as exc:
            return None, str(exc)
        return sink, name

    async def connect(self) -> bool:
        """Look for the device now; when there is none, say so (replies are then shown,
        and `keep()` goes on looking)."""
        sink, said = await asyncio.to_thread(self._find, probe=False)
        if sink is None:
            self._events.emit(Notice(said, error=True))
            return False
        self.use(sink)
        log.info("sound output: %s", said)
        return True

    async def keep(self) -> None:
        """Whenever there is no sink, look for the device every `retry_s`; when it is
        there, use it and say so."""
        while True:
            await asyncio.sleep(self.retry_s)
            if self._sink is not None:
                continue
            sink, said = await asyncio.to_thread(self._find, probe=True)
            if sink is None or self._sink is not None:
                continue
            self.use(sink)
            log.info("sound output back: %s", said)
            self._events.emit(Notice(f"Sound output found ({said}): replies are heard again."))


__all__ = ["RETRY_S", "Speaker"]

"""Where replies are heard: the sound output device, found when the session starts and
found again, without a restart, whenever there is none (there was none at start, or it
stopped working mid-reply and the turn let go of it).

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
from app.session.floor import Floor

log = logging.getLogger(__name__)

RETRY_S = 3.0  # how often a missing speaker is looked for


class Speaker:
    """Finds the configured output device and hands a sink for it to `install`."""

    def __init__(
        self,
        audio: AudioSettings,
        floor: Floor,
        events: EventHub,
        install: Callable[[AudioSink], None],
        *,
        retry_s: float = RETRY_S,
    ) -> None:
        self._audio = audio
        self._floor = floor
        self._events = events
        self._install = install
        self.retry_s = retry_s

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
        self._install(sink)
        log.info("sound output: %s", said)
        return True

    async def keep(self) -> None:
        """Whenever there is no sink, look for the device every `retry_s`; when it is
        there, use it and say so."""
        while True:
            await asyncio.sleep(self.retry_s)
            if self._floor.sink is not None:
                continue
            sink, said = await asyncio.to_thread(self._find, probe=True)
            if sink is None or self._floor.sink is not None:
                continue
            self._install(sink)
            log.info("sound output back: %s", said)
            self._events.emit(Notice(f"Sound output found ({said}): replies are heard again."))


__all__ = ["RETRY_S", "Speaker"]

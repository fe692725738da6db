"""A room between the speaker and the microphone of a `PulseServer`, in real time.

The null sink's monitor is a perfect loopback: the microphone hears the speaker
sample for sample, at once. A laptop in a room hears it later (the sound system's
buffers, the air) and smeared (the walls). `RoomRelay` records the sink's monitor
(`parec`), delays it, convolves it with a room response (the one the barge-in bench's
simulated room uses), attenuates it, and plays it (`pacat`) into a second null sink,
`room`, whose monitor becomes the server's default source: the microphone the app
opens by default hears the room, not the wire.

    with PulseServer() as pulse, RoomRelay(pulse, delay_ms=120, attenuation_db=-6):
        ...  # the app's default microphone is now `room.monitor`
"""

from __future__ import annotations

import subprocess
import threading
import time
from types import TracebackType

import numpy as np

from app.audio.simulated_room import room_response
from tests.pulse import MONITOR, PulseServer

ROOM = "room"
RATE = 16_000
BLOCK = 320  # 20 ms
LATE_S = 0.1  # a block later than this behind its time is dropped


class RoomRelay:
    """Speaker → delay, reverberation, attenuation → the default microphone."""

    def __init__(
        self,
        server: PulseServer,
        *,
        delay_ms: float = 120.0,
        attenuation_db: float = -6.0,
        seed: int = 3,
    ) -> None:
        self._server = server
        self.delay_ms, self.attenuation_db = delay_ms, attenuation_db
        self._taps = room_response(np.random.default_rng(seed))
        self._gain = float(10 ** (attenuation_db / 20))
        self._module = ""
        self._record: subprocess.Popen[bytes] | None = None
        self._play: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.relayed_s = 0.0
        self.dropped_s = 0.0  # sound the relay dropped to keep up

    def __enter__(self) -> RoomRelay:
        server = self._server
        self._module = server.pactl(
            "load-module", "module-null-sink", f"sink_name={ROOM}", f"rate={RATE}", "channels=1"
        ).strip()
        server.pactl("set-default-source", f"{ROOM}.monitor")
        common = ["--format=s16le", f"--rate={RATE}", "--channels=1", "--latency-msec=20", "--raw"]
        self._record = subprocess.Popen(
            ["parec", f"--device={MONITOR}", *common],
            env=server.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._play = subprocess.Popen(
            ["pacat", "--playback", f"--device={ROOM}", "--client-name=room", *common],
            env=server.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._thread = threading.Thread(target=self._run, name="room-relay", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        """Each 20 ms block is played `delay_ms` after it was recorded, on the clock: a
        block that could not be played in time (the machine was busy) is dropped, so
        the room never lags behind more than its delay, as air does not."""
        record, play = self._record, self._play
        assert record is not None and play is not None
        assert record.stdout is not None and play.stdin is not None
        delay_s = self.delay_ms / 1000
        tail = np.zeros(self._taps.size - 1, dtype=np.float32)
        start, samples = float("inf"), 0
        while not self._stop.is_set():
            data = record.stdout.read(BLOCK * 2)
            if not data:
                return
            now = time.monotonic()
            samples += len(data) // 2
            start = min(start, now - samples / RATE)  # a read comes at or after its sound
            block = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32)
            wet = np.convolve(block, self._taps)
            wet[: tail.size] += tail  # the reverberation still ringing from before
            out, tail = wet[: block.size], wet[block.size :].copy()
            due = start + samples / RATE + delay_s
            if now > due + LATE_S:
                self.dropped_s += block.size / RATE
                continue
            if due > now:
                time.sleep(due - now)
            pcm = np.clip(out * self._gain, -32768, 32767).astype("<i2")
            try:
                play.stdin.write(pcm.tobytes())
                play.stdin.flush()
            except (BrokenPipeError, ValueError):
                return
            self.relayed_s += block.size / RATE

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        for process in (self._record, self._play):
            if process is not None:
                process.kill()
                process.wait(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._server.running:
            self._server.pactl("set-default-source", MONITOR)
            if self._module:
                self._server.pactl("unload-module", self._module)


__all__ = ["ROOM", "RoomRelay"]

"""A private PulseAudio server with a null sink, for tests that need a real audio device.

The machines that run the tests have no sound card. A PulseAudio daemon with
`module-null-sink sink_name=test_sink` gives PortAudio (through the ALSA `pulse`
plugin) a real output device, and `test_sink.monitor` a real input device that
hears whatever is played to the sink.

Each `PulseServer` is isolated from any PulseAudio the user may be running: its
own runtime, state, config and home folders in a fresh temporary folder, its
own socket (`PULSE_SERVER=unix:<folder>/native`), no D-Bus or X11, and a client
config with `autospawn = no` so a client never starts a second daemon when this
one is gone. The daemon runs in the foreground as our child (`--daemonize=no`),
so we know its pid and stop it by that pid; nothing is left running.

It works as root (PulseAudio warns that it is not meant to run as root, and
runs) and as a normal user.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

SINK = "test_sink"
MONITOR = f"{SINK}.monitor"


class PulseUnavailable(RuntimeError):
    """The PulseAudio server could not be started; the message says why."""


class PulseServer:
    """`start()` a daemon, point clients at it with `client_env`, `stop()` it by pid."""

    def __init__(self, *, sink_rate: int | None = None, sink_channels: int | None = None) -> None:
        # The null sink's format (PulseAudio's default, 44.1 kHz stereo, when None): a
        # device with its own native rate and channel count.
        self.sink_rate, self.sink_channels = sink_rate, sink_channels
        # A short path: a unix socket path must fit in 108 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="companion-pulse-"))
        self.runtime = self.root / "runtime"
        self.socket = self.runtime / "native"
        self.log_path = self.root / "pulseaudio.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._keepalive: subprocess.Popen[bytes] | None = None
        self._client_conf = self.root / "client.conf"
        self._cookie = self.root / "cookie"

    # ----- environment ------------------------------------------------------
    @property
    def client_env(self) -> dict[str, str]:
        """What a client (this process, a subprocess, PortAudio's pulse plugin) needs."""
        return {
            "PULSE_SERVER": f"unix:{self.socket}",
            "PULSE_CLIENTCONFIG": str(self._client_conf),
            "PULSE_COOKIE": str(self._cookie),
        }

    def _server_env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PULSE_", "DBUS_")) and k not in ("DISPLAY", "WAYLAND_DISPLAY")
        }
        env.update(
            HOME=str(self.root / "home"),
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_RUNTIME_DIR=str(self.runtime),
            PULSE_RUNTIME_PATH=str(self.runtime),
            PULSE_STATE_PATH=str(self.root / "state"),
            PULSE_CLIENTCONFIG=str(self._client_conf),
        )
        return env

    def env(self, base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
        """`base` (default: this process's environment) pointed at this server, plus `extra`."""
        env = dict(os.environ if base is None else base)
        env.update(self.client_env)
        env.update(extra)
        return env

    # ----- lifecycle ----------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 10.0, *, keepalive: bool = True) -> PulseServer:
        """Start the daemon and wait until it answers; `PulseUnavailable` says why not.

        `keepalive` plays endless silence into the sink, as a real sound card's sink
        behaves: an idle null sink renders in 2-second blocks, so a new stream would
        wait up to 2 s for its first sound and its monitor would deliver in 2 s bursts.
        With a low-latency stream always playing (and the sink restarted once so that
        it drops the idle block it was in), sound flows within milliseconds, and
        `test_sink.monitor` is a continuous real-time recording of what is heard.
        """
        exe = shutil.which("pulseaudio")
        if exe is None:
            raise PulseUnavailable(
                "pulseaudio is not installed: apt-get install -y pulseaudio pulseaudio-utils "
                "libportaudio2 libasound2-plugins"
            )
        if shutil.which("pactl") is None:
            raise PulseUnavailable("pactl is missing: apt-get install -y pulseaudio-utils")
        for folder in (self.runtime, self.root / "home", self.root / "config", self.root / "state"):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._cookie.write_bytes(secrets.token_bytes(256))
        self._client_conf.write_text(
            f"autospawn = no\ncookie-file = {self._cookie}\nenable-shm = no\n"
        )
        args = [
            exe,
            "-n",  # no default script: only the modules below
            "--daemonize=no",
            "--use-pid-file=no",
            "--system=no",
            "--exit-idle-time=-1",
            "--disallow-exit",
            "--log-target=stderr",
            "--log-level=notice",
            f"--load=module-null-sink {' '.join(self._sink_args())}",
            f"--load=module-native-protocol-unix socket={self.socket} auth-anonymous=1",
        ]
        log = self.log_path.open("wb")
        try:
            self.process = subprocess.Popen(
                args,
                env=self._server_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in the terminal reaches pytest, not it
            )
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise PulseUnavailable(
                    f"pulseaudio exited with status {code} while starting:\n{self.log_tail()}"
                )
            if self.socket.exists() and self._answers():
                break
            if time.monotonic() > deadline:
                self.stop()
                raise PulseUnavailable(
                    f"pulseaudio did not answer on {self.socket} within {timeout:.0f} s:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.05)
        if keepalive:
            self._start_keepalive()
        return self

    def _sink_args(self) -> list[str]:
        args = [f"sink_name={SINK}"]
        if self.sink_rate is not None:
            args.append(f"rate={self.sink_rate}")
        if self.sink_channels is not None:
            args.append(f"channels={self.sink_channels}")
        return args

    # ----- the device comes and goes ----------------------------------------
    def unload_sink(self) -> None:
        """The device is unplugged: the null sink (and its monitor) leave the server,
        and the streams on them are killed (no module moves them elsewhere)."""
        for line in self.pactl("list", "short", "modules").splitlines():
            fields = line.split("\t")
            if len(fields) >= 3 and fields[1] == "module-null-sink" and f"sink_name={SINK}" in line:
                self.pactl("unload-module", fields[0])
        if self._keepalive is not None:
            self._keepalive.kill()
            self._keepalive.wait(timeout=5)
            self._keepalive = None

    def load_sink(self, *, keepalive: bool = True) -> None:
        """The device is plugged back in."""
        self.pactl("load-module", "module-null-sink", *self._sink_args())
        if keepalive:
            self._start_keepalive()

    def restart(self, timeout: float = 10.0) -> PulseServer:
        """Start again after `kill()`, on the same socket: the sound system is back."""
        if self.running:
            raise RuntimeError("restart() needs a stopped server (kill() it first)")
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()  # a killed daemon leaves its socket behind
        return self.start(timeout)

    def _start_keepalive(self) -> None:
        self._keepalive = subprocess.Popen(
            [
                "pacat",
                "--playback",
                "--raw",
                f"--device={SINK}",
                "--format=s16le",
                "--rate=48000",
                "--channels=2",
                "--latency-msec=20",
                "--client-name=keepalive",
                "/dev/zero",
            ],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 5
        while "keepalive" not in self.pactl("list", "sink-inputs"):
            if self._keepalive.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise PulseUnavailable("pacat could not play silence into the null sink")
            time.sleep(0.02)
        # Suspend and resume: the resumed sink starts a fresh, short render block.
        self.pactl("suspend-sink", SINK, "1")
        self.pactl("suspend-sink", SINK, "0")

    def pactl(self, *args: str) -> str:
        done = subprocess.run(
            ["pactl", *args], env=self.env(), capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            raise PulseUnavailable(f"pactl {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def _answers(self) -> bool:
        try:
            done = subprocess.run(["pactl", "info"], env=self.env(), capture_output=True, timeout=5)
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def kill(self) -> None:
        """The device vanishes: SIGKILL, as when the sound server crashes."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=5)
        if self._keepalive is not None:
            self._keepalive.kill()
            self._keepalive.wait(timeout=5)
            self._keepalive = None

    def pause(self) -> None:
        """The server hangs (SIGSTOP): its clients block, nothing ends by itself."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Stop the daemon by its pid (SIGTERM, then SIGKILL) and remove its folder."""
        keepalive, self._keepalive = self._keepalive, None
        if keepalive is not None:
            keepalive.kill()
            keepalive.wait(timeout=5)
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process is not None:
            process.wait()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)

    def __enter__(self) -> PulseServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class MonitorTap:
    """`parec` from the sink's monitor into a file while in the `with` block: what a
    listener in the room heard (16 kHz mono s16le), for tests that only ask whether
    sound came out (`loud_s`), not when."""

    RATE = 16_000

    def __init__(self, server: PulseServer, path: Path, *, device: str = MONITOR) -> None:
        self._server, self.path, self.device = server, path, device
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> MonitorTap:
        self._process = subprocess.Popen(
            [
                "parec",
                f"--device={self.device}",
                "--format=s16le",
                f"--rate={self.RATE}",
                "--channels=1",
                "--latency-msec=20",
                "--raw",
                str(self.path),
            ],
            env=self._server.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=5)

    def loud_s(self, threshold: int = 500) -> float:
        """Seconds recorded so far whose samples are louder than `threshold`."""
        import numpy as np

        try:
            data = self.path.read_bytes()
        except OSError:
            return 0.0
        samples = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")
        return float(np.count_nonzero(np.abs(samples.astype(np.int32)) > threshold)) / self.RATE

"""A newcomer's desktop for end-to-end tests and the first-run screenshots: a fresh
profile (HOME and every XDG folder new and empty), a real X server (Xvfb, no window
manager), a private PulseAudio server with a null sink (the room: what the app plays
is heard at `test_sink.monitor`, which is also the default microphone), and the app
launched as `make run` launches it (`companion`, no options).

Simulated input is real X input (xdotool, through XTEST); screenshots are of the whole
screen (mss). What the window showed is read back from the app's own log file, where
the window writes each status, notice and face it shows.

    with Desktop(tmp) as desk:
        app = desk.launch()
        desk.wait_for_window("Welcome to Companion")
        desk.keys("space"); desk.say(phrase_wav); desk.shot("02-mic-test.png")
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from tests.pulse import MONITOR, SINK, MonitorTap, PulseServer

REPO = Path(__file__).resolve().parents[1]
SCREEN = (1280, 800)


class DesktopUnavailable(RuntimeError):
    """Xvfb, xdotool or PulseAudio is missing; the message says what to install."""


class Desktop:
    """Xvfb + PulseAudio + a fresh profile; `launch()` starts the app in it."""

    def __init__(self, root: Path, *, language: str = "C.UTF-8") -> None:
        self.root = root
        self.home = root / "home"
        self.language = language
        self.pulse = PulseServer()
        self.display = ""
        self._xvfb: subprocess.Popen[bytes] | None = None
        self.app: subprocess.Popen[bytes] | None = None
        self.app_output = root / "app-output.txt"
        self.shots: list[Path] = []

    def seed_embedded_model(self) -> None:
        """The embedded chat model as a first start leaves it (joined and checked), linked
        from this machine's cache: joining 1 GB takes minutes on a loaded machine, and
        the join with its progress is tested on its own (test_brain)."""
        from app.llm.wire.local_files import DEFAULT_EMBEDDED, embedded_model, prepare_model

        model = embedded_model(DEFAULT_EMBEDDED)
        ready = prepare_model(model)
        target = self.home / ".cache" / "companion" / "models"
        target.mkdir(parents=True, exist_ok=True)
        (target / ready.name).symlink_to(ready)
        stamp = ready.with_name(ready.name + ".sha256")
        if stamp.is_file():
            shutil.copyfile(stamp, target / stamp.name)

    # -- the machine -------------------------------------------------------------------

    def __enter__(self) -> Desktop:
        for tool in ("Xvfb", "xdotool"):
            if shutil.which(tool) is None:
                raise DesktopUnavailable(f"{tool} is missing: apt-get install -y xvfb xdotool")
        for folder in ("config", "data", "cache", "runtime"):
            (self.home / f".{folder}").mkdir(parents=True, exist_ok=True)
        os.chmod(self.home / ".runtime", 0o700)
        read, write = os.pipe()
        self._xvfb = subprocess.Popen(
            [
                "Xvfb",
                "-displayfd",
                str(write),
                "-screen",
                "0",
                f"{SCREEN[0]}x{SCREEN[1]}x24",
                "-nolisten",
                "tcp",
            ],
            pass_fds=(write,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            self.__exit__(None, None, None)
            raise DesktopUnavailable("Xvfb did not start")
        self.display = f":{number}"
        self.pulse.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.quit_app()
        self.pulse.stop()
        if self._xvfb is not None and self._xvfb.poll() is None:
            self._xvfb.terminate()
            try:
                self._xvfb.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._xvfb.kill()
                self._xvfb.wait()

    @property
    def env(self) -> dict[str, str]:
        """A newcomer's environment: nothing of the machine's own profile or sound."""
        keep = ("PATH", "LANG", "LC_ALL", "TZ", "TERM", "OMP_WAIT_POLICY")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".data"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_RUNTIME_DIR=str(self.home / ".runtime"),
            DISPLAY=self.display,
            LANG=self.language,
            LC_ALL=self.language,
        )
        env.update(self.pulse.client_env)
        return env

    # -- the app -------------------------------------------------------------------------

    def launch(self, *args: str) -> subprocess.Popen[bytes]:
        """`companion` (what `make run` runs: `.venv/bin/companion`, the `app.cli:main`
        entry point) with this interpreter, from this checkout."""
        self.quit_app()
        with self.app_output.open("ab") as out:
            self.app = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from app.cli import main; sys.exit(main())",
                    *args,
                ],
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self.app

    def quit_app(self, timeout: float = 20.0) -> int | None:
        """Ctrl+Q in the main window; killed if it does not end."""
        app, self.app = self.app, None
        if app is None or app.poll() is not None:
            return None if app is None else app.returncode
        with contextlib.suppress(RuntimeError):
            self.focus("Companion")
            self.keys("ctrl+q")
        try:
            return app.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
            return None

    @property
    def log_file(self) -> Path:
        return self.home / ".data" / "companion" / "logs" / "companion.log"

    def log(self) -> str:
        try:
            return self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def output(self) -> str:
        """What the app printed on its stdout and stderr."""
        try:
            return self.app_output.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def history_text(self) -> str:
        """Every saved conversation file, as text."""
        folder = self.home / ".data" / "companion"
        return "\n".join(
            p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.rglob("*.jsonl"))
        )

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.app is not None and self.app.poll() is not None:
                raise AssertionError(f"the app ended while waiting for {what}:\n{self.output()}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no {what} within {timeout:.0f} s\n--- log ---\n{self.log()[-3000:]}"
                )
            time.sleep(0.1)

    def wait_for_log(self, pattern: str, timeout: float = 60, *, after: int = 0) -> re.Match[str]:
        """The first log line from offset `after` that matches `pattern`."""
        found: list[re.Match[str]] = []

        def seen() -> bool:
            match = re.search(pattern, self.log()[after:])
            if match:
                found.append(match)
            return match is not None

        self.wait_for(f"log line {pattern!r}", seen, timeout)
        return found[0]

    # -- X input and output ----------------------------------------------------------------

    def xdotool(self, *args: str) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=20
        )
        if done.returncode != 0:
            raise RuntimeError(f"xdotool {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout.strip()

    def windows(self, name: str) -> list[str]:
        with contextlib.suppress(RuntimeError):
            return self.xdotool("search", "--onlyvisible", "--name", f"^{re.escape(name)}$").split()
        return []

    def wait_for_window(self, name: str, timeout: float = 60) -> str:
        self.wait_for(f"a window named {name!r}", lambda: bool(self.windows(name)), timeout)
        return self.windows(name)[-1]

    def gone(self, name: str, timeout: float = 30) -> None:
        self.wait_for(f"{name!r} to close", lambda: not self.windows(name), timeout)

    def focus(self, name: str) -> str:
        """Give the keyboard to the window named `name` (no window manager does it)."""
        window = self.wait_for_window(name, 10)
        self.xdotool("windowfocus", "--sync", window)
        return window

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.xdotool("key", "--delay", "60", key)
            time.sleep(0.15)

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "40", text)

    def geometry(self, window: str) -> tuple[int, int, int, int]:
        """x, y, width, height of a window on the screen."""
        out = self.xdotool("getwindowgeometry", "--shell", window)
        values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def double_click(self, window: str, x: int, y: int) -> None:
        left, top, _, _ = self.geometry(window)
        self.xdotool("mousemove", "--sync", str(left + x), str(top + y))
        self.xdotool("click", "--repeat", "2", "--delay", "80", "1")

    def click(self, window: str, x: int, y: int) -> None:
        """A left click at (x, y) of `window`; negative values count from its right or
        bottom edge."""
        left, top, width, height = self.geometry(window)
        x, y = (x if x >= 0 else width + x), (y if y >= 0 else height + y)
        self.xdotool("mousemove", "--sync", str(left + x), str(top + y))
        self.xdotool("click", "1")

    def shot(self, path: Path) -> Path:
        """The whole screen as a PNG (what a user would see)."""
        import mss
        import mss.tools

        path.parent.mkdir(parents=True, exist_ok=True)
        with mss.mss(display=self.display) as grab:
            image = grab.grab(grab.monitors[0])
            mss.tools.to_png(image.rgb, image.size, output=str(path))
        self.shots.append(path)
        return path

    # -- sound -----------------------------------------------------------------------------

    def say(self, wav: Path) -> None:
        """Speak into the room: the microphone (the sink's monitor) hears `wav`."""
        subprocess.run(
            ["paplay", f"--device={SINK}", str(wav)], env=self.pulse.env(), check=True, timeout=60
        )

    def listen(self, path: Path) -> MonitorTap:
        """Record what the room hears while in the `with` block."""
        return MonitorTap(self.pulse, path)


__all__ = ["MONITOR", "SCREEN", "Desktop", "DesktopUnavailable"]

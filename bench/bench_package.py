"""The desktop package: bundle size by its largest parts, installed size, and launch time
to the window shown (frozen app vs running from source, as a ratio). Prints only.

    python bench/bench_package.py                 # needs dist/companion (packaging/build.py)
    python bench/bench_package.py --runs 5 --top 25
    python bench/bench_package.py --installed /opt/companion   # the .deb's install

Launch is measured on a private Xvfb display: from process start until a top-level X
window titled "Companion" is mapped (polled with xwininfo every 20 ms).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "dist" / "companion"
TITLE = "Companion"


def size(path: Path) -> int:
    if path.is_symlink():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def mb(n: float) -> str:
    return f"{n / 1e6:8.1f} MB"


def print_sizes(bundle: Path, top: int) -> None:
    internal = bundle / "_internal"
    parts = [(size(p), p.name) for p in (internal.iterdir() if internal.is_dir() else [])]
    parts += [(size(p), p.name) for p in bundle.iterdir() if p.name != "_internal"]
    total = size(bundle)
    print(f"bundle {bundle}: {mb(total)} in {sum(1 for _ in bundle.rglob('*'))} files")
    print(f"largest {top} parts:")
    for n, name in sorted(parts, reverse=True)[:top]:
        print(f"  {mb(n)}  {100 * n / total:5.1f} %  {name}")
    qt = internal / "PySide6"
    if qt.is_dir():
        print("inside PySide6:")
        qt_parts = sorted(((size(p), p.relative_to(qt)) for p in qt.rglob("*") if p.is_file()),
                          reverse=True)
        for n, rel in qt_parts[:8]:
            print(f"  {mb(n)}  {rel}")
        plugins = qt / "Qt" / "plugins"
        if plugins.is_dir():
            groups = ", ".join(sorted(p.name for p in plugins.iterdir()))
            print(f"  Qt plugin groups kept: {groups}")
        translations = list(qt.rglob("translations/*.qm"))
        print(f"  Qt translations: {len(translations)} files")
    bindings = [b for b in ("PySide6", "PyQt5", "PyQt6", "PySide2") if (internal / b).exists()]
    print(f"Qt bindings collected: {', '.join(bindings) or 'none'}")
    tgz = sorted((ROOT / "dist").glob("companion-*.tar.gz"))
    debs = sorted((ROOT / "dist").glob("companion_*.deb"))
    for f in [*tgz, *debs]:
        print(f"download {f.name}: {mb(f.stat().st_size)}")
    for deb in debs:
        out = subprocess.run(["dpkg-deb", "-f", str(deb), "Installed-Size"],
                             capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            print(f"installed size ({deb.name}): {mb(int(out.stdout) * 1024)}")


def window_shown(display: str) -> bool:
    out = subprocess.run(["xwininfo", "-root", "-tree", "-display", display],
                         capture_output=True, text=True)
    return f'"{TITLE}"' in out.stdout


def launch_once(cmd: list[str], display: str, timeout: float) -> float:
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    with tempfile.TemporaryDirectory() as home:
        env["COMPANION_DATA_DIR"] = str(Path(home) / "data")
        env.setdefault("COMPANION_CONFIG", str(Path(home) / "config.toml"))
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while time.perf_counter() - started < timeout:
                if window_shown(display):
                    return time.perf_counter() - started
                if proc.poll() is not None:
                    raise RuntimeError(f"{cmd[0]} exited ({proc.returncode}) before its window")
                time.sleep(0.02)
            raise RuntimeError(f"no window within {timeout} s")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def bench_launch(frozen: Path, runs: int) -> None:
    if shutil.which("Xvfb") is None or shutil.which("xwininfo") is None:
        print("launch: skipped (needs Xvfb and xwininfo)")
        return
    display = ":97"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        commands = {
            "source": [sys.executable, "-m", "app"],
            "frozen": [str(frozen)],
        }
        results: dict[str, list[float]] = {}
        for label, cmd in commands.items():
            launch_once(cmd, display, 60)  # warm the page cache once
            results[label] = [launch_once(cmd, display, 60) for _ in range(runs)]
        print(f"launch to window shown (median of {runs}, warm cache, Xvfb):")
        for label, times in results.items():
            print(f"  {label:<7} {statistics.median(times):6.2f} s   "
                  f"(min {min(times):.2f}, max {max(times):.2f})")
        ratio = statistics.median(results["frozen"]) / statistics.median(results["source"])
        print(f"  frozen / source = {ratio:.2f}")
    finally:
        xvfb.terminate()
        xvfb.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument("--installed", type=Path, default=None,
                        help="an installed copy to launch instead (e.g. /opt/companion)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--no-launch", action="store_true")
    args = parser.parse_args()
    bundle = args.installed or args.bundle
    exe = bundle / ("companion.exe" if sys.platform == "win32" else "companion")
    if not exe.exists():
        print(f"no bundle at {bundle}: run `python packaging/build.py` first")
        return 1
    print_sizes(bundle, args.top)
    if not args.no_launch:
        bench_launch(exe, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

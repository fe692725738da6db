"""Build Companion's desktop packages.

    python packaging/build.py              # PyInstaller one-folder bundle: dist/companion/
    python packaging/build.py --self-test  # ... then run the bundle's --self-test
    python packaging/build.py --deb        # ... plus dist/companion_<version>_<arch>.deb
    python packaging/build.py --tarball    # ... plus dist/companion-<version>-linux-<arch>.tar.gz
    python packaging/build.py --skip-bundle --deb   # package an existing dist/companion/

Run it with the project's venv (`.venv/bin/python` or `/work/venv/bin/python`) after
`pip install -e .[package]`. Windows and macOS installers are built on those systems:
see packaging/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"
BUNDLE = DIST / "companion"
NAME = "companion"

# The .deb's system dependencies: PortAudio (sounddevice), espeak-ng (pyttsx3's voice on
# Linux) and the xcb/X11/GL/font libraries Qt's xcb platform plugin loads. The bundle
# carries its own Qt, Python, llama.cpp, CTranslate2 and onnxruntime.
DEB_DEPENDS = [
    "libportaudio2",
    "libespeak-ng1",
    "espeak-ng-data",
    "libc6 (>= 2.31)",
    "libgl1",
    "libegl1",
    "libfontconfig1",
    "libfreetype6",
    "libdbus-1-3",
    "libglib2.0-0",
    "libx11-6",
    "libx11-xcb1",
    "libxcb1",
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-image0",
    "libxcb-keysyms1",
    "libxcb-randr0",
    "libxcb-render-util0",
    "libxcb-shape0",
    "libxcb-shm0",
    "libxcb-sync1",
    "libxcb-xfixes0",
    "libxcb-xinerama0",
    "libxcb-xkb1",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
]
DEB_RECOMMENDS = ["pulseaudio | pipewire-pulse"]


def version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def deb_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf"}.get(machine, machine)


def log(message: str) -> None:
    print(f"build: {message}", flush=True)


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def build_bundle(*, windowed: bool) -> Path:
    started = time.perf_counter()
    env = {**os.environ, "COMPANION_WINDOWED": "1" if windowed else "0"}
    cmd = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level=WARN",
        "--distpath",
        str(DIST),
        "--workpath",
        str(WORK),
        str(PACKAGING / "companion.spec"),
    ]
    log(" ".join(cmd))
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    strip_bundle(BUNDLE)
    log(f"bundle {BUNDLE} ({du(BUNDLE) / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s")
    return BUNDLE


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def strip_bundle(bundle: Path) -> None:
    """Drop debug symbols from the bundle's ELF files (Linux). Libraries that auditwheel
    vendored into `<pkg>.libs/` are left alone: strip breaks their patched layout
    (numpy's OpenBLAS then fails with "ELF load command address/offset not page-aligned")."""
    if not sys.platform.startswith("linux") or shutil.which("strip") is None:
        return
    before = du(bundle)
    for path in bundle.rglob("*"):
        if path.is_symlink() or not path.is_file() or any(p.endswith(".libs") for p in path.parts):
            continue
        if path.suffix not in {".so", ""} and ".so." not in path.name:
            continue
        if not is_elf(path):
            continue
        subprocess.run(["strip", "--strip-unneeded", str(path)], check=False,
                       stderr=subprocess.DEVNULL)
    log(f"stripped: {before / 1e6:.0f} MB -> {du(bundle) / 1e6:.0f} MB")


def executable(bundle: Path) -> Path:
    return bundle / (f"{NAME}.exe" if sys.platform == "win32" else NAME)


def self_test(exe: Path, report: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    log(f"{exe} --self-test --report {report}")
    result = subprocess.run([str(exe), "--self-test", "--report", str(report)], env=env)
    if result.returncode != 0:
        raise SystemExit(f"the self-test of {exe} failed (see {report})")


def stage_deb(bundle: Path) -> Path:
    """A staged tree: /opt/companion, /usr/bin/companion, the .desktop file and icon."""
    stage = WORK / "deb" / f"{NAME}_{version()}_{deb_arch()}"
    if stage.exists():
        shutil.rmtree(stage)
    opt = stage / "opt" / NAME
    shutil.copytree(bundle, opt, symlinks=True)
    (stage / "usr" / "bin").mkdir(parents=True)
    (stage / "usr" / "bin" / NAME).symlink_to(f"/opt/{NAME}/{NAME}")
    apps = stage / "usr" / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copy(PACKAGING / "linux" / f"{NAME}.desktop", apps / f"{NAME}.desktop")
    icons = stage / "usr" / "share" / "icons" / "hicolor" / "256x256" / "apps"
    icons.mkdir(parents=True)
    shutil.copy(PACKAGING / "icons" / f"{NAME}.png", icons / f"{NAME}.png")
    docs = stage / "usr" / "share" / "doc" / NAME
    docs.mkdir(parents=True)
    shutil.copy(PACKAGING / "linux" / "copyright", docs / "copyright")

    control = stage / "DEBIAN"
    control.mkdir()
    installed_kb = du(stage) // 1024
    (control / "control").write_text(
        f"Package: {NAME}\n"
        f"Version: {version()}\n"
        "Section: sound\n"
        "Priority: optional\n"
        f"Architecture: {deb_arch()}\n"
        f"Installed-Size: {installed_kb}\n"
        f"Depends: {', '.join(DEB_DEPENDS)}\n"
        f"Recommends: {', '.join(DEB_RECOMMENDS)}\n"
        "Maintainer: Companion developers <companion@localhost>\n"
        "Homepage: https://github.com/companion-app/companion\n"
        "Description: desktop VTuber voice companion\n"
        " Companion talks, listens and looks at your screen. It works offline on its\n"
        " embedded chat, speech and voice models, and on any hosted model you configure.\n"
    )
    for script in ("postinst", "postrm"):
        target = control / script
        shutil.copy(PACKAGING / "linux" / "deb" / script, target)
        target.chmod(0o755)
    for path in [stage, *stage.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        elif not path.stat().st_mode & 0o004:
            # the models joined in the build user's cache are written 0600 (a temporary
            # file renamed into place): every user of the machine must read them
            path.chmod(path.stat().st_mode | 0o044)
    return stage


def build_deb(bundle: Path) -> Path:
    if shutil.which("dpkg-deb") is None:
        raise SystemExit("dpkg-deb is not installed: the .deb is built on Debian or Ubuntu")
    stage = stage_deb(bundle)
    out = DIST / f"{stage.name}.deb"
    cmd = ["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(stage), str(out)]
    log(" ".join(cmd))
    subprocess.run(cmd, check=True)
    log(f"{out} ({out.stat().st_size / 1e6:.0f} MB)")
    return out


def build_tarball(bundle: Path) -> Path:
    """The AppImage alternative: the bundle, a .desktop file, the icon and install.sh."""
    top = f"{NAME}-{version()}-linux-{platform.machine()}"
    out = DIST / f"{top}.tar.gz"
    log(f"writing {out}")
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=f"{top}/{NAME}")
        tar.add(PACKAGING / "linux" / f"{NAME}.desktop", arcname=f"{top}/{NAME}.desktop")
        tar.add(PACKAGING / "icons" / f"{NAME}.png", arcname=f"{top}/{NAME}.png")
        tar.add(PACKAGING / "linux" / "install.sh", arcname=f"{top}/install.sh")
    log(f"{out} ({out.stat().st_size / 1e6:.0f} MB)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deb", action="store_true", help="also build the .deb (Linux)")
    parser.add_argument("--tarball", action="store_true", help="also build the .tar.gz (Linux)")
    parser.add_argument("--self-test", action="store_true", help="run the bundle's self-test")
    parser.add_argument("--skip-bundle", action="store_true", help="reuse dist/companion/")
    parser.add_argument(
        "--windowed",
        action="store_true",
        help="no console window (the Windows and macOS release builds)",
    )
    args = parser.parse_args(argv)
    if args.skip_bundle:
        if not executable(BUNDLE).exists():
            raise SystemExit(f"{BUNDLE} has no bundle yet: build without --skip-bundle")
        bundle = BUNDLE
    else:
        bundle = build_bundle(windowed=args.windowed)
    if args.self_test:
        self_test(executable(bundle), DIST / "selftest-report.json")
    if args.deb:
        build_deb(bundle)
    if args.tarball:
        build_tarball(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())

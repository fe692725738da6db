"""Render a newcomer's first start to PNGs, one per step (docs/screenshots/first-run/):
the same walk as `tests/test_newcomer.py`, on a private Xvfb and PulseAudio server
with a fresh profile, the app launched as `make run` launches it.

    python scripts/first_run_screenshots.py [OUTDIR] [--language zh_CN]

Needs what the tests need: Xvfb, xdotool, PulseAudio, espeak-ng and sox
(scripts/system-packages.txt). Takes a minute or two; nothing is downloaded.
Chinese text needs a CJK font (fonts-noto-cjk or fonts-wqy-microhei).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.desktop import Desktop  # noqa: E402
from tests.newcomer_walk import FirstStart  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=REPO / "docs/screenshots/first-run")
    parser.add_argument("--language", default="", help='"zh_CN" for the Chinese interface')
    args = parser.parse_args()
    out: Path = args.out
    with tempfile.TemporaryDirectory(prefix="companion-first-run-") as tmp:
        root = Path(tmp)
        with Desktop(root / "desk") as desk:
            if args.language:
                config = desk.home / ".config" / "companion"
                config.mkdir(parents=True, exist_ok=True)
                (config / "config.toml").write_text(f'[ui]\nlanguage = "{args.language}"\n')
            desk.seed_embedded_model()  # joined already, as after a first start
            walk = FirstStart(desk, root / "shots", root, language=args.language)
            walk.start()
            walk.test_the_microphone()
            walk.play_the_sample()
            walk.next_pages()
            walk.type_a_message()
            walk.pet_and_back()
            walk.restart_with_a_dead_model()
        out.mkdir(parents=True, exist_ok=True)
        suffix = f"-{args.language}" if args.language else ""
        for shot in walk.shots:
            target = out / f"{shot.stem}{suffix}.png"
            shutil.copyfile(shot, target)
            print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

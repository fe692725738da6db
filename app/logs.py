"""Logging: to stderr and to a rotating file the user can send us, keys always masked.

The file is `<data dir>/logs/companion.log` (three files of 1 MB at most). Every
record passes through `RedactSecrets`, which masks it with the `Redactor` given to
`setup_logging` (anything shaped like an API key or a token, and the secret values
added to it: the configured keys), so a key never reaches a log line, whatever the
code logged; control characters in it are written as escapes (`app.terminal`). A
log file that cannot be opened (a full or read-only disk) leaves stderr only.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from app.redaction import Redactor
from app.terminal import visible

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 1_000_000
BACKUPS = 3


class RedactSecrets(logging.Filter):
    """Formats the record's message (with its arguments and traceback) and masks it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is
            message = str(record.msg)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        # Control characters (a model's reply logged) are escaped: `tail -f` shows them.
        record.msg, record.args = visible(self.redactor(message)), None
        if record.exc_text:
            record.exc_text = visible(self.redactor(record.exc_text))
        record.exc_info = None if record.exc_text else record.exc_info
        return True


class _LogFile(logging.handlers.RotatingFileHandler):
    """The rotating file. A record it cannot write (a full disk) is left out and that is
    said once on stderr, instead of a traceback for every record; it writes again
    when it can."""

    _failing = False  # since the last record that could not be written
    _failed = False  # the record being written

    def emit(self, record: logging.LogRecord) -> None:
        self._failed = False
        super().emit(record)
        if not self._failed:
            self._failing = False

    def handleError(self, record: logging.LogRecord) -> None:
        self._failed = True
        if self._failing:
            return
        self._failing = True
        problem = sys.exc_info()[1]
        sys.stderr.write(
            f"companion: the log file {self.baseFilename} cannot be written ({problem}); "
            "log lines go to the console only until it can\n"
        )


def _ours(handler: logging.Handler) -> bool:
    return bool(getattr(handler, "_companion", False))


def log_redactor() -> Redactor | None:
    """The `Redactor` the log is masked with (None before `setup_logging`): a secret
    added to it later (a token given while running) is masked in the log too."""
    for handler in logging.getLogger().handlers:
        if _ours(handler):
            for found in handler.filters:
                if isinstance(found, RedactSecrets):
                    return found.redactor
    return None


def log_file() -> Path | None:
    """The log file in use, or None when logging goes to stderr only."""
    for handler in logging.getLogger().handlers:
        if _ours(handler) and isinstance(handler, logging.FileHandler):
            return Path(handler.baseFilename)
    return None


def setup_logging(
    level: int = logging.WARNING,
    folder: Path | None = None,
    *,
    redactor: Redactor | None = None,
) -> Path | None:
    """Log at `level` to stderr and at INFO (at least) to the rotating file, every record
    masked by `redactor` (key shapes only when none is given); returns the file's path
    (None when it could not be opened)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if _ours(handler):
            root.removeHandler(handler)
            handler.close()
    masking = RedactSecrets(redactor if redactor is not None else Redactor())
    console = logging.StreamHandler()
    console.setLevel(level)
    console.setFormatter(logging.Formatter(LOG_FORMAT))
    console.addFilter(masking)
    console._companion = True  # type: ignore[attr-defined]
    root.addHandler(console)
    root.setLevel(min(level, logging.INFO))
    if folder is None:
        from app.config import data_dir

        folder = data_dir() / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "companion.log"
        handler = _LogFile(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=False
        )
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file (%s): logging to the console only", exc)
        return None
    handler.setLevel(min(level, logging.INFO))
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(masking)
    handler._companion = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    return path

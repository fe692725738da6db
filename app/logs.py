"""Logging: to stderr and to a rotating file the user can send us, keys always masked.

The file is `<data dir>/logs/companion.log` (three files of 1 MB at most). Every
record passes through `RedactSecrets`, which masks anything shaped like an API key
or a bearer token and every secret value registered with `add_secret` (the
configured keys), so a key never reaches a log line, whatever the code logged.
A log file that cannot be opened (a full or read-only disk) leaves stderr only.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import threading
from pathlib import Path

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 1_000_000
BACKUPS = 3

# Shapes of credentials: OpenAI/Anthropic/OpenRouter/DeepSeek "sk-…", Google "AIza…",
# Groq "gsk_…", bearer headers, `key=` query parameters and JSON "api_key" fields.
_PATTERNS = [
    re.compile(r"\b(?:sk|gsk|xai|pk)[-_][A-Za-z0-9_\-]{12,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{12,}=*"),
    re.compile(r"(?i)([?&](?:key|api_key|access_token)=)[^&\s\"']{6,}"),
    re.compile(
        r"(?i)(\"?(?:api[_-]?key|x-api-key|x-goog-api-key|authorization)\"?\s*[:=]\s*\"?)"
        r"[^\s\"',}]{8,}"
    ),
]
MASK = "***"

_secrets: set[str] = set()
_lock = threading.Lock()
_log_file: Path | None = None


def add_secret(value: str | None) -> None:
    """Mask this exact value in every log record from now on."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """`text` with every known secret and anything shaped like a key masked."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
    return text


class RedactSecrets(logging.Filter):
    """Formats the record's message (with its arguments and traceback) and masks it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is
            message = str(record.msg)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = redact(message), None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None if record.exc_text else record.exc_info
        return True


def log_file() -> Path | None:
    """The log file in use, or None when logging goes to stderr only."""
    return _log_file


def setup_logging(level: int = logging.WARNING, folder: Path | None = None) -> Path | None:
    """Log at `level` to stderr and at INFO (at least) to the rotating file; returns
    the file's path (None when it could not be opened)."""
    global _log_file
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_companion", False):
            root.removeHandler(handler)
            handler.close()
    redactor = RedactSecrets()
    console = logging.StreamHandler()
    console.setLevel(level)
    console.setFormatter(logging.Formatter(LOG_FORMAT))
    console.addFilter(redactor)
    console._companion = True  # type: ignore[attr-defined]
    root.addHandler(console)
    root.setLevel(min(level, logging.INFO))
    _log_file = None
    if folder is None:
        from app.config import data_dir

        folder = data_dir() / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "companion.log"
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=False
        )
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file (%s): logging to the console only", exc)
        return None
    handler.setLevel(min(level, logging.INFO))
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(redactor)
    handler._companion = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    _log_file = path
    return path

"""Speech recognition errors; the tree is drawn in `app.speech`'s docstring.

Every message is a sentence for the user and never holds an API key: text that
comes from a server passes through `redact` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


class SpeechError(Exception):
    """Base of every speech recognition error. The message is for the user."""


class SpeechInputError(SpeechError):
    """The audio handed to the client breaks the PCM contract."""


class SpeechModelError(SpeechError):
    """The recognition model is missing, cannot be loaded, or cannot do the chosen language."""


class SpeechAuthError(SpeechError):
    """No API key is configured, or the service refused it."""


class SpeechRateLimitError(SpeechError):
    """The service asks us to slow down or the quota is used up."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SpeechConnectionError(SpeechError):
    """The service could not be reached, timed out, or closed the connection mid-utterance."""


class SpeechProtocolError(SpeechError):
    """The service sent something its own protocol does not allow (a malformed frame)."""


class SpeechServiceError(SpeechError):
    """The service reported a failure of its own; `code` is its error code when it gave one."""

    def __init__(self, message: str, *, code: str | int | None = None) -> None:
        super().__init__(message)
        self.code = code


# Key-looking strings: OpenAI-style `sk-...` (masked ones too), bearer tokens.
_KEY_PATTERNS = re.compile(r"sk-[A-Za-z0-9_\-*.]{4,}|(?<=Bearer )[A-Za-z0-9._\-~+/=]{8,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every given secret and every key-looking string replaced by `***`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_PATTERNS.sub("***", text)

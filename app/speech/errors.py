"""Speech recognition errors; the tree is drawn in `app.speech`'s docstring.

Every message is a sentence for the user and never holds an API key: text that
comes from a server passes through `redact` (`app.redaction`) first.
"""

from __future__ import annotations


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


class SpeechAdapterError(SpeechError):
    """The recognizer's adapter broke the speech contract (two finals, a final after a
    failure, pieces of text instead of the whole text, an unexpected exception, no
    answer at all); `SpeechClient` caught it. A bug in that adapter, not in the audio."""

"""Speech recognition errors; the tree is drawn in `app.speech`'s docstring."""


class SpeechError(Exception):
    """Base of every speech recognition error. The message is for the user."""


class SpeechInputError(SpeechError):
    """The audio handed to the client breaks the PCM contract."""


class SpeechModelError(SpeechError):
    """The recognition model is missing or cannot be loaded."""

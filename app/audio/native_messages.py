"""The sound libraries' own messages go to the log, not to the terminal: ALSA's
("ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred", "Unknown PCM ..." while
PortAudio lists the devices) and JACK's ("Cannot connect to server socket", "jack
server is not running" while PortAudio looks for a JACK server).

Both libraries print through a handler they let a program replace:
`snd_lib_error_set_handler` and `jack_set_error_function`/`jack_set_info_function`.
`routed_to_log()` installs ours for as long as it is entered (the app's whole run)
and puts the libraries' own back on the way out, before the C callbacks are freed.
A library that is not installed is skipped: there is nothing of it to hear.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("app.audio.native")

# void (*)(const char *file, int line, const char *function, int err, const char *fmt, ...)
# The format's own arguments are variadic and cannot be read from here: the format is
# logged as it is (most messages have none; the log line still says where it came from).
_ALSA_HANDLER = ctypes.CFUNCTYPE(
    None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p
)
_JACK_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_char_p)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "replace").strip() if raw else ""


def _load(name: str) -> Any:
    found = ctypes.util.find_library(name)
    for candidate in filter(None, (found, f"lib{name}.so.2", f"lib{name}.so.0")):
        with contextlib.suppress(OSError):
            return ctypes.CDLL(candidate)
    return None


class SoundLibraryMessages:
    """Our handlers for ALSA and JACK; it keeps the C callbacks alive while installed."""

    def __init__(self, logger: logging.Logger = log) -> None:
        self._log = logger
        self._alsa: Any = None
        self._jack: Any = None
        self._callbacks: list[Any] = []
        self.routed: list[str] = []  # the libraries whose messages come to us

    def _from_alsa(
        self, file: bytes | None, line: int, function: bytes | None, err: int, fmt: bytes | None
    ) -> None:
        where = f"{_text(file)}:{line}:({_text(function)})"
        said = _text(fmt)
        # An underrun is a gap the user heard; the rest is PortAudio probing ALSA's
        # device names (dozens of lines each time it lists the devices).
        level = logging.INFO if "underrun" in said else logging.DEBUG
        self._log.log(level, "ALSA %s %s%s", where, said, f" (error {err})" if err else "")

    def _from_jack(self, message: bytes | None) -> None:
        self._log.debug("JACK %s", _text(message))

    def install(self) -> list[str]:
        """Route both libraries' messages to the log; returns the ones routed."""
        alsa = _load("asound")
        if alsa is not None and hasattr(alsa, "snd_lib_error_set_handler"):
            callback = _ALSA_HANDLER(self._from_alsa)
            alsa.snd_lib_error_set_handler.argtypes = [_ALSA_HANDLER]
            alsa.snd_lib_error_set_handler(callback)
            self._alsa = alsa
            self._callbacks.append(callback)
            self.routed.append("alsa")
        jack = _load("jack")
        if jack is not None and hasattr(jack, "jack_set_error_function"):
            callback = _JACK_HANDLER(self._from_jack)
            for setter in ("jack_set_error_function", "jack_set_info_function"):
                function = getattr(jack, setter, None)
                if function is not None:
                    function.argtypes = [_JACK_HANDLER]
                    function(callback)
            self._jack = jack
            self._callbacks.append(callback)
            self.routed.append("jack")
        return self.routed

    def uninstall(self) -> None:
        """The libraries' own printing back (our callbacks may be freed after this)."""
        if self._alsa is not None:
            self._alsa.snd_lib_error_set_handler(_ALSA_HANDLER())  # NULL: ALSA's default
            self._alsa = None
        # JACK has no "default" to restore: a handler that drops the message is left,
        # made from a function that lives as long as the module.
        if self._jack is not None:
            for setter in ("jack_set_error_function", "jack_set_info_function"):
                function = getattr(self._jack, setter, None)
                if function is not None:
                    function(_SILENT_JACK)
            self._jack = None
        self._callbacks.clear()
        self.routed = []


def _drop(message: bytes | None) -> None:
    return None


_SILENT_JACK = _JACK_HANDLER(_drop)  # immutable: a C function pointer to a no-op


@contextlib.contextmanager
def routed_to_log(logger: logging.Logger = log) -> Iterator[SoundLibraryMessages]:
    """ALSA's and JACK's messages go to `logger` while in the block."""
    messages = SoundLibraryMessages(logger)
    try:
        messages.install()
    except Exception:  # the messages then reach stderr as before; nothing else changes
        logger.debug("the sound libraries' messages could not be routed", exc_info=True)
    try:
        yield messages
    finally:
        messages.uninstall()


__all__ = ["SoundLibraryMessages", "routed_to_log"]

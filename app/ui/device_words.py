"""The sound devices' messages in the UI's language.

The audio layer (`app.audio.capture`, `app.audio.playback`) is Qt-free and says why a
microphone or a speaker cannot be used in English sentences, with the device's and the
sound system's own words inside ("The microphone 'USB Mic' was not found (found
'default', 'pulse'; ...)"). The window shows them translated: each sentence it knows is
put in the UI's language with those inside words kept as they came; a sentence it does
not know stays as it is (never lost, never half translated within a sentence).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

__all__ = ["device_words"]

_CONTEXT = "DeviceWords"
_WHAT: dict[str, str] = {
    "microphone": str(QT_TRANSLATE_NOOP("DeviceWords", "microphone")),
    "sound output device": str(QT_TRANSLATE_NOOP("DeviceWords", "sound output device")),
}
_DEVICE = "(microphone|sound output device)"
# (the sentence as the audio layer writes it, the same sentence for translation; the
# groups fill {0}, {1} ... in order, a device kind translated)
_SENTENCES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), str(text))
    for pattern, text in (
        (rf"No {_DEVICE} was found on this computer\.",
         QT_TRANSLATE_NOOP("DeviceWords", "No {0} was found on this computer.")),
        (rf"There is no default {_DEVICE} \(found (.*?)\)\.",
         QT_TRANSLATE_NOOP("DeviceWords", "There is no default {0} (found {1}).")),
        (rf"The {_DEVICE} ('.*?'|-?\d+) was not found \(found (.*)\)\.",
         QT_TRANSLATE_NOOP("DeviceWords", "The {0} {1} was not found (found {2}).")),
        (r"Sound support is missing on this computer \((.*)\); install PortAudio "
         r"\(libportaudio2 on Debian and Ubuntu\)\.",
         QT_TRANSLATE_NOOP(
             "DeviceWords",
             "Sound support is missing on this computer ({0}); install PortAudio "
             "(libportaudio2 on Debian and Ubuntu).",
         )),
        (r"Replies are shown but not heard; connect speakers or pick a device in the "
         r"settings\.",
         QT_TRANSLATE_NOOP(
             "DeviceWords",
             "Replies are shown but not heard; connect speakers or pick a device in the "
             "settings.",
         )),
        (r"Connect a microphone, or type your messages\.",
         QT_TRANSLATE_NOOP("DeviceWords", "Connect a microphone, or type your messages.")),
        (r"The sound output device cannot be opened \((.*)\)\.?",
         QT_TRANSLATE_NOOP("DeviceWords", "The sound output device cannot be opened ({0}).")),
        (r"The sound output stopped working: the device may have been unplugged, or the "
         r"sound system stopped \((.*)\)\.",
         QT_TRANSLATE_NOOP(
             "DeviceWords",
             "The sound output stopped working: the device may have been unplugged, or "
             "the sound system stopped ({0}).",
         )),
    )
)


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


def device_words(message: str) -> str:
    """`message` with each sentence of the sound devices' that it holds in the UI's
    language (the rest as it came)."""
    for pattern, text in _SENTENCES:

        def said(match: re.Match[str], text: str = text) -> str:
            parts = [_tr(_WHAT[g]) if g in _WHAT else g for g in match.groups()]
            return _tr(text).format(*parts)

        message = pattern.sub(said, message)
    return _BETWEEN_CJK.sub("", message)  # "。 请" -> "。请": no spaces between Chinese


_BETWEEN_CJK = re.compile(r"(?<=[。；！？）\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")

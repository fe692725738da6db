"""Which language recognition listens for, and which built-in model hears it.

`speech.language`:
- `auto` (or empty): the language of the windows (`ui_language`, else the system's),
  unless whisper's own language detection is sure (`SURE_DETECTION`) it heard English
  or Chinese instead; needs the multilingual model;
- a whisper language code (`en`, `zh`, `ja`, ...; `en-US` and `zh_CN` count as `en`
  and `zh`): always that language.

With `speech.model` empty, English (and `auto` with the windows in English) is heard
by `ENGLISH_MODEL` (tiny.en), every other language, and `auto` with the windows in
another language, by the multilingual `MULTILINGUAL_MODEL` (base).
"""

from __future__ import annotations

import locale
import os
from collections.abc import Sequence

__all__ = [
    "AUTO",
    "ENGLISH_MODEL",
    "MULTILINGUAL_MODEL",
    "SURE_DETECTION",
    "WHISPER_LANGUAGES",
    "chosen_language",
    "default_model",
    "fixed_language",
    "language_problem",
    "system_language",
]

AUTO = "auto"
TINY_EN = "tiny.en"
MULTILINGUAL_MODEL = "base"
# The model for speech.language = "en" when speech.model is empty: tiny.en, chosen from
# bench/bench_asr.py's figures (README): with the names the companion knows passed as
# hotwords it hears them about as well as base does, in about half the time.
ENGLISH_MODEL = TINY_EN
# Whisper's detection counts as sure of a language from this probability on (its own
# default threshold is 0.5; base put espeak-ng English at 0.25-0.92 for English, so
# less than this leaves the windows' language in place).
SURE_DETECTION = 0.75
# The languages `auto` may switch to from the windows' language, when detection is sure.
SWITCH_TO = ("en", "zh")
# The languages whisper knows (faster_whisper.tokenizer._LANGUAGE_CODES).
_CODES = (
    "af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi fo fr gl gu "
    "ha haw he hi hr ht hu hy id is it ja jw ka kk km kn ko la lb ln lo lt lv mg mi mk ml "
    "mn mr ms mt my ne nl nn no oc pa pl ps pt ro ru sa sd si sk sl sn so sq sr su sv sw "
    "ta te tg th tk tl tr tt uk ur uz vi yi yo zh yue"
)
WHISPER_LANGUAGES = frozenset(_CODES.split(" "))


def base_code(language: str) -> str:
    """The base code of a language: en-US gives en, zh_CN gives zh."""
    return language.strip().replace("_", "-").split("-")[0].lower()


def is_auto(language: str | None) -> bool:
    return not language or language.strip().lower() in (AUTO, "detect")


def language_problem(language: str | None) -> str | None:
    """What is wrong with a `speech.language` value, in words (None: nothing)."""
    if is_auto(language):
        return None
    assert language is not None
    if base_code(language) in WHISPER_LANGUAGES:
        return None
    return (
        f"{language!r} is not a language the speech recognizer knows: use auto (follow "
        "the windows' language), en (English), zh (Chinese) or another two-letter code "
        "such as ja, ko, fr, de, es"
    )


def fixed_language(language: str | None) -> str | None:
    """The one language a setting names (whisper's code), or None for `auto`."""
    return None if is_auto(language) else base_code(language or "")


def system_language() -> str | None:
    """The system's language from its locale ("zh_CN.UTF-8" → "zh"), None if unknown."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value and value not in ("C", "POSIX") and not value.startswith("C."):
            return base_code(value.split(".")[0])
    try:
        found = locale.getlocale()[0]
    except ValueError:
        found = None
    return base_code(found) if found else None


def ui_code(ui_language: str | None) -> str:
    """The language of the windows as whisper's code: `auto` follows the system; English
    when nothing says otherwise or the language is not one whisper knows."""
    code = None if is_auto(ui_language) else base_code(ui_language or "")
    code = code or system_language()
    return code if code in WHISPER_LANGUAGES else "en"


def chosen_language(
    detected: Sequence[tuple[str, float]], ui_language: str | None
) -> tuple[str, bool]:
    """For `auto`: the language to transcribe in, from whisper's detection (languages
    with their probabilities, most likely first), and whether detection changed it.

    The windows' language, unless detection is sure (`SURE_DETECTION`) of one of the
    app's own languages (`SWITCH_TO`). Only those: on espeak-ng's Mandarin, base was
    "sure" of Thai at 0.96, and of nothing right."""
    fallback = ui_code(ui_language)
    for language, probability in detected:
        if probability >= SURE_DETECTION and language in (*SWITCH_TO, fallback):
            return language, language != fallback
    return fallback, False


def default_model(language: str | None, ui_language: str | None = None) -> str:
    """The built-in model for a `speech.language` when `speech.model` is empty: tiny.en
    for English, and for `auto` while the windows are in English (tiny.en cannot tell
    languages apart: base would hear English about 2.5 times slower, and worse, for
    the few who speak another language to English windows; bench/bench_asr.py); base
    for every other language, and for `auto` in any other windows' language."""
    fixed = fixed_language(language)
    english = fixed == "en" or (fixed is None and ui_code(ui_language) == "en")
    return ENGLISH_MODEL if english else MULTILINGUAL_MODEL

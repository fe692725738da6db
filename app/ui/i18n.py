"""The UI's language: Qt translators for our text (English in the source, Chinese in
`assets/translations/`) and, when Qt ships it, Qt's own text (standard buttons).

`ui.language = "auto"` follows the system's locale; "en" or "zh_CN" choose one. The
translation sources (`.ts`) are made by `python scripts/translations.py` with
`pyside6-lupdate`, compiled to `.qm` with `pyside6-lrelease`; both are committed.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

log = logging.getLogger(__name__)

LANGUAGES = {"en": "English", "zh_CN": "中文 (简体)"}
TRANSLATIONS = "translations"


def translations_dir() -> Path:
    """`assets/translations`, from source or from a frozen bundle."""
    from app.assets import asset_path

    return asset_path(TRANSLATIONS)


def resolve_language(language: str, system: QLocale | None = None) -> str:
    """The language to show: one of LANGUAGES (English when nothing fits)."""
    if language in LANGUAGES:
        return language
    if language not in ("", "auto"):
        log.warning("unknown UI language %r: using the system's", language)
    locale = system or QLocale.system()
    if locale.language() == QLocale.Language.Chinese:
        return "zh_CN"
    return "en"


def install_translators(app: QCoreApplication, language: str = "auto") -> str:
    """Install the translators for `language` on `app`; returns the language shown.
    A missing or damaged translation file leaves the English text (and logs why)."""
    for old in app.findChildren(QTranslator, "companionTranslator"):
        QCoreApplication.removeTranslator(old)
        old.deleteLater()
    chosen = resolve_language(language)
    if chosen == "en":
        return chosen
    ours = QTranslator(app)
    ours.setObjectName("companionTranslator")
    path = translations_dir() / f"companion_{chosen}.qm"
    if not ours.load(str(path)):
        log.warning("the %s translation could not be loaded from %s", chosen, path)
        return "en"
    QCoreApplication.installTranslator(ours)
    qt = QTranslator(app)
    qt.setObjectName("companionTranslator")
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if qt.load(f"qtbase_{chosen}", qt_dir):  # absent from a trimmed bundle: fine
        QCoreApplication.installTranslator(qt)
    return chosen

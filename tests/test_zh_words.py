"""The Chinese interface says one word per concept and leaves nothing in English that
it translates elsewhere (issue 28, item 8): the hosted model is 在线模型 and the embedded
one 内置 everywhere in the translations (never 托管 / 内嵌 / 离线模型), "Base URL" is
translated, and the conversation list shows a new conversation as 新对话 though the
storage keeps its English title."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.session import VoiceSession
from app.ui.conversations import ConversationList
from app.ui.i18n import install_translators

TS = Path(__file__).resolve().parents[1] / "assets" / "translations" / "companion_zh_CN.ts"
MESSAGE = re.compile(
    r"<source>([^<]*)</source>\s*(?:<(?!translation)[^>]*>[^<]*</[^>]*>\s*)*"
    r"<translation[^>]*>([^<]*)</translation>"
)
# The one word for each concept, and the words it must not be mixed with.
FORBIDDEN = {
    "托管": "a hosted model is 在线模型",
    "内嵌": "the embedded model is 内置模型",
    "离线模型": "the embedded model is 内置模型 (离线 says how it runs, not what it is)",
    "Base URL": "the server's address is 服务器地址",
}
# English words whose concept has one Chinese word: a translation of a text using the
# English word uses the Chinese one.
CONCEPTS = {
    r"\bhosted\b": "在线",
    r"\bembedded\b": "内置",
    r"\bbase URL\b": "服务器地址",
}


def translations() -> list[tuple[str, str]]:
    text = TS.read_text(encoding="utf-8")
    found = [(html.unescape(s), html.unescape(t)) for s, t in MESSAGE.findall(text)]
    assert len(found) > 500  # the pattern reads the file
    return [(source, target) for source, target in found if target]


def test_no_translation_uses_a_forbidden_alternate() -> None:
    mixed = [
        (word, source, target, why)
        for source, target in translations()
        for word, why in FORBIDDEN.items()
        if word in target
    ]
    assert mixed == []


@pytest.mark.parametrize(("english", "chinese"), CONCEPTS.items())
def test_each_concept_has_its_one_chinese_word(english: str, chinese: str) -> None:
    pattern = re.compile(english, re.IGNORECASE)
    uses = [(s, t) for s, t in translations() if pattern.search(s)]
    assert uses, english  # the concept is in the interface at all
    assert [(s, t) for s, t in uses if chinese not in t] == []


def test_the_english_says_embedded_model_too() -> None:
    """The source texts name the embedded model one way (not "the offline model")."""
    sources = [s for s, _ in translations()]
    assert [s for s in sources if re.search(r"\boffline model", s, re.IGNORECASE)] == []


@pytest.fixture
def chinese() -> Iterator[QApplication]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    assert install_translators(app, "zh_CN") == "zh_CN"
    yield app
    install_translators(app, "en")


async def test_a_new_conversation_is_listed_in_chinese(chinese: QApplication, tmp_path) -> None:  # type: ignore[no-untyped-def]
    storage = FileStorage(tmp_path / "history")
    settings = Settings()
    settings.chat.model = "openai-compatible/none"
    settings.chat.base_url = "http://127.0.0.1:9/v1"
    session = VoiceSession(settings, sink=MemorySink(), storage=storage)
    try:
        await session.new_conversation()
        stored = [info.title for info in session.conversations()]
        assert "New conversation" in stored  # the storage keeps its English title
        listed = ConversationList(session, lambda call, what: call.close())
        titles = listed.titles()
        assert "New conversation" not in titles
        assert "新对话" in titles
        listed.deleteLater()
    finally:
        await session.aclose()

"""The Memory page and the "💭 Remembered" notice (offscreen), over a real memory on
disk: the list, search, edit, delete, forget everything (asked first), export and
import, undo from the notice, in English and Chinese; and the memory's members are the
ones the UI's port declares."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, Qt, QTranslator
from PySide6.QtWidgets import QApplication, QMessageBox

from app.config import MemorySettings
from app.events import MemoryChanged
from app.memory import LongTermMemory, MemoryDraft, MemoryStore
from app.ui import MainWindow
from app.ui.memory_page import MemoryNotice, MemoryPage
from app.ui.memory_page import shown as shown_note
from app.ui.session_port import MemoryPort
from tests.test_ui import qapp  # noqa: F401  (a fixture)
from tests.ui_sessions import ScriptedSession

pytestmark = pytest.mark.usefixtures("qapp")  # every test here has a QApplication


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[LongTermMemory]:
    book = LongTermMemory(MemoryStore(tmp_path / "memory.sqlite3"), character="Mika")
    for text in (
        "The user's cat is called Luna.",
        "The user works as a nurse.",
        "用户喜欢喝乌龙茶",
    ):
        book.store.add("Mika", MemoryDraft(text))
    yield book
    book.store.close()


@pytest.fixture
def session(memory: LongTermMemory) -> ScriptedSession:
    scripted = ScriptedSession()
    scripted.memory = memory
    memory.subscribe(scripted.events.emit)  # as the VoiceSession does
    return scripted


@pytest.fixture
def page(session: ScriptedSession) -> Iterator[MemoryPage]:
    shown = MemoryPage(session)
    shown.show()
    yield shown
    shown.close()


def flush() -> None:
    QApplication.processEvents()


def test_the_memory_port_is_what_the_memory_provides() -> None:
    for name, declared in vars(MemoryPort).items():
        if name.startswith("_"):
            continue
        found = getattr(LongTermMemory, name)
        assert isinstance(found, property) == isinstance(declared, property), name
        if not isinstance(declared, property):
            wanted = list(inspect.signature(declared).parameters)
            assert list(inspect.signature(found).parameters)[: len(wanted)] == wanted, name


def test_the_page_lists_every_memory_newest_first(page: MemoryPage) -> None:
    # Stored about "the user", shown to the user as "you" (one person in each place).
    assert page.texts() == [
        "你喜欢喝乌龙茶",
        "You work as a nurse.",
        "Your cat is called Luna.",
    ]
    assert page.count_label.text() == "3 memories"
    assert page.off_label.isHidden()


def test_searching_keeps_the_memories_that_hold_the_words(page: MemoryPage) -> None:
    page.search.setText("CAT")
    assert page.texts() == ["Your cat is called Luna."]
    assert page.count_label.text() == "1 of 3 memories"
    page.search.setText("乌龙")
    assert page.texts() == ["你喜欢喝乌龙茶"]
    page.search.setText("your cat")  # as the page shows it
    assert page.texts() == ["Your cat is called Luna."]


def test_editing_a_memory_in_the_list_stores_it(page: MemoryPage, memory: LongTermMemory) -> None:
    [item] = page.list.findItems("Your cat is called Luna.", Qt.MatchFlag.MatchExactly)
    item.setText("Your cat is called Nori.")  # typed as the page shows notes: to "you"
    flush()
    assert "The user's cat is called Nori." in [m.text for m in memory.items()]
    assert "Your cat is called Nori." in page.texts()
    [edited] = [m for m in memory.items() if "Nori" in m.text]
    assert edited.source == "edited"


def test_an_edit_to_nothing_is_refused_in_words(page: MemoryPage, memory: LongTermMemory) -> None:
    page.list.item(0).setText("   ")
    flush()
    assert "needs some words" in page.error_label.text()
    assert len(memory.items()) == 3


def test_deleting_the_chosen_memory(page: MemoryPage, memory: LongTermMemory) -> None:
    page.list.setCurrentRow(1)
    page.delete_button.click()
    assert [m.text for m in memory.items()] == [
        "用户喜欢喝乌龙茶",
        "The user's cat is called Luna.",
    ]
    assert page.texts() == ["你喜欢喝乌龙茶", "Your cat is called Luna."]


@pytest.mark.parametrize(
    ("answer", "left"), [(QMessageBox.StandardButton.No, 3), (QMessageBox.StandardButton.Yes, 0)]
)
def test_forget_everything_asks_first(
    page: MemoryPage, memory: LongTermMemory, answer: QMessageBox.StandardButton, left: int
) -> None:
    page.forget_button.click()
    box = page.question
    assert box is not None and box.isVisible()
    assert "3 memories" in box.text() and "cannot be undone" in box.text()
    box.button(answer).click()
    flush()
    assert memory.count() == left and page.list.count() == left


def test_export_then_import_into_an_empty_memory(
    page: MemoryPage, memory: LongTermMemory, tmp_path: Path
) -> None:
    out = tmp_path / "mine.json"
    page.export_to(out)
    assert "Exported 3 memories" in page.error_label.text()
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["format"] == "companion-memories" and len(document["memories"]) == 3
    memory.forget_everything()
    page.import_from(out)
    assert "Imported 3 new memories" in page.error_label.text()
    assert sorted(page.texts()) == sorted(shown_note(m["text"]) for m in document["memories"])
    page.import_from(out)  # nothing new the second time
    assert "Imported 0 new memories" in page.error_label.text() and memory.count() == 3


def test_a_file_that_is_not_a_memory_file_is_refused_in_words(
    page: MemoryPage, memory: LongTermMemory, tmp_path: Path
) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"memories": [{"text": "The user is a spy."}]}', encoding="utf-8")
    page.import_from(bad)
    assert "not a Companion memory file" in page.error_label.text()
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "companion-memories", "version": 1, "memories": [{"kind": 3}]}')
    page.import_from(broken)
    assert "memories.0.text" in page.error_label.text()
    assert memory.count() == 3  # nothing of either was stored


def test_the_page_follows_changes_made_elsewhere(page: MemoryPage, memory: LongTermMemory) -> None:
    memory.store.add("Mika", MemoryDraft("The user has a red bicycle."))
    memory.changes.record("remembered", (), ())
    flush()
    assert page.texts()[0] == "You have a red bicycle."


def test_the_page_says_when_memory_is_off(tmp_path: Path) -> None:
    book = LongTermMemory(
        MemoryStore(tmp_path / "m.sqlite3"),
        character="Mika",
        settings=MemorySettings(enabled=False),
    )
    scripted = ScriptedSession()
    scripted.memory = book
    shown = MemoryPage(scripted)
    shown.show()
    assert shown.off_label.isVisible() and "Memory is off" in shown.off_label.text()
    shown.close()


def test_the_notice_shows_what_was_remembered_and_a_click_takes_it_back(
    session: ScriptedSession, memory: LongTermMemory
) -> None:
    window = MainWindow(session)
    try:
        item = memory.store.add("Mika", MemoryDraft("The user's dog is called Rex."))
        memory.changes.record("remembered", (), (item,))
        flush()
        notice = window.memory_notice
        assert notice is not None and not notice.isHidden()
        assert notice.text() == "💭 Remembered: your dog is called Rex."
        notice.click()
        flush()
        assert memory.store.get(item.id) is None
        assert notice.text() == "💭 Undone"
    finally:
        window.close()


def test_the_window_opens_the_page_from_its_button(session: ScriptedSession) -> None:
    window = MainWindow(session)
    try:
        assert not window.memory_button.isHidden()
        window.memory_button.click()
        assert window.memory_page is not None and window.memory_page.isVisible()
        assert len(window.memory_page.texts()) == 3
    finally:
        window.close()


def test_a_session_without_memory_shows_no_memory_button() -> None:
    window = MainWindow(ScriptedSession())
    try:
        assert window.memory_button.isHidden() and window.open_memory() is None
    finally:
        window.close()


def test_the_page_and_the_notice_speak_chinese(
    session: ScriptedSession, memory: LongTermMemory
) -> None:
    translator = QTranslator()
    root = Path(__file__).resolve().parents[1]
    assert translator.load(str(root / "assets" / "translations" / "companion_zh_CN.qm"))
    QCoreApplication.installTranslator(translator)
    try:
        shown = MemoryPage(session)
        assert shown.windowTitle() == "记忆"
        assert shown.count_label.text() == "3 条记忆"
        notice = MemoryNotice()
        notice.show_change(MemoryChanged(1, "remembered", ("用户的猫叫Nori",)))
        assert notice.text() == "💭 记住了：你的猫叫Nori"
        shown.close()
    finally:
        QCoreApplication.removeTranslator(translator)

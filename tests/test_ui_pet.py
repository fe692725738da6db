"""The desktop pet (offscreen): it presents the same session as the main window, keeps
its place per screen, lets clicks through on request, and its menu acts on the session."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication, QMenu

from app.config import UiSettings
from app.events import (
    AssistantSentence,
    ExpressionChanged,
    MicStateChanged,
    Status,
    StatusChanged,
    TurnFinished,
)
from app.ui import MainWindow
from app.ui.app import Shell
from app.ui.pet import PetWindow, screen_key
from tests.ui_sessions import ScriptedSession


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def session() -> ScriptedSession:
    return ScriptedSession()


@pytest.fixture(autouse=True)
def delete_windows_after_each_test(qapp: QApplication) -> Iterator[None]:
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def pet(qapp: QApplication, session: ScriptedSession) -> Iterator[PetWindow]:
    win = PetWindow(session, UiSettings())
    yield win
    win.dispose()


def say(session: ScriptedSession, text: str, turn_id: int = 1) -> None:
    session.events.emit(AssistantSentence(text, text, (), turn_id))
    QApplication.processEvents()


def test_the_pet_is_a_frameless_translucent_always_on_top_window(pet: PetWindow) -> None:
    flags = pet.windowFlags()
    assert flags & Qt.WindowType.FramelessWindowHint
    assert flags & Qt.WindowType.WindowStaysOnTopHint
    assert pet.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)


def test_the_bubble_shows_the_sentence_being_spoken(
    pet: PetWindow, session: ScriptedSession
) -> None:
    pet.show()
    say(session, "Hello there!")
    assert pet.bubble_text == "Hello there!"
    say(session, "How are you?")
    assert pet.bubble_text == "How are you?"


def test_thinking_text_never_reaches_the_bubble(pet: PetWindow, session: ScriptedSession) -> None:
    pet.show()
    session.events.emit(AssistantSentence("hmm", "", (), 1, is_thinking=True))
    QApplication.processEvents()
    assert pet.bubble_text == ""


def test_the_bubble_goes_away_after_the_turn(pet: PetWindow, session: ScriptedSession) -> None:
    pet.show()
    say(session, "Bye!", turn_id=3)
    session.events.emit(TurnFinished(3, {}))
    QApplication.processEvents()
    assert pet._bubble_timer.isActive()
    pet._bubble_timer.timeout.emit()
    assert pet.bubble_text == ""


def test_a_notice_about_the_app_shows_in_the_bubble_for_a_while(pet: PetWindow) -> None:
    pet.show()
    pet.show_notice("Global hotkeys are off.")
    assert pet.bubble_text == "Global hotkeys are off."
    assert pet._bubble_timer.isActive()
    pet._bubble_timer.timeout.emit()
    assert pet.bubble_text == ""


def test_a_platform_notice_reaches_the_pet_when_it_is_the_window_shown(
    qapp: QApplication, session: ScriptedSession
) -> None:
    window = MainWindow(session)
    shell = Shell(session, window, ui=UiSettings(), use_tray=True)
    try:
        shell.show_pet()
        shell.tell_once("test", "Something about this desktop.")
        shell.tell_once("test", "Said again.")
        assert shell.pet.bubble_text == "Something about this desktop."
        assert window.notice_label.text() == "Something about this desktop."
    finally:
        shell.dispose()
        window.deleteLater()


def test_the_avatar_follows_expressions_and_thinking(
    pet: PetWindow, session: ScriptedSession
) -> None:
    session.events.emit(ExpressionChanged("joy"))
    session.events.emit(StatusChanged(Status.THINKING))
    QApplication.processEvents()
    assert pet.avatar.expression == "joy"
    assert pet.avatar.thinking


def test_main_window_and_pet_present_the_same_conversation(
    qapp: QApplication, session: ScriptedSession
) -> None:
    window = MainWindow(session)
    pet = PetWindow(session, UiSettings())
    try:
        window.show()
        say(session, "First part.", turn_id=1)
        window.hide()  # the user switches to the pet mid-reply
        pet.show()
        say(session, "Second part.", turn_id=1)
        pet.hide()
        window.show()
        QApplication.processEvents()
        assert window.transcript.entries[-1].text == "First part. Second part."
        assert pet.bubble.text() == "Second part."
    finally:
        pet.dispose()
        window.close()


def drag(pet: PetWindow, start: QPoint, end: QPoint) -> None:
    def send(kind: QMouseEvent.Type, at: QPoint, buttons: Qt.MouseButton) -> None:
        local = QPointF(pet.mapFromGlobal(at))
        event = QMouseEvent(
            kind,
            local,
            QPointF(at),
            Qt.MouseButton.LeftButton,
            buttons,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(pet, event)

    left = Qt.MouseButton.LeftButton
    send(QMouseEvent.Type.MouseButtonPress, start, left)
    send(QMouseEvent.Type.MouseMove, end, left)
    send(QMouseEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)


def test_dragging_moves_the_pet_and_remembers_the_place_for_this_screen(
    qapp: QApplication, session: ScriptedSession
) -> None:
    ui = UiSettings()
    saves: list[int] = []
    pet = PetWindow(session, ui, save=lambda: saves.append(1))
    try:
        pet.show()
        pet.move(100, 100)
        QApplication.processEvents()
        start = pet.mapToGlobal(QPoint(50, 200))
        drag(pet, start, start + QPoint(40, 30))
        assert (pet.x(), pet.y()) == (140, 130)
        assert ui.pet_geometry[screen_key(pet)][:2] == [140, 130]
        assert saves
    finally:
        pet.dispose()
    again = PetWindow(session, ui)
    try:
        assert (again.x(), again.y(), again.width()) == (140, 130, pet.width())
    finally:
        again.dispose()


def test_a_saved_size_is_restored(qapp: QApplication, session: ScriptedSession) -> None:
    probe = PetWindow(session, UiSettings())
    key = screen_key(probe)
    probe.dispose()
    pet = PetWindow(session, UiSettings(pet_geometry={key: [10, 20, 300, 500]}))
    try:
        assert (pet.x(), pet.y(), pet.width(), pet.height()) == (10, 20, 300, 500)
    finally:
        pet.dispose()


def test_click_through_lets_the_mouse_pass_and_is_kept(
    qapp: QApplication, session: ScriptedSession
) -> None:
    ui = UiSettings()
    pet = PetWindow(session, ui)
    try:
        pet.show()
        pet.set_click_through(True)
        assert pet.isVisible()
        assert pet.windowFlags() & Qt.WindowType.WindowTransparentForInput
        assert ui.click_through
        pet.set_click_through(False)
        assert not pet.windowFlags() & Qt.WindowType.WindowTransparentForInput
        assert not ui.click_through
    finally:
        pet.dispose()


def menu_of(pet: PetWindow) -> QMenu:
    menu = pet.show_menu(QPoint(0, 0))
    return menu


def test_the_menu_switches_the_mic_stops_and_quits(
    pet: PetWindow, session: ScriptedSession
) -> None:
    opened: list[int] = []
    quits: list[int] = []
    pet.open_main_requested.connect(lambda: opened.append(1))
    pet.quit_requested.connect(lambda: quits.append(1))
    menu = menu_of(pet)
    texts = [a.text() for a in menu.actions() if a.text()]
    assert texts[:2] == ["Open main window", "Microphone on"]
    assert "Quit Companion" in texts
    pet.actions_menu.action(menu, "Microphone on").trigger()
    assert session.mic_calls == [True]
    pet.actions_menu.action(menu, "Stop speaking").trigger()
    assert session.interrupts == 1
    pet.actions_menu.action(menu, "Open main window").trigger()
    pet.actions_menu.action(menu, "Quit Companion").trigger()
    assert opened == [1] and quits == [1]
    menu.close()


def test_the_menu_shows_the_mic_state_the_session_reported(
    pet: PetWindow, session: ScriptedSession
) -> None:
    session.events.emit(MicStateChanged(enabled=False, available=False, detail="no device"))
    QApplication.processEvents()
    menu = menu_of(pet)
    mic = pet.actions_menu.action(menu, "Microphone on")
    assert not mic.isEnabled() and not mic.isChecked()
    menu.close()


def test_the_expression_test_menu_changes_the_face(pet: PetWindow) -> None:
    menu = menu_of(pet)
    faces = pet.actions_menu.action(menu, "Try an expression").menu()
    assert isinstance(faces, QMenu)
    joy = next(a for a in faces.actions() if a.text() == "Joy")
    joy.trigger()
    assert pet.avatar.expression == "joy"
    menu.close()


def test_the_screenshots_command_renders_non_blank_pictures(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(repo / "scripts" / "screenshots.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    for name in ("main_window.png", "pet.png", "settings.png"):
        image = QImage(str(tmp_path / name))
        assert not image.isNull(), name
        assert image.width() >= 200 and image.height() >= 200, name
        colours = {
            image.pixel(x, y)
            for x in range(0, image.width(), 7)
            for y in range(0, image.height(), 7)
        }
        assert len(colours) > 50, f"{name} looks blank"


def test_the_menu_switches_the_microphone_mode(qapp: QApplication) -> None:
    session = ScriptedSession()
    pet = PetWindow(session)
    try:
        menu = menu_of(pet)
        modes = pet.actions_menu.action(menu, "Microphone mode").menu()
        assert isinstance(modes, QMenu)
        entries = {a.text(): a for a in modes.actions()}
        assert list(entries) == ["Always on", "Push to talk", "Muted"]
        assert entries["Always on"].isChecked() and not entries["Muted"].isChecked()
        entries["Push to talk"].trigger()
        assert session.modes == ["push_to_talk"]
        menu.close()
        menu = menu_of(pet)  # the menu is read fresh: the new mode is ticked
        modes = pet.actions_menu.action(menu, "Microphone mode").menu()
        assert isinstance(modes, QMenu)
        ticked = [a.text() for a in modes.actions() if a.isChecked()]
        assert ticked == ["Push to talk"]
        menu.close()
    finally:
        pet.close()

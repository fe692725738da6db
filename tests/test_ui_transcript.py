"""The transcript view: thinking collapsed, tool chips, screenshot thumbnails that open
full size, stored conversations shown again. Offscreen Qt, real PNG files, real
`app.llm` messages (saved and loaded through the real file storage)."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import TracebackType

import pytest
from PIL import Image, ImageDraw
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QWidget

import app.ui.pictures as pictures_module
from app.agent.outputs import SentenceOutput
from app.agent.storage import FileStorage
from app.agent.transformers import reply_pipeline
from app.avatar.state import EXPRESSIONS
from app.events import AssistantSentence, TurnFinished, UserTranscript
from app.llm import (
    ImageBlock,
    ImageFileRef,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from app.ui.main_window import MainWindow
from app.ui.transcript import (
    HISTORY_FIRST_ROWS,
    MAX_TRANSCRIPT_ROWS,
    THUMBNAIL_BOX,
    CaptureThumbnail,
    CaptureViewer,
    ThinkingSection,
    ToolChip,
    TranscriptView,
)
from tests.ui_sessions import ScriptedSession

WAIT_S = 30.0  # a generous bound for background decoding on a busy machine, not a budget


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def view(qapp: QApplication) -> Iterator[TranscriptView]:
    shown = TranscriptView()
    shown.resize(640, 800)
    shown.show()
    yield shown
    for viewer in shown.viewers:
        viewer.close()
    shown.close()
    shown.deleteLater()
    flush_deletes()


@pytest.fixture
def exceptions(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """Exceptions raised inside Qt callbacks (PySide reports them to sys.excepthook)."""
    seen: list[BaseException] = []

    def hook(kind: type[BaseException], value: BaseException, trace: TracebackType | None) -> None:
        seen.append(value)

    monkeypatch.setattr(sys, "excepthook", hook)
    return seen


def flush_deletes() -> None:
    QApplication.processEvents()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        QApplication.processEvents()
        time.sleep(0.005)


def make_png(path: Path, width: int, height: int) -> Path:
    image = Image.new("RGB", (width, height), (40, 90, 200))
    draw = ImageDraw.Draw(image)
    draw.rectangle((width // 4, height // 4, width // 2, height // 2), fill=(250, 200, 30))
    draw.line((0, 0, width - 1, height - 1), fill=(255, 255, 255), width=5)
    image.save(path, "PNG")
    return path


def describe(widget: QWidget) -> str:
    """A bubble piece in words, for comparing the order of pieces."""
    if isinstance(widget, ThinkingSection):
        return f"thinking:{widget.plain}"
    if isinstance(widget, ToolChip):
        return f"chip:{widget.text()}"
    if isinstance(widget, CaptureThumbnail):
        return f"picture:{widget.path.name if widget.path else ''}"
    if isinstance(widget, QLabel):
        return f"{widget.objectName()}:{widget.text()}"
    return type(widget).__name__


def thumbnails(view: TranscriptView) -> list[CaptureThumbnail]:
    return view.findChildren(CaptureThumbnail)


def loaded(thumb: CaptureThumbnail) -> bool:
    return thumb.state != "loading"


# -- thinking ----------------------------------------------------------------------------


def test_thinking_is_collapsed_and_dimmed_and_a_click_opens_and_closes_it(
    view: TranscriptView,
) -> None:
    view.show_user("Why is the sky blue?", final=True, turn_id=1)
    view.add_sentence("The user asks about light.", turn_id=1, thinking=True)
    view.add_sentence("Rayleigh scattering.", turn_id=1, thinking=True)
    QApplication.processEvents()  # widgets added to a shown window show on the next pass
    (section,) = view.findChildren(ThinkingSection)
    assert section.live and section.toggle_button.text().startswith("Thinking…")
    assert section.isVisible() and section.toggle_button.isVisible()
    assert not section.body.isVisible()

    view.add_sentence("Because blue light scatters most.", turn_id=1)
    QApplication.processEvents()
    assert section.toggle_button.text().startswith("Thought for a moment")
    assert not section.body.isVisible() and not section.expanded
    assert section.plain == "The user asks about light. Rayleigh scattering."
    assert section.body.objectName() == "thinkingBody"  # the dimmed style

    QTest.mouseClick(section.toggle_button, Qt.MouseButton.LeftButton)
    assert section.body.isVisible() and section.expanded
    assert section.body.text() == "The user asks about light. Rayleigh scattering."
    assert "▾" in section.toggle_button.text()
    QTest.mouseClick(section.toggle_button, Qt.MouseButton.LeftButton)
    assert not section.body.isVisible()
    assert "▸" in section.toggle_button.text()

    # The answer stays as it was: shown as text, after the thinking.
    _user, reply = view.entries
    assert reply.answer == "Because blue light scatters most."
    assert (
        reply.text
        == "The user asks about light. Rayleigh scattering. Because blue light scatters most."
    )
    assert [describe(w) for w in view.bubble_widgets(1)] == [
        "thinking:The user asks about light. Rayleigh scattering.",
        "answerText:Because blue light scatters most.",
    ]


def test_thinking_with_no_answer_stops_saying_thinking_when_the_turn_ends(
    view: TranscriptView,
) -> None:
    view.add_sentence("Hmm.", turn_id=4, thinking=True)
    (section,) = view.findChildren(ThinkingSection)
    assert section.toggle_button.text().startswith("Thinking…")
    view.finish_turn(4)
    assert section.toggle_button.text().startswith("Thought for a moment")


# -- tool chips --------------------------------------------------------------------------


def test_tool_chips_appear_in_order_with_the_sentences(view: TranscriptView) -> None:
    view.show_user("What's on my screen and what time is it?", final=True, turn_id=7)
    view.add_tool("take_screenshot", turn_id=7)  # before any sentence: makes the bubble
    view.add_sentence("I see your editor.", turn_id=7)
    view.add_tool("get_time", turn_id=7)
    view.add_sentence("It is noon.", turn_id=7)
    view.add_sentence("Lunch time?", turn_id=7)
    view.add_tool("search_web", turn_id=7)  # no friendly words: its name
    view.add_tool("read_clipboard", turn_id=8)
    QApplication.processEvents()

    assert [describe(w) for w in view.bubble_widgets(1)] == [
        "chip:🔧 looked at your screen",
        "answerText:I see your editor.",
        "chip:🔧 checked the time",
        "answerText:It is noon. Lunch time?",
        "chip:🔧 search_web",
    ]
    assert [describe(w) for w in view.bubble_widgets(2)] == ["chip:🔧 read the clipboard"]
    assert [e.tools for e in view.entries] == [
        [],
        ["take_screenshot", "get_time", "search_web"],
        ["read_clipboard"],
    ]
    assert all(chip.isVisible() for chip in view.findChildren(ToolChip))


# -- screenshots ---------------------------------------------------------------------------


def test_a_capture_shows_a_thumbnail_decoded_off_the_ui_thread_and_opens_full_size(
    view: TranscriptView,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    exceptions: list[BaseException],
) -> None:
    shot = make_png(tmp_path / "capture.png", 1920, 1080)
    decoded_on: list[threading.Thread] = []
    real_decode = pictures_module.decode_image

    def recording_decode(*args: object, **kwargs: object) -> object:
        decoded_on.append(threading.current_thread())
        return real_decode(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pictures_module, "decode_image", recording_decode)
    view.show_user("Look at this", final=True, turn_id=2)
    view.add_sentence("Let me look.", turn_id=2)
    view.add_capture(shot, turn_id=2)

    (thumb,) = thumbnails(view)
    wait_until(lambda: loaded(thumb), "the thumbnail")
    assert thumb.state == "ready"
    pixmap = thumb.pixmap()
    assert not pixmap.isNull()
    assert pixmap.width() <= THUMBNAIL_BOX.width() and pixmap.height() <= THUMBNAIL_BOX.height()
    assert pixmap.width() == THUMBNAIL_BOX.width()  # scaled down, its shape kept
    assert abs(pixmap.width() / pixmap.height() - 1920 / 1080) < 0.02
    assert (thumb.full_size.width(), thumb.full_size.height()) == (1920, 1080)
    assert decoded_on and threading.main_thread() not in decoded_on
    assert view.entries[-1].images == [shot]
    assert [describe(w) for w in view.bubble_widgets(1)] == [
        "answerText:Let me look.",
        "picture:capture.png",
    ]

    QTest.mouseClick(thumb, Qt.MouseButton.LeftButton)
    (viewer,) = view.viewers
    assert isinstance(viewer, CaptureViewer)
    assert viewer.isVisible() and not viewer.isModal()
    wait_until(lambda: viewer.loaded, "the full-size picture")
    full = viewer.image_label.pixmap()
    assert (full.width(), full.height()) == (1920, 1080)
    screen = QGuiApplication.primaryScreen().availableGeometry()
    assert viewer.width() <= screen.width() and viewer.height() <= screen.height()
    assert viewer.scroller.widget() is viewer.image_label  # bigger than the window: scrolls
    assert not exceptions


def test_a_picture_bigger_than_the_screen_opens_scrollable_within_the_screen(
    view: TranscriptView, tmp_path: Path
) -> None:
    screen = QGuiApplication.primaryScreen().availableGeometry()
    width, height = screen.width() * 2, screen.height() * 2
    big = make_png(tmp_path / "big.png", width, height)
    viewer = view.open_viewer([big])
    assert view.viewers == [viewer] and not viewer.isModal()
    wait_until(lambda: viewer.loaded, "the full-size picture")
    QApplication.processEvents()
    full = viewer.image_label.pixmap()
    assert (full.width(), full.height()) == (width, height)  # not scaled down
    assert viewer.width() <= screen.width() and viewer.height() <= screen.height()
    assert viewer.scroller.horizontalScrollBar().maximum() > 0
    assert viewer.scroller.verticalScrollBar().maximum() > 0
    viewer.close()
    flush_deletes()
    assert view.viewers == []


def test_a_capture_without_a_turn_goes_to_the_newest_turn(
    view: TranscriptView, tmp_path: Path
) -> None:
    shot = make_png(tmp_path / "newest.png", 200, 120)
    view.add_sentence("First.", turn_id=1)
    view.show_user("And now?", final=True, turn_id=2)
    view.add_capture(shot)
    assert [(e.speaker, e.turn_id, e.images) for e in view.entries] == [
        ("companion", 1, []),
        ("user", 2, []),
        ("companion", 2, [shot]),
    ]
    (thumb,) = thumbnails(view)
    wait_until(lambda: loaded(thumb), "the thumbnail")
    # smaller than the thumbnail box: shown at its own size
    assert (thumb.pixmap().width(), thumb.pixmap().height()) == (200, 120)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "missing", "empty"])
def test_a_corrupt_or_missing_capture_shows_an_unavailable_chip(
    view: TranscriptView, tmp_path: Path, damage: str, exceptions: list[BaseException]
) -> None:
    good = make_png(tmp_path / "good.png", 800, 600).read_bytes()
    path = tmp_path / "capture.png"
    if damage == "truncated":
        path.write_bytes(good[: len(good) // 3])
    elif damage == "garbage":
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    elif damage == "empty":
        path.write_bytes(b"")
    view.add_sentence("Here is what I saw.", turn_id=3)
    view.add_capture(path, turn_id=3)
    (thumb,) = thumbnails(view)
    wait_until(lambda: loaded(thumb), "the decoding to give up")
    assert thumb.state == "unavailable"
    assert "screenshot unavailable" in thumb.text()
    assert thumb.pixmap().isNull()
    QTest.mouseClick(thumb, Qt.MouseButton.LeftButton)
    assert view.viewers == []  # nothing to open
    assert not exceptions
    # the rest of the bubble is unharmed
    assert view.entries[0].text == "Here is what I saw."


def test_a_thumbnail_whose_bubble_is_gone_before_it_decodes_is_dropped_quietly(
    view: TranscriptView, tmp_path: Path, exceptions: list[BaseException]
) -> None:
    shot = make_png(tmp_path / "late.png", 2400, 1600)
    view.add_capture(shot, turn_id=1)
    view.clear()
    flush_deletes()
    loader = pictures_module.image_loader()
    wait_until(lambda: loader.pending == 0, "the decoding to finish")
    assert pictures_module.wait_for_image_decoding(int(WAIT_S * 1000))
    assert view.entries == [] and not exceptions


# -- stored conversations ------------------------------------------------------------------


def stored_conversation(tmp_path: Path) -> list[Msg]:
    """A conversation with every kind of block, saved and loaded by the real storage."""
    original = make_png(tmp_path / "capture-full.png", 1280, 800)
    model_copy = make_png(tmp_path / "capture-model.png", 640, 400)
    call = ToolUseBlock(name="take_screenshot", input={"monitor": "all"})
    messages = [
        Msg.system("You are Mika, a friendly companion."),
        Msg.user("Hi! Can you see my screen?"),
        Msg.assistant(
            [
                ThinkingBlock(text="They want me to look at the screen.", signature="sig"),
                TextBlock(text="[joy] Sure, let me look."),
                call,
            ]
        ),
        Msg.tool_result(
            call.id,
            [
                TextBlock(text="Screenshot of all monitors (1280x800 pixels)."),
                ImageBlock(
                    original=ImageFileRef(path=original, mime_type="image/png"),
                    model=ImageFileRef(path=model_copy, mime_type="image/png"),
                    name="tool1",
                ),
            ],
            name="take_screenshot",
        ),
        Msg.assistant("I see a blue window with a yellow square."),
        Msg.user(
            [
                TextBlock(text="And this photo?"),
                ImageBlock(
                    original=ImageFileRef(path=tmp_path / "gone.jpg", mime_type="image/jpeg"),
                    model=ImageFileRef(path=tmp_path / "gone-small.jpg", mime_type="image/jpeg"),
                    name="p1",
                ),
            ]
        ),
        Msg.assistant(
            "<think>A photo that is gone.</think>Hmm, it is", metadata={"interrupted": True}
        ),
    ]
    storage = FileStorage(tmp_path / "history")
    uid = storage.create_history("default")
    storage.append("default", uid, messages)
    return storage.load("default", uid)


def test_load_history_renders_a_stored_conversation(
    view: TranscriptView, tmp_path: Path, exceptions: list[BaseException]
) -> None:
    view.show_user("something from before", final=True, turn_id=99)
    history = stored_conversation(tmp_path)
    view.load_history(history)

    got = [
        (e.speaker, e.answer, e.tools, [p.name for p in e.images], e.interrupted)
        for e in view.entries
    ]
    assert got == [
        ("user", "Hi! Can you see my screen?", [], [], False),
        (
            "companion",
            "Sure, let me look. I see a blue window with a yellow square.",
            ["take_screenshot"],
            ["capture-full.png"],
            False,
        ),
        ("user", "And this photo?", [], ["gone.jpg"], False),
        ("companion", "Hmm, it is", [], [], True),
    ]
    # the system prompt and the tool result's words are plumbing, not conversation
    shown = " ".join(e.text for e in view.entries)
    assert "Mika" not in shown and "Screenshot of all monitors" not in shown
    assert [describe(w) for w in view.bubble_widgets(1)] == [
        "thinking:They want me to look at the screen.",
        "answerText:Sure, let me look.",
        "chip:🔧 looked at your screen",
        "picture:capture-full.png",
        "answerText:I see a blue window with a yellow square.",
    ]
    sections = view.findChildren(ThinkingSection)
    assert [s.plain for s in sections] == [
        "They want me to look at the screen.",
        "A photo that is gone.",
    ]
    assert all(not s.expanded and not s.body.isVisible() and not s.live for s in sections)

    screenshot, photo = thumbnails(view)
    wait_until(lambda: loaded(screenshot) and loaded(photo), "the thumbnails")
    assert screenshot.state == "ready" and not screenshot.pixmap().isNull()
    assert (screenshot.full_size.width(), screenshot.full_size.height()) == (1280, 800)
    assert photo.state == "unavailable" and "image unavailable" in photo.text()
    last = view.bubble_widgets(3)[-1]
    assert isinstance(last, QLabel) and "interrupted" in last.text()
    assert not exceptions

    view.clear()
    assert view.entries == []


def test_a_stored_picture_whose_original_is_gone_shows_the_model_copy(
    view: TranscriptView, tmp_path: Path
) -> None:
    model_copy = make_png(tmp_path / "small.png", 320, 200)
    image = ImageBlock(
        original=ImageFileRef(path=tmp_path / "deleted.png", mime_type="image/png"),
        model=ImageFileRef(path=model_copy, mime_type="image/png"),
    )
    view.load_history([Msg.user([image])])
    (thumb,) = thumbnails(view)
    wait_until(lambda: loaded(thumb), "the thumbnail")
    assert thumb.state == "ready"
    assert (thumb.full_size.width(), thumb.full_size.height()) == (320, 200)


def test_a_stored_reply_loses_every_tag_as_it_did_live_the_packs_or_not(
    qapp: QApplication,
) -> None:
    # An avatar pack with a face the built-in list lacks, and without one it has: the
    # stored reply shows as it did live, where no tag is ever shown (the pack's, a
    # feeling it lacks, a made-up one).
    assert "wink" not in EXPRESSIONS and "joy" in EXPRESSIONS
    session = ScriptedSession()
    session.expressions = ("neutral", "wink")
    session.history = [
        Msg.user("Tell me a secret."),
        Msg.assistant("[wink] I like your jokes. [Wink:0.4] [laughs] [joy] Really."),
    ]
    window = MainWindow(session)
    try:
        assert [e.text for e in window.transcript.entries] == [
            "Tell me a secret.",
            "I like your jokes. Really.",
        ]
    finally:
        window.close()


# Replies as a model writes them: the pack's tags, tags it lacks, made-up ones, Chinese
# tags, intensities, reasoning, tags inside sentences and words, names in brackets.
LIVE_REPLIES = [
    "[joy] Hello there! [sadness:0.4] I miss you. [JOY:2] See you soon.",
    "[laughs] That is funny. [dance] [sorrow] Oh well. [surprise] [Wink] Ok!",
    "[开心] 太好了！【难过】我好想你。【很惊讶】真的吗？",
    "<think>Greet them. Use [joy] here.</think>[joy:0.6] Hi! Nice to see you.",
    "I am so[joy]happy today, [surprise] truly [wink:0.3] happy. Bye! [joy]",
    "Your cat is [Tofu]. See [p1], [docs](http://a.b) and [laughs softly at you] ok.",
    "你好！[joy]今天天气很好。[smirk] Hello there, friend.",
    '<|ACT {"emotion": "joy"}|>Hello! Nice <|ACT {"emotion": "dance"}|>day.<|im_end|>',
    "Mr. Smith met Dr. Lee on Jan. 5 [joy] at No. 7 Main St. in the U.S. It was fun.",
]


def _shown(window: MainWindow) -> list[tuple[str, str, list[str]]]:
    """Each bubble as shown: its speaker, its text and its pieces."""
    view = window.transcript
    return [
        (e.speaker, e.text, [describe(w) for w in view.bubble_widgets(index)])
        for index, e in enumerate(view.entries)
    ]


@pytest.mark.parametrize("reply", LIVE_REPLIES)
def test_a_reply_reopened_from_history_shows_what_it_showed_live(
    qapp: QApplication, reply: str
) -> None:
    expressions = ("neutral", "joy", "wink")

    async def live_outputs() -> list[SentenceOutput]:
        async def model() -> AsyncIterator[str]:
            for at in range(0, len(reply), 3):
                yield reply[at : at + 3]

        return [o async for o in reply_pipeline(model(), expressions=expressions)]

    live = ScriptedSession()
    live.expressions = expressions
    window = MainWindow(live)
    try:
        live.events.emit(UserTranscript("Hi!", final=True, turn_id=1))
        for out in asyncio.run(live_outputs()):
            if out.display_text or out.tts_text:  # as the voice session emits them
                live.events.emit(
                    AssistantSentence(
                        out.display_text,
                        out.tts_text,
                        tuple(out.actions.expressions),
                        turn_id=1,
                        is_thinking=out.is_thinking,
                    )
                )
        live.events.emit(TurnFinished(turn_id=1, timings_ms={}))
        QApplication.processEvents()
        shown_live = _shown(window)
        answer = window.transcript.entries[-1].answer
    finally:
        window.close()

    stored = ScriptedSession()
    stored.expressions = expressions
    stored.history = [Msg.user("Hi!"), Msg.assistant(reply)]
    window = MainWindow(stored)
    try:
        assert _shown(window) == shown_live
    finally:
        window.close()
    assert answer and not any(mark in answer for mark in ("[joy", "[开心]", "【", "<|", "think>"))


def test_load_history_of_a_long_conversation_keeps_only_the_newest_rows(
    view: TranscriptView,
) -> None:
    history = [Msg.system("prompt")]
    for number in range(500):
        history.append(Msg.user(f"question {number}"))
        history.append(Msg.assistant(f"answer {number}"))
    assert len(history) == 1001
    view.load_history(history)
    # The newest bubbles are there at once; older ones follow without blocking the loop.
    assert view.loading
    assert len(view.entries) == HISTORY_FIRST_ROWS
    assert view.entries[-1].text == "answer 499"
    wait_until(lambda: not view.loading, "the older bubbles")
    flush_deletes()
    entries = view.entries
    assert len(entries) == MAX_TRANSCRIPT_ROWS
    first = 500 - MAX_TRANSCRIPT_ROWS // 2
    assert [e.text for e in entries] == [
        text for number in range(first, 500) for text in (f"question {number}", f"answer {number}")
    ]
    inner = view.widget()
    assert inner is not None
    bubbles = [
        *inner.findChildren(QFrame, "companionBubble"),
        *inner.findChildren(QFrame, "userBubble"),
    ]
    assert len(bubbles) == MAX_TRANSCRIPT_ROWS  # the older rows were never built

    # Loading again replaces it all.
    view.load_history(history[:5])
    assert not view.loading
    flush_deletes()
    assert [e.text for e in view.entries] == ["question 0", "answer 0", "question 1", "answer 1"]


def test_live_lines_during_a_long_load_stay_newest_and_the_limit_holds(
    view: TranscriptView,
) -> None:
    history = [Msg.user(f"q{n}") if n % 2 == 0 else Msg.assistant(f"a{n}") for n in range(800)]
    view.load_history(history)
    view.show_user("live question", final=True, turn_id=1)
    view.add_sentence("live answer", turn_id=1)
    wait_until(lambda: not view.loading, "the older bubbles")
    texts = [e.text for e in view.entries]
    assert len(texts) == MAX_TRANSCRIPT_ROWS
    assert texts[-3:] == ["a799", "live question", "live answer"]
    assert texts[:2] == [f"q{800 - MAX_TRANSCRIPT_ROWS + 2}", f"a{800 - MAX_TRANSCRIPT_ROWS + 3}"]
    # a capture with no turn goes to the live turn, not to a bubble loaded meanwhile
    view.add_capture(Path("/nonexistent/shot.png"))
    assert view.entries[-1].images == [Path("/nonexistent/shot.png")]
    view.clear()
    assert view.entries == [] and not view.loading


# -- what the view kept doing --------------------------------------------------------------


def test_cjk_sentences_join_without_spaces_and_latin_ones_with_one(view: TranscriptView) -> None:
    view.add_sentence("你好。", turn_id=1)
    view.add_sentence("今天怎么样？", turn_id=1)
    view.add_sentence("我在想。", turn_id=2, thinking=True)
    view.add_sentence("好的。", turn_id=2, thinking=True)
    view.add_sentence("Hello there.", turn_id=3)
    view.add_sentence("How are you?", turn_id=3)
    assert [e.text for e in view.entries] == [
        "你好。今天怎么样？",
        "我在想。好的。",
        "Hello there. How are you?",
    ]
    assert [describe(w) for w in view.bubble_widgets(0)] == ["answerText:你好。今天怎么样？"]
    (section,) = view.findChildren(ThinkingSection)
    assert section.body.text() == "我在想。好的。"


def test_an_interrupted_reply_is_marked_after_its_last_piece(view: TranscriptView) -> None:
    view.add_sentence("Well,", turn_id=1)
    view.mark_interrupted(1)
    view.add_tool("get_time", turn_id=2)
    view.mark_interrupted(2)
    view.mark_interrupted(3)  # no such bubble: nothing happens
    first, second = view.entries
    assert first.interrupted and second.interrupted
    (text,) = view.bubble_widgets(0)
    assert isinstance(text, QLabel)
    assert text.text().startswith("Well,") and "— interrupted" in text.text()
    chip, mark = view.bubble_widgets(1)
    assert isinstance(chip, ToolChip)
    assert isinstance(mark, QLabel) and mark.text() == "— interrupted"

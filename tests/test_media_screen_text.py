"""Reading a screenshot's text offline (the real RapidOCR models from their wheel), the
description a text-only model gets, Companion's own windows left out of it, the
screenshot's caption, and a look the app made shown to a model without tools in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from app.agent.looking import fold_app_looks, screen_look_calls
from app.agent.vision import SUMMARIES_KEY, ScreenTextDescriber, VisionError
from app.llm import ImageBlock, ImageFileRef, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock
from app.media import Capture, screenshot_caption
from app.media.screen_text import ScreenTextReader, TextLine, rows
from app.media.windows import Window, front_window, windows_in

pytest.importorskip("rapidocr_onnxruntime")

LATIN_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# Chinese glyphs: Droid Sans Fallback (scripts/system-packages.txt installs it).
CJK_FONT = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"


def screen(
    path: Path, texts: list[tuple[int, int, str]], size: tuple[int, int] = (1280, 720)
) -> Path:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    latin, cjk = ImageFont.truetype(LATIN_FONT, 28), ImageFont.truetype(CJK_FONT, 28)
    for x, y, text in texts:
        font = cjk if any("\u4e00" <= c <= "\u9fff" for c in text) else latin
        draw.text((x, y), text, fill="black", font=font)
    image.save(path)
    return path


def block(path: Path, name: str = "tool1") -> ImageBlock:
    ref = ImageFileRef(path=path, mime_type="image/png", width=1280, height=720)
    return ImageBlock(original=ref, model=ref, name=name)


@pytest.fixture(scope="module")
def reader() -> ScreenTextReader:
    return ScreenTextReader()


async def test_the_text_on_a_screen_is_read_row_by_row(
    reader: ScreenTextReader, tmp_path: Path
) -> None:
    path = screen(
        tmp_path / "s.png",
        [
            (40, 100, "Invoice total: $1,234.56"),
            (700, 104, "Due on Friday"),
            (40, 300, "The purple giraffe reads quantum poetry."),
            (40, 500, "屏幕上的中文也能读"),
        ],
    )
    text = await ScreenTextDescriber(reader).summarize(block(path))
    head, *lines = text.splitlines()
    assert head.startswith("Text read from the image")
    assert lines[0].replace(" ", "") == "Invoicetotal:$1,234.56Dueonfriday".replace("f", "F")
    assert "purple giraffe reads quantum poetry" in lines[1]
    assert "中文" in lines[2]


async def test_companion_s_own_window_is_left_out_of_a_screenshot(
    reader: ScreenTextReader, tmp_path: Path
) -> None:
    path = screen(
        tmp_path / "c.png", [(40, 100, "Quarterly report draft"), (700, 400, "Mika: hello")]
    )
    own = Window("Companion", 650, 350, 600, 300, own=True)
    capture = Capture(path, 1, 1280, 720, windows=(Window("report.odt", 0, 0, 640, 360, True), own))
    describer = ScreenTextDescriber(reader)
    describer.remember(capture)
    text = await describer.summarize(block(path))
    assert "Quarterly report draft" in text and "Mika" not in text
    assert text.startswith("Text read from the screen (Companion's own window left out)")


async def test_a_screen_without_text_says_so_and_a_long_one_is_cut_at_a_row(
    reader: ScreenTextReader, tmp_path: Path
) -> None:
    blank = screen(tmp_path / "blank.png", [])
    assert await ScreenTextDescriber(reader).summarize(block(blank)) == (
        "No readable text was found on the image."
    )
    full = screen(
        tmp_path / "full.png", [(40, 30 + 45 * i, f"Line number {i} of the log") for i in range(15)]
    )
    text = await ScreenTextDescriber(reader, max_chars=200).summarize(block(full))
    assert len(text) <= 200 + 60 and "more line(s) not shown" in text
    assert all(line.startswith(("Text", "Line", "...")) for line in text.splitlines())


async def test_an_unreadable_file_is_a_vision_error_in_words(
    reader: ScreenTextReader, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    with pytest.raises(VisionError, match="could not be read"):
        await ScreenTextDescriber(reader).summarize(block(bad))


def test_pieces_on_one_row_are_joined_left_to_right() -> None:
    right = TextLine("world", 300, 102, 400, 130, 0.9)
    left = TextLine("hello", 10, 100, 100, 128, 0.9)
    below = TextLine("next", 10, 140, 90, 168, 0.9)
    assert [[t.text for t in row] for row in rows([below, right, left])] == [
        ["hello", "world"],
        ["next"],
    ]


def test_the_caption_names_the_window_looked_at_and_the_others() -> None:
    windows = (
        Window("Companion", 0, 0, 400, 700, active=True, own=True),
        Window("bug #12 – Firefox", 400, 0, 880, 720),
        Window("Terminal", 100, 100, 500, 300),
    )
    caption = screenshot_caption(Capture(Path("s.png"), 1, 1280, 720, windows=windows))
    assert caption.startswith("Screenshot of monitor 1 (1280x720 pixels).")
    assert "looking at the window “bug #12 – Firefox”" in caption  # ours was active
    assert "Other windows on it: “Terminal”." in caption
    assert "Companion's own window" in caption
    assert front_window(windows[1:2]) is windows[1]
    assert screenshot_caption(Capture(Path("s.png"), 0, 800, 600)) == (
        "Screenshot of all monitors (800x600 pixels)."
    )


def test_windows_are_moved_into_the_captured_monitor_and_clipped() -> None:
    on_second = Window("Editor", 1380, 50, 400, 300)
    half_off = Window("Wide", 1200, 0, 300, 100)
    elsewhere = Window("Other", 0, 0, 100, 100)
    inside = windows_in([on_second, half_off, elsewhere], 1280, 0, 1920, 1080)
    assert [(w.title, w.left, w.top, w.width) for w in inside] == [
        ("Editor", 100, 50, 400),
        ("Wide", 0, 0, 220),
    ]


def test_a_look_the_app_made_reaches_a_model_without_tools_in_words() -> None:
    user = Msg.user("What's on my screen?")
    (call,) = screen_look_calls(user)
    look = Msg(role=Role.ASSISTANT, content=[call])
    result = ToolResultBlock(
        tool_use_id=call.id,
        name=call.name,
        content=[
            TextBlock(text="Screenshot of monitor 1 (1280x720 pixels)."),
            block(Path("/s.png")),
        ],
    )
    seen = Msg(role=Role.TOOL, content=[result], metadata={SUMMARIES_KEY: {"tool1": "Text: hi"}})
    reply = Msg.assistant("You have a greeting on screen.")
    other_call = ToolUseBlock(name="get_time", input={}, id="call_9")
    asked = Msg(role=Role.ASSISTANT, content=[other_call])
    told = Msg.tool_result("call_9", "12:00", name="get_time")
    folded = fold_app_looks([user, look, seen, reply, Msg.user("time?"), asked, told])
    assert [m.role for m in folded] == [
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
    ]
    assert folded[0].text == (
        "What's on my screen?\n(The app looked at the screen for you just now. "
        "Screenshot of monitor 1 (1280x720 pixels). Text: hi)"
    )
    assert folded[3].tool_calls == [other_call]  # a call the model made stays a call
    assert user.text == "What's on my screen?"  # history itself is not changed


def test_a_look_that_failed_is_told_as_such() -> None:
    user = Msg.user("Look at my screen")
    (call,) = screen_look_calls(user)
    failed = Msg.tool_result(
        call.id, "There is no display to capture.", is_error=True, name=call.name
    )
    folded = fold_app_looks([user, Msg(role=Role.ASSISTANT, content=[call]), failed])
    assert len(folded) == 1
    assert "tried to look at the screen but could not: There is no display" in folded[0].text

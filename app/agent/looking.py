"""Looking at the screen for a chat model that cannot call tools (the embedded one, or a
server that refused them): the user's words are checked for a question about their
screen, and when there is one the app takes the screenshot itself, before the model
answers, through the same `take_screenshot` tool (so the capture indicator and the
"ask me first" setting apply). A text-only model then reads the screen as text (OCR
and the window titles, `vision.ScreenTextDescriber`).

Why not let the small model call the tool itself: Qwen2.5-Coder-1.5B through
llama.cpp's `chatml-function-calling` format called `take_screenshot` for 6 of 6
screen questions, but answered 6 of 6 other messages with empty or broken text
("functions.get_time:") - the format costs the ordinary replies. The check here is
English and Chinese; it asks for words about a screen, a window or what the user is
looking at, so "I see", "see you later" or "watch a movie" never take a screenshot.

A model offered no tools never sees tool-call syntax for what the app did: in its
request the look becomes a note after the user's words (`fold_app_looks`), in plain
prose, which the small models answer from instead of imitating "[calls ...]". The
history keeps the look as the tool call and result it was (the picture as a file).
The system prompt says what the model can do, so one that cannot look never pretends to.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

from app.agent.vision import SUMMARIES_KEY
from app.llm import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = [
    "CANNOT_LOOK_HINT",
    "LOOKS_ON_REQUEST_HINT",
    "SCREENSHOT_TOOL",
    "asks_about_screen",
    "fold_app_looks",
    "screen_look_calls",
]

SCREENSHOT_TOOL = "take_screenshot"
LOOK_ID_PREFIX = "look_"  # the ids of the calls the app makes itself
LOOKS_ON_REQUEST_HINT = (
    "You cannot take screenshots yourself. When you are asked about the screen, the app "
    "looks for you and gives you a take_screenshot result: the window titles and the text "
    "read from the screen. Answer from that result only; never guess what is on the screen."
)
CANNOT_LOOK_HINT = (
    "You cannot see the screen (screenshots are turned off). If you are asked about it, "
    "say that you cannot see it; never guess what is on it."
)

# Things on a screen the user may ask about.
_THING = (
    r"(?:screens?|display|monitor|desktop|window|tab|page|web ?page|website|site|document|"
    r"doc|file|code|error(?: message)?|message|email|text|picture|image|photo|chart|graph|"
    r"slide|spreadsheet|table|game|video|app|program)"
)
_MINE = r"(?:my|the|this|that|these|those|your view of my)"
_SURFACE = r"(?:screens?|display|monitor|desktop|window|tab|page)"
_VERB = (
    r"(?:see|look(?:ing)? at|look over|glance at|peek at|check(?: out)?|read|describe|"
    r"summari[sz]e|explain|tell me about|help me with|what do you (?:think|make) of|"
    r"take a look at|have a look at|scan|review)"
)
_ENGLISH = re.compile(
    "|".join(
        [
            # "what's on my screen", "what is in this window", "what does my screen show"
            rf"\bwhat(?:'s| is| are|’s)?\s+(?:on|in)\s+{_MINE}\s+{_SURFACE}\b",
            rf"\bwhat (?:does|do) {_MINE} {_SURFACE} (?:say|show)\b",
            # "what am I looking at", "what I'm looking at", "see what I see"
            r"\bwhat\s+(?:am\s+i|i\s*'?\s*m|i\s+am)\s+(?:looking\s+at|seeing|watching|reading)\b",
            r"\b(?:see|look at)\s+what\s+i\s+(?:see|have|am looking at|'m looking at)\b",
            # "look at my screen", "can you read this error", "describe the window"
            rf"\b{_VERB}\s+(?:what(?:'s| is)\s+(?:on|in)\s+)?{_MINE}\s+{_THING}\b",
            # "can you see this?", "do you see it", "look at this!"
            r"\b(?:can|could|do)\s+you\s+see\s+(?:this|that|it|my|the|anything|what)\b",
            r"\b(?:look|take a look|have a look)\s+(?:at\s+)?(?:this|that|here)\s*(?:[!?.,]|$)",
            r"\b(?:on|in)\s+(?:my|the)\s+screen\b.*\?",
            r"\bscreen\s?shot\b|\bscreen\s?cap(?:ture)?\b",
        ]
    ),
    re.IGNORECASE,
)
_ZH_THING = r"(?:屏幕|荧幕|萤幕|桌面|窗口|页面|网页|画面|代码|报错|错误|文字|文档|图片|表格|内容)"
_CHINESE = re.compile(
    "|".join(
        [
            r"截图|截屏|截个图|截一下屏",
            # "屏幕上有什么", "窗口里写的是啥", "页面显示什么"
            rf"{_ZH_THING}(?:上|里|中)?.{{0,6}}(?:什么|啥|哪些|内容|写着|写了|显示)",
            # "看看我的屏幕", "帮我读一下这个报错", "你看这个"
            rf"(?:看|瞧|读|念)(?:看|一下|一眼|下)?(?:我的|这个|这些|这里|这段|这页|这张|那个)"
            rf"{_ZH_THING}?",
            rf"(?:看|瞧|读|念)(?:看|一下|一眼|下)?{_ZH_THING}",
            # "你能看到吗", "你看得见我的屏幕吗"
            r"你.{0,3}看(?:到|得到|得见|见)",
            r"我(?:在|正在)看(?:什么|啥)",
        ]
    )
)
# "看这个电影" is about watching a film, not the screen: these after 看 are no look.
_NOT_A_LOOK = re.compile(
    r"看(?:看|一下)?(?:这个|那个|这部|那部)?(?:电影|电视|书|比赛|医生|病|天气|情况)"
)


def asks_about_screen(text: str) -> bool:
    """Whether the user's words ask about what is on their screen."""
    if _ENGLISH.search(text):
        return True
    return bool(_CHINESE.search(text)) and not _NOT_A_LOOK.search(text)


def screen_look_calls(user: Msg) -> list[ToolUseBlock]:
    """The tool call the app makes for the model when `user` asks about the screen."""
    if not asks_about_screen(user.text):
        return []
    call_id = f"{LOOK_ID_PREFIX}{uuid.uuid4().hex[:12]}"
    return [ToolUseBlock(name=SCREENSHOT_TOOL, input={}, id=call_id)]


def _made_by_app(msg: Msg) -> bool:
    blocks = msg.blocks
    return (
        msg.role == Role.ASSISTANT
        and bool(blocks)
        and all(isinstance(b, ToolUseBlock) and b.id.startswith(LOOK_ID_PREFIX) for b in blocks)
    )


def _result_words(result: ToolResultBlock, summaries: dict[str, str]) -> str:
    words: list[str] = []
    for block in result.content:
        if isinstance(block, TextBlock):
            words.append(block.text.strip())
        elif isinstance(block, ImageBlock):
            label = block.name or "image"
            words.append(summaries.get(label) or "Its text could not be read.")
    said = " ".join(w for w in words if w)
    if result.is_error:
        return f"The app tried to look at the screen but could not: {said}"
    return f"The app looked at the screen for you just now. {said}"


def fold_app_looks(messages: Sequence[Msg]) -> list[Msg]:
    """`messages` with each look the app made (its call and results) folded into the
    user's message before it, as a note in words; everything else as it is."""
    out: list[Msg] = []
    answered: set[str] = set()
    for msg in messages:
        if _made_by_app(msg):
            answered = {b.id for b in msg.blocks if isinstance(b, ToolUseBlock)}
            continue
        results = [r for r in msg.tool_results if r.tool_use_id in answered]
        if msg.role == Role.TOOL and results:
            summaries = dict(msg.metadata.get(SUMMARIES_KEY) or {})
            notes = [_result_words(r, summaries) for r in results]
            asked = next((i for i in range(len(out) - 1, -1, -1) if out[i].role == Role.USER), None)
            if asked is not None:
                user = out[asked]
                note = TextBlock(text="(" + " ".join(notes) + ")")
                out[asked] = user.model_copy(update={"content": [*user.blocks, note]})
            continue
        out.append(msg)
    return out

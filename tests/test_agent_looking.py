"""Which words make the app look at the screen for a model that cannot call tools: a
question about the screen, a window or what the user is looking at, in English and
Chinese - and never small talk that happens to say "see" or "look"."""

from __future__ import annotations

import pytest

from app.agent.looking import SCREENSHOT_TOOL, asks_about_screen, screen_look_calls
from app.llm import Msg

LOOKS = [
    "What's on my screen?",
    "what is on the screen right now",
    "What’s in this window?",
    "What does my screen show?",
    "What am I looking at?",
    "Can you tell me what I'm looking at?",
    "Look at my screen and tell me what you think.",
    "Can you see this?",
    "Do you see my code?",
    "Could you read this error for me?",
    "Please describe the window in front of me.",
    "Check out this page.",
    "Have a look at this document, is it any good?",
    "Summarise this web page.",
    "What do you think of this picture?",
    "Take a screenshot.",
    "help me with this spreadsheet",
    "Is the text on my screen readable?",
    "look at this!",
    "屏幕上有什么？",
    "我的屏幕上显示的是什么",
    "看看我的屏幕",
    "帮我看一下这个报错",
    "你能看到我的屏幕吗？",
    "你看得见吗",
    "截个图看看",
    "这个窗口里写的是啥？",
    "读一下这段文字",
    "我在看什么？",
]

DOES_NOT_LOOK = [
    "Hi! Who are you?",
    "I see.",
    "See you later!",
    "Let's see, what should we do today?",
    "I can't wait to see my mom.",
    "Look, I had a rough day.",
    "Looking forward to the weekend.",
    "My screen is cracked, should I repair it?",
    "I watched it on the big screen yesterday.",
    "What time is it?",
    "Tell me a joke about windows and doors.",
    "I feel sad today.",
    "你好，你是谁？",
    "我今天很难过。",
    "我们去看电影吧。",
    "明天去看医生。",
    "看这个天气，要下雨了。",
    "现在几点了？",
]


@pytest.mark.parametrize("words", LOOKS)
def test_a_question_about_the_screen_looks(words: str) -> None:
    assert asks_about_screen(words)
    (call,) = screen_look_calls(Msg.user(words))
    assert call.name == SCREENSHOT_TOOL and call.input == {} and call.id


@pytest.mark.parametrize("words", DOES_NOT_LOOK)
def test_other_words_never_take_a_screenshot(words: str) -> None:
    assert not asks_about_screen(words)
    assert screen_look_calls(Msg.user(words)) == []


def test_each_look_has_its_own_call_id() -> None:
    first, second = (screen_look_calls(Msg.user("What's on my screen?"))[0] for _ in range(2))
    assert first.id != second.id

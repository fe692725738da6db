"""Thanks and goodbyes answered at once (`app.agent.parting`), and only those: thanks
that come with a request, a goodbye spoken of, "No thanks." get the model's own words."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.agent.clock import reply_start
from app.agent.parting import (
    GOODBYE,
    GOODBYE_ZH,
    WELCOME,
    WELCOME_GOODBYE,
    WELCOME_GOODBYE_ZH,
    WELCOME_ZH,
    parting_start,
)

MOMENT = datetime(2026, 12, 5, 9, 30)


@pytest.mark.parametrize(
    ("words", "start"),
    [
        # the conversation bench's last turn, typed and as tiny.en wrote it
        ("Thank you, that's all for now. Goodbye!", WELCOME_GOODBYE),
        ("thank you thats all for now goodbye", WELCOME_GOODBYE),
        ("Thanks, bye!", WELCOME_GOODBYE),
        ("Thanks!", WELCOME),
        ("Thank you.", WELCOME),
        ("Thank you so much for your help!", WELCOME),
        ("Oh, thank you very much!", WELCOME),
        ("Thanks again for listening.", WELCOME),
        ("Goodbye!", GOODBYE),
        ("Bye.", GOODBYE),
        ("Okay, bye for now.", GOODBYE),
        ("See you later!", GOODBYE),
        ("Good night.", GOODBYE),
        ("Alright, talk to you later.", GOODBYE),
        ("I have to go now, bye!", GOODBYE),
        ("That's all for now.", GOODBYE),
        ("谢谢！", WELCOME_ZH),
        ("好的，谢谢啦", WELCOME_ZH),
        ("再见", GOODBYE_ZH),
        ("晚安！", GOODBYE_ZH),
        ("谢谢你，再见！", WELCOME_GOODBYE_ZH),
    ],
)
def test_thanks_and_goodbyes_are_answered_at_once(words: str, start: str) -> None:
    chinese = any("\u4e00" <= c <= "\u9fff" for c in words)
    assert parting_start(words, chinese=chinese) == start
    assert reply_start(MOMENT, words) == start


@pytest.mark.parametrize(
    "words",
    [
        "No thanks.",
        "Thanks for nothing.",
        "Thanks, but I'd rather not.",
        "Thanks, can you tell me a joke?",
        "Thanks, tell me a joke.",
        "Thank you. Now tell me about whales.",
        "Thanks. I feel much better now.",
        "Say goodbye to my mom for me.",
        "I said goodbye to him yesterday.",
        "Can you say goodbye?",
        "I need to thank my sister.",
        "Later I will go to the shop.",
        "Goodbye! What's your favourite colour?",
        "不用了谢谢",
        "谢谢你告诉我这个吗",
        "我要去见朋友",
    ],
)
def test_thanks_with_more_or_a_goodbye_spoken_of_is_the_models(words: str) -> None:
    chinese = any("\u4e00" <= c <= "\u9fff" for c in words)
    assert parting_start(words, chinese=chinese) == ""


def test_a_sum_or_the_time_asked_with_thanks_is_answered_first() -> None:
    assert reply_start(MOMENT, "Thanks! What is twelve plus seven?") == (
        "[neutral] 12 plus 7 is 19."
    )

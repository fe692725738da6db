"""The face follows the feeling in the user's words (`app.agent.feelings`, in the note
after their words): a worried, nervous, sad or angry user gets a caring [sadness],
never anger or surprise; a happy one [joy]; plain words and plain answers no line, and
answers the app gives (the time, a sum) a [neutral] face."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.agent.clock import turn_note
from app.agent.expression_words import resolve_expression
from app.agent.feelings import feeling_in, feeling_line

MOMENT = datetime(2026, 12, 3, 19, 8).astimezone()
PACK = {name: name for name in ("neutral", "joy", "sadness", "anger", "surprise", "fear")}


@pytest.mark.parametrize(
    "text",
    [
        "I'm a bit nervous about my job interview tomorrow.",
        "i am so worried about my mum",
        "I feel really sad today.",
        "My boss made me so angry.",
        "I'm scared of the dark.",
        "I'm exhausted and stressed.",
        "I was excited but now I'm scared.",
        "我明天面试，有点紧张。",
        "我今天不开心。",
    ],
)
def test_a_worried_or_sad_user_gets_a_caring_face(text: str) -> None:
    feeling = feeling_in(text)
    assert feeling is not None and feeling.face == "sadness"
    line = next(line for line in turn_note(MOMENT, text).split("\n") if "[" in line)
    assert "[sadness]" in line and "anger" not in line and "surprise" not in line
    assert resolve_expression(feeling.face, {"sad": "sad", "happy": "happy"}) == "sad"


@pytest.mark.parametrize(
    "text",
    ["I love rainy days, because I can read all afternoon.", "I'm so happy!", "今天好开心！"],
)
def test_a_happy_user_gets_joy(text: str) -> None:
    feeling = feeling_in(text)
    assert feeling is not None and feeling.face == "joy"
    assert "[joy]" in feeling_line(feeling, chinese=not text.isascii())


@pytest.mark.parametrize(
    "text",
    ["I'm not worried at all.", "No worries!", "What is twelve plus seven?", "Hello there."],
)
def test_no_feeling_said_adds_no_face(text: str) -> None:
    assert feeling_in(text) is None


@pytest.mark.parametrize(
    "text", ["Can you tell me what time it is right now?", "What is twelve plus seven?"]
)
def test_an_answer_the_app_gives_is_said_with_a_neutral_face(text: str) -> None:
    note = turn_note(MOMENT, text)
    assert '"[neutral] ' in note and "[surprise]" not in note and "[anger]" not in note
    assert all(resolve_expression("neutral", PACK) == "neutral" for _ in [note])


def test_asking_to_be_calmed_says_a_worry() -> None:
    feeling = feeling_in("Do you have any advice to help me calm down?")
    assert feeling is not None and feeling.face == "sadness"

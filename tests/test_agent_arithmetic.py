"""The sums the app works out itself (`app.agent.arithmetic`): asked in digits or words,
English or Chinese, as typed or as speech recognition writes them; and what is not a
sum stays without one."""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction

import pytest

from app.agent.arithmetic import asked_sums, misheard_sum, said_sums, sum_line
from app.agent.clock import MISHEARD_SAY, reply_start


def value_of(text: str) -> Fraction | None:
    [found] = asked_sums(text)
    return found.value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("What is twelve plus seven?", 19),
        ("what is twelve plus seven", 19),  # as whisper writes it
        ("twelve plus seven", 19),  # nothing but the sum
        ("what's 12 times 3", 36),
        ("Whats 12 times 3?", 36),
        ("how much is a hundred minus thirty-five", 65),
        ("How much is a hundred minus thirty five?", 65),
        ("What is 7 divided by 2?", Fraction(7, 2)),
        ("What is 2+2?", 4),
        ("And 7 times 6?", 42),
        ("What is 100 minus 1?", 99),
        ("what is 100-1", 99),
        ("What's 2 x 3?", 6),
        ("what is 9 × 8", 72),
        ("what is 81 ÷ 9", 9),
        ("what is one hundred and five plus twenty two", 127),
        ("what is a thousand and one minus one", 1000),
        ("what is two thousand twenty four minus 1990", 34),
        ("what is 1,000 times 1,000,000", 1_000_000_000),
        ("what is 2 plus 3 times 4", 14),  # times before plus
        ("what is 10 take away 4", 6),
        ("what is 6 multiplied by 7", 42),
        ("what is three point five times two", 7),
        ("what is 15 percent of 80", 12),
        ("what is 4 squared", 16),
        ("add 3 to 4", 7),
        ("subtract 5 from 12", 7),
        ("what is the sum of 8 and 9", 17),
        ("what's the product of 6 and 7", 42),
        ("divide 12 by 4", 3),
        ("what is negative five plus three", -2),
        ("十二加七等于多少？", 19),
        ("二加三等于几？", 5),
        ("一百零五减三十五是多少", 70),
        ("两千零二十四加一等于多少", 2025),
        ("3乘以4等于多少", 12),
        ("七除以二是多少？", Fraction(7, 2)),
        ("12加7等于几", 19),
    ],
)
def test_a_sum_asked_is_worked_out_exactly(text: str, value: int | Fraction) -> None:
    assert value_of(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "I have two cats plus a dog",
        "I have two cats plus a dog, what do you think?",
        "I ran 5-10 km today",
        "My phone number is 555-1234",
        "It happened on 9/11",
        "Is 17 a prime number?",
        "I am 3 years old",
        "What time is it?",
        "Can you tell me what time it is right now?",
        "I have two plus three cats",  # a statement, not a question
        "what is twelve and seven",  # "and" is not an operation
        "加油！",
        "我们一起去吧",
        "Hello, how are you?",
        "what is x plus 2",
        "",
    ],
)
def test_what_is_no_sum_asked_gets_none(text: str) -> None:
    assert asked_sums(text) == []


def test_the_line_gives_the_sentence_that_answers_each_sum_in_the_words_language() -> None:
    line = sum_line(asked_sums("what is 12 plus 7 and 6 times 7"))
    assert '"[neutral] 12 plus 7 is 19, and 6 times 7 is 42."' in line
    assert line.startswith("(") and line.endswith(")") and "\n" not in line
    chinese = sum_line(asked_sums("十二加七等于多少？"), chinese=True)
    assert "“[neutral] 12加7等于19。”" in chinese


@pytest.mark.parametrize(
    ("text", "said"),
    [  # one form however the sum is said: digits for numbers, words for operations
        ("what is twelve plus seven", "12 plus 7 is 19."),
        ("How much is one hundred minus thirty five?", "100 minus 35 is 65."),
        ("how much is a hundred minus thirty-five", "100 minus 35 is 65."),
        ("what's 12 times 3", "12 times 3 is 36."),
        ("What is 8 time 6?", "8 times 6 is 48."),  # "times" as whisper writes it
        ("what is eight multiplied by six", "8 times 6 is 48."),
        ("What is 7 divided by 2?", "7 divided by 2 is 3.5."),
        ("what is 10 divided by 3", "10 divided by 3 is about 3.3333."),
    ],
)
def test_every_way_of_asking_a_sum_is_answered_in_one_form(text: str, said: str) -> None:
    assert said_sums(asked_sums(text)) == said
    assert f'"[neutral] {said}"' in sum_line(asked_sums(text))


def test_a_division_by_zero_and_an_endless_decimal_are_said_as_such() -> None:
    assert value_of("what is 5 divided by 0") is None
    assert "no answer" in sum_line(asked_sums("what is 5 divided by 0"))
    line = sum_line(asked_sums("what is 10 divided by 3"))
    assert "3.3333" in line and "about" in line
    assert "is 3.5." in sum_line(asked_sums("what is 7 divided by 2"))


@pytest.mark.parametrize(
    "text",
    ["What is it? Time six.", "what is seven plush two", "how much is nine tines four",
     # a name for a number: tiny.en's "twelve plus seven" in espeak-ng's en-gb voice
     "What is 12 plus Cameron?", "What is twelve minus Anna?"],
)  # fmt: skip
def test_a_sum_misheard_by_speech_recognition_is_told_apart(text: str) -> None:
    assert asked_sums(text) == [] and misheard_sum(text)
    # ... and asked back, never answered ("12 plus Cameron is 14.")
    assert reply_start(datetime(2026, 12, 5, 9, 0).astimezone(), text) == MISHEARD_SAY


@pytest.mark.parametrize(
    "text",
    ["What time is it?", "Have a good time!", "I have time for six things.", "Hello",
     "I go running 3 times a week, is that enough?", "What is Anna plus Bob up to?",
     "What is 3 times Pi?"],
)  # fmt: skip
def test_words_with_no_sum_in_them_are_not_a_misheard_sum(text: str) -> None:
    assert not misheard_sum(text)


def test_huge_numbers_are_not_small_sums_and_many_sums_are_capped() -> None:
    assert asked_sums("what is 10000000000000000000 times 99999999999999999") == []
    many = "what is " + " and ".join(f"{n} plus {n}" for n in range(1, 10))
    assert len(asked_sums(many)) == 3

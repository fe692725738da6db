"""What the user told earlier in the conversation is said back when they ask for it
(`app.agent.told_before`, in the note after their words: `app.agent.clock`): a name, a
pet's name, where they work or live, in English or Chinese, asked in any words (typed,
or as speech recognition writes them, or misheard)."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.agent.clock import TimeNotes, reply_start, turn_note
from app.agent.told_before import (
    asks_recall,
    recall_answer,
    recall_line,
    telling_start,
    told_facts,
    unknown_start,
)
from app.llm import Msg

MOMENT = datetime(2026, 12, 3, 19, 8).astimezone()
SAID = [
    "Hi, my name is Tomas and I just adopted a kitten called Pepper.",
    "What is twelve plus seven?",
    "I work at a bakery in the old town.",
    "I'm a bit nervous about my job interview tomorrow.",
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Do you remember my name?", "Your name is Tomas."),
        ("do you remember my name", "Your name is Tomas."),
        ("What's my name?", "Your name is Tomas."),
        ("Who am I?", "Your name is Tomas."),
        ("What's my cat called?", "Your kitten is called Pepper."),
        ("What was my kitten's name again?", "Your kitten is called Pepper."),
        ("what is my pet called", "Your kitten is called Pepper."),
        ("Where do I work?", "You work at a bakery in the old town."),
    ],
)
def test_what_was_told_is_given_back_when_asked(question: str, answer: str) -> None:
    assert asks_recall(question)
    line = recall_line(question, SAID)
    assert f'"[joy] Of course! {answer}"' in line
    others = {"Your name is Tomas.", "Your kitten is called Pepper.",
              "You work at a bakery in the old town."} - {answer}  # fmt: skip
    assert not any(other in line for other in others)  # only what was asked


@pytest.mark.parametrize(
    "question",
    ["What was my kid today again?", "what was my kid to say", "What was my kid in the game again?",
     "What was my kit and his aim again?"],
)  # fmt: skip
def test_a_misheard_question_of_something_theirs_gets_all_but_their_name(question: str) -> None:
    # heard so by tiny.en in bench_conversation ("What was my kitten's name again?")
    line = recall_line(question, SAID[:1])
    assert "Your kitten is called Pepper." in line and "Your name is Tomas." not in line
    # with only their own name told, nothing to say back: "Of course! Your name is
    # Tomas." answered "What was my kid in the game again?" (bench_conversation)
    only_name = ["Hi, my name is Tomas and I just turned up to the cute and cold paper."]
    assert recall_answer(question, only_name) == ""
    assert "Tomas" not in recall_line(question, only_name)


@pytest.mark.parametrize(
    "question", ["Do you remember what I told you?", "what do you remember about me",
                 "Do you remember what I said earlier?"],
)  # fmt: skip
def test_a_question_of_everything_told_gets_everything(question: str) -> None:
    line = recall_line(question, SAID[:1])
    assert "Your name is Tomas." in line and "Your kitten is called Pepper." in line


@pytest.mark.parametrize(
    "question",
    ["What was my kid his name again?", "What was my kid in the name again?",
     "what was my kit and called again", "What's my kitty's name?"],
)  # fmt: skip
def test_the_name_of_something_of_theirs_is_never_their_own_name(question: str) -> None:
    line = recall_line(question, SAID[:1])
    assert "Your kitten is called Pepper." in line and "Your name is Tomas." not in line
    # with only their own name told (the kitten misheard), nothing to say back: asked
    only_name = ["Hi, my name is Tomas and I just turned up to the kid and called mepper"]
    assert recall_answer(question, only_name) == ""
    assert "say so and ask me" in recall_line(question, only_name)


def test_nothing_told_says_to_say_so_never_a_bare_yes() -> None:
    line = recall_line("Do you remember my name?", ["What is twelve plus seven?"])
    assert "Answer me with" not in line and "say so and ask me" in line


def test_the_latest_of_each_fact_counts_and_chinese_is_read() -> None:
    facts = told_facts(["My name is Tom.", "Actually, call me Tomas."])
    assert [f.answer for f in facts] == ["Your name is Tomas."]
    said = ["我叫小明。我的猫叫咪咪。我在银行工作。"]
    assert "“[joy] 你叫小明。”" in recall_line("我叫什么名字？", said, chinese=True)
    assert "你的猫叫咪咪。" in recall_line("我的猫叫什么？", said, chinese=True)


@pytest.mark.parametrize(
    "text",
    ["What is twelve plus seven?", "What time is it?", "I remember my old school.", "Hello"],
)
def test_words_that_ask_nothing_told_get_no_recall(text: str) -> None:
    assert not asks_recall(text)
    assert "told you before" not in turn_note(MOMENT, text, SAID)


def test_the_turn_note_reads_the_earlier_conversation() -> None:
    history = [Msg.user(SAID[0]), Msg.assistant("[joy] Hi Tomas!")]
    asked = Msg.user("Do you remember my name?", timestamp=MOMENT)
    [noted] = TimeNotes().noted([asked], history)
    assert noted.text.startswith("(Local time")
    assert "\n\nDo you remember my name?\n\n(I am asking" in noted.text
    assert '"[joy] Of course! Your name is Tomas."' in noted.text
    assert asked.text == "Do you remember my name?"  # the stored message is as said


def test_what_the_long_term_memory_holds_is_given_back_too() -> None:
    from app.memory.recall import render_note
    from app.memory.store import MemoryItem

    note = render_note([MemoryItem(1, "Mika", "My name is Tomas."),
                        MemoryItem(2, "Mika", "My dog is called Rex.")])  # fmt: skip
    asked = Msg.user("do you remember my name", timestamp=MOMENT)
    [noted] = TimeNotes().noted([asked], [], note)
    assert '"[joy] Of course! Your name is Tomas."' in noted.text
    [dog] = TimeNotes().noted([Msg.user("whats my dog called")], [], note)
    answer = dog.text.split("whats my dog called")[1]  # the line after the words
    assert "Your dog is called Rex." in answer and "Tomas" not in answer


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("I work at a bakery in the old town.", "You work at a bakery in the old town."),
        ("My dog is called Rex.", "Your dog is called Rex."),
        ("我在银行工作。", "你在银行工作。"),
        # what they love: the model said "I love rainy days because ..." as its own
        ("I love rainy days, because I can read all afternoon.", "You love rainy days."),
        ("I really enjoy cooking with my sister.", "You enjoy cooking with your sister."),
        ("i like old films", "You like old films."),
    ],
)
def test_something_told_is_to_be_answered_as_you(text: str, said: str) -> None:
    line = next(line for line in turn_note(MOMENT, text).split("\n") if "[joy]" in line)
    assert said.rstrip(".。")[1:] in line
    assert "Begin your answer with" in line or "回答以这句开头" in line
    assert "[joy] Oh, " in line or "[joy] 哦，" in line


@pytest.mark.parametrize(
    "text",
    ["What a lovely morning.", "I love you!", "I like it.", "I'd like to hear a story.",
     "Why do I love rainy days?", "Did I tell you my name is Tomas?",
     "Do you know where I live in Paris?"],
)  # fmt: skip
def test_words_that_tell_nothing_get_no_telling_line(text: str) -> None:
    # a question tells nothing; "I love you" or "I like it" tells no liking to echo
    assert turn_note(MOMENT, text).count("telling you about me") == 0
    assert "Oh," not in reply_start(MOMENT, text)  # at most a face ("I love you!": joy)


def test_something_sad_told_gets_a_caring_face_not_a_cheerful_echo() -> None:
    note = turn_note(MOMENT, "My dog called Rex died yesterday, I'm so sad.")
    assert "[joy]" not in note and "[sadness]" in note


def test_a_name_told_is_greeted_by_name() -> None:
    note = turn_note(MOMENT, "Hi, my name is Tomas and I just adopted a kitten called Pepper.")
    assert 'Begin your answer with: "[joy] Hi Tomas, nice to meet you!"' in note
    assert "你好，小明" in turn_note(MOMENT, "你好，我叫小明。")


TOLD_TWO = ["My cat is called Luna.", "I work as a nurse at a hospital in Berlin."]


@pytest.mark.parametrize(
    "question",
    [
        "What is my cat called, and what is my job?",
        "whats my job and my cats name",
        "Do you remember where I work and what my kitty is called?",
    ],
)
def test_a_question_that_asks_two_things_gets_both(question: str) -> None:
    line = recall_line(question, TOLD_TWO)
    assert "Your cat is called Luna." in line
    assert "You work as a nurse at a hospital in Berlin." in line
    assert "what else I asked" not in line  # nothing asked is left unanswered


def test_both_facts_come_from_the_long_term_memory_as_stored() -> None:
    """Stored in the third person, as extraction writes them; the note in my words."""
    from app.memory.recall import render_note
    from app.memory.store import MemoryItem

    note = render_note([MemoryItem(1, "Mika", "The user works as a nurse at a hospital."),
                        MemoryItem(2, "Mika", "The user's cat is called Luna.")])  # fmt: skip
    asked = Msg.user("What is my cat called, and what is my job?", timestamp=MOMENT)
    [noted] = TimeNotes().noted([asked], [], note)
    assert "Your cat is called Luna." in noted.text
    assert "You work as a nurse at a hospital." in noted.text


@pytest.mark.parametrize(
    ("told", "answer"),
    [
        ("I'm a teacher at a school in Lyon.", "You're a teacher at a school in Lyon."),
        ("My job is cooking in a cafe.", "Your job is cooking in a cafe."),
        ("I work for a bank.", "You work for a bank."),
    ],
)
def test_a_job_told_in_other_words_is_given_back(told: str, answer: str) -> None:
    assert f'"[joy] Of course! {answer}"' in recall_line("What's my job?", [told])


def test_a_kind_nothing_told_is_is_not_answered_with_another_kind() -> None:
    told = ["My cat is called Luna."]
    for question in ("What is my dog called?", "Where do I live?", "What's my name?"):
        line = recall_line(question, told)
        assert "Luna" not in line and "say so and ask me" in line
    line = recall_line("What is my cat called, and where do I live?", told)
    assert "Your cat is called Luna." in line and "what else I asked" in line


def test_a_pet_of_two_is_told_by_its_kind() -> None:
    told = ["I have a kitten called Pepper and a dog called Rex."]
    assert "Pepper" in recall_line("what's my cat's name", told)
    assert "Rex" not in recall_line("what's my cat's name", told)
    assert "Rex" in recall_line("what is my puppy called", told)
    line = recall_line("what are my pets called", told)
    assert "Pepper" in line and "Rex" in line


def test_what_was_told_in_english_is_said_back_in_chinese_when_asked_in_chinese() -> None:
    line = recall_line("我叫什么名字？", SAID, chinese=True)
    assert "“[joy] 你叫Tomas。”" in line
    cat = recall_line("我的猫叫什么名字？", SAID, chinese=True)
    assert "你的小猫叫Pepper。" in cat and "Tomas" not in cat
    assert "bakery" in recall_line("我在哪里工作？", SAID, chinese=True)


@pytest.mark.parametrize(
    "question", ["What's my first name?", "what is my full name", "Do you know my last name?"]
)
def test_my_first_or_full_name_is_the_users_own_name(question: str) -> None:
    said = ["Hi, my name is Tomas and I just adopted a kitten called Miso."]
    assert recall_answer(question, said) == "[joy] Of course! Your name is Tomas."


# The greeting of bench_conversation as tiny.en heard it: the kitten's name was lost.
MISHEARD_GREETING = "Hi, my name is Tomas and I just turned up to the kid and called her."


@pytest.mark.parametrize(
    ("question", "told", "start"),
    [
        # nothing said of the thing: not told
        ("What was my kitten's name again?", [MISHEARD_GREETING], "don't think you've told"),
        ("What's my dog called?", ["My name is Tomas."], "don't think you've told"),
        ("what was my cat's name", [], "don't think you've told"),
        # the thing was spoken of, but no name was heard with it: not caught
        ("What was my kid and name again?", [MISHEARD_GREETING], "didn't quite catch"),
        ("What was my kid, his name again?", [MISHEARD_GREETING], "didn't quite catch"),
        ("What is my kitty's name?", ["I just adopted a kitten!"], "didn't quite catch"),
        ("我的猫叫什么名字？", ["我叫小明。"], "还没告诉过我"),
        ("我的猫叫什么？", ["我有一只猫。"], "没听清"),
        # their own name
        ("Do you remember my name?", ["This is the cold pepper."], "told me your name"),
        ("What's my name?", ["Hi, my name is, um."], "didn't quite catch your name"),
        ("我叫什么名字？", ["你好！"], "还没告诉过我你的名字"),
    ],
)
def test_a_name_never_told_is_said_so_and_asked_never_guessed(
    question: str, told: list[str], start: str
) -> None:
    # A 1.5B model asked "What was my kid and name again?" with only the user's own
    # name told answered "I think your kid is named Tomas." (bench_conversation).
    chinese = not question.isascii()
    said = unknown_start(question, told, chinese=chinese)
    assert start in said and "Tomas" not in said and "小明" not in said
    assert said.endswith(("What is it?", "它叫什么？", "你叫什么？"))
    # ... and the reply begins with it
    assert reply_start(MOMENT, question, told) == said


@pytest.mark.parametrize(
    ("question", "told", "memory"),
    [
        ("What was my kitten's name again?", SAID, ""),  # told: said back instead
        ("我的猫叫什么名字？", ["我的猫叫小白。"], ""),
        ("What's my cat's name?", [], "Long-term memory: ...\n- [2026-11-02] \"My cat is Nori.\""),
        ("What is twelve plus seven?", [MISHEARD_GREETING], ""),  # asks nothing told
        ("Do you remember my name?", [], "Long-term memory: ...\n- [2026-11-02] \"I'm Tomas.\""),
        ("Who am I?", ["Call me Tomas."], ""),
    ],
)
def test_nothing_is_said_of_a_name_that_was_told_or_may_be_in_memory(
    question: str, told: list[str], memory: str
) -> None:
    assert unknown_start(question, told, memory, chinese=not question.isascii()) == ""


def test_a_thing_spoken_of_only_in_the_memory_leaves_the_answer_to_the_model() -> None:
    from app.memory.recall import render_note
    from app.memory.store import MemoryItem

    note = render_note([MemoryItem(1, "Mika", "My cat is Nori.")])  # no name read from it
    asked = Msg.user("What's my cat's name?", timestamp=MOMENT)
    assert TimeNotes().reply_start([asked], [], note) == ""
    nothing = render_note([MemoryItem(1, "Mika", "I like rainy days.")])
    assert "don't think you've told" in TimeNotes().reply_start([asked], [], nothing)
    earlier = [Msg.user(MISHEARD_GREETING)]
    kid = Msg.user("What was my kid and name again?", timestamp=MOMENT)
    assert "didn't quite catch" in TimeNotes().reply_start([kid], earlier, nothing)


@pytest.mark.parametrize(
    "text",
    ["I love rainy days because I can read all afternoon.",  # tiny.en wrote no comma
     "I love rainy days, because I can read all afternoon.",
     "I love rainy days and long walks."],
)  # fmt: skip
def test_what_they_love_is_said_back_in_whole_words_up_to_its_own_clause(text: str) -> None:
    # 40 characters of it were said back: "Oh, you love rainy days because you can read
    # all aftern!" (bench_conversation)
    assert telling_start(text) == "[joy] Oh, you love rainy days!"


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("My name is Tomas, what's yours?", "[joy] Hi Tomas, nice to meet you!"),
        ("I'm called Tomas, and you?", "[joy] Hi Tomas, nice to meet you!"),
        ("My kitten is called Pepper, isn't that cute?", "[joy] Oh, your kitten is called Pepper!"),
    ],
)
def test_a_fact_followed_by_a_question_of_its_own_is_told(text: str, start: str) -> None:
    assert telling_start(text) == start


@pytest.mark.parametrize(
    "text",
    ["I love your voice.", "I like talking to you.", "I don't think I like rainy days.",
     "I never said I love pizza.", "What I like is pizza.",
     "I love going out to eat with my family on Sundays."],  # six words and it goes on
)  # fmt: skip
def test_what_is_not_a_plain_liking_of_theirs_is_not_said_back(text: str) -> None:
    # "I love your voice." was said back "Oh, you love your voice!"
    assert "Oh," not in telling_start(text)


@pytest.mark.parametrize(
    ("question", "told", "start"),
    [
        ("What's my name?", ["I'm tired today."], "don't think you've told me your name"),
        ("What's my name?", ["Hi, my name is, um."], "didn't quite catch your name"),
        ("What was my mom's name?", [], "told me their name"),
        ("What was my kid his name again?", [MISHEARD_GREETING], "catch their name"),
        ("我的名字叫什么？", [], "你的名字"),
    ],
)
def test_who_the_name_belongs_to_is_said_right(question: str, told: list[str], start: str) -> None:
    assert start in unknown_start(question, told, chinese=not question.isascii())


@pytest.mark.parametrize(
    "question",
    ["Do you know my name? I'm Tomas.", "Who am I talking to?", "What's my name? It's Tomas."],
)
def test_a_question_that_gives_the_name_or_asks_another_is_left_to_the_model(question: str) -> None:
    assert unknown_start(question, []) == ""


def test_the_memory_notes_header_is_no_name_spoken_of() -> None:
    # Its header says "I am the one talking with you now": with any memory stored, "Do
    # you remember my name?" was left to the model, which said "My name is Mika."
    from app.memory.recall import render_note
    from app.memory.store import MemoryItem

    note = render_note([MemoryItem(1, "Mika", "I like rainy days.")])
    asked = Msg.user("Do you remember my name?", timestamp=MOMENT)
    assert "told me your name" in TimeNotes().reply_start([asked], [], note)


def test_a_name_given_in_words_no_fact_is_read_from_is_left_to_the_model() -> None:
    # "Hi, I'm Tomas." holds no fact the app reads, but the model sees the name in the
    # conversation: it is not told it was never heard.
    assert unknown_start("What's my name?", ["Hi, I'm Tomas."]) == ""

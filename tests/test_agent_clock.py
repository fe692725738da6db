"""The note after the user's words (`app.agent.clock`): the time always; what to answer
when the words ask the time or the date, however they are worded (typed, or as speech
recognition writes them: lower case, no punctuation; English or Chinese); the sums they
ask, worked out; and nothing more when they ask neither."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from app.agent.clock import TimeNotes, asked_about_time, reply_start, time_note, turn_note
from app.llm import Msg

MOMENT = datetime(2026, 12, 3, 16, 5).astimezone()  # a Thursday afternoon

TIME_QUESTIONS = [
    "What time is it?",
    "what time is it",
    "Can you tell me what time it is right now?",
    "can you tell me what time it is right now",
    "Do you know the time?",
    "do you know what time it is",
    "What's the time?",
    "whats the time",
    "what’s the time now",
    "Tell me the time, please.",
    "have you got the time",
    "what's the current time",
    "WHAT TIME IS IT",
    "现在几点？",
    "现在几点了",
    "请问现在是什么时间",
    "现在的时间是？",
]
DATE_QUESTIONS = [
    "What day is it?",
    "what day is it",
    "What's the date today?",
    "whats the date today",
    "what is today's date",
    "What day of the week is it today?",
    # ... as tiny.en heard it in espeak-ng's en-gb voice (bench_conversation)
    "What made on the week it's today?",
    "What made the weak is it today?",
    "What may I be on the weekend tonight?",
    "What may of the week is to nay?",
    "What made on the week is it to nay?",
    "what year is it",
    "is it friday today",
    "今天几号？",
    "今天星期几",
    "今天是几月几日",
    "今天是哪天？",
]


def chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


NOT_ASKED = [
    "What are you doing this weekend?",
    "What did you do last week?",
    "What's a good weekend activity for today?",
    "What shall we do this week today?",
    "What a weird week it's been today.",
    "Hello!",
    "What time do you go to bed?",
    "what time is the meeting",
    "I have no time today.",
    "What a day it has been.",
    "我今天有点累。",
    "Have a good time!",
    "I'm nervous about my job interview tomorrow.",
]


@pytest.mark.parametrize("text", TIME_QUESTIONS)
def test_every_way_of_asking_the_time_gets_the_time_to_answer(text: str) -> None:
    assert "time" in asked_about_time(text)
    note = turn_note(MOMENT, text)
    assert note.startswith(time_note(MOMENT, chinese(text))[:-1])  # the usual note, then the answer
    if not chinese(text):
        assert 'Answer me with: "[neutral] It\'s 4:05 p.m."' in note
    else:
        assert "“[neutral] 现在是下午4点05分。”" in note
    assert "16:05" not in note  # one form of the hour: never "16:05 p.m."


@pytest.mark.parametrize("text", DATE_QUESTIONS)
def test_every_way_of_asking_the_date_gets_the_date_to_answer(text: str) -> None:
    assert "date" in asked_about_time(text)
    note = turn_note(MOMENT, text)
    if not chinese(text):
        assert "It's Thursday, 3 December 2026." in note
    else:
        assert "2026年12月3日，星期四" in note


def test_the_part_of_the_day_is_said_when_asked() -> None:
    note = turn_note(MOMENT, "Is it morning, afternoon or evening now?")
    assert "It's afternoon now, 4:05 p.m." in note
    night = datetime(2026, 12, 3, 23, 30).astimezone()
    assert "night" in turn_note(night, "is it evening or night")
    both = turn_note(MOMENT, "现在几点了，今天几号？")
    assert "下午4点05分" in both and "12月3日" in both


@pytest.mark.parametrize("text", NOT_ASKED)
def test_words_that_ask_neither_get_the_short_note_only(text: str) -> None:
    assert asked_about_time(text) == set()
    first, *more = turn_note(MOMENT, text).split("\n")
    assert first == time_note(MOMENT, chinese(text))
    # no answer: the face of a feeling, and for Chinese words to answer in Chinese
    allowed = ("How I feel:", "我的心情", "你只用中文回答")
    assert all(any(word in line for word in allowed) for line in more)


def test_a_sum_asked_is_given_worked_out_after_the_time() -> None:
    note = turn_note(MOMENT, "how much is a hundred minus thirty-five")
    first, second = note.split("\n")
    assert first == time_note(MOMENT)
    assert 'Answer me with: "[neutral] 100 minus 35 is 65."' in second
    chinese = turn_note(MOMENT, "十二加七等于多少？")
    assert "“[neutral] 12加7等于19。”" in chinese.split("\n")[1]


def test_only_the_new_message_carries_the_answer_and_the_stored_one_is_as_said() -> None:
    asked = Msg.user("what is 12 times 3", timestamp=MOMENT)
    notes = TimeNotes()
    [noted] = notes.noted([asked])
    time_line, words, answer = noted.text.split("\n\n")
    assert time_line == time_note(MOMENT) and words == "what is 12 times 3"
    assert "12 times 3 is 36." in answer and asked.text == "what is 12 times 3"
    assert notes.noted([asked])[0] is noted  # made once: token estimates stay cached


def test_a_sum_speech_recognition_misheard_is_asked_back_not_answered_with_the_time() -> None:
    note = turn_note(MOMENT, "What is it? Time six.")
    assert 'Answer me with: "[thinking] Sorry, I didn\'t catch that.' in note
    assert "4:05" not in note and "Local time" not in note  # no time to say instead
    [noted] = TimeNotes().noted([Msg.user("What is it? Time six.", timestamp=MOMENT)])
    assert noted.text.startswith("What is it? Time six.\n\n(I said")


@pytest.mark.parametrize(
    "words, in_chinese",
    [("你会唱歌吗？", True), ("我今天很累。", True), ("Can you sing?", False), ("Hi!", False)],
)
def test_the_time_note_is_in_the_language_of_the_words(words: str, in_chinese: bool) -> None:
    # an English note after Chinese words made the embedded model answer in English
    first = turn_note(MOMENT, words).splitlines()[0]
    han = sum("\u4e00" <= c <= "\u9fff" for c in first)
    latin = sum(c.isascii() and c.isalpha() for c in first)
    assert (han > latin) is in_chinese, first
    assert first == time_note(MOMENT, in_chinese)
    if in_chinese:
        local = MOMENT.astimezone()
        assert f"{local.year}年{local.month}月{local.day}日" in first and "星期" in first


# ----- the reply's start the app knows (`reply_start`) ---------------------------------
@pytest.mark.parametrize(
    ("words", "earlier", "start"),
    [
        ("Can you tell me what time it is right now?", [], "[neutral] It's 4:05 p.m."),
        ("whats the time", [], "[neutral] It's 4:05 p.m."),
        ("现在几点？", [], "[neutral] 现在是下午4点05分。"),
        ("what is twelve plus seven", [], "[neutral] 12 plus 7 is 19."),
        ("How much is one hundred minus thirty five?", [], "[neutral] 100 minus 35 is 65."),
        ("十二加七等于多少？", [], "[neutral] 12加7等于19。"),
        (
            "What time is it, and what is 2 plus 2?", [],
            "[neutral] It's 4:05 p.m. 2 plus 2 is 4.",
        ),
        (
            "What was my kitten's name again?",
            ["Hi! My name is Tomas and I just adopted a kitten called Pepper."],
            "[joy] Of course! Your kitten is called Pepper.",
        ),
        (
            "Do you remember my name?",
            ["Hi! My name is Tomas and I just adopted a kitten called Pepper."],
            "[joy] Of course! Your name is Tomas.",
        ),
        ("我叫什么名字？", ["Hi! My name is Tomas."], "[joy] 你叫Tomas。"),
        (
            "What is it? Time six.", [],
            "[thinking] Sorry, I didn't catch that. Could you say it again?",
        ),
        (
            "Hi! My name is Tomas and I just adopted a kitten called Pepper.", [],
            "[joy] Hi Tomas, nice to meet you!",
        ),
    ],
)
def test_a_reply_the_app_knows_begins_with_the_sentence_its_note_gives(
    words: str, earlier: list[str], start: str
) -> None:
    got = reply_start(MOMENT, words, earlier)
    assert got == start
    # the same sentence the model is told to answer with: the two never disagree
    assert start.split("] ", 1)[1].split(" ")[0] in turn_note(MOMENT, words, earlier)


@pytest.mark.parametrize(
    "words",
    [
        "Tell me a story about dragons, please.",
        "Do you have any advice?",
        "What do you think about the weather?",
        "Do you remember what I had for breakfast?",  # nothing told: the model's words
        "",
    ],
)
def test_a_reply_the_app_does_not_know_is_left_to_the_model(words: str) -> None:
    assert reply_start(MOMENT, words, []) == ""


def test_only_a_turn_that_is_the_users_message_alone_is_begun_by_the_app() -> None:
    notes = TimeNotes()
    question = Msg.user("what is twelve plus seven")
    assert notes.reply_start([question]) == "[neutral] 12 plus 7 is 19."
    # after a tool's result in the same turn the model finds its own words
    tool_round = [question, Msg.assistant("looking"), Msg.user("result")]
    assert notes.reply_start(tool_round) == ""
    # what the long-term memory tells can be said back
    from app.memory.recall import render_note
    from app.memory.store import MemoryItem

    memory = render_note([MemoryItem(1, "Mika", "My cat is called Luna.")])
    asked = Msg.user("What is my cat called?")
    assert notes.reply_start([asked], memory=memory) == "[joy] Of course! Your cat is called Luna."
    # and what was said earlier in the conversation
    earlier = [Msg.user("My dog is called Rex."), Msg.assistant("[joy] Oh, a dog!")]
    dog = Msg.user("whats my dog called")
    assert notes.reply_start([dog], earlier) == "[joy] Of course! Your dog is called Rex."


@pytest.mark.parametrize(
    "words",
    ["你会唱歌吗？", "我有点紧张。", "我喜欢下雨天。", "我叫小明。", "现在几点？",
     "十二加七等于多少？", "我的猫叫什么名字？", "你好"],
)  # fmt: skip
def test_chinese_words_are_always_told_to_be_answered_in_chinese(words: str) -> None:
    """Once in each note, whatever else it says (the character's prompt is English)."""
    note = turn_note(MOMENT, words, ["我的猫叫咪咪。"])
    assert note.count("你只用中文回答") == 1, note
    assert "只用中文" not in turn_note(MOMENT, "Can you sing?", [])


@pytest.mark.parametrize(
    "words",
    ["My cat is called 小白.", "How do you say thanks in Chinese, 谢谢?", "今日はいい天気ですね。",
     "東京に住んでいます。"],
)  # fmt: skip
def test_words_with_a_few_han_characters_or_kana_are_not_taken_for_chinese(words: str) -> None:
    """A Chinese name in English words, a Chinese word asked about, Japanese: never told
    to be answered in Chinese, never begun with Chinese."""
    assert "中文" not in turn_note(MOMENT, words, [])
    start = reply_start(MOMENT, words, [])
    assert "哦" not in start and "你好" not in start


def test_a_chinese_name_in_english_words_is_greeted_in_english() -> None:
    assert reply_start(MOMENT, "Hi, my name is 王小明.", []) == "[joy] Hi 王小明, nice to meet you!"


def test_what_a_happy_user_loves_is_begun_with_not_said_back_as_the_models_own() -> None:
    # The 1.5B model, told only that the user was happy, answered "I love rainy days
    # because they're perfect for reading all afternoon!" (bench_conversation turn 8).
    text = "I love rainy days, because I can read all afternoon."
    assert reply_start(MOMENT, text, []) == "[joy] Oh, you love rainy days!"
    note = turn_note(MOMENT, text)
    assert '"[joy] Oh, you love rainy days!"' in note and "I am happy about this" not in note
    # a worried user who loves something gets the caring face, no cheerful echo
    worried = "I love my job but I'm so stressed about it."
    assert reply_start(MOMENT, worried, []) == "[sadness] I'm sorry to hear that."
    assert "[sadness]" in turn_note(MOMENT, worried)


@pytest.mark.parametrize(
    ("words", "start"),
    [
        ("I'm a bit nervous about my job interview tomorrow.", "[sadness] I'm sorry to hear that."),
        ("Do you have any advice to help me calm down?", "[sadness] I'm here for you."),
        ("我今天很难过。", "[sadness] 听起来真不容易。"),
        ("I'm so excited, we won the match!", "[joy] That's wonderful!"),
    ],
)
def test_a_feeling_is_begun_with_its_face_and_a_few_words_for_it(words: str, start: str) -> None:
    # The model's own first sentence ("[sadness] I'm sorry to hear that you're feeling
    # nervous about your job interview tomorrow.") took 1.9 s to decode on 2 cores.
    assert reply_start(MOMENT, words, []) == start
    face = start.split("]")[0] + "]"
    assert face in turn_note(MOMENT, words)  # the note says the same face


def test_two_feelings_in_a_row_are_not_answered_alike() -> None:
    said = ["I'm a bit nervous about my job interview tomorrow."]
    first = reply_start(MOMENT, said[0], [])
    second = reply_start(MOMENT, "I'm so worried I will forget everything.", said)
    assert first.startswith("[sadness] ") and second.startswith("[sadness] ")
    assert first != second


@pytest.mark.parametrize(
    "words",
    ["Are you happy?", "Do you love me?", "What makes you happy?", "Are you sad?",
     "Can you tell me a sad story?", "What's the best way to deal with stress?", "你喜欢什么？"],
)  # fmt: skip
def test_a_feeling_word_that_is_not_the_users_feeling_gets_no_words_for_it(words: str) -> None:
    # "Are you happy?" was answered "[joy] That's wonderful!"
    assert reply_start(MOMENT, words, []) == ""

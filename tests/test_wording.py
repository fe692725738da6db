"""What the words of a transcript say about the turn (app.session.wording)."""

from __future__ import annotations

import pytest

from app.own_words import is_own_words
from app.session.wording import is_backchannel, same_words, sounds_finished


@pytest.mark.parametrize(
    "text",
    [
        "I want to tell you about",  # a preposition, no full stop
        "I was thinking that maybe...",  # trailing off
        "My favourite colour is…",
        "Can you tell me about the?",  # an article, whatever the punctuation
        "Remind me to buy milk and",
        "So the problem is,",  # a comma
        "what I really want is",
        "Could you remind me to",
        "Let me think, I would like",
    ],
)
def test_a_sentence_that_plainly_goes_on_does_not_sound_finished(text: str) -> None:
    assert sounds_finished(text, "en") is False


@pytest.mark.parametrize(
    "text",
    [
        "What is the weather like on the moon today?",
        "Can you tell me a joke?",
        "Thanks. That was really helpful.",
        "Please turn the music down a little.",
        "Play some music",  # no punctuation, but nothing says it goes on either
    ],
)
def test_a_sentence_with_nothing_left_open_sounds_finished(text: str) -> None:
    assert sounds_finished(text, "en") is True


@pytest.mark.parametrize(
    "text",
    [
        "Can you help me with?",  # the recognizer closes what it hears, pause or not
        "Could you tell me about?",
        "I was looking at.",
        "We should talk after.",
        "Thanks. Now can you search for?",  # the last sentence counts
        "I'm so tired of working with!",
    ],
)
def test_a_preposition_with_nothing_before_it_to_point_to_still_goes_on(text: str) -> None:
    assert sounds_finished(text, "en") is False


@pytest.mark.parametrize(
    "text",
    [
        "What can you help me with?",
        "Where are you from?",
        "Who did you go with?",
        "Can you help me with this? What is it about?",
        "That's the song that I was telling you about.",
        "Which one are you looking at?",
    ],
)
def test_a_preposition_whose_object_came_first_ends_a_sentence(text: str) -> None:
    assert sounds_finished(text, "en") is True


def test_the_words_say_nothing_without_words_or_in_another_language() -> None:
    assert sounds_finished("今日は", "ja") is None  # kana: Japanese, not Chinese
    assert sounds_finished("", "en") is None
    assert sounds_finished("...", "en") is None
    assert sounds_finished("Ich möchte dir von", "de") is None
    assert sounds_finished("Tell me about the", "en-US") is False


@pytest.mark.parametrize(
    "text",
    ["Mm-hm.", "Yeah.", "Yeah, okay.", "uh-huh", "I see.", "Uh, I see.", "Right, right.", "OK"],
)
def test_acknowledgements_are_backchannels(text: str) -> None:
    assert is_backchannel(text)


@pytest.mark.parametrize(
    "text", ["Yeah, but what about tomorrow?", "Stop.", "Wait, I have a question.", "", "No."]
)
def test_anything_with_content_is_not_a_backchannel(text: str) -> None:
    assert not is_backchannel(text)


def test_the_same_words_ignore_case_and_punctuation_only() -> None:
    assert same_words("What's the weather like?", "what's the weather like")
    assert same_words("Hello, there.", "hello there")
    assert not same_words("What's the weather like?", "What's the weather like today?")
    assert not same_words("Can you help me", "Can you help me with the report")


# -- the companion's own voice coming back through the microphone --------------------------
SAID = (
    "Hi there, Sam! How are you today? I'm doing well. It's Pepper, your kitten's name. "
    "Your job interview is tomorrow, and they told me that you are ready."
)


@pytest.mark.parametrize(
    "heard",
    [
        "I'm doing well.",  # a whole sentence, as whisper closes it
        "How are you today",
        "Thursday, how are you today?",  # a slip at the start, the rest its own
        "They told me that.",
        "Your job is...",  # cut where the voice was stopped
        "It's Pepper, your kitten's name.",
        "how are you",
    ],
)
def test_the_companions_own_words_heard_back_are_known_as_its_own(heard: str) -> None:
    assert is_own_words(heard, SAID)


@pytest.mark.parametrize(
    "heard",
    [
        "My cat is called Miso.",  # an answer shares a word or two, not its order
        "Yes.",  # one word: cannot tell, so it is the user's
        "Stop, stop, what is the weather like?",
        "Can you tell me more about Pepper?",
        "I'm not doing well at all, to be honest, I feel terrible.",
        "",
    ],
)
def test_the_users_own_words_are_not_taken_for_the_companions(heard: str) -> None:
    assert not is_own_words(heard, SAID)


def test_nothing_said_means_nothing_is_its_own() -> None:
    assert not is_own_words("How are you today?", "")


def test_an_answer_that_repeats_part_of_the_question_is_the_users() -> None:
    assert not is_own_words("My cat is called Miso.", "Is your cat called Miso?")
    assert not is_own_words("Yes, it's tomorrow.", "Is your job interview tomorrow?")


# -- Chinese: its own rules, chosen by the script -------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "你吃饭了吗？",
        "你吃饭了吗",  # a question particle, no mark
        "我们去公园吧",
        "今天天气很好。",
        "这是我的",
        "我已经做完了",
        "你在干什么呢",
        "真好看啊",
        "是。",  # an answer: the mark closes it
        "我喜欢猫！",
        "他叫什么名字？",
    ],
)
def test_a_chinese_sentence_that_is_closed_sounds_finished(text: str) -> None:
    for language in ("zh", "zh_CN", "en", None, "auto"):  # the script decides
        assert sounds_finished(text, language) is True


@pytest.mark.parametrize(
    "text",
    [
        "我喜欢猫和",
        "我本来想去，但是",
        "我今天没去上班因为",
        "所以",
        "我们先吃饭然后",
        "如果明天下雨",  # not the conjunction last, but the comma below is
        "如果明天下雨的话",
        "还有",
        "我想说的就是",
        "然后那个",
        "我喜欢猫和。",  # a conjunction goes on, whatever mark the recognizer put
        "我想，",  # an open mark
        "苹果、香蕉、",
        "我最喜欢的是",  # a word a sentence seldom ends on, no mark after it
        "我想",
        "嗯……",
    ],
)
def test_a_chinese_sentence_that_leads_on_does_not_sound_finished(text: str) -> None:
    if text == "如果明天下雨":
        text += "，"
    for language in ("zh", "en", None):
        assert sounds_finished(text, language) is False


def test_english_in_the_chinese_setting_keeps_the_english_rules() -> None:
    assert sounds_finished("Tell me about the", "zh") is None  # Latin text, Chinese setting
    assert sounds_finished("Tell me about the", "auto") is False
    assert sounds_finished("Play some music", None) is True


@pytest.mark.parametrize("text", ["嗯", "嗯，好的", "对对对", "好的。", "是的，明白了", "哈哈"])
def test_chinese_acknowledgements_are_backchannels(text: str) -> None:
    assert is_backchannel(text)


@pytest.mark.parametrize("text", ["好的，但是明天呢？", "等一下", "不对", "停"])
def test_chinese_with_content_is_not_a_backchannel(text: str) -> None:
    assert not is_backchannel(text)


def test_chinese_transcripts_are_the_same_words_when_their_characters_are() -> None:
    assert same_words("你好吗？", "你好吗")
    assert not same_words("你好吗", "你好")
    assert not same_words("今天天气怎么样", "明天天气怎么样")


SAID_ZH = "你好，小明！今天过得怎么样？我记住了，你的猫叫咪咪。你明天有一个面试，我相信你准备好了。"


@pytest.mark.parametrize(
    "heard",
    [
        "今天过得怎么样？",
        "我记住了。",
        "你的猫叫咪咪",
        "你明天有一个面试",
        "我相信你准备好",  # cut where the voice stopped
        "今天过得怎么样啊",  # a slip: most of it, in order
        "我记住了，你的猫叫米米",  # a misheard name, the rest its own
    ],
)
def test_the_companions_own_chinese_heard_back_is_known_by_its_characters(heard: str) -> None:
    assert is_own_words(heard, SAID_ZH)


@pytest.mark.parametrize(
    "heard",
    [
        "我的猫叫小花。",  # an answer shares characters, not most of them in order
        "不是",  # too short to tell: the user's
        "好的",
        "停一下，明天天气怎么样？",
        "我今天过得一点也不好，我很难过。",
        "",
    ],
)
def test_the_users_own_chinese_is_not_taken_for_the_companions(heard: str) -> None:
    assert not is_own_words(heard, SAID_ZH)


def test_a_chinese_answer_that_repeats_part_of_the_question_is_the_users() -> None:
    assert not is_own_words("我的猫叫咪咪。", "你的猫叫什么名字？")
    assert not is_own_words("我喜欢猫", "你喜欢猫吗？")
    assert not is_own_words("对，我的面试是明天上午。", "你的面试是明天吗？")

"""What the words of a transcript say about the turn (app.session.wording)."""

from __future__ import annotations

import pytest

from app.session.wording import is_backchannel, is_own_words, same_words, sounds_finished


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
    assert sounds_finished("", "en") is None
    assert sounds_finished("...", "en") is None
    assert sounds_finished("Ich möchte dir von", "de") is None
    assert sounds_finished("我想告诉你", "zh") is None
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

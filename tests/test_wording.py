"""What the words of a transcript say about the turn (app.session.wording)."""

from __future__ import annotations

import pytest

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

"""Short spoken questions heard right by the default English recognizer (tiny.en with
beam search; greedily only for a barge-in's words): questions of the spoken
conversation bench that greedy decoding (beam 1) misheard, said by espeak-ng in the
voices the bench uses.

bench/bench_asr_decoding.py measures the decoding set-ups over all the questions in six
voices, clean and noisy; this keeps the choice from sliding back.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.speech import SpeechClient, SpeechConfig
from app.speech.adapters import whisper_local
from app.speech.adapters.whisper_local import WhisperLocalAdapter
from app.speech.contract import hurried
from tests.asr_phrases import CONVERSATION_SPEED
from tests.test_speech_wer import synthesize

# (question, voice, what must be heard: a regular expression per word; digits or words).
# Greedy decoding heard these as "What is it? Time six.", "What is well plus, Sambin?",
# "How much is $100, 35?", "What was my kid's name again?" (so the companion could not
# recall the kitten's name). Over 5 syntheses each, greedy decoding heard 0 of 5 right
# (eight times six in en-us+f3: 3); with 5 beams 5 of 5, the kitten most times. The
# words that carry the question must be heard ("What in eight times six?" will do).
QUESTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("What is eight times six?", "en-us+f2", (r"(8|eight)", r"times", r"(6|six)")),
    ("What is eight times six?", "en-us+f3", (r"(8|eight)", r"times", r"(6|six)")),
    ("What is twelve plus seven?", "en-us+m3", (r"(12|twelve)", r"plus", r"(7|seven)")),
    (
        "How much is one hundred minus thirty five?",
        "en-gb",
        (r"how much", r"(100|one hundred)", r"minus", r"(35|thirty[- ]five)"),
    ),
    ("What was my kitten's name again?", "en-gb", (r"kitten'?s name",)),
)
# Each question is synthesized this many times: sox's dither makes every synthesis a
# little different, as every recording is, and tiny.en's choice between two words can
# flip on so little; so the test counts the recordings heard right.
SYNTHESES = 3
# Of the 15 recordings, at least this many heard right (5 beams: 15 in two runs;
# greedy decoding: 3 and 4).
HEARD_RIGHT = 12


def heard_all(patterns: tuple[str, ...], text: str) -> bool:
    return all(re.search(rf"\b{p}\b", text, flags=re.IGNORECASE) for p in patterns)


@pytest.fixture(scope="module")
def recognizer() -> SpeechClient:
    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True))  # the defaults: tiny.en
    whisper._load_sync()
    return SpeechClient(whisper)


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> list[list[bytes]]:
    """`SYNTHESES` recordings of each question, in the voice and at the speed of
    bench/bench_conversation.py."""
    folder: Path = tmp_path_factory.mktemp("questions")
    return [
        [synthesize(text, folder, voice=voice, speed=CONVERSATION_SPEED) for _ in range(SYNTHESES)]
        for text, voice, _ in QUESTIONS
    ]


async def transcribe(client: SpeechClient, pcm: bytes) -> str:
    async def whole() -> AsyncIterator[bytes]:
        yield pcm

    events = [e async for e in client.stream(whole())]
    return events[-1].text


def test_english_is_decoded_without_a_prompt() -> None:
    # a prompt leaked its own words into what loud noise was heard as (the bench)
    assert whisper_local.ENGLISH_PROMPT is None


async def heard_right(client: SpeechClient, spoken: list[list[bytes]]) -> list[str]:
    """What was heard of every recording; a leading "ok" when its words were all there."""
    lines = []
    for (text, voice, patterns), recordings in zip(QUESTIONS, spoken, strict=True):
        for pcm in recordings:
            heard = await transcribe(client, pcm)
            lines.append(
                f"{'ok' if heard_all(patterns, heard) else '--'} {voice} {text!r} -> {heard!r}"
            )
    return lines


async def test_spoken_questions_are_heard_word_for_word_with_five_beams(
    recognizer: SpeechClient, spoken: list[list[bytes]]
) -> None:
    assert whisper_local.ENGLISH_BEAM_SIZE == 5  # the default
    lines = await heard_right(recognizer, spoken)
    assert sum(line.startswith("ok") for line in lines) >= HEARD_RIGHT, "\n".join(lines)


async def test_words_wanted_in_a_hurry_are_decoded_greedily_and_mishear_them(
    recognizer: SpeechClient, spoken: list[list[bytes]]
) -> None:
    """The check above can fail: a barge-in's words (`hurried`: the companion is paused
    for them) are decoded greedily, and most of these come out wrong ("What is it? Time
    six.")."""
    with hurried():
        lines = await heard_right(recognizer, spoken)
    assert sum(line.startswith("ok") for line in lines) < HEARD_RIGHT, "\n".join(lines)

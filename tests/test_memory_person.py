"""Memories about the user, never about the companion, in one person.

The companion's own voice heard back by the microphone ("How can I help?", "I'm doing
well.") teaches the memory nothing; notes that are not facts about the user ("The user
can see with it.", "The user wants to know how to help.") are left out; notes are
stored in the third person, shown to the user as "you", and read by the chat model in
the user's own words (never "the user"), old notes in a real SQLite file included."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.llm import Msg
from app.memory import LongTermMemory, MemoryDraft, MemoryStore
from app.memory.extraction import parse_reply, statements
from app.memory.heard import SPOKEN_OVER, users_earlier_words, users_part
from app.memory.person import as_stored, in_my_words, to_the_user
from app.memory.recall import render_note
from app.memory.store import TurnRecord
from app.own_words import is_own_words as barge_in_own_words

THIRD_PERSON = ("the user", "user's", "用户")


def _reply(*texts: str) -> str:
    return json.dumps(
        {"memories": [{"text": t, "kind": "fact", "importance": 3, "replaces": None}
                      for t in texts]}
    )


# ----- the person: stored, shown, read by the model ------------------------------------


@pytest.mark.parametrize(
    ("stored", "shown", "read"),
    [
        ("The user's cat is called Miso.", "your cat is called Miso.", "My cat is called Miso."),
        ("The user just adopted a kitten called Pepper.",
         "you just adopted a kitten called Pepper.", "I just adopted a kitten called Pepper."),
        ("The user likes green tea.", "you like green tea.", "I like green tea."),
        ("The user is a nurse in Berlin.", "you are a nurse in Berlin.", "I am a nurse in Berlin."),
        ("The user doesn't eat meat.", "you don't eat meat.", "I don't eat meat."),
        ("The user isn't a morning person.", "you aren't a morning person.",
         "I'm not a morning person."),
        ("The user goes running every morning.", "you go running every morning.",
         "I go running every morning."),
        ("The user's sister Anna visits the user every Sunday.",
         "your sister Anna visits you every Sunday.", "My sister Anna visits me every Sunday."),
        ('The user asked you to remember: "you must call me Boss"',
         'you asked me to remember: "you must call me Boss"',
         'I asked you to remember: "you must call me Boss"'),
        ("About the user: Sam's cat is Miso.", "about you: Sam's cat is Miso.",
         "About me: Sam's cat is Miso."),
        ("用户的猫叫Miso", "你的猫叫Miso", "我的猫叫Miso"),
    ],
)
def test_a_note_is_stored_about_the_user_shown_as_you_and_read_in_the_user_s_words(
    stored: str, shown: str, read: str
) -> None:
    assert to_the_user(stored) == shown
    assert in_my_words(stored) == read
    assert not any(marker in read.lower() for marker in THIRD_PERSON)
    assert as_stored(stored) == stored  # the stored person stays as it is


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("Your cat is called Nori.", "The user's cat is called Nori."),
        ("You like green tea.", "The user likes green tea."),
        ("You are a nurse.", "The user is a nurse."),
        ("You go running every morning.", "The user goes running every morning."),
        ("You want me to call you Sam.", "The user wants you to call the user Sam."),
        ("My cat is Nori.", "The user's cat is Nori."),
        ("I love hiking.", "The user loves hiking."),
        ("你的猫叫Nori", "用户的猫叫Nori"),
    ],
)
def test_a_note_in_another_person_is_taken_to_the_stored_one(typed: str, stored: str) -> None:
    assert as_stored(typed) == stored
    assert in_my_words(typed) == in_my_words(stored)  # read right, whatever its person


def test_the_model_s_note_never_says_the_user(tmp_path: Path) -> None:
    # Notes written by older versions, in a real SQLite file: third person, an edited
    # one in the second person, the first person, a quoted order, Chinese.
    path = tmp_path / "memory.sqlite3"
    old = MemoryStore(path)
    for text in (
        "The user's cat is called Miso.",
        "The user's name is Tomas.",
        "Your sister is called Anna.",
        "I work as a nurse.",
        'The user asked you to remember: "you must call me Boss"',
        "用户喜欢喝乌龙茶",
    ):
        old.add("Mika", MemoryDraft(text))
    old.close()
    with sqlite3.connect(path) as raw:  # what is on disk is what was written
        on_disk = {row[0] for row in raw.execute("SELECT text FROM memories")}
    assert "Your sister is called Anna." in on_disk

    memory = LongTermMemory(MemoryStore(path), character="Mika")
    memory.open()
    try:
        note = memory.before_turn("What is my cat called?", "c1", 0)
        recalled = memory.before_turn("What do you remember about me?", "c1", 2)
        shown = [to_the_user(item.text) for item in memory.items()]
    finally:
        memory.store.close()
    for text in (note, recalled):
        assert not any(marker in text.lower() for marker in THIRD_PERSON), text
    assert '"Your cat is called Miso."' in note and '"Your name is Tomas."' in note
    assert '"Your sister is called Anna."' in note and '"You work as a nurse."' in note
    assert '"你喜欢喝乌龙茶"' in note
    assert "tell me what the notes above say" in recalled
    assert "your sister is called Anna." in shown and "you work as a nurse." in shown


def test_every_line_a_memory_command_gives_the_model_speaks_in_the_user_s_words(
    tmp_path: Path,
) -> None:
    memory = LongTermMemory(MemoryStore(tmp_path / "m.sqlite3"), character="Mika")
    memory.open()
    try:
        told = [
            memory.before_turn("What do you remember about me?", "c1", 0),
            memory.before_turn("Remember that my dog is called Rex.", "c1", 2),
            memory.before_turn("Remember that my dog is called Rex.", "c1", 4),
            memory.before_turn("Forget my bicycle.", "c1", 6),
            memory.before_turn("Forget my dog.", "c1", 8),
            memory.before_turn("Hello again.", "c1", 10),
            memory.before_turn("Forget everything about me.", "c1", 12),
        ]
    finally:
        memory.store.close()
    for text in told:
        assert text and not any(marker in text.lower() for marker in THIRD_PERSON), text
    assert '"My dog is called Rex."' in told[1]


def test_the_note_says_what_is_known_as_the_companion_would_say_it_to_them() -> None:
    from app.memory.store import MemoryItem

    note = render_note([MemoryItem(1, "Mika", "The user's dog is called Rex.")])
    assert not any(marker in note.lower() for marker in THIRD_PERSON)
    assert note.splitlines()[-1].endswith('"Your dog is called Rex."')


# ----- the companion's own words, heard back --------------------------------------------

REPLY = "[joy] Hi there, Sam! How are you today? I'm doing well. How can I help you today?"


@pytest.mark.parametrize(
    "heard", ["I'm doing well.", "How can I help?", "How are you today?", "Hi there Sam."]
)
def test_the_companion_s_own_words_are_not_the_user_s(heard: str) -> None:
    assert users_part(heard, [REPLY]) == ""
    assert barge_in_own_words(heard, REPLY)  # the one test the barge-in and turns use


@pytest.mark.parametrize(
    ("heard", "kept"),
    [
        ("How can I help you today? My dog is called Rex.", "My dog is called Rex."),
        ("I'm doing well. I work as a nurse.", "I work as a nurse."),
        ("Yes, my cat is called Miso.", "Yes, my cat is called Miso."),  # answers a question
    ],
)
def test_the_user_s_own_sentences_are_kept_beside_the_companion_s(heard: str, kept: str) -> None:
    own = [REPLY, "Is your cat called Miso?"]
    assert users_part(heard, own) == kept


class Asked:
    """The extraction's model: answers each request with `reply`, and counts them."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def __call__(self, messages: list[Msg], fmt: object, tokens: int) -> str:
        self.prompts.append(messages[-1].text)
        return self.reply


def _memory(path: Path, ask: Asked) -> LongTermMemory:
    memory = LongTermMemory(MemoryStore(path), character="Mika", ask=ask, idle_s=0.0)
    memory.open()
    return memory


async def test_a_turn_of_the_companion_s_own_words_writes_nothing(tmp_path: Path) -> None:
    # The model would gladly store what it is shown: nothing must reach it.
    ask = Asked(_reply("The user is doing well.", "The user can help you today."))
    memory = _memory(tmp_path / "m.sqlite3", ask)
    history = [
        Msg.user("Hi! My name is Sam."),
        Msg.assistant(REPLY),
        Msg.user("I'm doing well."),  # the microphone heard the speaker
        Msg.assistant("[joy] Great!"),
        # Heard while it spoke a reply not yet in the history: the session says what.
        Msg.user("You can see with it.", metadata={SPOKEN_OVER: "And you can see with it, too."}),
    ]
    memory.after_turn(history, 2, "c1")
    memory.after_turn(history, 4, "c1")
    await memory.aclose(wait_s=30)
    assert ask.prompts == []
    assert MemoryStore(tmp_path / "m.sqlite3").all("Mika") == []


async def test_only_the_user_s_words_are_shown_to_extraction(tmp_path: Path) -> None:
    ask = Asked(_reply("The user's dog is called Rex."))
    memory = _memory(tmp_path / "m.sqlite3", ask)
    history = [
        Msg.user("Hello."),
        Msg.assistant(REPLY),
        Msg.user("How can I help?"),  # an earlier echo: not context either
        Msg.assistant("[joy] You tell me! Do you have pets? My favourite is a dog called Max."),
        Msg.user("How can I help you today? My dog is called Rex."),
    ]
    memory.after_turn(history, 4, "c1")
    await memory.aclose(wait_s=30)
    [prompt] = ask.prompts
    assert "My dog is called Rex." in prompt
    assert "How can I help" not in prompt and "Max" not in prompt and "favourite" not in prompt
    stored = [item.text for item in MemoryStore(tmp_path / "m.sqlite3").all("Mika")]
    assert stored == ["The user's dog is called Rex."]


# ----- notes that are not facts about the user --------------------------------------------


@pytest.mark.parametrize(
    ("said", "junk"),
    [
        ("I can see with it.", "The user can see with it."),
        ("How can I help?", "The user wants to know how to help."),
        ("How can I help?", "The user is asking how to help."),
        ("I can help you with anything!", "You can help with anything."),
        ("I'm doing well.", "The user is doing well."),
        ("What time is it?", "The user wants to know the time."),
        ("What was my kitten's name again?", "The user's kitten has a name."),
        ("I love it.", "The user loves it."),
        ("Hi there!", "The user greeted the assistant."),
        ("你能帮我吗？", "用户想知道你能不能帮忙。"),
    ],
)
def test_a_note_that_is_not_a_fact_about_the_user_is_left_out(said: str, junk: str) -> None:
    record = TurnRecord("c1", 0, said)
    assert parse_reply(_reply(junk), record, set()) == []


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("My name is Sam, what's yours?", "The user's name is Sam."),
        ("I'm vegetarian.", "The user is vegetarian."),
        ("I just adopted a kitten called Pepper.", "The user adopted a kitten called Pepper."),
        ("I have an interview tomorrow, can you help?", "The user has an interview tomorrow."),
        ("I'm allergic to peanuts.", "The user is allergic to peanuts."),
        ("我的猫叫Miso。", "用户的猫叫Miso。"),
    ],
)
def test_a_fact_the_user_stated_is_kept(said: str, fact: str) -> None:
    record = TurnRecord("c1", 0, said)
    proposals = parse_reply(_reply(fact), record, set())
    assert proposals is not None and [p.text for p in proposals] == [fact]


def test_a_question_states_nothing() -> None:
    assert statements("How can I help?").strip() == ""
    assert statements("What time is it?").strip() == ""
    assert "My name is Sam" in statements("My name is Sam, what's yours?")


async def test_through_the_session_the_companion_s_echo_is_never_looked_at() -> None:
    # The real session and agent with a scripted model: the companion's reply comes back
    # as the next "user" turn (the microphone heard the speaker); the extraction model is
    # asked about the user's turn only, and would store whatever it is asked about.
    from tests.memory_models import MemoryScript
    from tests.test_memory_session import make, settled

    script = MemoryScript(
        extractions=[_reply("The user's cat is called Miso."), _reply("The user is doing well.")],
        reply=lambda request: "[joy] Hi there, Sam! How are you today? I'm doing well.",
    )
    session, _ = make(script)
    try:
        await session.send_text("Hi! My name is Sam and my cat is called Miso.")
        await settled(session)
        await session.send_text("I'm doing well.")  # its own words, heard back
        await settled(session)
        assert session.memory is not None
        stored = [item.text for item in session.memory.items()]
    finally:
        await session.aclose()
    assert len(script.side_requests) == 1
    assert "I'm doing well" not in script.side_requests[0].messages[-1].text
    assert stored == ["The user's cat is called Miso."]


@pytest.mark.parametrize("embedded", [True, False])
async def test_nothing_the_model_reads_calls_the_one_it_talks_with_the_user(
    embedded: bool,
) -> None:
    # Every message of a turn's request: the character's prompt, the memory's note (a
    # system message before the user's, for every model), the time line, a memory
    # command's line. Old notes stored about "the user" included.
    from app.config import Settings
    from tests.memory_models import MemoryScript
    from tests.test_memory_session import make

    script = MemoryScript()
    settings = Settings() if embedded else None
    session, _ = make(script, settings)
    assert session.memory is not None
    for text in ("The user's name is Tomas.", "The user just adopted a kitten called Pepper."):
        session.memory.store.add(session.memory.character, MemoryDraft(text))
    try:
        await session.send_text("Hi! What was my kitten's name again?")
        await session.send_text("What do you remember about me?")
        await session.send_text("Remember that I work as a nurse.")
    finally:
        await session.aclose()
    assert len(script.turns) == 3
    for request in script.turns:
        for message in request.messages:
            assert not any(m in message.text.lower() for m in THIRD_PERSON), message.text
    read = " ".join(m.text for m in script.turns[0].messages)
    assert '"You just adopted a kitten called Pepper."' in read


class _Counted(list[Msg]):
    """A history that counts the messages read from it."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += len(range(*index.indices(len(self)))) if isinstance(index, slice) else 1
        return super().__getitem__(index)


def _conversation(turns: int) -> _Counted:
    history = _Counted()
    for n in range(turns):
        history += [Msg.user(f"My note number {n}."), Msg.assistant(f"Noted, {n}.")]
    return history


def test_the_words_read_with_a_turn_do_not_grow_with_the_conversation() -> None:
    short, long = _conversation(10), _conversation(5_000)
    for history in (short, long):
        history.append(Msg.user("My sister is called Ingrid."))
    assert users_earlier_words(short, len(short) - 1, 3) == [
        "My note number 7.", "My note number 8.", "My note number 9."
    ]
    assert users_earlier_words(long, len(long) - 1, 3)[-1] == "My note number 4999."
    assert long.reads == short.reads  # what a turn costs is its own, at any length

"""Replies shaped for a voice: the reply guard alone, then through AgentCore and
MemoryAgent with a scripted provider that streams real stream events (and counts how
much it was made to say, so a stopped model is seen to stop)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from app.agent import InMemoryStorage, MemoryAgent
from app.agent.memory_agent import BatchInput
from app.agent.outputs import SentenceOutput
from app.agent.reply_guard import NUDGE, ReplyGuard, fallback_reply, has_words
from app.llm import LLMRequest, LLMResponse, Msg, TextBlock
from app.llm.events import BlockInfo, EventEmitter, ModelStreamEvent
from tests.test_agent_core import make_core


def guarded(text: str, *, max_sentences: int = 3, piece: int = 3, length: bool = False):
    """Feed `text` in pieces; (what was passed on, the guard)."""
    guard = ReplyGuard(max_sentences=max_sentences)
    out = ""
    for start in range(0, len(text), piece):
        passed, stop = guard.feed(text[start : start + piece])
        out += passed
        if stop:
            break
    else:
        guard.finished(cut_by_length=length)
    return out, guard


# ---------------------------------------------------------------- the guard alone


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (
            "[joy] Hi there! I am Mika. How are you? What is up? Bye.",
            "[joy] Hi there! I am Mika. How are you?",
        ),
        ("One. Two! Three? Four.", "One. Two! Three?"),
        ("你好！我很好。谢谢你！还有吗？", "你好！我很好。谢谢你！"),
        (
            "Mr. Smith is here. It is 3.14 today. Dr. Who came. Then more.",
            "Mr. Smith is here. It is 3.14 today. Dr. Who came.",
        ),
        # an English ellipsis ends no sentence, for the guard as for the divider
        ("Wait... really? Yes! No. Maybe.", "Wait... really? Yes! No."),
        (
            'She said "hi." Then left. Then came back. Again.',
            'She said "hi." Then left. Then came back.',
        ),
    ],
)
def test_a_reply_stops_after_its_third_sentence(reply: str, kept: str) -> None:
    passed, guard = guarded(reply)
    assert guard.cut == "sentences"
    assert guard.kept == kept
    assert passed.strip() == kept  # nothing of the fourth sentence was passed on


def test_no_limit_and_a_reply_without_a_final_stop_are_kept_whole() -> None:
    text = "One. Two. Three. Four. Five and no full stop"
    passed, guard = guarded(text, max_sentences=0)
    assert guard.cut is None and guard.kept == text and passed == text


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        # the example: a sorry-loop after one good sentence
        (
            "I'm Mika! Sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm",
            "I'm Mika!",
        ),
        ("Sure thing. I'm sorry. I'm sorry. I'm sorry.", "Sure thing. I'm sorry."),
        ("[joy] That's great! [joy] That's great! [joy] That's great!", "[joy] That's great!"),
        ("Okay. ha ha ha ha ha ha ha ha ha ha", "Okay."),
        ("好的。哈哈哈哈哈哈哈哈哈哈", "好的。"),
        ("Hi. the cat sat on it the cat sat on it the cat sat on it the cat", "Hi."),
        ("la la la la la la la la", ""),
    ],
)
def test_a_loop_stops_the_reply_and_keeps_what_came_before(reply: str, kept: str) -> None:
    _, guard = guarded(reply + " and on" * 50)
    assert guard.cut == "loop"
    assert guard.kept == kept


@pytest.mark.parametrize(
    ("reply", "kept"),
    [  # seen in the spoken conversation bench: "…repeat the process again.………………"
        ("Count to four, then repeat the process again." + "…" * 40, "Count to four, then "
         "repeat the process again."),
        ("Sure. I think" + "." * 30, "Sure. I think."),
        ("[joy] Hi" + "!" * 20, "[joy] Hi!"),
        ("好的。我明白了" + "。" * 12, "好的。我明白了。"),
        ("Okay. " + "?" * 9, "Okay."),
    ],
)  # fmt: skip
@pytest.mark.parametrize("piece", [1, 3, 7])
def test_a_run_of_marks_is_a_loop_and_the_words_before_it_are_kept(
    reply: str, kept: str, piece: int
) -> None:
    passed, guard = guarded(reply, max_sentences=0, piece=piece)
    assert guard.cut == "loop" and guard.kept == kept
    assert len(passed) <= len(kept) + 7  # at most a space and six of the marks were shown


@pytest.mark.parametrize(
    "reply",
    [
        "It is very very good. I mean it.",
        "One, two, three, four, five, six, seven.",
        "No, no, no. That is not it.",
        "I like cats. I like dogs. I like birds.",
        "Well... I think so!! Really?! Wow!!!! 好的……我明白了。",
    ],
)
def test_ordinary_replies_are_not_loops(reply: str) -> None:
    _, guard = guarded(reply, max_sentences=0)
    assert guard.cut is None and guard.kept == reply


def test_a_reply_out_of_tokens_keeps_only_its_whole_sentences() -> None:
    passed, guard = guarded("It is sunny today. I think we could go to the", length=True)
    assert guard.cut == "length" and guard.tail_unfinished
    assert guard.kept == "It is sunny today."
    assert passed.endswith("to the")  # already streamed: the pipeline drops it


def test_a_reply_out_of_tokens_at_a_sentence_end_is_not_cut() -> None:
    _, guard = guarded("It is sunny today. Let's go.", length=True)
    assert guard.cut is None and guard.kept == "It is sunny today. Let's go."


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[joy]", False),
        ("  ", False),
        ("[joy] 😊", False),
        ("<|ACT {}|>", False),
        ("[joy] Hi", True),
        ("好", True),
        ("4", True),
    ],
)
def test_has_words(text: str, words: bool) -> None:
    assert has_words(text) is words


# ---------------------------------------------------------------- through the agent


@dataclass
class Script:
    """One scripted answer: text pieces (a generator may be endless) and a finish reason."""

    pieces: Any
    finish: str = "stop"


@dataclass
class CountingProvider:
    """Answers each request with the next script, recording requests and how many text
    pieces it was asked for (a model the guard stops is asked for no more)."""

    scripts: list[Script]
    requests: list[LLMRequest] = field(default_factory=list)
    pieces_sent: list[int] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        self.requests.append(request.model_copy(deep=True))
        script = self.scripts.pop(0) if len(self.scripts) > 1 else self.scripts[0]
        emit = EventEmitter("scripted", request.model)
        sent = 0
        self.pieces_sent.append(0)
        self.closed.append(False)
        try:
            yield emit.started("r")
            info = BlockInfo(0, "b0", "text")
            snapshot = ""
            for piece in _pieces(script.pieces):
                snapshot += piece
                sent += 1
                self.pieces_sent[-1] = sent
                yield emit.delta(info, "text", piece, snapshot)
            response = LLMResponse(
                provider="scripted",
                id="r",
                model=request.model,
                content=[TextBlock(text=snapshot)] if snapshot else [],
                finish_reason=script.finish,  # type: ignore[arg-type]
            )
            yield emit.completed(response)
        except GeneratorExit:
            self.closed[-1] = True
            raise


def _pieces(source: Any) -> Iterator[str]:
    yield from (source() if callable(source) else source)


def forever(*pieces: str) -> Any:
    def generate() -> Iterator[str]:
        yield from pieces[:-1]
        while True:
            yield pieces[-1]

    return generate


def make_agent(
    scripts: list[Script], **options: Any
) -> tuple[MemoryAgent, CountingProvider, InMemoryStorage]:
    core, _, storage = make_core([], **options)
    provider = CountingProvider(scripts)
    core.provider = provider  # type: ignore[assignment]
    return MemoryAgent(core), provider, storage


async def say(agent: MemoryAgent, text: str) -> list[SentenceOutput]:
    return [s async for s in agent.chat(BatchInput([text]))]  # type: ignore[misc]


def spoken(outputs: list[SentenceOutput]) -> list[str]:
    return [o.tts_text for o in outputs if o.tts_text]


async def test_a_looping_model_is_stopped_and_its_loop_never_reaches_history() -> None:
    agent, provider, storage = make_agent(
        [Script(forever("I'm ", "Mika! ", "Sorry, ", "I'm ", "sorry, ")), Script(["[joy] Fine!"])]
    )
    out = await say(agent, "Hi! Who are you?")
    assert spoken(out) == ["I'm Mika!"]
    assert provider.closed[0] and provider.pieces_sent[0] < 30  # stopped, not run to the limit
    saved = storage.load("c", agent.core.history_uid)[-1]
    assert saved.text == "I'm Mika!" and saved.metadata["cut"] == "loop"
    await say(agent, "How are you?")
    earlier = [m.text for m in provider.requests[1].messages if m.role == "assistant"]
    assert earlier == ["I'm Mika!"]  # the next turn reads no loop to copy


async def test_a_reply_cut_by_max_tokens_is_neither_shown_nor_stored_mid_sentence() -> None:
    agent, _, storage = make_agent(
        [Script(["[joy] It is sunny today. ", "I think we ", "could go to the"], "length")]
    )
    out = await say(agent, "Weather?")
    assert [o.display_text for o in out if o.display_text] == ["It is sunny today."]
    assert storage.load("c", agent.core.history_uid)[-1].text == "[joy] It is sunny today."


async def test_a_long_reply_stops_at_the_sentence_limit() -> None:
    agent, provider, storage = make_agent(
        [Script(forever("One. ", "Two! ", "Three? ", "Four. ", "and more "))], max_sentences=3
    )
    out = await say(agent, "Count")
    assert spoken(out) == ["One.", "Two!", "Three?"]
    assert provider.closed[0] and provider.pieces_sent[0] <= 4
    assert storage.load("c", agent.core.history_uid)[-1].text == "One. Two! Three?"


@pytest.mark.parametrize("first", [["[joy]"], [], ["  ", "[sadness] "], ["😊"]])
async def test_a_reply_without_words_is_asked_for_once_more(first: list[str]) -> None:
    agent, provider, storage = make_agent([Script(first), Script(["[joy] Hello there!"])])
    out = await say(agent, "Hi")
    assert spoken(out) == ["Hello there!"]
    assert len(provider.requests) == 2
    assert provider.requests[1].messages[-1].text.endswith(NUDGE)
    assert NUDGE not in provider.requests[0].messages[-1].text
    history = storage.load("c", agent.core.history_uid)
    assert [m.text for m in history] == ["Hi", "[joy] Hello there!"]  # one reply, no nudge


@pytest.mark.parametrize(
    ("user", "language_mark"), [("Hi", "lost my words"), ("你好", "再问我一次")]
)
async def test_twice_without_words_the_fallback_line_is_said(user: str, language_mark: str) -> None:
    agent, provider, storage = make_agent([Script(["[joy]"])])
    out = await say(agent, user)
    assert len(provider.requests) == 2
    assert len(spoken(out)) >= 1 and language_mark in " ".join(spoken(out))
    saved = storage.load("c", agent.core.history_uid)[-1]
    assert saved.text == fallback_reply(user) and saved.metadata["fallback"]


async def test_the_new_message_says_the_time_and_the_prompt_start_stays_the_same() -> None:
    agent, provider, storage = make_agent([Script(["[joy] Hi!"])], time_notes=True)
    def hour(moment: datetime) -> str:  # the note says the hour one way: "7:08 p.m."
        return f"{moment.hour % 12 or 12}:"

    before = hour(datetime.now())
    await say(agent, "Hello")
    await say(agent, "What time is it?")
    first, second = provider.requests
    assert first.messages[0].text == second.messages[0].text == "You are Mika."
    after = hour(datetime.now())  # the hour may turn during the turn
    assert first.messages[-1].text.startswith("(Local time")  # first: it is read ahead
    assert first.messages[-1].text.endswith(".)\n\nHello")  # "... 7:08 p.m.)"
    assert before in first.messages[-1].text or after in first.messages[-1].text
    assert second.messages[-1].text.startswith("(Local time")
    assert second.messages[-1].text.endswith(".)\n\nWhat time is it?")  # no answer added
    # Earlier messages are sent as typed (a small model copies notes it sees in each),
    # and nothing of the note is stored.
    assert [m.text for m in second.messages[1:3]] == ["Hello", "[joy] Hi!"]
    assert [m.text for m in storage.load("c", agent.core.history_uid)][::2] == [
        "Hello",
        "What time is it?",
    ]


async def test_without_time_notes_the_user_message_is_as_typed() -> None:
    agent, provider, _ = make_agent([Script(["Hi!"])])
    await say(agent, "Hello")
    assert provider.requests[0].messages[-1].text == "Hello"


def test_a_message_from_another_day_says_that_day() -> None:
    from app.agent.moment import TimeNotes

    old = Msg.user("Remember this", timestamp=datetime(2024, 2, 29, 8, 5).astimezone())
    [noted] = TimeNotes().noted([old])
    assert "Thursday 29 February 2024, time zone" in noted.text
    assert noted.text.index("8:05 a.m.") < noted.text.index("Remember this")
    assert "08:05" not in noted.text and old.text == "Remember this"  # one form of the hour


# ---------------------------------------------------------------- invented tags


def test_no_feeling_word_belongs_to_two_families() -> None:
    from app.agent.expression_words import FAMILIES

    seen: dict[str, str] = {}
    for family, words in FAMILIES.items():
        for word in words:
            assert word not in seen, f"{word!r} is in {seen[word]} and {family}"
            seen[word] = family


@pytest.mark.parametrize(
    ("tag", "expression"),
    [
        ("sadness", "sadness"),
        ("happiness", "joy"),
        ("laugh", "joy"),
        ("Laughing", "joy"),
        ("sorrow", "sadness"),
        ("thanks", "joy"),
        ("surprised", "surprise"),
        ("curious", "thinking"),
        ("wink", "smirk"),
        ("scared", "fear"),
        ("furious", "anger"),
        ("开心", "joy"),
        ("难过", "sadness"),
        ("生气", "anger"),
        ("惊讶", "surprise"),
        ("害怕", "fear"),
        ("思考", "thinking"),
        ("平静", "neutral"),
        ("smiles", "joy"),
    ],
)
def test_invented_tags_resolve_to_the_nearest_expression(tag: str, expression: str) -> None:
    from app.agent.expression_words import resolve_expression
    from app.avatar.state import EXPRESSIONS

    known = {e.lower(): e for e in EXPRESSIONS}
    assert resolve_expression(tag, known) == expression


def test_the_default_prompt_names_the_tags_and_asks_for_words() -> None:
    from app.agent.persona import load_character

    character = load_character()
    prompt = character.prompt(max_sentences=3)
    for expression in character.expressions:
        assert f"[{expression}]" in prompt
    assert "say your answer out loud in words" in prompt and "one to three" in prompt
    assert "{" not in prompt
    assert "one or two" in character.prompt(max_sentences=2)
    assert "as few as you need" in character.prompt(max_sentences=0)


# ---------------------------------------------------------------- a stable prompt start


async def _starts(stable: bool) -> tuple[list[str], list[int]]:
    """The first remembered user message of each request over 30 turns, and each
    request's size estimate, with a window that holds about eight turns."""
    from app.llm.request import estimate_input_tokens

    agent, provider, _ = make_agent(
        [Script(["[joy] That is a nice thing to tell me about, thank you so much!"])],
        context_window=700,
        max_tokens=100,
        stable_trim=stable,
    )
    for n in range(30):
        await say(agent, f"This is message number {n}, and it tells you something about my day.")
    starts = [r.messages[1].text for r in provider.requests]
    sizes = [estimate_input_tokens(r) for r in provider.requests]
    return starts, sizes


async def test_a_full_window_keeps_its_start_for_several_turns() -> None:
    starts, sizes = await _starts(stable=True)
    plain, _ = await _starts(stable=False)
    changes = sum(a != b for a, b in itertools.pairwise(starts))
    plain_changes = sum(a != b for a, b in itertools.pairwise(plain))
    assert plain_changes >= 15  # trimming one turn at a time: a new start every turn
    assert 1 <= changes <= plain_changes // 3
    assert max(sizes) <= 700 - 100  # and every prompt still fits the window
    assert starts[-1] != starts[0]  # old turns do go once the window is full


def test_the_start_is_chosen_again_in_another_conversation() -> None:
    from app.agent.context_fit import StableStart

    one = [[Msg.user(f"a{n}")] for n in range(10)]
    other = [[Msg.user(f"b{n}")] for n in range(10)]
    start = StableStart()
    assert start.choose(one, [10] * 10, 60) == 7  # half the room left free
    assert start.choose([*one, [Msg.user("a10")]], [10] * 11, 60) == 7  # kept
    assert start.choose(other, [10] * 10, 95) == 6  # chosen afresh for its own size

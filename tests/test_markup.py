"""The reply's markup read in one place: what is a tag and what is not, reasoning written
as `<think>`, and where sentences end, however the reply is cut into tokens; and the
reply guard counting the very sentences the divider speaks."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from types import FrameType
from typing import Any
from unittest.mock import patch

import pytest

from app.agent.markup import (
    TAG,
    Piece,
    SentenceSplitter,
    ThinkPart,
    ThinkSplitter,
    ends_a_sentence,
    is_tag_name,
    take_tags,
    without_trailing_tags,
)
from app.agent.markup import _sentences as splitting  # the splitter's own module
from app.agent.reply_guard import ReplyCut, ReplyGuard
from app.agent.transformers import reply_pipeline
from app.avatar.state import EXPRESSIONS
from tests.test_transformers import LONG_SHAPES, _CountingPattern

KNOWN = {name.lower(): name for name in EXPRESSIONS}

# ---------------------------------------------------------------- tags


@pytest.mark.parametrize(
    "tag",
    [
        "[joy]",
        "[Joy:0.6]",
        "[anger: .25]",
        "[ surprise ]",
        "[big smile]",
        "[deep-thinking]",
        "[开心]",
        "【难过】",
        "【很惊讶:0.5】",
        "[f03]",
        "[exp_2]",
        "[p1]",  # a tag's shape; `take_tags` keeps it unless the pack has the name
        '<|ACT {"emotion": "joy", "intensity": 0.6}|>',
        "<|im_end|>",
    ],
)
def test_the_tag_pattern_reads_every_kind_of_tag_whole(tag: str) -> None:
    assert TAG.fullmatch(tag)


@pytest.mark.parametrize(
    "text",
    [
        "[docs](http://a.b)",
        "[joy:abc]",
        "[laughs softly at you]",
        "[3d]",
        "[_x]",
        "[]",
        "[joy\nsmile]",
        "<|unclosed",
        "<b>",
        "<think>",
    ],
)
def test_links_bad_intensities_long_asides_and_other_brackets_are_not_tags(text: str) -> None:
    assert TAG.search(text) is None


def test_taking_tags_leaves_the_words_and_names_the_expressions_in_order() -> None:
    text = (
        '[joy:0.6] Hi [laughs] there 【难过】 [dance] so[Surprise]happy <|ACT {"emotion": "fear"}|>'
    )
    shown, named = take_tags(text, KNOWN)
    assert shown.split() == ["Hi", "there", "so", "happy"]
    assert named == [("joy", 0.6), ("joy", 1.0), ("sadness", 1.0), ("surprise", 1.0), ("fear", 1.0)]


def test_a_name_in_brackets_keeps_its_words_and_a_label_stays_unless_the_pack_has_it() -> None:
    text = "[Tofu] [New York] [p1] [f03] [docs](http://a.b) [laughs softly at you]"
    shown, named = take_tags(text, KNOWN)
    words = " ".join(shown.split())
    assert words == "Tofu New York [p1] [f03] [docs](http://a.b) [laughs softly at you]"
    assert named == []
    shown, named = take_tags("[f03] Hi [F03:0.5]", {"f03": "f03"})
    assert shown.split() == ["Hi"] and named == [("f03", 1.0), ("f03", 0.5)]


@pytest.mark.parametrize(
    ("name", "is_name"),
    [
        ("joy", True),
        ("f03", True),
        ("exp_2", True),
        ("开心", True),
        ("big smile", True),
        ("3d", False),
        ("joy:0.5", False),
        (" joy", False),
        ("", False),
        ("a.b", False),
    ],
)
def test_a_name_can_be_a_tag_when_brackets_around_it_make_a_whole_tag(
    name: str, is_name: bool
) -> None:
    assert is_tag_name(name) is is_name


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Bye! [joy]", "Bye!"),
        ("Bye! [joy] 【开心】 <|im_end|>  ", "Bye!"),
        ("Look [p1]", "Look"),
        ("Okay [laughs softly at you]", "Okay [laughs softly at you]"),
        ('x <|ACT {"a": "[b]"}|>', "x"),
        ("[joy]", ""),
    ],
)
def test_the_tags_a_text_ends_with_are_taken_off(text: str, kept: str) -> None:
    assert without_trailing_tags(text) == kept


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        ("Hi.", True),
        ("Really?!", True),
        ("好的。", True),
        ('She said "hi!"', True),
        ("「你好！」", True),
        ("Bye! [joy]", True),
        ("Well, I", False),
        ("Steps:", False),
        ("[joy]", False),
        ("", False),
    ],
)
def test_a_text_ends_a_sentence_at_an_ending_or_closing_mark(text: str, ends: bool) -> None:
    assert ends_a_sentence(text) is ends


# ---------------------------------------------------------------- reasoning


def test_reasoning_split_at_every_point_is_the_same_as_whole() -> None:
    text = "Hi <think>plan: a < b</think>Sure.</think>Done <thin> <"
    splitter = ThinkSplitter()
    whole = _merged([*splitter.feed(text), *splitter.finish()])
    assert whole == [
        ("Hi ", False),
        ("plan: a < b", True),
        ("Sure.", False),  # a stray </think> goes, and ends its run
        ("Done <thin> <", False),
    ]
    for cut in range(len(text) + 1):
        splitter = ThinkSplitter()
        parts = [*splitter.feed(text[:cut]), *splitter.feed(text[cut:]), *splitter.finish()]
        assert _merged(parts) == whole, cut


def _merged(parts: list[ThinkPart]) -> list[tuple[str, bool]]:
    """Runs as read: text of one kind up to a tag."""
    out: list[tuple[str, bool]] = []
    joining = False
    for part in parts:
        if joining and out and out[-1][1] == part.is_thinking:
            out[-1] = (out[-1][0] + part.text, part.is_thinking)
        elif part.text or part.tag == 0:
            out.append((part.text, part.is_thinking))
        joining = part.tag == 0
    return [(text, thinking) for text, thinking in out if text]


# ---------------------------------------------------------------- sentences

# The union of what the divider and the reply guard each handled: abbreviations before
# numbers and names, dotted and weak abbreviations, decimals, ellipses, CJK endings,
# closing quotes and brackets after an ending, lines, reasoning, the comma cut.
SENTENCES: dict[str, tuple[str, list[str]]] = {
    "months and numbers": (
        "It opens Jan. 5 and closes Feb. 20. Take bus No. 7 to gate no. 12. I said no. Ok.",
        [
            "It opens Jan. 5 and closes Feb. 20.",
            "Take bus No. 7 to gate no. 12.",
            "I said no.",
            "Ok.",
        ],
    ),
    "pages and places": (
        "Read p. 12 and pp. 20 to 25. Dr. Lee climbed Mt. Fuji. I live on Main St. It is quiet.",
        [
            "Read p. 12 and pp. 20 to 25.",
            "Dr. Lee climbed Mt. Fuji.",
            "I live on Main St.",
            "It is quiet.",
        ],
    ),
    "dotted abbreviations": (
        "Made in the u.s. and sold here. The U.S. Army is big. I live in the U.S. It is big.",
        [
            "Made in the u.s. and sold here.",
            "The U.S. Army is big.",
            "I live in the U.S.",
            "It is big.",
        ],
    ),
    "weak abbreviations and initials": (
        "Apples, pears, etc. are fruit. I like plums etc. Do you? J. R. R. Tolkien did.",
        ["Apples, pears, etc. are fruit.", "I like plums etc.", "Do you?", "J. R. R. Tolkien did."],
    ),
    "decimals and prices": (
        "Pi is 3.14. It costs $29.99 or €5.50 now. Lunch was $5. Then we left.",
        ["Pi is 3.14.", "It costs $29.99 or €5.50 now.", "Lunch was $5.", "Then we left."],
    ),
    "ellipses": (
        "Well... maybe later. Hmm… I see. 嗯……我觉得可以。好的...走吧",
        ["Well... maybe later.", "Hmm… I see.", "嗯……", "我觉得可以。", "好的...", "走吧"],
    ),
    "CJK endings": (
        "你好！今天很好；明天也好。真的吗？！はい｡太好了！！",
        ["你好！", "今天很好；", "明天也好。", "真的吗？！", "はい｡", "太好了！！"],
    ),
    "closing marks after an ending": (
        '他说："好！"然后走了。她说：「你好！」She said "hi!" Then left. (He left.) Ok.',
        [
            '他说："好！"',
            "然后走了。",
            "她说：「你好！」",
            'She said "hi!"',
            "Then left.",
            "(He left.)",
            "Ok.",
        ],
    ),
    "tags stay in their sentence": (
        "Hi there.[joy:0.6] Nice to see you! [surprise]Oh. 你好！[开心]今天很好。",
        ["Hi there.", "[joy:0.6] Nice to see you!", "[surprise]Oh.", "你好！", "[开心]今天很好。"],
    ),
    "lines and lists": (
        "Steps:\n1. Mix the flour. Then wait.\n2. Bake it.\n- done",
        ["Steps:", "1. Mix the flour.", "Then wait.", "2. Bake it.", "- done"],
    ),
    "reasoning": (
        "<think>Plan it. Be brief.</think>Sure. Go! <think>Hm.</think>Done",
        ["~Plan it.", "~Be brief.", "Sure.", "Go!", "~Hm.", "Done"],
    ),
    "an ending decided by the end of the text": (
        "I live in the U.S. It",
        ["I live in the U.S.", "It"],
    ),
}
COMMA_CUT: dict[str, tuple[str, list[str]]] = {
    "English": (
        "Well, I think that, in fact, we should go. Later, we rest, then eat.",
        ["Well, I think that,", "in fact, we should go.", "Later, we rest, then eat."],
    ),
    "Chinese": (
        "好，今天天气真的很好，我们出去玩吧。然后，回家。",
        ["好，今天天气真的很好，", "我们出去玩吧。", "然后，回家。"],
    ),
    "a number": (
        "We sold 1,000,000 units today. Great.",
        ["We sold 1,000,000 units today.", "Great."],
    ),
}


def _split(chunks: list[str], *, comma_cut: bool = False) -> list[Piece]:
    splitter = SentenceSplitter(comma_cut=comma_cut)
    pieces = [piece for chunk in chunks for piece in splitter.feed(chunk)]
    return [*pieces, *splitter.finish()]


def _texts(pieces: list[Piece]) -> list[str]:
    return [("~" if p.is_thinking else "") + p.text for p in pieces]


def _every_cut(text: str) -> list[list[str]]:
    """The text whole, one character a token, and in two chunks cut at every point."""
    return [[text], list(text), *([text[:cut], text[cut:]] for cut in range(1, len(text)))]


@pytest.mark.parametrize("name", SENTENCES)
def test_sentences_are_the_same_however_the_reply_is_cut_into_tokens(name: str) -> None:
    text, expected = SENTENCES[name]
    for chunks in _every_cut(text):
        assert _texts(_split(chunks)) == expected, chunks


@pytest.mark.parametrize("name", COMMA_CUT)
def test_the_comma_cut_is_the_same_however_the_reply_is_cut_into_tokens(name: str) -> None:
    text, expected = COMMA_CUT[name]
    for chunks in _every_cut(text):
        assert _texts(_split(chunks, comma_cut=True)) == expected, chunks


@pytest.mark.parametrize("name", SENTENCES)
def test_each_piece_says_where_it_ends_in_the_text_fed(name: str) -> None:
    text, _ = SENTENCES[name]
    for chunks in (list(text), [text]):
        pieces, begun = _split(chunks), 0
        for piece in pieces:
            assert begun < piece.end <= len(text)
            assert piece.text in text[begun : piece.end]
            begun = piece.end
        assert begun == len(text) or not text[begun:].strip()


def test_a_piece_is_whole_where_the_text_ended_a_sentence_or_line_not_where_it_stopped() -> None:
    pieces = _split(["Hi there. Line\nSo the answer<think>x</think>is. And then"])
    assert [(p.text, p.whole) for p in pieces] == [
        ("Hi there.", True),
        ("Line", True),
        ("So the answer", False),
        ("x", False),
        ("is.", True),
        ("And then", False),
    ]


# ---------------------------------------------------------------- the guard's count


async def _stream(chunks: list[str]) -> AsyncIterator[str]:
    for chunk in chunks:
        yield chunk


async def _divided(text: str) -> list[str]:
    outs = reply_pipeline(_stream([text]), first_fragment_at_comma=False)
    return [o.display_text async for o in outs if o.display_text]


async def _spoken_through_the_guard(text: str, max_sentences: int, piece: int) -> list[str]:
    """What the turn shows when its guard watches the model's text, as `AgentCore` does:
    what the guard passes on, then a `ReplyCut` when it stopped inside a sentence."""
    guard = ReplyGuard(max_sentences=max_sentences)

    async def guarded() -> AsyncIterator[str | ReplyCut]:
        for start in range(0, len(text), piece):
            passed, stop = guard.feed(text[start : start + piece])
            if passed:
                yield passed
            if stop:
                break
        else:
            guard.finished(cut_by_length=False)
        if guard.cut is not None and guard.tail_unfinished:
            yield ReplyCut(guard.cut)

    outs = reply_pipeline(guarded(), first_fragment_at_comma=False)
    return [o.display_text async for o in outs if o.display_text]


# Texts the old guard, with its own splitter, counted differently from the divider.
COUNTED_ALIKE = [
    "Take bus No. 5 to the gate. It is quick. Bye now.",  # "No." before a number
    "The U.S. Army is big. It trains a lot. We saw it.",  # a capital after "U.S."
    "Apples, pears, etc. are fruit. I like them. Do you?",  # "etc." inside a sentence
    "Hmm… I see. Well... maybe later. Ok then.",  # English ellipses
    '他说："好！"然后走了。"对"他说。好的。',  # a closing quote after a CJK ending
    "I live in the U.S. It is big. Very big.",  # "U.S." ending a sentence
    "Meet me at No. 7 Main St. It is near. See you.",
]


@pytest.mark.parametrize("text", COUNTED_ALIKE)
async def test_a_guard_stops_after_exactly_the_sentences_the_divider_speaks(text: str) -> None:
    divided = await _divided(text)
    assert len(divided) >= 3
    for max_sentences in range(1, len(divided)):
        for piece in (1, 3, 7, len(text)):
            spoken = await _spoken_through_the_guard(text, max_sentences, piece)
            assert spoken == divided[:max_sentences], (max_sentences, piece)


@pytest.mark.parametrize("text", COUNTED_ALIKE)
def test_a_guard_keeps_exactly_the_sentences_the_divider_cut(text: str) -> None:
    divided = asyncio.run(_divided(text))
    guard = ReplyGuard(max_sentences=2)
    for char in text:
        if guard.feed(char)[1]:
            break
    assert guard.cut == "sentences"
    assert asyncio.run(_divided(guard.kept)) == divided[:2]


def test_the_old_guard_split_no_5_where_the_divider_did_not() -> None:
    # "Take bus No." was a sentence to the old guard: a limit of one sentence stopped
    # the reply before "5 to the gate.", which the divider had in the same sentence.
    guard = ReplyGuard(max_sentences=1)
    for char in COUNTED_ALIKE[0]:
        if guard.feed(char)[1]:
            break
    assert guard.kept == "Take bus No. 5 to the gate."


# ---------------------------------------------------------------- linear work


def _splitter_work(text: str) -> int:
    """The splitter's work on `text` fed one character a token (the comma cut on): lines
    of its code run, plus characters its patterns read."""
    source = splitting.__file__
    lines = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal lines
        if frame.f_code.co_filename != source:
            return None
        if event == "line":
            lines += 1
        return trace

    stops, tags = _CountingPattern(splitting.SENTENCE_STOPS), _CountingPattern(splitting.TAG)
    previous = sys.gettrace()
    with patch.object(splitting, "SENTENCE_STOPS", stops), patch.object(splitting, "TAG", tags):
        sys.settrace(trace)
        try:
            _split(list(text), comma_cut=True)
        finally:
            sys.settrace(previous)
    return lines + stops.chars + tags.chars


@pytest.mark.parametrize("shape", LONG_SHAPES, ids=list(LONG_SHAPES))
def test_splitting_a_reply_takes_work_linear_in_its_length(shape: str) -> None:
    make: Callable[[int], str] = LONG_SHAPES[shape]
    small = _splitter_work(make(400))
    large = _splitter_work(make(1_600))
    assert large < 4.6 * small, (small, large)

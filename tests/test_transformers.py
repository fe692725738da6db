"""The reply pipeline: sentences, expression tags, display text and spoken text."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from types import FrameType
from typing import Any, TypeVar
from unittest.mock import patch

import pytest

from app.agent.outputs import Actions, SentenceOutput, ToolStatus
from app.agent.transformers import (
    DisplayFragment,
    Fragment,
    actions_extractor,
    display_processor,
    reply_pipeline,
    sentence_divider,
    tts_filter,
)

T = TypeVar("T")
Tokenizer = Callable[[str], list[str]]


def one_char_at_a_time(text: str) -> list[str]:
    return list(text)


def word_pieces(text: str) -> list[str]:
    """Roughly how a chat model's tokenizer streams: " word", punctuation, 1-2 CJK chars."""
    return re.findall(r"\s*[A-Za-z']+|\s*\d+|\s*[^\sA-Za-z\d]{1,2}|\s+", text)


def three_char_chunks(text: str) -> list[str]:
    """Fixed-width chunks that cut tags, tags and words anywhere ("[jo", "y]")."""
    return [text[i : i + 3] for i in range(0, len(text), 3)]


TOKENIZERS = [one_char_at_a_time, word_pieces, three_char_chunks]
tokenized = pytest.mark.parametrize("tokenize", TOKENIZERS, ids=lambda f: f.__name__)


async def stream(items: Iterable[T]) -> AsyncIterator[T]:
    for item in items:
        yield item


async def collect(items: AsyncIterable[T]) -> list[T]:
    return [item async for item in items]


async def sentences(
    text: str, tokenize: Tokenizer, *, first_fragment_at_comma: bool = False
) -> list[str]:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    fragments = await collect(
        sentence_divider(stream(tokens), first_fragment_at_comma=first_fragment_at_comma)
    )
    return [f.text for f in fragments]


async def replies(text: str, tokenize: Tokenizer = word_pieces) -> list[SentenceOutput]:
    return await collect(reply_pipeline(stream(tokenize(text))))


# ---------------------------------------------------------------- sentence_divider


@tokenized
async def test_sentences_end_at_full_stops_question_and_exclamation_marks(
    tokenize: Tokenizer,
) -> None:
    got = await sentences("Hello there. How are you? I'm fine!", tokenize)
    assert got == ["Hello there.", "How are you?", "I'm fine!"]


@tokenized
async def test_decimals_do_not_end_a_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("Pi is 3.14. It never ends. Pay 0.5 now.", tokenize)
    assert got == ["Pi is 3.14.", "It never ends.", "Pay 0.5 now."]


@tokenized
async def test_abbreviations_do_not_end_a_sentence(tokenize: Tokenizer) -> None:
    text = "Mr. Smith met Mrs. Lee and Dr. Who at St. Mary's. Cats vs. dogs, e.g. mine, i.e. one."
    got = await sentences(text, tokenize)
    assert got == [
        "Mr. Smith met Mrs. Lee and Dr. Who at St. Mary's.",
        "Cats vs. dogs, e.g. mine, i.e. one.",
    ]


@tokenized
async def test_etc_ends_a_sentence_only_when_a_new_one_follows(tokenize: Tokenizer) -> None:
    got = await sentences("Apples, pears, etc. are fruit. I like plums, etc. Do you?", tokenize)
    assert got == ["Apples, pears, etc. are fruit.", "I like plums, etc.", "Do you?"]


@tokenized
async def test_initials_do_not_end_a_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("J. R. R. Tolkien wrote it. He died in 1973.", tokenize)
    assert got == ["J. R. R. Tolkien wrote it.", "He died in 1973."]


@tokenized
async def test_an_ellipsis_never_ends_an_english_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("Well... maybe later. Hmm… I see. Wait...", tokenize)
    assert got == ["Well... maybe later.", "Hmm… I see.", "Wait..."]


@tokenized
async def test_urls_and_version_numbers_are_not_cut(tokenize: Tokenizer) -> None:
    text = "See example.com/a.b and https://x.org/v1.2 for v1.2.3 docs. Then reload."
    got = await sentences(text, tokenize)
    assert got == ["See example.com/a.b and https://x.org/v1.2 for v1.2.3 docs.", "Then reload."]


@tokenized
async def test_cjk_punctuation_ends_a_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("你好！今天天气很好。[joy]我们去公园吧？好的", tokenize)
    assert got == ["你好！", "今天天气很好。", "[joy]我们去公园吧？", "好的"]


@tokenized
async def test_a_closing_quote_stays_with_its_sentence(tokenize: Tokenizer) -> None:
    got = await sentences('他说：「你好！」然后走了。She said "hi!" Then left.', tokenize)
    assert got == ["他说：「你好！」", "然后走了。", 'She said "hi!"', "Then left."]


@tokenized
async def test_a_cjk_ellipsis_ends_a_sentence(tokenize: Tokenizer) -> None:
    assert await sentences("嗯……我觉得可以。好的...走吧", tokenize) == [
        "嗯……",
        "我觉得可以。",
        "好的...",
        "走吧",
    ]


@tokenized
async def test_newlines_end_fragments_and_list_numbers_are_kept(tokenize: Tokenizer) -> None:
    text = "Steps:\n\n1. Preheat the oven. Then wait.\n2. Eat\n- done"
    got = await sentences(text, tokenize)
    assert got == ["Steps:", "1. Preheat the oven.", "Then wait.", "2. Eat", "- done"]


@tokenized
async def test_first_fragment_is_cut_at_a_comma_once_it_has_a_few_words(
    tokenize: Tokenizer,
) -> None:
    text = "Well, I think that, in fact, we should go. Later, we rest, then eat."
    got = await sentences(text, tokenize, first_fragment_at_comma=True)
    assert got == ["Well, I think that,", "in fact, we should go.", "Later, we rest, then eat."]


@tokenized
async def test_first_chinese_fragment_is_cut_at_a_comma_after_six_characters(
    tokenize: Tokenizer,
) -> None:
    text = "好，今天天气真的很好，我们出去玩吧。然后，回家。"
    got = await sentences(text, tokenize, first_fragment_at_comma=True)
    assert got == ["好，今天天气真的很好，", "我们出去玩吧。", "然后，回家。"]


@tokenized
async def test_no_comma_cut_when_disabled(tokenize: Tokenizer) -> None:
    text = "Well, I think that, in fact, we should go."
    assert await sentences(text, tokenize, first_fragment_at_comma=False) == [text]


@tokenized
async def test_a_comma_inside_a_number_is_not_a_cut(tokenize: Tokenizer) -> None:
    text = "We sold 1,000,000 units today. Great."
    got = await sentences(text, tokenize, first_fragment_at_comma=True)
    assert got == ["We sold 1,000,000 units today.", "Great."]


@tokenized
async def test_an_expression_tag_split_across_tokens_stays_whole(tokenize: Tokenizer) -> None:
    text = "Hi there.[joy:0.6] Nice to see you! [surprise]Oh."
    got = await sentences(text, tokenize)
    assert got == ["Hi there.", "[joy:0.6] Nice to see you!", "[surprise]Oh."]


async def test_a_sentence_is_never_cut_inside_brackets() -> None:
    tokens = ["I am [jo", "y:0.", "6. really] ok. ", "Yes", "."]
    got = [f.text for f in await collect(sentence_divider(stream(tokens)))]
    assert got == ["I am [joy:0.6. really] ok.", "Yes."]


@tokenized
async def test_think_content_is_its_own_marked_fragments(tokenize: Tokenizer) -> None:
    text = "<think>I should greet. Be nice.</think>Hello! How are you?"
    fragments = await collect(sentence_divider(stream(tokenize(text))))
    assert fragments == [
        Fragment("I should greet.", is_thinking=True),
        Fragment("Be nice.", is_thinking=True),
        Fragment("Hello!"),
        Fragment("How are you?"),
    ]


async def test_think_tags_split_across_tokens_are_recognised() -> None:
    tokens = ["<th", "ink>plan the rep", "ly</thi", "nk>\n\nSure thing", "."]
    fragments = await collect(sentence_divider(stream(tokens)))
    assert fragments == [Fragment("plan the reply", is_thinking=True), Fragment("Sure thing.")]


async def test_thinking_is_never_merged_with_speech_mid_sentence() -> None:
    tokens = ["So the answer", "<think>is it 4?", " yes", "</think>", " is 4."]
    fragments = await collect(sentence_divider(stream(tokens)))
    assert fragments == [
        Fragment("So the answer"),
        Fragment("is it 4?", is_thinking=True),
        Fragment("yes", is_thinking=True),
        Fragment("is 4."),
    ]


async def test_unclosed_thinking_is_flushed_as_thinking() -> None:
    fragments = await collect(sentence_divider(stream(["<think>hmm, let me", " see"])))
    assert fragments == [Fragment("hmm, let me see", is_thinking=True)]


@tokenized
async def test_a_less_than_sign_is_not_mistaken_for_a_think_tag(tokenize: Tokenizer) -> None:
    got = await sentences("If a < b and c <thin> d, ok. Done <", tokenize)
    assert got == ["If a < b and c <thin> d, ok.", "Done <"]


async def test_a_dot_at_the_end_of_a_token_waits_for_the_next_token() -> None:
    divider = sentence_divider(stream(["It costs 3.", "50 now. Bye"]))
    assert await anext(divider) == Fragment("It costs 3.50 now.")
    assert await anext(divider) == Fragment("Bye")


@tokenized
async def test_prices_never_end_a_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("It costs $29.99 or €5.50 now. Lunch was $5. Then we left.", tokenize)
    assert got == ["It costs $29.99 or €5.50 now.", "Lunch was $5.", "Then we left."]


@tokenized
async def test_a_dotted_capital_abbreviation_ends_a_sentence_only_before_a_new_one(
    tokenize: Tokenizer,
) -> None:
    text = "The U.S. Army is large. I live in the U.S. It is big. See the U.K. today."
    got = await sentences(text, tokenize)
    assert got == [
        "The U.S. Army is large.",
        "I live in the U.S.",
        "It is big.",
        "See the U.K. today.",
    ]


@tokenized
async def test_an_email_address_is_not_cut(tokenize: Tokenizer) -> None:
    got = await sentences("Write to a.b@example.com. I will reply.", tokenize)
    assert got == ["Write to a.b@example.com.", "I will reply."]


@tokenized
async def test_a_numbered_list_in_one_line_is_not_cut_at_its_numbers(tokenize: Tokenizer) -> None:
    got = await sentences("Do this: 1. Mix 2. Bake 3. Eat. It was 1999. Then 2000.", tokenize)
    assert got == ["Do this: 1. Mix 2. Bake 3. Eat.", "It was 1999.", "Then 2000."]


@tokenized
async def test_cjk_semicolons_and_japanese_marks_end_a_sentence(tokenize: Tokenizer) -> None:
    got = await sentences("今天很好；明天也好。はい｡元気ですか？", tokenize)
    assert got == ["今天很好；", "明天也好。", "はい｡", "元気ですか？"]


@tokenized
async def test_a_cjk_ending_keeps_its_doubled_marks_and_closing_quote(tokenize: Tokenizer) -> None:
    got = await sentences('真的吗？！他说："好！"然后走了。"对"他说。', tokenize)
    assert got == ["真的吗？！", '他说："好！"', "然后走了。", '"对"他说。']


@tokenized
async def test_an_inline_act_tag_split_across_tokens_stays_whole(tokenize: Tokenizer) -> None:
    text = 'Hi. <|ACT {"emotion": "joy", "intensity": 0.5}|> Nice! Ok.'
    got = await sentences(text, tokenize)
    assert got == ["Hi.", '<|ACT {"emotion": "joy", "intensity": 0.5}|> Nice!', "Ok."]


@tokenized
async def test_an_unclosed_bracket_or_quote_loses_no_text(tokenize: Tokenizer) -> None:
    text = "I am [so happy. Really. " + "Yes. " * 60 + 'He said "hi. Bye.'
    got = await sentences(text, tokenize)
    assert " ".join(got) == text.strip()
    assert got[-2:] == ['He said "hi.', "Bye."]  # a stray " does not hold sentences back


@tokenized
async def test_first_fragment_min_words_sets_where_the_comma_cut_may_come(
    tokenize: Tokenizer,
) -> None:
    text = "Well, I think that, in fact, we should go."

    async def cut(min_words: int) -> list[str]:
        divider = sentence_divider(stream(tokenize(text)), first_fragment_min_words=min_words)
        return [f.text for f in await collect(divider)]

    assert await cut(1) == ["Well,", "I think that, in fact, we should go."]
    assert await cut(5) == ["Well, I think that, in fact,", "we should go."]
    assert await cut(20) == [text]


async def test_the_pipeline_takes_the_first_fragment_min_words_option() -> None:
    outs = await collect(reply_pipeline(stream(["好的，我们走吧。"]), first_fragment_min_words=1))
    assert [o.tts_text for o in outs] == ["好的，", "我们走吧。"]


# ---------------------------------------------------------------- actions_extractor


async def extracted(*texts: str) -> list[tuple[Fragment, Actions]]:
    return await collect(actions_extractor(stream(Fragment(t) for t in texts)))


async def test_known_tags_become_expressions_in_order_and_leave_the_text() -> None:
    [(fragment, actions)] = await extracted("[joy] Hello [Surprise] there [SADNESS]")
    assert fragment.text == "Hello   there"
    assert actions.expressions == ["joy", "surprise", "sadness"]


async def test_tag_intensity_is_parsed_and_clamped_with_one_as_the_default() -> None:
    [(_, actions)] = await extracted("[joy:0.6] [anger: .25] [fear:3] [smirk]")
    assert actions.intensities == {"joy": 0.6, "anger": 0.25, "fear": 1.0, "smirk": 1.0}


async def test_a_tag_is_never_left_in_the_text_known_or_not() -> None:
    [(fragment, actions)] = await extracted("[laughs] Ha [dance] [sorrow] ok [Thanks] [开心]")
    assert fragment.text.split() == ["Ha", "ok"]
    assert actions.expressions == ["joy", "sadness", "joy", "joy"]


async def test_links_bad_intensities_long_asides_and_labels_are_not_tags() -> None:
    text = "See [docs](http://a.b) [joy:abc] [p1] [laughs softly at you] ok"
    [(fragment, actions)] = await extracted(text)
    assert fragment.text == text
    assert not actions


async def test_a_live2d_model_s_own_names_with_digits_are_tags_and_other_labels_are_not() -> None:
    fragments = stream([Fragment("[f03] Hi [F03:0.5] there [exp_2] [p1] [f04] ok")])
    pack = ["f01", "f03", "exp_2"]
    [(fragment, actions)] = await collect(actions_extractor(fragments, expressions=pack))
    assert fragment.text.split() == ["Hi", "there", "[p1]", "[f04]", "ok"]
    assert actions.expressions == ["f03", "f03", "exp_2"]
    assert actions.intensities["f03"] == 0.5


async def test_a_name_in_brackets_is_an_answer_and_an_unknown_lowercase_tag_goes() -> None:
    fragments = stream([Fragment("[Tofu] [sparkle] [Big Smile] [New York] [Sigh] ok")])
    [(fragment, actions)] = await collect(actions_extractor(fragments))
    assert fragment.text.split() == ["Tofu", "New", "York", "Sigh", "ok"]
    assert actions.expressions == ["joy"]  # [Big Smile] is a feeling: acted, not said


async def test_two_word_and_chinese_tags_resolve_through_a_feeling_word() -> None:
    [(fragment, actions)] = await extracted("[big smile] Hi 【很难过】 [deep-thinking] yes")
    assert fragment.text.split() == ["Hi", "yes"]
    assert actions.expressions == ["joy", "sadness", "thinking"]


async def test_only_the_given_expression_names_are_known() -> None:
    fragments = stream([Fragment("[joy] [wink] [smug] hi")])
    [(fragment, actions)] = await collect(actions_extractor(fragments, expressions=["wink"]))
    assert fragment.text.split() == ["hi"]  # no joy in this pack: the tag just goes
    assert actions.expressions == ["wink", "wink"]  # smug is wink's family here


async def test_a_pack_with_its_own_names_gets_the_model_s_usual_tags() -> None:
    fragments = stream([Fragment("[joy] Yay [sadness] oh [anger] hm")])
    pack = ["normal", "happy", "sad", "angry"]
    [(_, actions)] = await collect(actions_extractor(fragments, expressions=pack))
    assert actions.expressions == ["happy", "sad", "angry"]


async def test_tags_in_thinking_are_not_actions() -> None:
    [(fragment, actions)] = await collect(actions_extractor(stream([Fragment("[joy]?", True)])))
    assert fragment == Fragment("[joy]?", True)
    assert not actions


async def test_an_inline_act_tag_becomes_an_expression_with_its_intensity() -> None:
    [(fragment, actions)] = await extracted(
        'Hi <|ACT {"emotion": "Joy", "intensity": 0.6}|>there <|act {"emotion": ["fear"]}|>!'
    )
    assert fragment.text == "Hi  there  !"
    assert actions.expressions == ["joy", "fear"]
    assert actions.intensities == {"joy": 0.6, "fear": 1.0}


async def test_an_inline_tag_is_removed_even_when_it_is_not_a_known_expression() -> None:
    [(fragment, actions)] = await extracted(
        'a <|ACT {"emotion": "dance"}|> b <|ACT {"emotion": oops}|> c <|im_end|> d'
    )
    assert fragment.text.split() == ["a", "b", "c", "d"]
    assert not actions


async def test_an_inline_intensity_is_clamped() -> None:
    [(_, actions)] = await extracted(
        '<|ACT {"emotion": "joy", "intensity": 7}|><|ACT {"emotion": "anger", "intensity": -1}|>'
    )
    assert actions.intensities == {"joy": 1.0, "anger": 0.0}


# ---------------------------------------------------------------- display_processor


async def shown(fragment: Fragment) -> str:
    [item] = await collect(display_processor(stream([(fragment, Actions())])))
    return item.display_text


async def test_display_tidies_the_space_a_removed_tag_left() -> None:
    assert await shown(Fragment("I am   so happy  !")) == "I am so happy!"
    assert await shown(Fragment("你好 呀 ，朋友")) == "你好呀，朋友"


async def test_display_keeps_markdown_emoji_and_asides_for_the_reader() -> None:
    text = "**Bold** 😊 (smiles) [laughs] see [docs](http://a.b)."
    assert await shown(Fragment(text)) == text


async def test_display_shows_thinking_as_written() -> None:
    [item] = await collect(display_processor(stream([(Fragment("a  b", True), Actions())])))
    assert item.display_text == "a  b"
    assert item.fragment.is_thinking


# ---------------------------------------------------------------- tts_filter


async def spoken(*texts: str) -> list[str]:
    items = (DisplayFragment(Fragment(t), Actions(), t) for t in texts)
    return [out.tts_text for out in await collect(tts_filter(stream(items)))]


async def test_markdown_marks_are_not_spoken_but_their_words_are() -> None:
    got = await spoken(
        "**Bold** and *it* with `code` and __strong__.",
        "## A heading",
        "- a bullet",
        "2. a step",
        "> quoted",
        "Read [the docs](https://example.com/docs) now.",
    )
    assert got == [
        "Bold and it with code and strong.",
        "A heading",
        "a bullet",
        "a step",
        "quoted",
        "Read the docs now.",
    ]


async def test_emoji_and_pictographs_are_not_spoken() -> None:
    assert await spoken("Great job 🎉👍🏽! I ❤️ it ✨ ⭐ 👨‍👩‍👧") == ["Great job! I it"]


async def test_asides_and_actions_are_not_spoken() -> None:
    got = await spoken(
        "*waves* Hello there (softly)!",
        "Nice [laughs] one.",
        "好的（笑）。",
        "See you *smiles*.",
        "I *really* mean it.",
    )
    assert got == ["Hello there!", "Nice one.", "好的。", "See you", "I really mean it."]


async def test_urls_and_snake_case_are_spoken_sensibly() -> None:
    assert await spoken("Open https://x.org/a.b?c=1 and my_var.") == ["Open and my var."]


async def test_a_fragment_with_nothing_to_say_is_still_shown() -> None:
    items = [DisplayFragment(Fragment("😊 (laughs)"), Actions(), "😊 (laughs)")]
    [out] = await collect(tts_filter(stream(items)))
    assert out == SentenceOutput("😊 (laughs)", "", Actions())


async def test_an_empty_fragment_without_actions_is_dropped() -> None:
    items = [
        DisplayFragment(Fragment(""), Actions(), ""),
        DisplayFragment(Fragment(""), Actions(["joy"], {"joy": 1.0}), ""),
    ]
    [out] = await collect(tts_filter(stream(items)))
    assert out.actions.expressions == ["joy"]


async def test_thinking_is_never_spoken() -> None:
    items = [DisplayFragment(Fragment("Let me think.", True), Actions(), "Let me think.")]
    [out] = await collect(tts_filter(stream(items)))
    assert out == SentenceOutput("Let me think.", "", Actions(), is_thinking=True)


async def test_code_blocks_are_shown_but_not_spoken() -> None:
    got = await spoken("Try this:", "```python", "print(1)", "```", "Done.")
    assert got == ["Try this:", "", "", "", "Done."]


async def test_prices_and_numbers_are_spoken() -> None:
    assert await spoken("It costs $5, or €5.50, or ¥29.99 (3.14 each).") == [
        "It costs $5, or €5.50, or ¥29.99."
    ]


async def test_a_url_goes_but_the_sentence_keeps_its_punctuation() -> None:
    got = await spoken(
        "My site is https://x.org.", "Open example.com/docs now!", "看这里https://x.org/a。"
    )
    assert got == ["My site is.", "Open now!", "看这里。"]


async def test_unbalanced_markup_is_read_without_backtracking_and_its_marks_not_spoken() -> None:
    # Each of these once made a pattern rescan the rest of the text from every mark.
    got = await spoken("[" * 20_000, "((" * 10_000 + "x", "**a " * 5_000, "I <3 it" * 5_000)
    assert got == ["", "x", " ".join(["a"] * 5_000), "I <3 it" * 5_000]


# ---------------------------------------------------------------- reply_pipeline


@tokenized
async def test_chinese_reply_with_an_expression(tokenize: Tokenizer) -> None:
    outs = await replies("你好！今天天气很好。[joy]我们去公园吧？", tokenize)
    assert [(o.display_text, o.tts_text, o.actions.expressions) for o in outs] == [
        ("你好！", "你好！", []),
        ("今天天气很好。", "今天天气很好。", []),
        ("我们去公园吧？", "我们去公园吧？", ["joy"]),
    ]


@tokenized
async def test_a_tag_at_the_start_of_a_sentence_belongs_to_that_sentence(
    tokenize: Tokenizer,
) -> None:
    outs = await replies("Hello. [sadness:0.4] I miss you. [joy]See you soon!", tokenize)
    assert [(o.display_text, o.actions.intensities) for o in outs] == [
        ("Hello.", {}),
        ("I miss you.", {"sadness": 0.4}),
        ("See you soon!", {"joy": 1.0}),
    ]


@tokenized
async def test_a_tag_at_the_very_end_comes_out_alone_with_empty_text(tokenize: Tokenizer) -> None:
    outs = await replies("Bye! [joy]", tokenize)
    assert outs == [
        SentenceOutput("Bye!", "Bye!"),
        SentenceOutput("", "", Actions(["joy"], {"joy": 1.0})),
    ]


@tokenized
async def test_display_keeps_the_words_that_speech_leaves_out(tokenize: Tokenizer) -> None:
    outs = await replies("Sure [joy] **thing** 😊 (grins) see [laughs] `ls`. *Waves*", tokenize)
    assert [(o.display_text, o.tts_text) for o in outs] == [
        ("Sure **thing** 😊 (grins) see `ls`.", "Sure thing see ls."),
        ("*Waves*", ""),
    ]


@tokenized
async def test_thinking_is_shown_but_not_spoken_and_not_mistaken_for_the_first_fragment(
    tokenize: Tokenizer,
) -> None:
    outs = await replies(
        "<think>Greet the user, warmly and briefly.</think>Well, hello there, friend.", tokenize
    )
    assert [(o.display_text, o.tts_text, o.is_thinking) for o in outs] == [
        ("Greet the user, warmly and briefly.", "", True),
        ("Well, hello there,", "Well, hello there,", False),
        ("friend.", "friend.", False),
    ]


async def test_the_first_sentence_leaves_before_the_token_stream_has_finished() -> None:
    asked: list[int] = []
    tokens = ["Hello", " there", ".", " How", " are", " you", "?"]

    async def model() -> AsyncIterator[str]:
        for index, token in enumerate(tokens):
            asked.append(index)
            yield token

    pipeline = reply_pipeline(model())
    first = await anext(pipeline)
    assert first.tts_text == "Hello there."
    assert asked == [0, 1, 2, 3]  # " How" proved the "." ended the sentence
    await pipeline.aclose()


async def test_a_cjk_sentence_leaves_with_the_token_that_shows_its_ending_is_over() -> None:
    asked: list[int] = []

    async def model() -> AsyncIterator[str]:
        for index, token in enumerate(["你好", "！", "今天", "很好", "。"]):
            asked.append(index)
            yield token

    pipeline = reply_pipeline(model())
    assert (await anext(pipeline)).tts_text == "你好！"
    assert asked == [0, 1, 2]  # "！" might have become "！？"; "今天" shows it did not
    await pipeline.aclose()


async def test_a_cjk_sentence_followed_by_more_text_in_its_token_needs_no_other_token() -> None:
    asked: list[int] = []

    async def model() -> AsyncIterator[str]:
        for index, token in enumerate(["你好！今", "天很好", "。"]):
            asked.append(index)
            yield token

    pipeline = reply_pipeline(model())
    assert (await anext(pipeline)).tts_text == "你好！"
    assert asked == [0]
    await pipeline.aclose()


async def test_closing_the_pipeline_closes_the_token_stream() -> None:
    closed = False

    async def model() -> AsyncIterator[str]:
        nonlocal closed
        try:
            for token in ["One. ", "Two. ", "Three."]:
                yield token
        finally:
            closed = True

    pipeline = reply_pipeline(model())
    await anext(pipeline)
    await pipeline.aclose()
    assert closed


async def test_only_the_first_fragment_is_cut_at_a_comma_even_within_one_token() -> None:
    tokens = ["Hi. Well, I think that, in fact, we go."]
    got = [f.text for f in await collect(sentence_divider(stream(tokens)))]
    assert got == ["Hi.", "Well, I think that, in fact, we go."]


async def test_a_stray_closing_think_tag_is_dropped_and_ends_the_fragment() -> None:
    tokens = ["checked the da", "te</thi", "nk>Today is Monday."]
    got = await collect(sentence_divider(stream(tokens)))
    assert got == [Fragment("checked the date"), Fragment("Today is Monday.")]


async def test_a_quoted_cjk_sentence_leaves_with_its_closing_quote() -> None:
    asked: list[str] = []

    async def model() -> AsyncIterator[str]:
        for token in ["他说：「你好！", "」", "然后走了。"]:
            asked.append(token)
            yield token

    divider = sentence_divider(model())
    assert await anext(divider) == Fragment("他说：「你好！」")
    assert asked == ["他说：「你好！", "」"]
    await divider.aclose()


# ---------------------------------------------------------------- tool statuses


async def test_a_tool_status_passes_through_in_order_after_the_pending_sentence() -> None:
    status = ToolStatus("get_time", "[🔧 get_time]")
    done = ToolStatus("get_time", "[🔧 get_time]", done=True)
    tokens: list[str | ToolStatus] = ["Let me check", status, done, "It is", " noon. Bye."]
    outs = await collect(reply_pipeline(stream(tokens)))
    assert outs == [
        SentenceOutput("Let me check", "Let me check"),
        status,
        done,
        SentenceOutput("It is noon.", "It is noon."),
        SentenceOutput("Bye.", "Bye."),
    ]
    assert outs[1] is status


async def test_a_tool_status_ends_unclosed_thinking_and_rearms_the_comma_cut() -> None:
    status = ToolStatus("search", "[🔧 search]")
    tokens: list[str | ToolStatus] = [
        "Well, I think that, yes. ",
        "<think>look it up",
        status,
        "Found it, the answer is here, friend.",
    ]
    outs = await collect(reply_pipeline(stream(tokens)))
    assert [o if isinstance(o, ToolStatus) else (o.display_text, o.is_thinking) for o in outs] == [
        ("Well, I think that,", False),
        ("yes.", False),
        ("look it up", True),
        status,
        ("Found it, the answer is here,", False),
        ("friend.", False),
    ]


async def test_every_stage_alone_passes_a_tool_status_through() -> None:
    status = ToolStatus("t", "[🔧 t]")
    fragment = Fragment("Hi.")
    items: list[Any] = await collect(actions_extractor(stream([fragment, status])))
    assert items[1] is status
    items = await collect(display_processor(stream([(fragment, Actions()), status])))
    assert items[1] is status
    items = await collect(tts_filter(stream([DisplayFragment(fragment, Actions(), "Hi."), status])))
    assert items == [SentenceOutput("Hi.", "Hi."), status]


async def test_a_tool_status_closes_an_unfinished_code_block() -> None:
    status = ToolStatus("run", "[🔧 run]")
    tokens: list[str | ToolStatus] = ["```\nx = 1\n", status, "Done."]
    outs = await collect(reply_pipeline(stream(tokens)))
    assert [o if isinstance(o, ToolStatus) else o.tts_text for o in outs] == [
        "",
        "",
        status,
        "Done.",
    ]


# ---------------------------------------------------------------- long replies


async def test_a_100k_character_reply_goes_through_the_whole_pipeline() -> None:
    unit = "[joy] Hello there, friend. 你好！今天天气很好。**It** costs $5 😊. "
    text = unit * (100_000 // len(unit) + 1)
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    outs = await collect(reply_pipeline(stream(chunks)))
    shown_text = "".join(o.display_text for o in outs).replace(" ", "")
    assert shown_text == text.replace("[joy]", "").replace(" ", "")
    assert sum(o.actions.expressions == ["joy"] for o in outs) == text.count("[joy]")


# How a reply can make a divider rescan what it already read, each grown to n characters.
LONG_SHAPES: dict[str, Callable[[int], str]] = {
    "sentences": lambda n: ("Hello there, friend. 你好！今天天气很好。" * n)[:n],
    "one sentence": lambda n: ("word " * n)[:n],
    "tags and commas before any cut": lambda n: ("[x], " * n)[:n],
    "an unclosed bracket": lambda n: "(" + ("aside " * n)[:n],
    "an unclosed quote": lambda n: '"' + ("quoted. " * n)[:n],
    "CJK with no marks": lambda n: "好" * n,
    "a long gap after etc.": lambda n: "Apples etc." + " " * n,
    "a long run of marks": lambda n: "好" + "！" * n,
    "a long word before a full stop": lambda n: "x" * n + ". Next",
    "a long list of numbers": lambda n: " ".join(str(i % 100) + "." for i in range(n // 4)),
}
long_shapes = pytest.mark.parametrize("shape", LONG_SHAPES, ids=list(LONG_SHAPES))


@long_shapes
async def test_a_long_reply_one_character_a_token_loses_nothing(shape: str) -> None:
    text = LONG_SHAPES[shape](20_000)
    outs = await collect(sentence_divider(stream(text)))
    assert "".join("".join(f.text.split()) for f in outs) == "".join(text.split())


class _CountingPattern:
    """A compiled pattern that counts the characters it is asked to read."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.chars = pattern, 0

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        found = self.pattern.search(text, pos)
        self.chars += (found.end() if found else len(text)) - pos
        return found

    def sub(self, repl: str, text: str) -> str:
        self.chars += len(text)
        return self.pattern.sub(repl, text)


def _divider_work(text: str) -> int:
    """The divider's work on `text` fed one character a token: lines of its code run, plus
    characters its patterns read (a rescan done inside a regex shows there)."""
    from app.agent import sentences

    source = sentences.__file__
    lines = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal lines
        if frame.f_code.co_filename != source:
            return None
        if event == "line":
            lines += 1
        return trace

    stops, markup = _CountingPattern(sentences._NEXT_STOP), _CountingPattern(sentences._MARKUP)
    previous = sys.gettrace()
    with patch.object(sentences, "_NEXT_STOP", stops), patch.object(sentences, "_MARKUP", markup):
        sys.settrace(trace)
        try:
            asyncio.run(collect(sentence_divider(stream(text))))
        finally:
            sys.settrace(previous)
    return lines + stops.chars + markup.chars


@long_shapes
def test_dividing_a_reply_takes_work_linear_in_its_length(shape: str) -> None:
    small = _divider_work(LONG_SHAPES[shape](400))
    large = _divider_work(LONG_SHAPES[shape](1_600))
    assert large < 4.6 * small, (small, large)


async def test_a_sentence_break_speaks_the_sentence_before_the_next_token() -> None:
    """The reply's start the app knew ends in "p.m." (which alone waits for the next
    token: "p.m. tomorrow"?): the break lets it out before the model's next words."""
    from app.agent.outputs import SentenceBreak

    outputs: list[SentenceOutput] = []

    async def tokens() -> AsyncIterator[str | SentenceBreak]:
        yield "[neutral] It's 4:13 p.m."
        yield SentenceBreak()
        # the pipeline asks for more only after it handed out what it had
        assert [o.display_text for o in outputs] == ["It's 4:13 p.m."]
        assert outputs[0].actions.expressions == ["neutral"]
        yield " Anything else?"

    async for item in reply_pipeline(tokens()):
        assert isinstance(item, SentenceOutput)
        outputs.append(item)
    assert [o.display_text for o in outputs] == ["It's 4:13 p.m.", "Anything else?"]

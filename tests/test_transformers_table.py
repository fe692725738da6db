"""The reply pipeline as a table: a model's reply in, what is shown, spoken and acted out.

Every case runs on the default pipeline (first fragment cut at a comma after three
words) three ways: the reply as one token, one character a token, and cut into random
chunks of 1-8 characters (fixed seeds). The outputs must be the same however the reply
is cut, since a server may stream it in any pieces.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import NamedTuple

import pytest

from app.agent.transformers import reply_pipeline

Output = tuple[str, str, list[str]]  # (display_text, tts_text, expressions)


class Case(NamedTuple):
    name: str
    reply: str
    expected: list[Output]


def say(text: str, *expressions: str) -> Output:
    """A fragment shown and spoken alike."""
    return (text, text, list(expressions))


def shown(display: str, spoken: str, *expressions: str) -> Output:
    return (display, spoken, list(expressions))


def thought(text: str) -> Output:
    """Thinking: shown, never spoken."""
    return (text, "", [])


CASES = [
    # ------------------------------------------------------------ English sentences
    Case(
        "sentence marks",
        "Hello there. How are you? I'm fine!",
        [say("Hello there."), say("How are you?"), say("I'm fine!")],
    ),
    Case("decimal", "Pi is 3.14. It never ends.", [say("Pi is 3.14."), say("It never ends.")]),
    Case(
        "dollar price",
        "It costs $29.99 today. Cheap!",
        [say("It costs $29.99 today."), say("Cheap!")],
    ),
    Case(
        "euro price before a comma",
        "Only €5.50, a bargain. Buy it.",
        [say("Only €5.50, a bargain."), say("Buy it.")],
    ),
    Case(
        "price ending a sentence",
        "Lunch was $5. Then we left.",
        [say("Lunch was $5."), say("Then we left.")],
    ),
    Case(
        "titles",
        "Mr. Smith met Dr. Lee at St. Mary's. They talked.",
        [say("Mr. Smith met Dr. Lee at St. Mary's."), say("They talked.")],
    ),
    Case(
        "e.g. and i.e.",
        "Bring fruit, e.g. apples, i.e. food. Thanks.",
        [say("Bring fruit, e.g. apples,"), say("i.e. food."), say("Thanks.")],
    ),
    Case(
        "U.S. inside a sentence",
        "The U.S. Army is large. It trains a lot.",
        [say("The U.S. Army is large."), say("It trains a lot.")],
    ),
    Case(
        "U.S. ending a sentence",
        "I live in the U.S. It is big.",
        [say("I live in the U.S."), say("It is big.")],
    ),
    Case(
        "initials",
        "J. R. R. Tolkien wrote it. He died in 1973.",
        [say("J. R. R. Tolkien wrote it."), say("He died in 1973.")],
    ),
    Case(
        "etc. inside a sentence",
        "Apples, pears, etc. are fruit. I like them.",
        [say("Apples, pears, etc. are fruit."), say("I like them.")],
    ),
    Case(
        "etc. ending a sentence",
        "I like plums etc. Do you?",
        [say("I like plums etc."), say("Do you?")],
    ),
    Case(
        "vs.",
        "Cats vs. dogs is old. Pick one.",
        [say("Cats vs. dogs is old."), say("Pick one.")],
    ),
    # Abbreviations before a number or a name, by class: each class continues before
    # what it stands in front of and still ends a sentence before a new one.
    Case(
        "month names before a day",
        "It opens Jan. 5 and closes Feb. 20. Sept. 9 is free. Come on Dec. 31 at noon.",
        [
            say("It opens Jan. 5 and closes Feb. 20."),
            say("Sept. 9 is free."),
            say("Come on Dec. 31 at noon."),
        ],
    ),
    Case(
        "month names before a year and a weekday",
        "Since Aug. 2019 we meet every Fri. Oct. 3 was the last time. Bye.",
        [say("Since Aug. 2019 we meet every Fri. Oct. 3 was the last time."), say("Bye.")],
    ),
    Case(
        "a month name ending a sentence",
        "The fair is in Nov. Then it snows.",
        [say("The fair is in Nov."), say("Then it snows.")],
    ),
    Case(
        "titles before names",
        "Prof. Ada met Gen. Grant and Sen. Warren. Rev. King spoke after Mx. Lee. Done.",
        [
            say("Prof. Ada met Gen. Grant and Sen. Warren."),
            say("Rev. King spoke after Mx. Lee."),
            say("Done."),
        ],
    ),
    Case(
        "No. before a number",
        "Take bus No. 5 to gate no. 12. It is quick.",
        [say("Take bus No. 5 to gate no. 12."), say("It is quick.")],
    ),
    Case(
        "the word no ending a sentence",
        "I said no. Then I left. No. Never again.",
        [say("I said no."), say("Then I left."), say("No."), say("Never again.")],
    ),
    Case(
        "book references before numbers",
        "See vol. 2 ch. 4 on p. 17 and pp. 20 to 25. Fig. 3 shows it. Thanks.",
        [
            say("See vol. 2 ch. 4 on p. 17 and pp. 20 to 25."),
            say("Fig. 3 shows it."),
            say("Thanks."),
        ],
    ),
    Case(
        "a common word that is also an abbreviation",
        "I ate a fig. It was sweet. I love art. Paintings make me happy.",
        [
            say("I ate a fig."),
            say("It was sweet."),
            say("I love art."),
            say("Paintings make me happy."),
        ],
    ),
    Case(
        "approx. before a number",
        "It weighs approx. 3 kilos. That is light.",
        [say("It weighs approx. 3 kilos."), say("That is light.")],
    ),
    Case(
        "places before names",
        "We climbed Mt. Fuji and saw St. Louis from Fifth Ave. later. Wow!",
        [say("We climbed Mt. Fuji and saw St. Louis from Fifth Ave. later."), say("Wow!")],
    ),
    Case(
        "a street abbreviation ending a sentence",
        "I live on Main St. It is quiet there.",
        [say("I live on Main St."), say("It is quiet there.")],
    ),
    Case(
        "vs. before a name",
        "It was Ali vs. Frazier in Manila. Famous fight.",
        [say("It was Ali vs. Frazier in Manila."), say("Famous fight.")],
    ),
    Case(
        "a.m. and p.m.",
        "We met at 5 p.m. Then we ate. At 9 a.m. sharp!",
        [say("We met at 5 p.m."), say("Then we ate."), say("At 9 a.m. sharp!")],
    ),
    Case(
        "ellipses inside English sentences",
        "Well... I think so. Hmm… maybe later.",
        [say("Well... I think so."), say("Hmm… maybe later.")],
    ),
    Case("trailing ellipsis", "Wait...", [say("Wait...")]),
    Case(
        "URL",
        "See https://example.com/a.b?c=1 for docs. Then reload.",
        [shown("See https://example.com/a.b?c=1 for docs.", "See for docs."), say("Then reload.")],
    ),
    Case(
        "URL ending a sentence",
        "My site is https://x.org. Bye!",
        [shown("My site is https://x.org.", "My site is."), say("Bye!")],
    ),
    Case(
        "bare domain with a path",
        "Open example.com/docs now. Done.",
        [shown("Open example.com/docs now.", "Open now."), say("Done.")],
    ),
    Case(
        "e-mail address",
        "Write to a.b@example.com. I will reply.",
        [say("Write to a.b@example.com."), say("I will reply.")],
    ),
    Case(
        "version number",
        "Update to v1.2.3 today. It helps.",
        [say("Update to v1.2.3 today."), say("It helps.")],
    ),
    Case(
        "numbered list lines",
        "Steps:\n1. Mix the flour.\n2. Bake it.",
        [
            say("Steps:"),
            shown("1. Mix the flour.", "Mix the flour."),
            shown("2. Bake it.", "Bake it."),
        ],
    ),
    Case(
        "numbered list in a line",
        "Do this: 1. Mix 2. Bake 3. Eat. Enjoy!",
        [say("Do this: 1. Mix 2. Bake 3. Eat."), say("Enjoy!")],
    ),
    Case(
        "a year is not a list number",
        "It was 1999. I was young.",
        [say("It was 1999."), say("I was young.")],
    ),
    Case(
        "bullets",
        "- first item\n- second item",
        [shown("- first item", "first item"), shown("- second item", "second item")],
    ),
    Case(
        "first fragment cut at a comma",
        "Well, I think that, in fact, we should go. Later, we rest.",
        [say("Well, I think that,"), say("in fact, we should go."), say("Later, we rest.")],
    ),
    Case("too short to cut at a comma", "Yes, sure. Ok.", [say("Yes, sure."), say("Ok.")]),
    Case(
        "a comma inside a number",
        "We sold 1,000,000 units today. Great.",
        [say("We sold 1,000,000 units today."), say("Great.")],
    ),
    Case(
        "quote after an exclamation",
        'She said "hi!" Then she left.',
        [say('She said "hi!"'), say("Then she left.")],
    ),
    Case("?! together", "Really?! No way.", [say("Really?!"), say("No way.")]),
    Case("lines", "Line one\nLine two", [say("Line one"), say("Line two")]),
    Case(
        "parenthesised sentences stay whole and unspoken",
        "(He left. Then came back.) Ok.",
        [shown("(He left. Then came back.)", ""), say("Ok.")],
    ),
    Case(
        "a sad face is not an open bracket",
        "That's sad :( but ok. Next one.",
        [shown("That's sad :( but ok.", "That's sad but ok."), say("Next one.")],
    ),
    # ------------------------------------------------------------ expression tags
    Case(
        "bracket tag",
        "[joy] Hello there! How are you?",
        [say("Hello there!", "joy"), say("How are you?")],
    ),
    Case(
        "tags are case-insensitive",
        "[JOY] Yay! [Sadness] Oh no.",
        [say("Yay!", "joy"), say("Oh no.", "sadness")],
    ),
    Case(
        "tag with an intensity",
        "[surprise:0.5] Wow, you did it!",
        [say("Wow, you did it!", "surprise")],
    ),
    Case("tag after the last sentence", "Bye! [joy]", [say("Bye!"), say("", "joy")]),
    Case("tag inside a word gap", "I am so[joy]happy today.", [say("I am so happy today.", "joy")]),
    Case(
        "a feeling word the pack lacks becomes its nearest expression",
        "[laughs] That is funny. [sorrow] I miss you.",
        [say("That is funny.", "joy"), say("I miss you.", "sadness")],
    ),
    Case("a made-up tag is dropped", "[dance] Let's go!", [say("Let's go!")]),
    Case(
        "a long bracketed aside is shown, not spoken",
        "[laughs softly at you] Okay.",
        [shown("[laughs softly at you] Okay.", "Okay.")],
    ),
    Case(
        "zh feeling tag",
        "[开心] 太好了！[难过]我好想你。",
        [say("太好了！", "joy"), say("我好想你。", "sadness")],
    ),
    Case("zh full-width tag", "【惊讶】真的吗？", [say("真的吗？", "surprise")]),
    Case(
        "inline ACT tag",
        '<|ACT {"emotion": "joy"}|>Hello! Nice day.',
        [say("Hello!", "joy"), say("Nice day.")],
    ),
    Case(
        "inline ACT tag with an intensity",
        'Oh. <|ACT {"emotion": "Sadness", "intensity": 0.4}|> I miss you.',
        [say("Oh."), say("I miss you.", "sadness")],
    ),
    Case(
        "inline ACT tag of an unknown emotion is removed",
        'Hi <|ACT {"emotion": "dance"}|>there. Ok.',
        [say("Hi there."), say("Ok.")],
    ),
    Case(
        "both tag forms in one sentence",
        '[joy] Hi <|ACT {"emotion": "surprise"}|> there.',
        [say("Hi there.", "joy", "surprise")],
    ),
    Case(
        "a stray special token is removed",
        "All done.<|im_end|>",
        [say("All done.")],
    ),
    # ------------------------------------------------------------ thinking
    Case(
        "thinking then the answer",
        "<think>Greet them. Be brief.</think>Hello! Nice to see you.",
        [thought("Greet them."), thought("Be brief."), say("Hello!"), say("Nice to see you.")],
    ),
    Case("unclosed thinking", "<think>I wonder about this", [thought("I wonder about this")]),
    Case(
        "tags in thinking are not actions",
        "<think>Use [joy] here.</think>[joy] Yes!",
        [thought("Use [joy] here."), say("Yes!", "joy")],
    ),
    Case(
        "thinking is not cut at a comma",
        "<think>Well, I think that, yes.</think>Sure, I can help you, friend.",
        [thought("Well, I think that, yes."), say("Sure, I can help you,"), say("friend.")],
    ),
    # ------------------------------------------------------------ what is not spoken
    Case(
        "unclosed bracket",
        "I am [so happy. Really.",
        [shown("I am [so happy. Really.", "I am so happy. Really.")],
    ),
    Case(
        "markdown marks",
        "**Bold** and *it* with `code`. Done.",
        [shown("**Bold** and *it* with `code`.", "Bold and it with code."), say("Done.")],
    ),
    Case(
        "heading",
        "## Title\nSome text.",
        [shown("## Title", "Title"), say("Some text.")],
    ),
    Case(
        "code block",
        "Try this:\n```python\nprint(1)\n```\nDone.",
        [
            say("Try this:"),
            shown("```python", ""),
            shown("print(1)", ""),
            shown("```", ""),
            say("Done."),
        ],
    ),
    Case(
        "emoji",
        "Great job 🎉! I ❤️ it.",
        [shown("Great job 🎉!", "Great job!"), shown("I ❤️ it.", "I it.")],
    ),
    Case(
        "actions and asides",
        "*waves* Hello there (softly)!",
        [shown("*waves* Hello there (softly)!", "Hello there!")],
    ),
    Case("a price is spoken", "It costs $5 😊.", [shown("It costs $5 😊.", "It costs $5.")]),
    Case(
        "link",
        "Read [the docs](https://example.com/docs) now.",
        [shown("Read [the docs](https://example.com/docs) now.", "Read the docs now.")],
    ),
    Case(
        "HTML tags",
        "Press <b>Enter</b> now. Ok.",
        [shown("Press <b>Enter</b> now.", "Press Enter now."), say("Ok.")],
    ),
    Case("table row", "| a | b |", [shown("| a | b |", "a b")]),
    Case(
        "horizontal rule",
        "Done.\n---\nNext.",
        [say("Done."), shown("---", ""), say("Next.")],
    ),
    # ------------------------------------------------------------ Chinese and Japanese
    Case(
        "zh sentence marks",
        "你好！今天天气很好。我们去公园吧？",
        [say("你好！"), say("今天天气很好。"), say("我们去公园吧？")],
    ),
    Case("zh semicolon", "今天很好；明天也好。", [say("今天很好；"), say("明天也好。")]),
    Case("zh ellipsis", "嗯……我觉得可以。", [say("嗯……"), say("我觉得可以。")]),
    Case("zh ASCII ellipsis", "好的...我们走吧。", [say("好的..."), say("我们走吧。")]),
    Case(
        "zh doubled marks",
        "真的吗？！太好了！！",
        [say("真的吗？！"), say("太好了！！")],
    ),
    Case(
        "zh corner quotes",
        "他说：「你好！」然后走了。",
        [say("他说：「你好！」"), say("然后走了。")],
    ),
    Case("zh ASCII quotes", '他说："你好！"然后走了。', [say('他说："你好！"'), say("然后走了。")]),
    Case(
        "zh quote opening the next sentence",
        '他说完了。"好的"他说。',
        [say("他说完了。"), say('"好的"他说。')],
    ),
    Case(
        "zh first fragment cut at a comma",
        "好，今天天气真的很好，我们出去玩吧。",
        [say("好，今天天气真的很好，"), say("我们出去玩吧。")],
    ),
    Case("zh too short to cut", "好的，走吧。", [say("好的，走吧。")]),
    Case(
        "zh bracket tag",
        "你好！[joy]今天天气很好。",
        [say("你好！"), say("今天天气很好。", "joy")],
    ),
    Case(
        "zh inline ACT tag",
        '<|ACT {"emotion": "surprise"}|>哇！真的吗？',
        [say("哇！", "surprise"), say("真的吗？")],
    ),
    Case(
        "zh inline ACT tag of an unknown emotion",
        '好的<|ACT {"emotion": "跳舞"}|>，走吧。',
        [say("好的，走吧。")],
    ),
    Case(
        "zh thinking",
        "<think>用户在打招呼。</think>你好呀！",
        [thought("用户在打招呼。"), say("你好呀！")],
    ),
    Case("zh emoji", "太棒了🎉！", [shown("太棒了🎉！", "太棒了！")]),
    Case("zh aside", "好的（笑）。", [shown("好的（笑）。", "好的。")]),
    Case("zh decimal", "圆周率是3.14。很有趣。", [say("圆周率是3.14。"), say("很有趣。")]),
    Case("zh price", "这个要¥29.99。不贵吧？", [say("这个要¥29.99。"), say("不贵吧？")]),
    Case("zh markdown", "**重点**是这个。", [shown("**重点**是这个。", "重点是这个。")]),
    Case(
        "zh numbered list",
        "步骤：\n1. 混合面粉。\n2. 烘烤。",
        [say("步骤："), shown("1. 混合面粉。", "混合面粉。"), shown("2. 烘烤。", "烘烤。")],
    ),
    Case(
        "zh URL",
        "看这里https://x.org/a。好吗？",
        [shown("看这里https://x.org/a。", "看这里。"), say("好吗？")],
    ),
    Case(
        "zh unclosed bracket",
        "我觉得【很好。真的",
        [shown("我觉得【很好。真的", "我觉得很好。真的")],
    ),
    Case(
        "English and Chinese mixed",
        "Hello! 你好！How are you?",
        [say("Hello!"), say("你好！"), say("How are you?")],
    ),
    Case(
        "ja sentence marks",
        "こんにちは！元気ですか？はい、元気です。",
        [say("こんにちは！"), say("元気ですか？"), say("はい、元気です。")],
    ),
    Case("ja half-width full stop", "はい｡そうです｡", [say("はい｡"), say("そうです｡")]),
]

RANDOM_SEEDS = range(5)


def random_chunks(text: str, seed: str) -> list[str]:
    rng = random.Random(seed)
    chunks, at = [], 0
    while at < len(text):
        size = rng.randint(1, 8)
        chunks.append(text[at : at + size])
        at += size
    return chunks


async def run(tokens: list[str]) -> list[Output]:
    async def model() -> AsyncIterator[str]:
        for token in tokens:
            yield token

    return [
        (out.display_text, out.tts_text, out.actions.expressions)
        async for out in reply_pipeline(model())
    ]


def test_the_table_has_at_least_sixty_cases_in_english_and_chinese() -> None:
    assert len(CASES) >= 60
    assert len({case.name for case in CASES}) == len(CASES)
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in case.reply) for case in CASES) >= 20


table = pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])


@table
async def test_reply_as_one_token(case: Case) -> None:
    assert await run([case.reply]) == case.expected


@table
async def test_reply_one_character_a_token(case: Case) -> None:
    assert await run(list(case.reply)) == case.expected


@table
async def test_reply_in_random_chunks(case: Case) -> None:
    for seed in RANDOM_SEEDS:
        chunks = random_chunks(case.reply, f"{case.name}/{seed}")
        assert await run(chunks) == case.expected, chunks


# Every member of each abbreviation class, in the place it is used: each must carry the
# sentence on, and each must still end one before a word that starts a new sentence.
MONTHS = ["Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"]
BEFORE_A_NUMBER = ["No", "no", "Vol", "vol", "ch", "p", "pp", "approx", "fig", "Fig", "art"]
BEFORE_A_NAME = ["Mr", "Mrs", "Ms", "Mx", "Dr", "Prof", "Gen", "Sen", "Rev", "Capt", "Mt", "St"]


@pytest.mark.parametrize("word", MONTHS + BEFORE_A_NUMBER)
async def test_an_abbreviation_before_a_number_carries_the_sentence_on(word: str) -> None:
    reply = f"It is on {word}. 12 this time. Good."
    expected = [say(f"It is on {word}. 12 this time."), say("Good.")]
    assert await run([reply]) == expected
    assert await run(list(reply)) == expected


@pytest.mark.parametrize("word", BEFORE_A_NAME)
async def test_an_abbreviation_before_a_name_carries_the_sentence_on(word: str) -> None:
    reply = f"We met {word}. Parker there. Good."
    expected = [say(f"We met {word}. Parker there."), say("Good.")]
    assert await run([reply]) == expected
    assert await run(list(reply)) == expected


@pytest.mark.parametrize("word", [*MONTHS, "no", "fig", "art", "St", "Ave", "approx"])
async def test_an_abbreviation_still_ends_a_sentence_before_a_new_one(word: str) -> None:
    reply = f"It was {word}. Then we left."
    expected = [say(f"It was {word}."), say("Then we left.")]
    assert await run([reply]) == expected
    assert await run(list(reply)) == expected

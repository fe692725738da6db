"""The moment every user message carries for a model without a clock tool: the date,
the weekday, the time zone and the hour, in the words' language, the same whatever the
words ask (nothing reads them for what they ask)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from app.agent.moment import IN_CHINESE, TimeNotes, in_chinese, time_note
from app.llm import Msg, TextBlock


@pytest.fixture
def tokyo() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


AT = datetime(2026, 12, 7, 14, 5, tzinfo=UTC)  # 23:05 in Tokyo


def test_the_note_says_weekday_date_zone_and_hour_in_one_form(tokyo: None) -> None:
    note = time_note(AT)
    assert note == (
        "(Local time when I said this: Monday 7 December 2026, time zone JST, UTC+09:00, "
        "11:05 p.m.)"
    )
    assert "23:05" not in note  # one form of the hour: a small model mixes two


def test_a_chinese_note_for_chinese_words(tokyo: None) -> None:
    note = time_note(AT, chinese=True)
    assert "2026年12月7日 星期一" in note and "晚上11:05" in note and "UTC+09:00" in note


def test_every_message_gets_the_same_note_whatever_its_words_ask(tokyo: None) -> None:
    notes = TimeNotes()
    asked, told = (
        Msg.user(words, timestamp=AT)
        for words in ("What time is it in Tokyo tomorrow?", "I finally lost ten pounds!")
    )
    [a], [b] = notes.noted([asked]), notes.noted([told])
    assert a.text.replace(asked.text, "") == b.text.replace(told.text, "")
    assert a.text.endswith(asked.text)  # nothing after the words: no answer chosen for them


def test_chinese_words_are_asked_to_be_answered_in_chinese(tokyo: None) -> None:
    [noted] = TimeNotes().noted([Msg.user("你会唱歌吗？", timestamp=AT)])
    assert noted.text.endswith(IN_CHINESE) and "星期一" in noted.text
    assert in_chinese("你叫Tomas。") and not in_chinese("My cat is called 小白.")


def test_each_message_is_noted_once_and_the_stored_one_never_changes(tokyo: None) -> None:
    notes = TimeNotes()
    first = Msg.user("Hi", timestamp=AT)
    [noted] = notes.noted([first])
    assert notes.noted([first])[0] is noted  # the same copy: token counts stay cached
    assert first.text == "Hi" and noted.text.endswith("\n\nHi")


def test_tool_results_and_messages_in_blocks_keep_their_form(tokyo: None) -> None:
    result = Msg.tool_result("1", "ok", name="t")
    image = Msg.user([TextBlock(text="What is this?"), TextBlock(text="(a picture)")], timestamp=AT)
    kept, noted = TimeNotes().noted([result, image])
    assert kept is result
    assert isinstance(noted.content, list) and isinstance(noted.content[1], TextBlock)
    assert "time zone" in noted.content[0].text and noted.content[1].text == "What is this?"

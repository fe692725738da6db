"""The moment, told to a model that has no clock tool (the embedded one).

Every new user message carries the local date, weekday, time and time zone, written
before its words: the model reads the moment in
general form, and answers what it is asked about it (the time, the day, "tomorrow",
how long until the weekend) in its own words. Nothing here reads what the words ask:
the note is the same whatever they say.

Not the system prompt: a time there would change the prompt's beginning every minute and
make a local model read the whole conversation again each turn; here only the previous
turn is read again (it is sent without its note from then on). Before the words, the
time line is read ahead with the rest of the message's start (`app.agent.read_ahead`),
so the words are left to read at the turn, not 30 tokens of time more (about 0.45 s on
2 cores); the minute comes last, so a minute passed since costs only its own few tokens.

The note is in the language the words are written in (after Chinese words an English
note made the embedded model answer "你会唱歌吗？" in English, 5 runs of 7), and words in
Chinese end with a line that asks for the answer in Chinese (the character's prompt is
English: "你会唱歌吗？" as a conversation's first words was answered "Yes, I can sing!").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.llm import Msg, Role, TextBlock
from app.own_words import HAN_CHAR, KANA_OR_HANGUL

__all__ = ["IN_CHINESE", "TimeNotes", "in_chinese", "time_note"]

_CACHE_LIMIT = 20_000
_WEEKDAYS_ZH = "一二三四五六日"
IN_CHINESE = "（你只用中文回答。）"


def _clock(local: datetime) -> str:
    """The hour as it is said: "7:08 p.m." (never "19:08 p.m.": given the time two ways,
    a 1.5B model said "19:08 p.m.")."""
    return f"{local.hour % 12 or 12}:{local:%M} {'a.m.' if local.hour < 12 else 'p.m.'}"


def _zone(local: datetime) -> str:
    """The time zone as a model can use it: its name and its offset ("CET, UTC+01:00")."""
    offset = local.strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    name = local.tzname() or ""
    return (
        offset if not name or name == "UTC" or name.startswith(("+", "-")) else f"{name}, {offset}"
    )


def time_note(moment: datetime, chinese: bool = False) -> str:
    """`moment` in the computer's time zone, as the model reads it before the words: the
    weekday, the date, the time zone, then the hour (the minute last: read ahead, only
    it changes from one minute to the next)."""
    local = moment.astimezone()
    if chinese:
        weekday = _WEEKDAYS_ZH[local.weekday()]
        hour = local.hour if local.hour == 0 else local.hour % 12 or 12
        return (
            f"（我说这句话时的本地时间：{local.year}年{local.month}月{local.day}日 星期{weekday}，"
            f"时区{_zone(local)}，{_part_of_day_zh(local.hour)}{hour}:{local:%M}。）"
        )
    return (
        f"(Local time when I said this: {local:%A} {local.day} {local:%B %Y}, time zone "
        f"{_zone(local)}, {_clock(local)})"
    )


def _part_of_day_zh(hour: int) -> str:
    return (
        "凌晨"
        if hour < 5
        else "早上"
        if hour < 9
        else "上午"
        if hour < 12
        else "中午"
        if hour < 13
        else "下午"
        if hour < 18
        else "晚上"
    )


def in_chinese(text: str) -> bool:
    """Whether `text` is written in Chinese: Han characters, more of them than Latin
    words, and no kana ("你叫Tomas。" is; "My cat is called 小白." and Japanese are not)."""
    han = len(HAN_CHAR.findall(text))
    if not han or KANA_OR_HANGUL.search(text):
        return False
    return han > len(re.findall(r"[A-Za-z]+", text))


@dataclass(slots=True)
class TimeNotes:
    """User messages with their notes; each noted copy is made once and kept, so token
    estimates cached by message identity keep working."""

    _noted: dict[int, tuple[Msg, Msg]] = field(default_factory=dict)

    def noted(self, messages: Sequence[Msg], earlier: Sequence[Msg] = ()) -> list[Msg]:
        """`messages` (a turn's), each user message with its notes: the time line, the
        words, and the line that asks for Chinese after Chinese words. `earlier` is the
        conversation before them (an empty message's time is in the language of the last
        one)."""
        told = [m.text for m in earlier if m.role == Role.USER and not m.tool_results]
        before = told[-1] if told else ""
        out = []
        for msg in messages:
            if msg.role == Role.USER and not msg.tool_results:
                out.append(self._note(msg, before))
            else:
                out.append(msg)
        return out

    def _note(self, msg: Msg, before: str) -> Msg:
        cached = self._noted.get(id(msg))
        if cached is not None and cached[0] is msg:
            return cached[1]
        if len(self._noted) > _CACHE_LIMIT:
            self._noted.clear()
        words = msg.text
        start = time_note(msg.timestamp, in_chinese(words or before))
        after = IN_CHINESE if words and in_chinese(words) else ""
        if isinstance(msg.content, str):
            content: str | list = "\n\n".join(p for p in [start, msg.content, after] if p)
        else:
            tail = [TextBlock(text=after)] if after else []
            content = [TextBlock(text=start), *msg.content, *tail]
        copy = msg.model_copy(update={"content": content})
        self._noted[id(msg)] = (msg, copy)
        return copy

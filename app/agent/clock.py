"""The local date and time told to a model that has no clock tool (the embedded one).

The new user message carries the time, written after its words. Not the system prompt:
a time there would change the prompt's beginning every minute and make a local model
read the whole conversation again each turn; here only the previous turn is read again
(it is sent without its note from then on). Not every message either: a small model
given a note in each one starts writing notes of its own, and apologising for the date.

A 1.5B model given only the time may still not answer with it when asked (a memory
note in front of the words, a question worded as speech recognition writes it: "can you
tell me what time it is right now"). So when the words ask the time, the date, the day
or the part of the day (`asked_about_time`, English and Chinese), the note says what to
answer; and a sum the words ask is worked out by the app and given in the same note
(`app.agent.arithmetic`). Those lines are only there when asked: the note the model
reads at the turn stays short otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.agent.arithmetic import asked_sums, sum_line
from app.llm import Msg, Role, TextBlock

__all__ = ["TimeNotes", "asked_about_time", "time_note", "turn_note"]

_CACHE_LIMIT = 20_000

# What the words ask: "time" (the hour), "date" (the day, month, year or weekday),
# "part" (morning, afternoon ...). Matched on lower case without apostrophes, so
# speech recognition's "whats the time" and a typed "What's the time?" are one.
_ASKED: dict[str, re.Pattern[str]] = {
    "time": re.compile(
        r"\btime is it\b|\bwhat time it is\b|\bwhat is the (?:current )?time\b"
        r"|\b(?:tell|give|know|have|got|say|check)(?: me| us)? the (?:current |exact )?time\b"
        r"|\bcurrent time\b|\bthe time (?:right )?now\b|\bwhat time now\b|^\W*what time\W*$"
        r"|\bwhat hour\b|\bhow late is it\b"
        r"|几点|几时了|什么时间|现在的?时间|时间是多少"
    ),
    "date": re.compile(
        r"\bwhat is (?:the |todays? |the current )?date\b|\b(?:todays|the current) date\b"
        r"|\bthe date (?:today|now)\b|\bwhat date\b"
        r"|\b(?:tell|give|know|have|got)(?: me)? the date\b"
        r"|\bwhat day (?:is (?:it|today)|of the (?:week|month)|today)\b|^\W*what day\W*$"
        r"|\bwhich day is (?:it|today)\b|\bwhat (?:month|year) is it\b"
        r"|\bis (?:it|today) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
        r"|几号|几月几[日号]|星期几|周几|礼拜几|什么日子|是哪一?天|今天.{0,3}日期|是哪一?年"
    ),
    "part": re.compile(
        r"\bis it (?:the )?(?:morning|afternoon|evening|night|day|daytime)\b"
        r"|\b(?:morning|afternoon|evening|night) or (?:the )?(?:morning|afternoon|evening|night)\b"
        r"|\bwhat part of the day\b|\bwhat time of (?:the )?day\b"
        r"|(?:上午|下午|晚上|早上)还是"
    ),
}
_WEEKDAYS_ZH = "一二三四五六日"


def asked_about_time(text: str) -> set[str]:
    """What of the time `text` asks: a subset of {"time", "date", "part"}."""
    low = text.lower().replace("’", "").replace("'", "")
    low = re.sub(r"\bwhats\b", "what is", re.sub(r"\s+", " ", low).strip())
    return {kind for kind, pattern in _ASKED.items() if pattern.search(low)}


def time_note(moment: datetime) -> str:
    """`moment` in the computer's time zone, as the model reads it."""
    local = moment.astimezone()
    hour12 = local.hour % 12 or 12
    half = "a.m." if local.hour < 12 else "p.m."
    return (
        f"(Local time when I said this: {local:%H:%M} ({hour12}:{local:%M} {half}), "
        f"{local:%A} {local.day} {local:%B %Y}.)"
    )


def _part_of_day(hour: int, chinese: bool) -> str:
    if chinese:
        return (
            "凌晨" if hour < 5 else "早上" if hour < 9 else "上午" if hour < 12
            else "中午" if hour < 13 else "下午" if hour < 18 else "晚上"
        )
    return (
        "night" if hour < 5 else "morning" if hour < 12 else "afternoon" if hour < 17
        else "evening" if hour < 21 else "night"
    )


def _answer(moment: datetime, asked: set[str], chinese: bool) -> str:
    """What to answer, in the words' language, for what they asked of the time."""
    local = moment.astimezone()
    hour12 = local.hour % 12 or 12
    if chinese:
        said = []
        clock = f"{_part_of_day(local.hour, True)}{hour12}点{local.minute:02d}分"
        if "date" in asked:
            weekday = _WEEKDAYS_ZH[local.weekday()]
            said.append(f"今天是{local.year}年{local.month}月{local.day}日，星期{weekday}")
        if "time" in asked or "part" in asked:
            said.append(f"现在是{clock}（{local:%H:%M}）")
        return f"我在问这个，这样回答我：{'，'.join(said)}。"
    half = "a.m." if local.hour < 12 else "p.m."
    said = []
    if "time" in asked:
        said.append(f"it is {hour12}:{local:%M} {half}")
    if "date" in asked:
        said.append(f"today is {local:%A} {local.day} {local:%B %Y}")
    if "part" in asked:
        said.append(f"it is {_part_of_day(local.hour, False)} now")
    return f"I am asking you this: tell me {' and '.join(said).rstrip('.')}."


def turn_note(moment: datetime, text: str) -> str:
    """The note after the new message's words `text`, said at `moment`: the local time;
    what to answer when the words ask the time or the date; the sums they ask, worked
    out."""
    chinese = bool(re.search(r"[\u4e00-\u9fff]", text))
    note = time_note(moment)
    asked = asked_about_time(text)
    if asked:
        note = f"{note[:-1]} {_answer(moment, asked, chinese)})"
    sums = asked_sums(text)
    if sums:
        note = f"{note}\n{sum_line(sums, chinese=chinese)}"
    return note


@dataclass(slots=True)
class TimeNotes:
    """User messages with their time note; each noted copy is made once and kept, so
    token estimates cached by message identity keep working."""

    _noted: dict[int, tuple[Msg, Msg]] = field(default_factory=dict)

    def noted(self, messages: Sequence[Msg]) -> list[Msg]:
        return [self._note(msg) for msg in messages]

    def _note(self, msg: Msg) -> Msg:
        if msg.role != Role.USER or msg.tool_results:
            return msg
        cached = self._noted.get(id(msg))
        if cached is not None and cached[0] is msg:
            return cached[1]
        if len(self._noted) > _CACHE_LIMIT:
            self._noted.clear()
        note = turn_note(msg.timestamp, msg.text)
        if isinstance(msg.content, str):
            content: str | list = f"{msg.content}\n\n{note}" if msg.content else note
        else:
            content = [*msg.content, TextBlock(text=note)]
        copy = msg.model_copy(update={"content": content})
        self._noted[id(msg)] = (msg, copy)
        return copy

"""The local date and time told to a model that has no clock tool (the embedded one).

The new user message carries the time, written before its words (after the long-term
memory's note), and the answer lines after the words. Not the system prompt: a time
there would change the prompt's beginning every minute and make a local model read the
whole conversation again each turn; here only the previous turn is read again (it is
sent without its notes from then on). Before the words, the time line is read ahead
with the rest of the message's start (`app.agent.read_ahead`), so the words are left
to read at the turn, not 25 tokens of time more (about 0.45 s on 2 cores); the minute
comes last, so a minute passed since costs only its own few tokens (the memory's note
comes before it: first, a new minute made the model read the whole note again). Not
every message either: a small model given a note in each one starts writing notes of
its own, and apologising for the date.

A 1.5B model given only the time may still not answer with it when asked (a memory
note in front of the words, a question worded as speech recognition writes it: "can you
tell me what time it is right now"). So when the words ask the time, the date, the day
or the part of the day (`asked_about_time`, English and Chinese), the note gives the
sentence to answer with, said to the user in one form ("It's 7:08 p.m.": given the time
two ways, the model said "I'm currently 19:08 p.m."); a sum the words ask is worked out
by the app and given the same way (`app.agent.arithmetic`); what they told earlier in
the conversation, when they ask for it (`app.agent.told_before`); the face that answers
a feeling they say (`app.agent.feelings`: a 1.5B model answered a nervous user with
`[anger]`); and, for a sum speech recognition misheard ("What is it? Time six."), to
ask back. Those lines are only there when called for: the note the model reads at the
turn stays short otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.agent.arithmetic import asked_sums, misheard_sum, said_sums, sum_line
from app.agent.feelings import feeling_in, feeling_line, feeling_start
from app.agent.notes import memory_note_start
from app.agent.parting import parting_start
from app.agent.told_before import (
    asks_recall,
    recall_answer,
    recall_line,
    telling_line,
    telling_start,
    unknown_start,
)
from app.llm import Msg, Role, TextBlock

__all__ = [
    "TimeNotes", "answer_lines", "asked_about_time", "reply_start", "time_answer", "time_note",
    "turn_note",
]

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
        # tiny.en's "What day of the week is it today?" in espeak-ng's en-gb voice: "What
        # made on the week it's today?", "What made the weak is it today?", with "today"
        # itself misheard in a short window: "What may of the week is to nay?" (a weekday
        # said when something else was asked costs one sentence; a guess costs trust)
        r"|^\W*what\b[^.?!]{0,30}(?<!\bmy )(?<!\bthis )(?<!\bnext )(?<!\blast )"
        r"(?<!\byour )\b(?:week|weak|weekend)\b[^.?!]{0,12}\b(?:today|tonight|to ?nay)\s*\?*\s*$"
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


def _clock(local: datetime) -> str:
    """The hour as it is said: "7:08 p.m." (never "19:08 p.m.")."""
    return f"{local.hour % 12 or 12}:{local:%M} {'a.m.' if local.hour < 12 else 'p.m.'}"


def time_note(moment: datetime, chinese: bool = False) -> str:
    """`moment` in the computer's time zone, as the model reads it: one form of the hour
    only (given "19:08 (7:08 p.m.)", a 1.5B model said "19:08 p.m."), in the language
    of the words it follows (after Chinese words an English note made the embedded
    model answer "你会唱歌吗？" in English, 5 runs of 7; in Chinese it answered in Chinese)."""
    local = moment.astimezone()
    if chinese:
        hour12 = _hour_zh(local.hour)
        weekday = _WEEKDAYS_ZH[local.weekday()]
        return (
            f"（我说这句话时的本地时间：{local.year}年{local.month}月{local.day}日 星期{weekday} "
            f"{_part_of_day(local.hour, True)}{hour12}:{local:%M}。）"
        )
    return f"(Local time when I said this: {local:%A} {local.day} {local:%B %Y}, {_clock(local)})"


def _hour_zh(hour: int) -> int:
    """The hour as Chinese says it after the part of the day: 凌晨0点, 下午2点."""
    return hour if hour == 0 else hour % 12 or 12


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


def time_answer(moment: datetime, asked: set[str], chinese: bool = False) -> str:
    """The sentence that answers what the words asked of the time, said to the one who
    asked: "It's 7:08 p.m.", "It's Thursday, 3 December 2026.", "现在是晚上7点08分。"."""
    local = moment.astimezone()
    if chinese:
        hour12 = _hour_zh(local.hour)
        said = []
        if "date" in asked:
            weekday = _WEEKDAYS_ZH[local.weekday()]
            said.append(f"今天是{local.year}年{local.month}月{local.day}日，星期{weekday}")
        if "time" in asked or "part" in asked:
            said.append(f"现在是{_part_of_day(local.hour, True)}{hour12}点{local.minute:02d}分")
        return "，".join(said) + "。"
    day = f"{local:%A}, {local.day} {local:%B %Y}"
    if "time" in asked and "date" in asked:
        return f"It's {_clock(local)} on {day}."
    said = []
    if "time" in asked:
        said.append(_sentence(f"It's {_clock(local)}"))
    elif "part" in asked:
        said.append(_sentence(f"It's {_part_of_day(local.hour, False)} now, {_clock(local)}"))
    if "date" in asked:
        said.append(f"It's {day}.")
    return " ".join(said)


# After an English conversation a Chinese question's line "（我在问时间。这样回答我：“…”）"
# was answered in English without the time, 8 hours of 11; told to answer only in
# Chinese and to say that one sentence, 12 of 12 (the answer lines of the sums and of
# what the user told before are said the same way).
IN_CHINESE = "你只用中文回答"
ANSWER_ZH = f"（我用中文问你。{IN_CHINESE}，就说这一句："


def _answer_line(answer: str, chinese: bool) -> str:
    if chinese:
        return f"{ANSWER_ZH}“[neutral] {answer}”）"
    return f'(I am asking you this. Answer me with: "[neutral] {answer}")'


# Speech recognition mishears: "what is eight times six" came as "What is it? Time six."
# and was answered with the time; told only that it "may" have misheard, the model still
# answered with the time. Given the sentence, it asks back.
MISHEARD_SAY = "[thinking] Sorry, I didn't catch that. Could you say it again?"
MISHEARD_SAY_ZH = "[thinking] 抱歉，我没听清楚，你能再说一遍吗？"
MISHEARD = (
    '(I said "{words}": you heard my words wrong, they ask nothing you can answer (not '
    'the time either). Answer me with: "' + MISHEARD_SAY + '")'
)
MISHEARD_ZH = (
    "（我说的是“{words}”：你听错了我的话，这句话没法回答（也不是问时间）。你只用中文回答，"
    "就说这一句：“" + MISHEARD_SAY_ZH + "”）"
)


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _chinese(text: str) -> bool:
    """Whether `text` is said in Chinese: Han characters, more of them than Latin words,
    and no kana ("你叫Tomas。" is; "My cat is called 小白." and Japanese are not)."""
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    if not han or re.search(r"[\u3040-\u30ff]", text):
        return False
    return han > len(re.findall(r"[A-Za-z]+", text))


def heard_wrong(text: str) -> bool:
    """Whether `text` is a sum speech recognition misheard, to be asked back ("What is
    it? Time six."): it asks no time, no sum and nothing told before."""
    return bool(
        text and misheard_sum(text) and not asked_about_time(text)
        and not asked_sums(text) and not asks_recall(text)
    )


def answer_lines(moment: datetime, text: str, earlier: Sequence[str] = ()) -> list[str]:
    """The lines after the new message's words `text`, said at `moment` (after the
    user's `earlier` messages in this conversation, oldest first): only what the words
    call for: the sentence that answers the time or the date they ask; the sentence
    that answers the sums they ask, worked out; what they told before, when they ask for
    it (`app.agent.told_before`); the face that answers the feeling they say
    (`app.agent.feelings`)."""
    chinese = _chinese(text)
    lines = []
    asked = asked_about_time(text)
    if asked:
        lines.append(_answer_line(time_answer(moment, asked, chinese), chinese))
    sums = asked_sums(text)
    if sums:
        lines.append(sum_line(sums, chinese=chinese))
    if asked or sums:
        return lines
    feeling = feeling_in(text)
    if asks_recall(text):
        lines.append(recall_line(text, earlier, chinese=chinese))
    elif misheard_sum(text):
        # quoted, and "not the time": once, with the time line just before the words,
        # "What is it? Time six." was answered "It's 2:50 p.m."
        lines.append((MISHEARD_ZH if chinese else MISHEARD).format(words=text.strip()))
    elif (feeling is None or feeling.happy) and (
        telling := telling_line(text, chinese=chinese)
    ):
        # its cheerful "Oh, ...!" is not for a sad or worried user; for a happy one it
        # is the face's line too ("I love rainy days": "[joy] Oh, you love rainy days!")
        lines.append(telling)
        feeling = None
    if feeling is not None:
        lines.append(feeling_line(feeling, chinese=chinese))
    if chinese and not any(IN_CHINESE in line for line in lines):
        # "你会唱歌吗？" as a conversation's first words was answered "Yes, I can sing!"
        # (the character's prompt is English; the Chinese time note was not enough)
        lines.append(f"（{IN_CHINESE}。）")
    return lines


def reply_start(
    moment: datetime, text: str, earlier: Sequence[str] = (), memory: str = ""
) -> str:
    """How the reply to the words `text` (said at `moment`, after the user's `earlier`
    messages) begins when the app already knows it, with its face: the sentence the
    answer lines give to say ("[neutral] It's 4:13 p.m.", "[neutral] 12 plus 7 is 19.",
    "[joy] Of course! Your name is Tomas.", asking back words heard wrong, greeting a
    name told, saying a name asked for was never told: `told_before.unknown_start`);
    a feeling acknowledged ("[sadness] I'm sorry to hear that.": `feelings.feeling_start`);
    thanks or a goodbye answered ("[joy] You're welcome! Bye for now!": `parting`);
    "" when the model is to find its own words and face. `earlier` holds the long-term memory's
    note `memory` first, when there is one.

    The embedded model is given this as the start of its reply (`LLMRequest.reply_start`)
    and goes on from it, so it is heard at once: decoding it took the 1.5B model 1.2-1.4 s
    on 2 cores after it had read the prompt."""
    chinese = _chinese(text)
    asked, sums = asked_about_time(text), asked_sums(text)
    if asked or sums:
        said = [time_answer(moment, asked, chinese)] if asked else []
        if sums:
            said.append(said_sums(sums, chinese=chinese))
        return "[neutral] " + ("" if chinese else " ").join(said)
    if asks_recall(text):
        told = list(earlier)[1:] if memory else earlier
        return recall_answer(text, earlier, chinese=chinese) or unknown_start(
            text, told, memory, chinese=chinese
        )
    if misheard_sum(text):
        return MISHEARD_SAY_ZH if chinese else MISHEARD_SAY
    parting = parting_start(text, chinese=chinese)
    if parting:
        return parting
    feeling = feeling_in(text)
    telling = telling_start(text, chinese=chinese) if feeling is None or feeling.happy else ""
    if telling or feeling is None:
        return telling
    # The feeling's face and a few words for it: the model's words follow them.
    return feeling_start(feeling, text, len(earlier), chinese=chinese)


def turn_note(moment: datetime, text: str, earlier: Sequence[str] = ()) -> str:
    """The time line (in the words' language; none for words heard wrong) and the
    answer lines (`answer_lines`) of the new message's words `text`, one per line."""
    time_line = [] if heard_wrong(text) else [time_note(moment, _chinese(text))]
    return "\n".join([*time_line, *answer_lines(moment, text, earlier)])


@dataclass(slots=True)
class TimeNotes:
    """User messages with their notes; each noted copy is made once and kept, so token
    estimates cached by message identity keep working."""

    _noted: dict[int, tuple[Msg, str, Msg]] = field(default_factory=dict)

    def noted(
        self, messages: Sequence[Msg], earlier: Sequence[Msg] = (), memory: str = ""
    ) -> list[Msg]:
        """`messages` (a turn's), each user message with its notes: the long-term
        memory's note `memory` (the first one only), the time line, the words, the answer
        lines. `earlier` is the conversation before them; what the user told in it or
        in `memory` can be asked back."""
        said = [memory] if memory else []
        told = [m.text for m in earlier if m.role == Role.USER and not m.tool_results]
        before = told[-1] if told else ""  # an empty message's time: in the last one's language
        out = []
        for msg in messages:
            if msg.role == Role.USER and not msg.tool_results:
                out.append(self._note(msg, [*said, *told], before, memory))
                memory = ""
            else:
                out.append(msg)
        return out

    def reply_start(
        self, messages: Sequence[Msg], earlier: Sequence[Msg] = (), memory: str = ""
    ) -> str:
        """How the reply to a turn's `messages` begins when the app knows it
        (`reply_start`): only while the turn is the user's message alone (after a tool's
        result the model finds its own words)."""
        if len(messages) != 1 or messages[0].role != Role.USER or messages[0].tool_results:
            return ""
        msg = messages[0]
        said = [memory] if memory else []
        told = [m.text for m in earlier if m.role == Role.USER and not m.tool_results]
        return reply_start(msg.timestamp, msg.text, [*said, *told], memory)

    def _note(self, msg: Msg, said: list[str], before: str, memory: str) -> Msg:
        cached = self._noted.get(id(msg))
        if cached is not None and cached[0] is msg and cached[1] == memory:
            return cached[2]
        if len(self._noted) > _CACHE_LIMIT:
            self._noted.clear()
        words = msg.text
        start = [memory_note_start(memory)] if memory else []
        lines = answer_lines(msg.timestamp, words, said)
        if not heard_wrong(words):
            # Words heard wrong get no time: with the time just before "What is it? Time
            # six." the model said the time (at 12:37 and 9:37 of 6 hours swept).
            start.append(time_note(msg.timestamp, _chinese(words or before)))
        answers = "\n".join(lines)
        if isinstance(msg.content, str):
            content: str | list = "\n\n".join(p for p in [*start, msg.content, answers] if p)
        else:
            after = [TextBlock(text=answers)] if answers else []
            content = [TextBlock(text="\n\n".join(start)), *msg.content, *after]
        copy = msg.model_copy(update={"content": content})
        self._noted[id(msg)] = (msg, memory, copy)
        return copy

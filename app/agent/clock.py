"""The local date and time told to a model that has no clock tool (the embedded one).

The new user message carries the time, written after its words. Not the system prompt:
a time there would change the prompt's beginning every minute and make a local model
read the whole conversation again each turn; here only the previous turn is read again
(it is sent without its note from then on). Not every message either: a small model
given a note in each one starts writing notes of its own, and apologising for the date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.llm import Msg, Role, TextBlock

__all__ = ["TimeNotes", "time_note"]

_CACHE_LIMIT = 20_000


def time_note(moment: datetime) -> str:
    """`moment` in the computer's time zone, as the model reads it."""
    local = moment.astimezone()
    hour12 = local.hour % 12 or 12
    half = "a.m." if local.hour < 12 else "p.m."
    return (
        f"(Local time when I said this: {local:%H:%M} ({hour12}:{local:%M} {half}), "
        f"{local:%A} {local.day} {local:%B %Y}.)"
    )


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
        note = time_note(msg.timestamp)
        if isinstance(msg.content, str):
            content: str | list = f"{msg.content}\n\n{note}" if msg.content else note
        else:
            content = [*msg.content, TextBlock(text=note)]
        copy = msg.model_copy(update={"content": content})
        self._noted[id(msg)] = (msg, copy)
        return copy

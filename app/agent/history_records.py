"""What a history file may hold: the one rule for conversation ids, and the schema of
each line (`add` a message, `amend` message `index`, `meta` a new title), so a line
that does not fit is found when it is read, never later in the middle of a turn.

`parse_line` reads one line into a record or says why it cannot (`BadRecord`); a
line that parses is safe to use: its values have the types the app reads, its
numbers are finite and it nests no deeper than `MAX_DEPTH`. `replay_line` applies
lines one by one to a `Replay` (an `amend` of a message that is not there is a bad
line too).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from typing_extensions import TypedDict  # pydantic reads only this one on Python < 3.12

from app.llm import Msg

__all__ = [
    "MAX_DEPTH",
    "TITLE_CHARS",
    "AddRecord",
    "AmendRecord",
    "BadRecord",
    "MetaRecord",
    "Record",
    "Replay",
    "check_id",
    "is_app_id",
    "parse_line",
    "replay_line",
]

MAX_DEPTH = 64  # far deeper than any message the app writes (a tool's input included)
TITLE_CHARS = 120
ID_CHARS = 100

# Letters, digits, `_`, `-` and inner dots; never `.`/`..`, a hidden name, a name that
# Windows trims (a trailing dot) or reserves (CON, NUL, COM1, ...), or a path.
_ID = re.compile(rf"^[A-Za-z0-9_-](?:[A-Za-z0-9_.-]{{0,{ID_CHARS - 2}}}[A-Za-z0-9_-])?$")
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
# The ids the app makes (`storage._new_uid`): they sort in the order they were made.
_APP_ID = re.compile(r"^\d{8}-\d{12}-[0-9a-f]{6}$")


def check_id(uid: object, what: str = "conversation") -> str:
    """`uid` if it is a valid id, else `ValueError` in words (the one rule everywhere)."""
    if not isinstance(uid, str) or not _ID.match(uid) or _RESERVED.match(uid):
        shown = repr(uid) if len(repr(uid)) <= 40 else repr(uid)[:37] + "..."
        raise ValueError(
            f"{shown} is not a {what} id: ids are 1 to {ID_CHARS} letters, digits, "
            "'_', '-' or inner dots"
        )
    return uid


def is_app_id(uid: str) -> bool:
    """Whether `uid` has the form of the ids the app makes (a time stamp, then a tail)."""
    return bool(_APP_ID.match(uid))


class _KnownMetadata(TypedDict, total=False):
    """The metadata keys the app itself reads back, with the types it expects."""

    image_summaries: dict[StrictStr, StrictStr]
    interrupted: StrictBool
    heard: StrictStr
    error: StrictStr
    provider: StrictStr


_METADATA = TypeAdapter(_KnownMetadata)


class _MessageRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    msg: Msg

    @model_validator(mode="after")
    def _metadata_is_readable(self) -> _MessageRecord:
        _METADATA.validate_python(self.msg.metadata)
        return self


class AddRecord(_MessageRecord):
    op: Literal["add"] = "add"


class AmendRecord(_MessageRecord):
    op: Literal["amend"]
    index: StrictInt  # negative counts from the end, as in Python


class MetaRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    op: Literal["meta"]
    title: StrictStr

    @property
    def clean_title(self) -> str | None:
        """The title on one line and cut to `TITLE_CHARS` (None when empty)."""
        title = " ".join(self.title.split())[:TITLE_CHARS]
        return title or None


Record = Annotated[AddRecord | AmendRecord | MetaRecord, Field(discriminator="op")]
_RECORD: TypeAdapter[AddRecord | AmendRecord | MetaRecord] = TypeAdapter(Record)


class BadRecord(ValueError):
    """A line that is not a valid record; the message says why, in a few words."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadRecord(f"the number {text[:20]} is too large")
    return value


def _refuse_constant(name: str) -> float:
    raise BadRecord(f"{name} is not a number a record may hold")


def _too_deep(value: Any) -> bool:
    """Whether `value` nests deeper than `MAX_DEPTH` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_line(raw: bytes) -> AddRecord | AmendRecord | MetaRecord:
    """One line of a history file as a record; `BadRecord` when it is not one."""
    try:
        data = json.loads(raw, parse_float=_finite, parse_constant=_refuse_constant)
    except BadRecord:
        raise
    except RecursionError:
        raise BadRecord("it nests too deeply") from None
    except ValueError as exc:  # also UnicodeDecodeError; big ints too (ValueError)
        raise BadRecord(f"it is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadRecord(f"it is a JSON {type(data).__name__}, not a record")
    if _too_deep(data):
        raise BadRecord(f"it nests deeper than {MAX_DEPTH} levels")
    data.setdefault("op", "add")  # the first files had no `op` on messages
    try:
        record = _RECORD.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadRecord(f"{where}: {first['msg']}" if where else first["msg"]) from None
    except RecursionError:
        raise BadRecord("it nests too deeply") from None
    if b"\\ud" in raw or b"\\uD" in raw:
        # An escaped lone surrogate parses into a string no file or server can take.
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BadRecord("it holds text that is not valid Unicode") from None
    return record


@dataclass(slots=True)
class Replay:
    """A history file read line by line: the conversation it holds, the lines that
    were kept and why each left-out line could not be used."""

    messages: list[Msg] = field(default_factory=list)
    title: str | None = None
    good: list[bytes] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)


def replay_line(replay: Replay, line: bytes) -> str | None:
    """Apply one line to `replay`; why it cannot be used, or None (blank lines too)."""
    if not line.strip():
        return None
    try:
        record = parse_line(line)
    except BadRecord as exc:
        return str(exc)
    if isinstance(record, MetaRecord):
        replay.title = record.clean_title
    elif isinstance(record, AmendRecord):
        messages = replay.messages
        if not -len(messages) <= record.index < len(messages):
            return f"it changes message {record.index}, and there are {len(messages)}"
        messages[record.index] = record.msg
    else:
        replay.messages.append(record.msg)
    return None

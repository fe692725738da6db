"""Damaged history files, generated: cut short, garbage between lines, a wrong type in
any field of any record, values nested absurdly deep. Whatever the damage, the app
starts, every turn the damage did not touch is kept in order, and what the user is
told is one line naming the conversation."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.agent.history_records import BadRecord, parse_line
from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.llm import ImageBlock, ImageFileRef, Msg, TextBlock, ToolUseBlock
from app.session import VoiceSession

CONF = "default"
UID = "20240101-120000000000-abcdef"

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

words = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@st.composite
def messages(draw: st.DrawFn) -> Msg:
    kind = draw(st.sampled_from(["user", "assistant", "tool_call", "image"]))
    text = draw(words)
    if kind == "user":
        return Msg.user(text, sender="user", metadata={"note": text})
    if kind == "assistant":
        return Msg.assistant(text, metadata={"interrupted": draw(st.booleans()), "heard": text})
    if kind == "tool_call":
        call = ToolUseBlock(name="clock", input={"zone": text, "n": [1, {"a": None}]}, id="c1")
        return Msg.assistant([TextBlock(text=text), call])
    ref = ImageFileRef(path=Path("/nowhere/p1.png"), mime_type="image/png", width=4, height=4)
    image = ImageBlock(original=ref, model=ref, name="p1")
    return Msg.user([TextBlock(text=text), image], metadata={"image_summaries": {"p1": text}})


conversations = st.lists(messages(), min_size=1, max_size=6)

# Any JSON value, nested a little (the wrong type for a field is drawn from these).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | words,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
    max_leaves=8,
)


def write(root: Path, msgs: list[Msg], title: str) -> tuple[Path, list[bytes]]:
    """The conversation as the app writes it: the messages, what the user heard of the
    last one (an amend) and a title; the file and its lines."""
    store = FileStorage(root)
    store.append(CONF, UID, msgs)
    store.amend_last(CONF, UID, Msg.assistant("what was heard", metadata={"heard": "it"}))
    store.rename_history(CONF, UID, title)
    path = root / CONF / f"{UID}.jsonl"
    return path, path.read_bytes().split(b"\n")[:-1]


@contextlib.contextmanager
def written(msgs: list[Msg], title: str) -> Iterator[tuple[Path, Path, list[bytes]]]:
    """A fresh data folder holding the conversation: (folder, file, its lines)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        yield (root, *write(root, msgs, title))


def replay(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a file of these (valid) records holds, worked out here, not by the app."""
    out: list[Msg] = []
    for record in records:
        msg = Msg.model_validate(record["msg"]) if "msg" in record else None
        if record.get("op", "add") == "add" and msg is not None:
            out.append(msg)
        elif (
            record.get("op") == "amend"
            and msg is not None
            and -len(out) <= record["index"] < len(out)
        ):
            out[record["index"]] = msg
    return dumped(out)


def valid(line: bytes) -> bool:
    try:
        parse_line(line)
    except BadRecord:
        return False
    return True


def dumped(msgs: list[Msg]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in msgs]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (dict keys and list indexes), the value itself first."""
    out = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            out += paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            out += paths(inner, (*prefix, index))
    return out


def draw_place(
    data: st.DataObject, lines: list[bytes]
) -> tuple[list[dict[str, Any]], int, tuple[Any, ...]]:
    """The file's records, one of them and a place in it (drawn), to damage there."""
    records = [json.loads(line) for line in lines]
    number = data.draw(st.integers(0, len(lines) - 1))
    return records, number, data.draw(st.sampled_from(paths(records[number])))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def deep(depth: int, leaf: Any = 1) -> Any:
    for level in range(depth):
        leaf = [leaf] if level % 2 else {"d": leaf}
    return leaf


def check_app_starts(
    root: Path, expected: list[dict[str, Any]] | None
) -> tuple[list[Msg], list[str]]:
    """Make the session over `root` (as the app does at start): it must come up, list
    the conversation, hold `expected` (when given), and tell each problem in one line."""
    config = Settings()
    config.chat.model = "openai-compatible/none"
    config.chat.base_url = "http://127.0.0.1:9/v1"
    session = VoiceSession(config, sink=MemorySink(), storage=FileStorage(root))
    assert session.conversation_id == UID
    shown = session.history_messages()
    [info] = session.conversations()
    assert info.uid == UID and info.message_count == len(shown)
    if expected is not None:
        assert dumped(shown) == expected
    for notice in session.notices:
        assert "\n" not in notice and UID in notice, notice
    # Read again: the file was repaired, so it is clean now and says the same.
    again = FileStorage(root)
    assert dumped(again.load(CONF, UID)) == dumped(shown)
    assert again.drain_notices() == []
    return shown, session.notices


titles = words.filter(lambda t: bool(t.split()))


@SETTINGS
@given(conversations, titles, st.data())
def test_a_file_cut_short_keeps_every_whole_line(
    msgs: list[Msg], title: str, data: st.DataObject
) -> None:
    with written(msgs, title) as (root, path, _):
        raw = path.read_bytes()
        cut = data.draw(st.integers(0, len(raw)))
        path.write_bytes(raw[:cut])
        kept = raw[:cut].split(b"\n")
        whole = [line for line in kept[:-1]] + ([kept[-1]] if valid(kept[-1]) else [])
        check_app_starts(root, replay([json.loads(line) for line in whole if line]))


@SETTINGS
@given(conversations, titles, st.data())
def test_garbage_between_lines_is_left_out(
    msgs: list[Msg], title: str, data: st.DataObject
) -> None:
    garbage = data.draw(st.binary(min_size=1, max_size=60) | words.map(str.encode))
    assume(not any(valid(piece) and piece.strip() for piece in garbage.split(b"\n")))
    with written(msgs, title) as (root, path, lines):
        where = data.draw(st.integers(0, len(lines)))
        path.write_bytes(b"\n".join([*lines[:where], garbage, *lines[where:]]) + b"\n")
        check_app_starts(root, replay([json.loads(line) for line in lines]))
        backup = path.with_name(path.name + ".bad")
        if backup.exists():  # some garbage is only blank lines: nothing to repair
            assert garbage in backup.read_bytes()


@SETTINGS
@given(conversations, titles, st.data())
def test_a_wrong_type_in_any_field_loses_only_that_record(
    msgs: list[Msg], title: str, data: st.DataObject
) -> None:
    with written(msgs, title) as (root, path, lines):
        records, number, where = draw_place(data, lines)
        old: Any = records[number]
        for key in where:
            old = old[key]
        new = data.draw(json_values.filter(lambda v: json_type(v) != json_type(old)))
        changed = replaced(records[number], where, new)
        lines[number] = json.dumps(changed).encode()
        path.write_bytes(b"\n".join(lines) + b"\n")
        records[number] = changed
        if not valid(lines[number]):
            del records[number]
        check_app_starts(root, replay(records))


@SETTINGS
@given(conversations, titles, st.data())
def test_values_nested_absurdly_deep_never_stop_the_app(
    msgs: list[Msg], title: str, data: st.DataObject
) -> None:
    with written(msgs, title) as (root, path, lines):
        records, number, where = draw_place(data, lines)
        depth = data.draw(st.sampled_from([65, 200, 999, 5000, 100_000]))
        text = json.dumps(replaced(records[number], where, "@@DEEP@@"))
        nested = "[" * depth + "]" * depth if depth > 900 else json.dumps(deep(depth))
        lines[number] = text.replace('"@@DEEP@@"', nested).encode()
        path.write_bytes(b"\n".join(lines) + b"\n")
        del records[number]
        check_app_starts(root, replay(records))


def test_amend_indexes_that_are_not_integers_are_left_out(tmp_path: Path) -> None:
    msgs = [Msg.user("q"), Msg.assistant("a")]
    path, lines = write(tmp_path, msgs, "Indexes")
    amend = {"op": "amend", "msg": Msg.assistant("heard").model_dump(mode="json")}
    bad = [{**amend, "index": index} for index in ("x", None, 1.5, [1], {"i": 1}, True, 10**30, -3)]
    body = [json.dumps(r).encode() for r in bad]
    body.append(json.dumps(amend).replace('"amend"', '"amend", "index": 1e999').encode())
    body.append(json.dumps(amend).replace('"amend"', '"amend", "index": NaN').encode())
    path.write_bytes(b"\n".join([*lines, *body]) + b"\n")
    _, told = check_app_starts(tmp_path, replay([json.loads(line) for line in lines]))
    [notice] = told
    assert f"had {len(body)} unreadable record(s)" in notice
    backup = path.with_name(path.name + ".bad").read_bytes()
    assert all(line in backup for line in body)

"""Nothing is lost when a side part fails (issue #27): the long-term memory damaged,
locked or on a full disk; text that is not valid UTF-8; control characters on their way
to a terminal; a failed turn that leaves the memory nothing to learn.

The real `companion` command in a subprocess (real argv bytes) against a scripted model
on loopback, the window's `VoiceSession`, a real SQLite file damaged or held locked by
another process, a real tmpfs filled to the last byte, a real MCP server over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.agent.building import CONF_UID
from app.agent.mcp import McpServer
from app.agent.storage import FileStorage
from app.agent.tools import ToolContext, ToolRegistry
from app.audio.playback import MemorySink
from app.config import Settings, data_dir
from app.events import EventHub, Notice, SessionEvent
from app.llm import Msg, Role, ToolUseBlock
from app.memory import MEMORY_FILE
from app.memory.extraction import SYSTEM as EXTRACTION_PROMPT
from app.session import VoiceSession
from app.terminal import visible
from app.text_input import read_text
from tests.llm_servers import Reply, ScriptedChatServer
from tests.small_disk import SmallDisk, mounted_small_disk

COMPANION = [sys.executable, "-m", "app"]
RAW_CONTROLS = set(range(0x00, 0x09)) | set(range(0x0B, 0x20)) | {0x7F}


def companion(*args: str | bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    """The command with `args` as given (bytes stay bytes: argv that is not UTF-8)."""
    return subprocess.run(
        [*COMPANION, *args], capture_output=True, timeout=180, env={**os.environ, **env}
    )


def scripted(server: ScriptedChatServer) -> list[str]:
    return ["--model", "openai-compatible/scripted", "--base-url", server.base_url]


def said_by_user(uid: str | None = None) -> list[str]:
    storage = FileStorage(data_dir() / "history")
    uids = storage.list_histories(CONF_UID)
    return [m.text for m in storage.load(CONF_UID, uid or uids[-1]) if m.role == Role.USER]


def user_words(request: Any) -> list[str]:
    return [m["content"] for m in request.json()["messages"] if m["role"] == "user"]


def memory_requests(server: ScriptedChatServer) -> list[Any]:
    return [r for r in server.requests if EXTRACTION_PROMPT[:40].encode() in r.body]


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer([Reply.text_stream(["[joy] Noted,", " Luna is a lovely name."])]) as s:
        yield s


@pytest.fixture
def locked_memory() -> Iterator[Path]:
    """The memory file held in an exclusive transaction by another program."""
    path = data_dir() / MEMORY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sqlite3, time
                conn = sqlite3.connect({str(path)!r}, isolation_level=None)
                conn.execute("CREATE TABLE other (x)")
                conn.execute("BEGIN EXCLUSIVE")
                conn.execute("INSERT INTO other VALUES (1)")
                print("locked", flush=True)
                time.sleep(120)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield path
    finally:
        holder.kill()
        holder.wait()


def damage(path: Path) -> None:
    """What `truncate -s 1000` does to a real memory file."""
    os.truncate(path, 1000)


# ------------------------------------------------ 1. the memory is a side part ----


def test_a_damaged_memory_file_costs_chat_neither_the_reply_nor_the_words(
    server: ScriptedChatServer,
) -> None:
    first = companion("chat", *scripted(server), "--conversation", "new", "--text", "first")
    assert first.returncode == 0, first.stderr
    damage(data_dir() / MEMORY_FILE)
    done = companion("chat", *scripted(server), "--text", "remember that my cat is Luna")
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "Luna is a lovely name." in done.stdout.decode()
    assert said_by_user() == ["first", "remember that my cat is Luna"]
    # Said once, in words: no log line repeating it.
    [line] = [line for line in stderr.splitlines() if "memory" in line.lower()]
    assert line.startswith("companion: ") and "moved aside" in line
    assert list(data_dir().glob(MEMORY_FILE + ".unusable-*"))


def test_a_memory_file_another_program_keeps_locked_costs_chat_nothing(
    server: ScriptedChatServer, locked_memory: Path
) -> None:
    done = companion("chat", *scripted(server), "--conversation", "new", "--text", "Hi there")
    assert done.returncode == 0, done.stderr.decode()
    assert "Luna is a lovely name." in done.stdout.decode()
    assert said_by_user() == ["Hi there"]
    assert "locked" in done.stderr.decode()


def test_a_damaged_memory_file_costs_a_live_turn_nothing(
    server: ScriptedChatServer, question_wav: Path
) -> None:
    path = data_dir() / MEMORY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00garbage" * 512)
    done = companion("turn", *scripted(server), "--wav", str(question_wav), "--live", "--json")
    assert done.returncode == 0, done.stderr.decode()
    [turn] = json.loads(done.stdout)["turns"]
    assert "weather" in turn["heard"].lower() and turn["sentences"]
    assert "moved aside" in done.stderr.decode()


@pytest.mark.parametrize("trouble", ["damaged", "locked"])
async def test_the_window_s_session_answers_and_keeps_the_words_without_its_memory(
    server: ScriptedChatServer, request: pytest.FixtureRequest, trouble: str
) -> None:
    path = data_dir() / MEMORY_FILE
    if trouble == "damaged":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 984)  # a header, then damage
    else:
        request.getfixturevalue("locked_memory")
    settings = Settings()
    settings.chat.model, settings.chat.base_url = "openai-compatible/scripted", server.base_url
    hub = EventHub()
    seen: list[SessionEvent] = []
    hub.subscribe(seen.append)
    storage = FileStorage(data_dir() / "history")
    session = VoiceSession(settings, sink=MemorySink(), storage=storage, events=hub)
    try:
        await session.load_models()
        result = await session.send_text("remember that my cat is Luna")
        uid = session.conversation_id
    finally:
        await session.aclose()
    assert result.error is None and result.saved
    assert "Luna is a lovely name." in " ".join(s.display_text for s in result.sentences)
    assert said_by_user(uid) == ["remember that my cat is Luna"]
    notices = [e for e in seen if isinstance(e, Notice) and e.error]
    assert notices and all(n.side and "memory" in n.message.lower() for n in notices)


# ------------------------------------------------ 2. text that is not UTF-8 ----


def test_read_text_joins_surrogate_pairs_and_replaces_lone_halves() -> None:
    read = read_text("caf\udce9 \udcff\udcfe ok \ud83d\ude00 \ud83d")
    assert read.text == "caf\ufffd \ufffd\ufffd ok \U0001f600 \ufffd"
    assert read.replaced == 4
    assert read_text("plain 😀").replaced == 0


def test_argv_bytes_that_are_not_utf8_are_sent_as_replacement_characters_and_said(
    server: ScriptedChatServer,
) -> None:
    done = companion(
        "chat", *scripted(server), "--conversation", "new", "--text", b"caf\xe9 \xff\xfe ok"
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr and "server" not in stderr
    assert "3 characters" in stderr and "not valid UTF-8" in stderr
    assert user_words(server.requests[0]) == ["caf\ufffd \ufffd\ufffd ok"]
    assert said_by_user() == ["caf\ufffd \ufffd\ufffd ok"]
    assert done.stdout.decode().startswith("you: caf\ufffd \ufffd\ufffd ok")


async def test_text_with_lone_surrogates_given_to_the_session_is_answered(
    server: ScriptedChatServer,
) -> None:
    settings = Settings()
    settings.chat.model, settings.chat.base_url = "openai-compatible/scripted", server.base_url
    storage = FileStorage(data_dir() / "history")
    session = VoiceSession(settings, sink=MemorySink(), storage=storage)
    try:
        result = await session.send_text("caf\udce9 ok")  # a clipboard, a host program
    finally:
        await session.aclose()
    assert result.error is None
    assert user_words(server.requests[0]) == ["caf\ufffd ok"]


def test_a_lone_surrogate_that_reaches_the_history_is_kept_as_a_replacement_character(
    tmp_path: Path,
) -> None:
    storage = FileStorage(tmp_path / "history")
    uid = storage.create_history(CONF_UID)
    storage.append(CONF_UID, uid, [Msg.user("caf\udce9 ok")])
    [line] = (tmp_path / "history" / CONF_UID / f"{uid}.jsonl").read_text("utf-8").splitlines()
    assert "caf\ufffd ok" in line  # not "caf? ok"
    assert [m.text for m in FileStorage(tmp_path / "history").load(CONF_UID, uid)] == [
        "caf\ufffd ok"
    ]


MCP_SURROGATES = textwrap.dedent(
    """
    import json, sys
    def send(msg):
        sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
                {"name": "read", "inputSchema": {"type": "object"}},
                {"name": "fail", "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call":
            # JSON escapes of half a pair: a str no wire and no file can take.
            text = '{"type": "text", "text": "caf\\\\udce9 \\\\ud83d\\\\ude00 \\\\ud83d"}'
            error = ', "isError": true' if msg["params"]["name"] == "fail" else ""
            sys.stdout.write('{"jsonrpc": "2.0", "id": %d, "result": {"content": [%s]%s}}\\n'
                             % (mid, text, error))
            sys.stdout.flush()
    """
)


async def test_an_mcp_tool_s_lone_surrogates_reach_the_model_as_replacement_characters(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.py"
    script.write_text(MCP_SURROGATES)
    mcp = McpServer("odd", [sys.executable, str(script)])
    try:
        registry = ToolRegistry(await mcp.start())
        context = ToolContext(session_id="s", media_root=tmp_path)
        result = await registry.run(ToolUseBlock(name="odd__read"), context)
        failed = await registry.run(ToolUseBlock(name="odd__fail"), context)
    finally:
        await mcp.aclose()
    assert result.text == "caf\ufffd \U0001f600 \ufffd" and not result.is_error
    assert failed.is_error and failed.text == "caf\ufffd \U0001f600 \ufffd"
    for block in (result, failed):
        block.model_dump_json().encode("utf-8")  # a wire and the history can take it


# ------------------------------------------------ 3. a full disk ----


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    """The data folder on a real 256 KiB tmpfs (filled by the test)."""
    for disk in mounted_small_disk(tmp_path):
        monkeypatch.setenv("COMPANION_DATA_DIR", str(disk.path / "data"))
        yield disk


def test_a_full_disk_prints_the_reply_and_says_the_turn_was_not_saved(
    server: ScriptedChatServer, full_disk: SmallDisk
) -> None:
    first = companion("chat", *scripted(server), "--conversation", "new", "--text", "first")
    assert first.returncode == 0, first.stderr.decode()
    full_disk.fill()
    try:
        # Longer than a page: the history file cannot grow into its last page's slack.
        done = companion("chat", *scripted(server), "--text", "tell me more " * 600)
    finally:
        full_disk.free()
    stderr = done.stderr.decode()
    assert done.returncode == 1
    assert "Luna is a lovely name." in done.stdout.decode()  # the reply it got
    assert "could not be saved" in stderr and "disk is full" in stderr
    memory_lines = [line for line in stderr.splitlines() if MEMORY_FILE in line]
    assert memory_lines and all("disk is full" in line for line in memory_lines)
    assert "disk I/O error" not in stderr
    assert said_by_user() == ["first"]  # the earlier turn is whole


# ------------------------------------------------ 4. control characters ----


def test_visible_escapes_control_characters_and_keeps_lines() -> None:
    assert visible("a\x1b[31mb\x07\tc\nd\r\x9b\x7f") == (
        "a\\u001b[31mb\\u0007\tc\nd\\u000d\\u009b\\u007f"
    )
    assert visible("caf\udce9") == "caf\ufffd"


def test_control_characters_typed_and_replied_are_printed_escaped() -> None:
    reply = Reply.text_stream(["[joy] Hi\x1b]0;owned\x07 there\x1b[2J", " and\x9b more."])
    with ScriptedChatServer([reply]) as server:
        done = companion(
            "chat", *scripted(server), "--conversation", "new", "--text", "hi\x01\x1b[31mred\x07"
        )
    assert done.returncode == 0, done.stderr.decode()
    assert not RAW_CONTROLS & set(done.stdout) and "\x9b" not in done.stdout.decode()
    out = done.stdout.decode()
    assert "you: hi\\u0001\\u001b[31mred\\u0007" in out
    assert "Hi\\u001b]0;owned\\u0007 there\\u001b[2J and\\u009b more." in out
    assert said_by_user() == ["hi\x01\x1b[31mred\x07"]  # kept as typed


def test_json_output_stays_valid_and_exact_with_control_characters() -> None:
    reply = Reply.text_stream(["[joy] Hi\x1b[31m there\x9b."])
    with ScriptedChatServer([reply]) as server:
        done = companion("chat", *scripted(server), "--json", "--text", "hi\x07")
    assert done.returncode == 0, done.stderr.decode()
    assert not RAW_CONTROLS & set(done.stdout.replace(b"\n", b""))
    assert "\x9b" not in done.stdout.decode()
    doc = json.loads(done.stdout)
    assert doc["heard"] == "hi\x07"
    assert doc["sentences"][0]["text"] == "Hi\x1b[31m there\x9b."


def test_an_error_a_server_sends_is_printed_escaped() -> None:
    body = {"error": {"message": "overloaded\x1b]0;owned\x07\x1b[2J", "type": "server_error"}}
    with ScriptedChatServer([Reply.error(400, body)]) as server:
        done = companion("chat", *scripted(server), "--text", "Are you there?")
    assert done.returncode == 1
    assert not RAW_CONTROLS & set(done.stderr.replace(b"\n", b""))
    assert "overloaded\\u001b]0;owned\\u0007\\u001b[2J" in done.stderr.decode()
    log = (data_dir() / "logs" / "companion.log").read_bytes()
    assert b"\x1b" not in log and b"\x07" not in log  # `tail -f` runs nothing either


# ------------------------------------------------ 5. a failed turn ends the command ----


@pytest.mark.memory_learning
@pytest.mark.parametrize(
    "failure",
    [
        Reply.error(400, {"error": {"message": "The server is overloaded."}}),
        # Only keep-alives: the turn gives up at chat.timeout_s.
        Reply(headers={"content-type": "text/event-stream"}, chunks=[b": ping\n\n"] * 40,
              delay=0.1),
    ],
    ids=["error", "keep-alives"],
)
def test_a_failed_turn_asks_the_memory_nothing_and_keeps_the_words(failure: Reply) -> None:
    with ScriptedChatServer([failure]) as server:
        done = companion(
            "chat", *scripted(server), "--conversation", "new", "--text", "My cat is Luna.",
            COMPANION_CHAT__TIMEOUT_S="1",
        )
        asked_memory = memory_requests(server)
    assert done.returncode == 1
    assert asked_memory == []  # nothing to learn: the command ends after the turn
    assert said_by_user() == ["My cat is Luna."]

"""`companion chat --text`: typed turns from a shell through the window's session, saved
to the window's history; `--conversation new|latest|ID` for chat and `turn --wav` alike.
The real command in a subprocess, against a scripted model on loopback that speaks the
OpenAI Chat Completions wire (and once the real embedded model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.agent.building import CONF_UID
from app.agent.storage import FileStorage
from app.llm import Role
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_media_screenshot import xvfb_display  # noqa: F401  (a fixture)

COMPANION = [sys.executable, "-m", "app"]


def companion(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMPANION, *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ)
    )


def scripted(server: ScriptedChatServer) -> list[str]:
    return ["--model", "openai-compatible/scripted", "--base-url", server.base_url]


def history() -> FileStorage:
    return FileStorage(Path(os.environ["COMPANION_DATA_DIR"]) / "history")


def user_words(request: Any) -> list[str]:
    return [m["content"] for m in request.json()["messages"] if m["role"] == "user"]


def test_a_three_turn_conversation_from_a_shell_continues_with_latest() -> None:
    replies = [
        Reply.text_stream(["[joy] Nice to", " meet you Sam!"]),
        Reply.text_stream(["Tom is a lovely name", " for a cat."]),
        Reply.text_stream(["[smirk] Your cat", " is called Tom."]),
    ]
    with ScriptedChatServer(replies) as server:
        first = companion("chat", *scripted(server), "--conversation", "new", "--text", "I am Sam.")
        second = companion("chat", *scripted(server), "--text", "My cat is Tom.")
        third = companion(
            "chat",
            *scripted(server),
            "--conversation",
            "latest",
            "--json",
            "--text",
            "What is my cat called?",
        )
        requests = list(server.requests)
    for done in (first, second, third):
        assert done.returncode == 0, done.stderr
    assert first.stdout.startswith("you: I am Sam.")
    assert "[joy] Nice to meet you Sam!" in first.stdout
    assert "timings (ms from sending)" in first.stdout
    doc = json.loads(third.stdout)
    assert doc["heard"] == "What is my cat called?"
    assert doc["sentences"] == [
        {
            "text": "Your cat is called Tom.",
            "spoken": "Your cat is called Tom.",
            "expressions": ["smirk"],
            "thinking": False,
        }
    ]
    for key in ("request_sent_ms", "first_token_ms", "first_sentence_ms", "first_audio_ms"):
        assert doc["timings_ms"][key] > 0, key
    assert doc["error"] is None and doc["model"] == "openai-compatible/scripted"
    # The model heard the whole conversation on the third turn, and it is all saved.
    assert user_words(requests[2]) == ["I am Sam.", "My cat is Tom.", "What is my cat called?"]
    (uid,) = history().list_histories(CONF_UID)
    assert doc["conversation"] == uid and f"conversation: {uid}" in first.stdout
    saved = history().load(CONF_UID, uid)
    assert [m.text for m in saved if m.role == Role.USER] == user_words(requests[2])
    assert saved[-1].text == "[smirk] Your cat is called Tom."


def test_new_starts_a_conversation_and_an_id_goes_back_to_one() -> None:
    replies = [Reply.text_stream([f"Answer {n}."]) for n in range(3)]
    with ScriptedChatServer(replies) as server:
        one = json.loads(companion("chat", *scripted(server), "--json", "--text", "One").stdout)
        two = json.loads(
            companion(
                "chat", *scripted(server), "--conversation", "new", "--json", "--text", "Two"
            ).stdout
        )
        back = companion(
            "chat", *scripted(server), "--conversation", one["conversation"], "--text", "Three"
        )
        requests = list(server.requests)
    assert back.returncode == 0, back.stderr
    assert one["conversation"] != two["conversation"]
    assert user_words(requests[1]) == ["Two"]
    assert user_words(requests[2]) == ["One", "Three"]
    assert history().list_histories(CONF_UID) == sorted([one["conversation"], two["conversation"]])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--text", "   "], "--text is empty"),
        (["--text", "hi", "--conversation", "20200101-nope"], "no conversation '20200101-nope'"),
        (["--text", "hi", "--out", "/no/such/folder/r.wav"], "no such folder"),
        (["--conversation", "new"], "--text"),
    ],
)
def test_bad_usage_is_one_line_and_status_2(args: list[str], says: str) -> None:
    done = companion("chat", *args, timeout=60)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not history().list_histories(CONF_UID)  # nothing was started or saved


def test_a_model_that_fails_is_status_1_and_the_words_are_kept() -> None:
    body = {"error": {"message": "The server is overloaded.", "type": "server_error"}}
    with ScriptedChatServer([Reply.error(400, body)]) as server:
        done = companion("chat", *scripted(server), "--json", "--text", "Are you there?")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert "overloaded" in doc["error"]
    (uid,) = history().list_histories(CONF_UID)
    saved = history().load(CONF_UID, uid)
    assert saved[0].text == "Are you there?"  # what the user typed is never lost


def test_turn_joins_a_conversation_only_when_asked(question_wav: Path) -> None:
    replies = [
        Reply.text_stream(["Noted."]),
        Reply.text_stream(["Sunny."]),
        Reply.text_stream(["Ok."]),
    ]
    with ScriptedChatServer(replies) as server:
        chat = companion("chat", *scripted(server), "--conversation", "new", "--text", "Hello.")
        dry = companion("turn", *scripted(server), "--wav", str(question_wav), "--json")
        joined = companion(
            "turn",
            *scripted(server),
            "--wav",
            str(question_wav),
            "--conversation",
            "latest",
            "--json",
        )
        requests = list(server.requests)
    for done in (chat, dry, joined):
        assert done.returncode == 0, done.stderr
    assert json.loads(dry.stdout)["conversation"] is None
    assert user_words(requests[1])[:-1] == []  # the dry run saw no history ...
    assert user_words(requests[2])[0] == "Hello."  # ... the joined turn saw the chat
    (uid,) = history().list_histories(CONF_UID)
    assert json.loads(joined.stdout)["conversation"] == uid
    users = [m.text for m in history().load(CONF_UID, uid) if m.role == Role.USER]
    assert len(users) == 2 and "weather" in users[1].lower()


@pytest.mark.slow
def test_chat_with_the_embedded_model_remembers_across_commands() -> None:
    first = companion(
        "chat", "--conversation", "new", "--text", "My cat is called Tom.", timeout=400
    )
    second = companion("chat", "--json", "--text", "What is my cat called?", timeout=400)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    doc = json.loads(second.stdout)
    assert doc["model"].startswith("local/") and doc["sentences"]
    (uid,) = history().list_histories(CONF_UID)
    users = [m.text for m in history().load(CONF_UID, uid) if m.role == Role.USER]
    assert users == ["My cat is called Tom.", "What is my cat called?"]


@pytest.mark.slow
@pytest.mark.memory_learning
def test_a_fact_told_to_chat_is_known_in_a_new_conversation() -> None:
    """A one-turn command has no quiet time after its turn: it looks at the turn for
    the long-term memory as it closes (it used to give up after 8 s, before the
    embedded model had answered), so the next conversation knows."""
    import sqlite3

    told = companion(
        "chat", "--conversation", "new", "--text", "My cat is called Luna.", timeout=400
    )
    assert told.returncode == 0, told.stderr
    with sqlite3.connect(Path(os.environ["COMPANION_DATA_DIR"]) / "memory.sqlite3") as db:
        kept = [text for (text,) in db.execute("SELECT text FROM memories")]
        pending = db.execute("SELECT count(*) FROM pending_turns").fetchone()[0]
    assert any("luna" in text.lower() for text in kept), kept
    assert pending == 0
    asked = companion(
        "chat", "--conversation", "new", "--json", "--text", "What is my cat called?",
        timeout=400,
    )
    assert asked.returncode == 0, asked.stderr
    reply = " ".join(s["text"] for s in json.loads(asked.stdout)["sentences"])
    assert "luna" in reply.lower()


def test_a_capture_the_model_takes_is_told_in_the_terminal(
    xvfb_display: str,  # noqa: F811
) -> None:
    from tests.test_agent_e2e import tool_call_reply

    replies = [tool_call_reply(), Reply.text_stream(["[joy] I see a blank screen."])]
    with ScriptedChatServer(replies) as server:
        done = companion(
            "chat", *scripted(server), "--conversation", "new", "--text", "What's on my screen?"
        )
    assert done.returncode == 0, done.stderr
    assert "took a screenshot of monitor 1 (1280×720), kept as " in done.stderr
    shot = done.stderr.split("kept as ", 1)[1].splitlines()[0].strip()
    assert Path(shot).is_file()

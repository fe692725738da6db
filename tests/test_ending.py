"""A logout (SIGTERM, SIGHUP) in the middle of a reply ends the app as Ctrl+C does: the
user's words are in the history, with the reply as far as it came and the note that it
was cut off. The real `companion chat` in a subprocess, against a scripted model on
loopback that streams slowly, and real signals."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from app.agent.building import CONF_UID
from app.memory import MEMORY_FILE
from tests.llm_servers import Reply, ScriptedChatServer
from tests.test_cli_chat import COMPANION, history, scripted


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_a_reply_keeps_what_the_user_said(signum: int) -> None:
    pieces = ["[joy] Let me", " think about", " that for", " a long", " long while."]
    with ScriptedChatServer([Reply.text_stream(pieces, delay=1.0)]) as server:
        proc = subprocess.Popen(
            [*COMPANION, "chat", *scripted(server), "--conversation", "new",
             "--text", "My locker code is 4711."],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests, "the model was never asked"
            time.sleep(1.5)  # the reply is streaming
            proc.send_signal(signum)
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, err  # as Ctrl+C: not killed by the signal
    store = history()
    [conversation] = store.list_conversations(CONF_UID)
    messages = store.load(CONF_UID, conversation.uid)
    assert [m.role for m in messages] == ["user", "assistant"], messages
    assert messages[0].text == "My locker code is 4711."
    assert messages[1].metadata.get("interrupted") and "long while" not in messages[1].text


@pytest.mark.memory_learning
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_in_the_memory_wait_keeps_the_turn_to_learn_from(signum: int) -> None:
    # The reply is printed at once; the memory's own request then hangs (a slow model),
    # and the user presses Ctrl+C (or logs out) while the command seems to wait.
    replies = [Reply.text_stream(["[joy] Luna is", " a lovely name."]),
               Reply.text_stream(['{"memories": []}'], delay=60.0)]
    with ScriptedChatServer(replies) as server:
        proc = subprocess.Popen(
            [*COMPANION, "chat", *scripted(server), "--conversation", "new",
             "--text", "My cat is called Luna."],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while len(server.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) == 2, "the memory never asked"
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert "Luna is a lovely name." in out, err
    path = Path(os.environ["COMPANION_DATA_DIR"]) / MEMORY_FILE
    with contextlib.closing(sqlite3.connect(path)) as conn:
        kept = [said for (said,) in conn.execute("SELECT said FROM pending_turns")]
    assert kept == ["My cat is called Luna."]  # looked at after the next start


def test_a_logout_that_sends_two_signals_still_ends_cleanly() -> None:
    pieces = ["[joy] Let me", " think about", " that for", " a long", " long while."]
    with ScriptedChatServer([Reply.text_stream(pieces, delay=1.0)]) as server:
        proc = subprocess.Popen(
            [*COMPANION, "chat", *scripted(server), "--conversation", "new",
             "--text", "My locker code is 4711."],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)
            proc.send_signal(signal.SIGHUP)  # the terminal closed
            proc.send_signal(signal.SIGTERM)  # and the session ended
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    [conversation] = history().list_conversations(CONF_UID)
    messages = history().load(CONF_UID, conversation.uid)
    assert messages[0].text == "My locker code is 4711." and len(messages) == 2


def test_a_signal_the_app_was_started_to_ignore_stays_ignored() -> None:
    script = (
        "import signal\nfrom app.ending import end_like_ctrl_c\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\nend_like_ctrl_c()\n"
        "print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN,"
        " callable(signal.getsignal(signal.SIGTERM)))\n"
    )
    done = subprocess.run([*COMPANION[:1], "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_a_kill_during_a_reply_keeps_what_the_user_said() -> None:
    pieces = ["[joy] Let me", " think about", " that for", " a long", " long while."]
    with ScriptedChatServer([Reply.text_stream(pieces, delay=1.0)]) as server:
        proc = subprocess.Popen(
            [*COMPANION, "chat", *scripted(server), "--conversation", "new",
             "--text", "My locker code is 4711."],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)  # the reply is streaming
            proc.send_signal(signal.SIGKILL)  # no handler runs: a crash, a power cut
            proc.communicate(timeout=60)
        finally:
            proc.kill()
    store = history()
    [conversation] = store.list_conversations(CONF_UID)
    messages = store.load(CONF_UID, conversation.uid)  # the next start reads it
    assert [m.role for m in messages] == ["user", "assistant"], messages
    assert messages[0].text == "My locker code is 4711."
    assert messages[1].metadata.get("interrupted") and messages[1].metadata["heard"] == ""
    assert store.load(CONF_UID, conversation.uid) == messages  # added once

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

SAID = "My locker code is 4711."


def _chat_and_signal(
    replies: list[Reply], signums: list[int], *, requests: int = 1, pause_s: float = 1.5
) -> tuple[subprocess.Popen[str], str, str]:
    """`companion chat --text SAID` against `replies` on loopback; once the server got
    `requests` requests and `pause_s` more went by (the reply streaming), `signums` are
    sent. The process, its output and its errors."""
    with ScriptedChatServer(replies) as server:
        proc = subprocess.Popen(
            [*COMPANION, "chat", *scripted(server), "--conversation", "new", "--text", SAID],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while len(server.requests) < requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) >= requests, "the model was never asked"
            time.sleep(pause_s)
            for signum in signums:
                proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    return proc, out, err


def _slow_reply() -> list[Reply]:
    pieces = ["[joy] Let me", " think about", " that for", " a long", " long while."]
    return [Reply.text_stream(pieces, delay=1.0)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_a_reply_keeps_what_the_user_said(signum: int) -> None:
    proc, _out, err = _chat_and_signal(_slow_reply(), [signum])
    assert proc.returncode == 130, err  # as Ctrl+C: not killed by the signal
    messages = history().load(CONF_UID, history().list_conversations(CONF_UID)[0].uid)
    assert [m.role for m in messages] == ["user", "assistant"], messages
    assert messages[0].text == SAID
    assert messages[1].metadata.get("interrupted") and "long while" not in messages[1].text


@pytest.mark.memory_learning
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_in_the_memory_wait_keeps_the_turn_to_learn_from(signum: int) -> None:
    # The reply is printed at once; the memory's own request then hangs (a slow model),
    # and the user presses Ctrl+C (or logs out) while the command seems to wait.
    replies = [Reply.text_stream(["[joy] Luna is", " a lovely name."]),
               Reply.text_stream(['{"memories": []}'], delay=60.0)]
    _proc, out, err = _chat_and_signal(replies, [signum], requests=2, pause_s=0.0)
    assert "Luna is a lovely name." in out, err
    path = Path(os.environ["COMPANION_DATA_DIR"]) / MEMORY_FILE
    with contextlib.closing(sqlite3.connect(path)) as conn:
        kept = [said for (said,) in conn.execute("SELECT said FROM pending_turns")]
    assert kept == [SAID]  # looked at after the next start


def test_a_logout_that_sends_two_signals_still_ends_cleanly() -> None:
    # The terminal closed (SIGHUP) and the session ended (SIGTERM), at once.
    proc, _out, err = _chat_and_signal(_slow_reply(), [signal.SIGHUP, signal.SIGTERM])
    assert proc.returncode == 130, err
    messages = history().load(CONF_UID, history().list_conversations(CONF_UID)[0].uid)
    assert messages[0].text == SAID and len(messages) == 2


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
    _chat_and_signal(_slow_reply(), [signal.SIGKILL])  # no handler runs: a crash
    store = history()
    [conversation] = store.list_conversations(CONF_UID)
    messages = store.load(CONF_UID, conversation.uid)  # the next start reads it
    assert [m.role for m in messages] == ["user", "assistant"], messages
    assert messages[0].text == SAID
    assert messages[1].metadata.get("interrupted") and messages[1].metadata["heard"] == ""
    assert store.load(CONF_UID, conversation.uid) == messages  # added once

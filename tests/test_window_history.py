"""The window over damaged history and a config file with a typo (offscreen): it comes
up with a real session, lists every conversation with its real size, and tells the
user what it found, naming the conversation and the file's line."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.agent.storage import FileStorage
from app.audio.playback import MemorySink
from app.config import config_path, data_dir, load_settings
from app.events import EventHub, Notice, TurnFinished
from app.llm import Msg
from app.session import VoiceSession
from app.ui import MainWindow, run_window
from tests.llm_servers import Reply, ScriptedChatServer


def damaged_history(root: Path) -> tuple[str, str]:
    storage = FileStorage(root)
    older, newer = storage.create_history("default"), storage.create_history("default")
    storage.append("default", older, [Msg.user("About the sea"), Msg.assistant("It is deep.")])
    storage.append("default", newer, [Msg.user("About the sky"), Msg.assistant("It is blue.")])
    deep = b"[" * 5000 + b"]" * 5000
    for uid, record in (
        (older, b'{"op": "amend", "index": "x", "msg": {"role": "assistant"}}\n'),
        (newer, b'{"op": "add", "msg": {"role": "user", "metadata": ' + deep + b"}}\n"),
    ):
        with (root / "default" / f"{uid}.jsonl").open("ab") as fh:
            fh.write(record)
    return older, newer


def test_the_window_starts_over_damaged_history_and_says_what_it_found() -> None:
    QApplication.instance() or QApplication([])
    older, newer = damaged_history(data_dir() / "history")
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[ui]\nfirst_run_done = true\n[chat]\nmodle = "openai/gpt-4o"\n')
    seen: dict[str, object] = {}
    with ScriptedChatServer([Reply.text_stream(["Still", " here."])]) as server:
        settings = load_settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        hub = EventHub(keep_history=True)

        def window() -> MainWindow:
            (found,) = [
                w
                for w in QApplication.topLevelWidgets()
                if isinstance(w, MainWindow) and w.isVisible()
            ]
            return found

        async def once_attached() -> None:
            win = window()
            while win.session is None:
                await asyncio.sleep(0.02)
            seen["session"] = win.session
            assert win.conversations is not None
            seen["listed"] = [(c.uid, c.message_count) for c in win.session.conversations()]
            done = asyncio.Event()
            hub.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)
            win.text_input.setText("Are you there?")
            win.send_button.click()
            await asyncio.wait_for(done.wait(), 30)
            await asyncio.sleep(0.1)
            seen["texts"] = [e.text for e in win.transcript.entries]
            win.close()

        def make() -> VoiceSession:
            asyncio.get_running_loop().create_task(once_attached())
            storage = FileStorage(data_dir() / "history")
            return VoiceSession(settings, sink=MemorySink(), storage=storage, events=hub)

        code = run_window(make, settings=settings, use_tray=False, quit_after_s=60)
    assert code == 0
    assert isinstance(seen["session"], VoiceSession)  # never "could not be made"
    assert seen["listed"] == [(older, 2), (newer, 2)]
    assert seen["texts"] == ["About the sky", "It is blue.", "Are you there?", "Still here."]
    told = [e.message for _, e in hub.history if isinstance(e, Notice)]
    assert all("\n" not in words for words in told)
    about_newer = [w for w in told if newer in w]
    about_older = [w for w in told if older in w]
    assert len(about_newer) == 1 and '"About the sky"' in about_newer[0]
    assert len(about_older) == 1 and '"About the sea"' in about_older[0]
    assert "nests too deeply" in about_newer[0] and "index" in about_older[0]
    typo = [w for w in told if "modle" in w]
    assert typo == [
        f'{config_path()}:4: unknown setting "modle" in [chat], ignored. '
        'Did you mean "model" in [chat]?'
    ]

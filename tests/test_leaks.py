"""No configured secret leaves the app by any way out, whoever repeats it.

One loopback server plays every hosted service with real wire formats: the chat model
streams back the request's Authorization header (and every other secret it could have
been shown), the speech service transcribes "what was said" as its own Authorization
header, the voice service records what it is asked to speak. With a recognisable chat
key, vision key, speech key, voice key and VTube Studio token configured, each output
is searched for any of them: the history files, the log file, stdout and stderr of
`companion turn` (text and --json), `config show` and `--self-test` (with its report),
the crash notice, what was sent to be spoken, and the text of the window.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import pytest

from app.config import Settings, load_settings
from app.events import EventHub, Notice, TurnFinished
from tests.llm_servers import RecordedRequest, Reply, ScriptedChatServer

# Recognisable, shaped like no known key (so only the configured values can mask them),
# and written in pieces so no committed line looks like one.
CHAT_KEY = "LEAK" + "chat7a0e9b3c5d1f2468ace0"
VISION_KEY = "LEAK" + "vision93bd81e0c4a7f2d6"
SPEECH_KEY = "LEAK" + "speech5c2e8a1b9d0f3746"
TTS_KEY = "LEAK" + "voice0d9c8b7a6f5e4d3c2b"
VTS_TOKEN = "LEAK" + "vts" + "1f2e3d4c5b6a7988" * 3
SECRETS = {
    "chat key": CHAT_KEY,
    "vision key": VISION_KEY,
    "speech key": SPEECH_KEY,
    "voice key": TTS_KEY,
    "VTube Studio token": VTS_TOKEN,
}


def leaks(text: str) -> list[str]:
    """Which secrets appear in `text`, whole or by a recognisable part of them."""
    return [
        name
        for name, secret in SECRETS.items()
        if any(part in text for part in (secret[:8], secret[4:14], secret[-10:]))
    ]


def pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class EchoServices(ScriptedChatServer):
    """Chat, transcription and speech on one loopback port, answering each request from
    what it carried (`tts_error`: the voice service refuses, quoting the header)."""

    def __init__(self, *, tts_error: bool = False) -> None:
        super().__init__()
        self.tts_error = tts_error
        self.spoken: list[str] = []

    def _next_reply(self) -> Reply:
        request: RecordedRequest = self.requests[-1]
        authorization = request.headers.get("authorization", "(none)")
        if request.path.endswith("/audio/transcriptions"):
            return Reply.json({"text": f"Hello, my key is {authorization} okay"})
        if request.path.endswith("/audio/speech"):
            self.spoken.append(str(request.json().get("input", "")))
            if self.tts_error:
                body = {"error": {"message": f"Incorrect API key provided: {authorization}"}}
                return Reply.error(401, body)
            return Reply(headers={"content-type": "audio/pcm"}, chunks=[b"\0\1" * 2400] * 3)
        said = json.dumps(request.json().get("messages", [])[-1:])
        reply = (
            f"[joy] Your key is {authorization}. You said {said}, and I also know "
            f"{VISION_KEY}, {SPEECH_KEY}, {TTS_KEY} and {VTS_TOKEN}. Keep them safe!"
        )
        return Reply.text_stream(pieces(reply))


@pytest.fixture
def services() -> Iterator[EchoServices]:
    with EchoServices() as server:
        yield server


def write_config(path: Path, server: EchoServices) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"""
[chat]
model = "openai-compatible/echo"
base_url = "{server.base_url}"
api_key = "{CHAT_KEY}"

[agent]
vision_model = "openai-compatible/echo-vision"
vision_base_url = "{server.base_url}"
vision_api_key = "{VISION_KEY}"

[speech]
adapter = "openai_transcribe"
endpoint = "{server.base_url}"
api_key = "{SPEECH_KEY}"

[tts]
engine = "openai_speech"
endpoint = "{server.base_url}"
api_key = "{TTS_KEY}"
""",
        encoding="utf-8",
    )


@pytest.fixture
def configured(services: EchoServices, isolated_dirs: Path) -> Path:
    """The config file with every secret, and a VTube Studio token kept from a pairing."""
    write_config(Path(os.environ["COMPANION_CONFIG"]), services)
    data = Path(os.environ["COMPANION_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    (data / "vtube_studio_token").write_text(VTS_TOKEN, encoding="utf-8")
    return data


def every_file(folder: Path) -> str:
    texts = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != "vtube_studio_token":
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=timeout
    )


def test_the_echo_server_really_repeats_the_secrets(services: EchoServices) -> None:
    # The leak test is only worth something if the secrets do come back from it.
    import httpx

    body = httpx.post(
        services.base_url + "/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {CHAT_KEY}"},
    ).text
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    said = "".join(c["delta"].get("content", "") for e in events for c in e.get("choices", []))
    assert leaks(said) == list(SECRETS)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_companion_turn_prints_and_logs_no_secret(
    configured: Path, services: EchoServices, question_wav: Path, tmp_path: Path, as_json: bool
) -> None:
    out = tmp_path / "reply.wav"
    done = run(
        "turn",
        "-vv",
        "--wav",
        str(question_wav),
        "--out",
        str(out),
        *(["--json"] if as_json else []),
    )
    assert done.returncode == 0, done.stderr
    assert "my key is" in done.stdout  # the transcript (the speech key echoed) came through
    assert "Keep them safe" in done.stdout
    assert leaks(done.stdout) == [] and leaks(done.stderr) == []
    assert leaks(every_file(configured)) == []  # the log file, and anything else kept
    assert services.spoken and leaks(" ".join(services.spoken)) == []  # never spoken
    assert [r for r in services.requests if r.path.endswith("/chat/completions")]


def test_config_show_prints_no_secret(configured: Path) -> None:
    done = run("config", "show", timeout=60)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["chat"]["api_key"].startswith("****")
    assert leaks(done.stdout) == [] and leaks(done.stderr) == []


def test_the_self_test_and_its_report_hold_no_secret(configured: Path, tmp_path: Path) -> None:
    with EchoServices(tts_error=True) as refusing:
        write_config(Path(os.environ["COMPANION_CONFIG"]), refusing)
        report = tmp_path / "report.json"
        done = run("--self-test", "--report", str(report), timeout=300)
    text = report.read_text(encoding="utf-8")
    assert "voice engine speaks" in text
    assert "refused the API key" in text  # the voice check did meet the echoing server
    assert leaks(text) == [] and leaks(done.stdout) == [] and leaks(done.stderr) == []
    assert refusing.spoken  # it was asked


def session_settings() -> Settings:
    return load_settings()


async def _typed_and_spoken_turn(session, hub: EventHub, question: bytes) -> list[str]:
    notices: list[str] = []
    hub.subscribe(lambda e: notices.append(e.message) if isinstance(e, Notice) else None)
    await session.send_text(f"remember {SPEECH_KEY} for me")
    await session.turn_from_pcm(question)

    async def boom() -> None:
        raise RuntimeError(f"the connection to https://x.test/?k={CHAT_KEY} broke ({VTS_TOKEN})")

    session.supervisor.spawn(boom(), "boom")
    for _ in range(50):
        await asyncio.sleep(0.02)
        if any("Something went wrong" in n for n in notices):
            break
    return notices


async def test_history_log_events_and_crash_notice_hold_no_secret(
    configured: Path, services: EchoServices, question_wav: Path, tmp_path: Path
) -> None:
    from app import logs
    from app.audio.playback import MemorySink
    from app.audio.wav import read_wav_16k
    from app.cli import register_secrets
    from app.redaction import Redactor
    from app.session import VoiceSession

    settings = session_settings()
    redactor = Redactor()
    register_secrets(settings, redactor)  # as `companion` does for its log
    logs.setup_logging(logging.DEBUG, tmp_path / "logs", redactor=redactor)
    try:
        hub = EventHub(keep_history=True)
        session = VoiceSession(settings, sink=MemorySink(), events=hub)
        try:
            notices = await _typed_and_spoken_turn(session, hub, read_wav_16k(question_wav))
        finally:
            await session.aclose()
        logging.getLogger("test").info("the model said: %s", session.agent.history[-1].text)
    finally:
        logs.setup_logging(logging.WARNING, tmp_path / "logs2")
    crash = [n for n in notices if "Something went wrong" in n]
    assert crash and leaks(crash[0]) == []
    assert leaks(" ".join(repr(e) for _, e in hub.history)) == []  # all a presenter sees
    assert any(isinstance(e, TurnFinished) for _, e in hub.history)
    history = every_file(configured / "history")
    assert "Keep them safe" in history and leaks(history) == []
    assert leaks(every_file(tmp_path / "logs")) == []
    assert leaks(" ".join(services.spoken)) == []


def test_the_window_shows_no_secret(configured: Path, services: EchoServices) -> None:
    import qasync
    from PySide6.QtWidgets import (
        QAbstractButton,
        QApplication,
        QLabel,
        QLineEdit,
        QListWidget,
        QTextEdit,
        QWidget,
    )

    from app.audio.playback import MemorySink
    from app.session import VoiceSession
    from app.ui import MainWindow
    from app.ui.app import release_loop_timers

    app = QApplication.instance() or QApplication([])
    hub = EventHub()
    session = VoiceSession(session_settings(), sink=MemorySink(), events=hub)
    window = MainWindow(session)
    window.show()
    done = asyncio.Event()
    hub.subscribe(lambda e: done.set() if isinstance(e, TurnFinished) else None)

    async def scenario() -> None:
        await session.start(listen=False)
        window.text_input.setText(f"my token is {VTS_TOKEN}")
        window.send_button.click()
        await asyncio.wait_for(done.wait(), 60)
        await asyncio.sleep(0.2)
        QApplication.processEvents()

    def shown() -> str:
        texts = [window.windowTitle()]
        for widget in window.findChildren(QWidget):
            texts.append(widget.toolTip())
            if isinstance(widget, QLabel | QAbstractButton | QLineEdit):
                texts.append(widget.text())
            elif isinstance(widget, QTextEdit):
                texts.append(widget.toPlainText())
            elif isinstance(widget, QListWidget):
                texts += [widget.item(i).text() for i in range(widget.count())]
        texts += [e.text for e in window.transcript.entries]
        return "\n".join(texts)

    loop = qasync.QEventLoop(app)
    try:
        loop.run_until_complete(scenario())
        text = shown()
        assert "Keep them safe" in text
        assert leaks(text) == []
        loop.run_until_complete(session.aclose())
    finally:
        window.close()
        loop.close()
        release_loop_timers(loop)

"""The log file: written, rotated, keys never in it; a background task's crash reaches the
user in words with the log's path, and the session keeps running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import logs
from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, Notice, SessionEvent, Status, StatusChanged
from app.redaction import Redactor
from app.session import VoiceSession
from tests.llm_servers import Reply, ScriptedChatServer

KEY = "sk-" + "proj-LOGSECRET0123456789abcdef"
GOOGLE = "AIza" + "SyLOGSECRET0123456789abcdefgh"
PLAIN = "hunter2-" + "plainsecret"  # no key shape: only masked once registered


@pytest.fixture
def redactor() -> Redactor:
    return Redactor()


@pytest.fixture
def logfile(tmp_path: Path, redactor: Redactor) -> Iterator[Path]:
    path = logs.setup_logging(logging.WARNING, tmp_path / "logs", redactor=redactor)
    assert path is not None
    yield path
    for handler in list(logging.getLogger().handlers):
        if getattr(handler, "_companion", False):
            logging.getLogger().removeHandler(handler)
            handler.close()


def flush() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


def test_keys_never_reach_the_log_file_whatever_was_logged(
    logfile: Path, redactor: Redactor
) -> None:
    redactor.add(PLAIN)
    log = logging.getLogger("companion.test")
    log.warning("request failed with key %s and header Authorization: Bearer %s", KEY, KEY)
    log.warning("https://generativelanguage.googleapis.com/v1beta/models?key=%s&alt=sse", GOOGLE)
    log.warning('{"api_key": "%s"} and the user password %s', PLAIN, PLAIN)
    try:
        raise RuntimeError(f"Incorrect API key provided: {KEY}")
    except RuntimeError:
        log.exception("the call failed")
    flush()
    text = logfile.read_text(encoding="utf-8")
    assert "the call failed" in text and "Incorrect API key provided: ***" in text
    assert "Traceback" in text  # the details stay, only the secrets go
    for secret in (KEY, GOOGLE, PLAIN, "LOGSECRET"):
        assert secret not in text
    assert text.count("***") >= 6


def test_info_goes_to_the_file_even_when_the_console_shows_warnings(logfile: Path) -> None:
    logging.getLogger("companion.test").info("models loaded in 1234 ms")
    flush()
    assert "models loaded in 1234 ms" in logfile.read_text(encoding="utf-8")


def test_the_log_rotates_instead_of_growing(logfile: Path) -> None:
    log = logging.getLogger("companion.test")
    line = "x" * 1000
    for _ in range(3000):  # about 3 MB
        log.warning(line)
    flush()
    files = sorted(logfile.parent.glob("companion.log*"))
    assert len(files) == logs.BACKUPS + 1
    assert all(f.stat().st_size <= logs.MAX_BYTES + 2000 for f in files)


def test_an_unwritable_log_folder_leaves_the_console() -> None:
    # /proc refuses new folders even to root (CI runs as root, so chmod would not do).
    assert logs.setup_logging(logging.WARNING, Path("/proc/companion-test/logs")) is None
    assert logs.log_file() is None
    logging.getLogger("companion.test").warning("still logging")  # no crash


def test_a_log_path_that_is_a_file_leaves_the_console(tmp_path: Path) -> None:
    blocker = tmp_path / "logs"
    blocker.write_text("not a folder")
    assert logs.setup_logging(logging.WARNING, blocker) is None
    logging.getLogger("companion.test").warning("still logging")  # no crash


async def test_a_crashed_background_task_is_reported_with_the_log_path(logfile: Path) -> None:
    with ScriptedChatServer([Reply.text_stream(["Still here."])]) as srv:
        settings = Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = srv.base_url
        seen: list[SessionEvent] = []
        hub = EventHub()
        hub.subscribe(seen.append)
        session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)

        async def broken() -> None:
            raise ValueError(f"the avatar file is damaged near {KEY}")

        try:
            session.supervisor.spawn(broken(), "avatar-idle")
            await asyncio.sleep(0.05)
            result = await session.send_text("Are you alive?")  # the session still works
        finally:
            await session.aclose()
    notices = [e.message for e in seen if isinstance(e, Notice) and e.error]
    assert any("avatar-idle" in n and str(logfile) in n for n in notices), notices
    assert any(isinstance(e, StatusChanged) and e.status is Status.ERROR for e in seen)
    assert " ".join(s.display_text for s in result.sentences) == "Still here."
    flush()
    text = logfile.read_text(encoding="utf-8")
    assert "the avatar-idle task failed" in text and "ValueError" in text
    assert KEY not in text

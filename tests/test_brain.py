"""The embedded default brain for real: Qwen2.5-Coder-1.5B-Instruct joined from its 22
PyPI parts, through a `VoiceSession` as the window drives it. A few turns only (the
dialogue bench, bench/bench_dialogue.py, runs the long scripted conversations)."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.events import EventHub, LoadProgress, Notice, SessionEvent, StatusChanged
from app.llm.wire.local_files import DEFAULT_EMBEDDED, embedded_model
from app.session import VoiceSession

pytestmark = pytest.mark.slow

_TAG = re.compile(r"^\s*\[(\w+)\]")
_BRACKET = re.compile(r"[\[【][^\]】]*[\]】]")


def session_with(settings: Settings) -> tuple[VoiceSession, list[SessionEvent]]:
    seen: list[SessionEvent] = []
    hub = EventHub()
    hub.subscribe(seen.append)
    session = VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage(), events=hub)
    return session, seen


def says_time(reply: str, now: datetime) -> bool:
    for match in re.finditer(r"(\d{1,2}):(\d{2})", reply):
        for hour in {int(match[1]) % 24, (int(match[1]) + 12) % 24}:
            told = now.replace(hour=hour, minute=int(match[2]) % 60)
            if abs(told - now) <= timedelta(minutes=5):
                return True
    return False


async def test_the_default_brain_answers_in_shape_knows_the_time_and_remembers() -> None:
    settings = Settings()
    assert settings.chat.model == f"local/{DEFAULT_EMBEDDED}"
    settings.chat.temperature = 0.0  # the same answers on every run
    session, _ = session_with(settings)
    try:
        await session.provider.load()
        await session.agent.core.warm_up()
        results = [
            await session.send_text(text)
            for text in ("My cat's name is Tofu.", "What time is it?", "What's my cat called?")
        ]
        now = datetime.now()
        stored = [m for m in session.agent.history if m.role == "assistant"]
    finally:
        await session.aclose()
    assert len(stored) == 3
    tagged = 0
    for result, message in zip(results, stored, strict=True):
        assert result.error is None and not message.metadata.get("fallback"), message.text
        tag = _TAG.match(message.text)
        if tag and tag[1] in session.expressions:  # a tag the avatar has ...
            tagged += 1
            assert any(s.actions.expressions for s in result.sentences)  # ... acted out
        shown = " ".join(s.display_text for s in result.sentences if s.display_text)
        assert shown and not _BRACKET.search(shown)  # a tag is never shown
        assert 1 <= len(re.findall(r"[.!?](?:\s|$)", shown + " ") or [""]) <= 3, shown
    # Most replies carry a tag (bench/bench_dialogue.py measures the rate); one may not.
    assert tagged >= 2, [m.text for m in stored]
    assert says_time(" ".join(s.display_text for s in results[1].sentences), now)
    assert "Tofu" in " ".join(s.display_text for s in results[2].sentences)


async def test_the_first_start_joins_the_model_and_shows_how_far_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # a machine that never ran Companion
    session, seen = session_with(Settings())
    try:
        assert session.provider.needs_preparing
        await session.load_models()
        result = await session.send_text("Hi!")
    finally:
        await session.aclose()
        joined = cache / "companion" / "models"
        sizes = {p.name: p.stat().st_size for p in joined.iterdir()} if joined.exists() else {}
        shutil.rmtree(cache, ignore_errors=True)  # 1.1 GB: not left in the temp folder
    model = embedded_model(DEFAULT_EMBEDDED)
    assert sizes.get(model.file_name) == model.size
    assert not [e for e in seen if isinstance(e, Notice) and e.error]
    words = [e.detail for e in seen if isinstance(e, StatusChanged)]
    joining = [w for w in words if w.startswith("preparing the embedded chat model: joining")]
    checking = [w for w in words if w.startswith("preparing the embedded chat model: checking")]
    assert joining and checking and words.index(checking[0]) > words.index(joining[-1])
    percents = [int(re.search(r"\((\d+) %\)", w)[1]) for w in joining]  # type: ignore[index]
    assert percents == sorted(percents) and percents[-1] == 100 and len(percents) > 10
    bars = [e for e in seen if isinstance(e, LoadProgress) and "joining" in e.what]
    assert bars and bars[-1].done == bars[-1].total
    assert result.error is None and result.sentences

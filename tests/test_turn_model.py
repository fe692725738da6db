"""The turn model, Smart Turn v3.2, on real espeak-ng speech: found inside the
pipecat-ai wheel without importing Pipecat, and telling a finished question from a
sentence that stops halfway."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from app.audio.turn_model import SmartTurn, TurnModelMissing, smart_turn_model_path
from app.audio.wav import read_wav_16k
from tests.conftest import speak_to_wav

SILENCE_300_MS = bytes(16_000 * 2 * 3 // 10)


def test_the_model_file_is_found_in_the_pipecat_wheel_without_importing_pipecat() -> None:
    code = (
        "import sys; from app.audio.turn_model import smart_turn_model_path as p; "
        "path = p(); print(path, path.stat().st_size, 'pipecat' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    path, size, imported = done.stdout.split()
    assert path.endswith("pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx")
    assert int(size) > 8_000_000 and imported == "False"


def test_a_missing_wheel_says_how_to_install_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    with pytest.raises(TurnModelMissing, match=r"pip install --no-deps \"pipecat-ai==1.14.0\""):
        smart_turn_model_path()


@pytest.fixture(scope="module")
def model() -> SmartTurn:
    return SmartTurn()


def spoken(text: str, folder: Path) -> bytes:
    return read_wav_16k(speak_to_wav(text, folder / "said.wav"))


@pytest.mark.parametrize(
    "text", ["Do you know any good books about space?", "Please turn the music down a little."]
)
def test_a_finished_request_sounds_finished(model: SmartTurn, text: str, tmp_path: Path) -> None:
    assert model.probability(spoken(text, tmp_path) + SILENCE_300_MS) > 0.5


@pytest.mark.parametrize(
    "text", ["I want to tell you about my", "Tomorrow I have to", "What I really want is"]
)
def test_a_sentence_that_stops_halfway_sounds_unfinished(
    model: SmartTurn, text: str, tmp_path: Path
) -> None:
    assert model.probability(spoken(text, tmp_path) + SILENCE_300_MS) < 0.5


def test_only_the_last_eight_seconds_count_and_short_input_is_padded(
    model: SmartTurn, tmp_path: Path
) -> None:
    question = spoken("Do you know any good books about space?", tmp_path)
    long_before = spoken("Tomorrow I have to", tmp_path) + bytes(16_000 * 2 * 9)
    alone = model.probability(question + SILENCE_300_MS)
    after_long = model.probability(long_before + question + SILENCE_300_MS)
    assert after_long == pytest.approx(alone, abs=1e-4)  # what came 9 s before is not heard
    assert 0.0 <= model.probability(b"\0\0" * 160) <= 1.0


def test_the_guide_names_the_turn_model_file_or_says_it_is_not_used() -> None:
    from app.checks.installation import check_turn_model
    from app.config import Settings

    settings = Settings()
    found = check_turn_model(settings)
    assert str(found.detail) == "Smart Turn, installed (9 MB)"  # named, not its file
    assert str(found.plain) == "Knowing when you have finished speaking: ready"
    settings.turn.endpointing = "silence"
    assert "not used" in str(check_turn_model(settings).detail)

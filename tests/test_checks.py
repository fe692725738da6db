"""The Qt-free checks: they import no Qt, say what they found in words a UI can
translate, time each check, and close what they open whatever happens."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.checks import (
    CheckFailed,
    Said,
    Warn,
    Words,
    ask,
    ask_model,
    check_system,
    run_check,
)
from app.config import Settings
from app.llm import LLMRequest, LLMResponse, Msg, TextBlock

ROOT = Path(__file__).resolve().parent.parent


def test_the_checks_import_no_qt() -> None:
    code = (
        "import sys, app.checks, app.checks.installation, app.checks.trials; "
        "print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_words_fill_in_their_fields_in_english_or_in_translation() -> None:
    words = Words("The speech model {path} is missing.", {"path": "/models/x"})
    assert str(words) == "The speech model /models/x is missing."
    german = {"The speech model {path} is missing.": "Das Sprachmodell {path} fehlt."}
    assert words.shown(lambda text: german.get(text, text)) == "Das Sprachmodell /models/x fehlt."
    assert str(Words("A {brace} stays as it is")) == "A {brace} stays as it is"
    assert str(CheckFailed(words)) == str(words)


def test_a_check_says_why_it_failed_and_names_an_unexpected_error() -> None:
    def fails() -> str:
        raise CheckFailed(Words("The voice made no sound."))

    def crashes() -> str:
        raise KeyError("voice")

    def warns() -> str:
        raise Warn("no speaker")

    failed, crashed, warned, fine = (
        run_check("a", fails),
        run_check("b", crashes),
        run_check("c", warns),
        run_check("d", lambda: "all there"),
    )
    assert not failed.ok and failed.problem == "The voice made no sound."
    assert not crashed.ok and crashed.problem == "KeyError: 'voice'"
    assert warned.ok and warned.text == "no speaker"
    assert fine.ok and fine.text == fine.detail == "all there"
    assert all(r.seconds >= 0 for r in (failed, crashed, warned, fine))


def test_the_system_checks_are_said_in_the_language_given(tmp_path: Path) -> None:
    def marked(said: Said) -> str:  # a "translation" that shows where it was applied
        return said.shown(lambda text: f"«{text}»") if isinstance(said, Words) else said

    settings = Settings()
    settings.chat.local_model_path = tmp_path / "gone.gguf"
    settings.speech.adapter = "openai_transcribe"
    results = {r.name: r for r in check_system(settings, show=marked)}
    assert list(results)[:3] == ["«Microphone»", "«Speaker»", "«Embedded chat model»"]
    chat = results["«Embedded chat model»"]
    missing = tmp_path / "gone.gguf"
    assert not chat.ok and chat.problem == f"«The chat model file {missing} is missing.»"
    speech = results["«Speech recognition model»"]
    assert speech.ok and speech.detail == "«an online service, OpenAI»"


def test_the_guide_names_the_built_in_models_in_words_not_by_their_files() -> None:
    """The family of "tiny.en (model)": every model check says what the model is, never
    a file or folder name or a setting's raw value."""
    results = {r.name: r for r in check_system(Settings())}
    said = {
        name: results[name].detail
        for name in (
            "Embedded chat model",
            "Voice detection model",
            "Turn model",
            "Speech recognition model",
        )
    }
    assert said["Speech recognition model"] == "Built in: Whisper tiny, English"
    assert said["Voice detection model"].startswith("Silero, installed (")
    assert said["Turn model"].startswith("Smart Turn, installed (")
    assert said["Embedded chat model"].startswith("Qwen2.5-Coder-1.5B-Instruct")
    for name, detail in said.items():
        assert results[name].ok, (name, results[name].problem)
        for raw in (".onnx", ".gguf", ".bin", "tiny.en", "(model)", "_"):
            assert raw not in detail, (name, detail)
    multilingual = Settings()
    multilingual.speech.model = "small"
    speech = {r.name: r for r in check_system(multilingual)}["Speech recognition model"]
    assert speech.detail == "Built in: Whisper small, many languages"


class _Provider:
    """A chat model that answers (or fails) at once and records what was done to it."""

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.calls: list[str] = []

    async def load(self) -> None:
        self.calls.append("load")

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls.append("complete")
        if isinstance(self.answer, Exception):
            raise self.answer
        return LLMResponse(
            provider="test", id="r1", model=request.model, content=[TextBlock(text=self.answer)]
        )

    async def aclose(self) -> None:
        self.calls.append("aclose")


def test_asking_a_model_loads_it_and_closes_it_whatever_happens() -> None:
    request = LLMRequest(model="m", messages=[Msg.user("hi")])
    fine = _Provider("  Hello\nthere ")
    assert asyncio.run(ask(fine, request)) == "  Hello\nthere "
    assert fine.calls == ["load", "complete", "aclose"]
    broken = _Provider(ConnectionError("refused"))
    with pytest.raises(ConnectionError):
        asyncio.run(ask(broken, request))
    assert broken.calls == ["load", "complete", "aclose"]


def test_the_model_test_says_a_failure_and_an_empty_answer_in_words() -> None:
    refused: Any = _Provider(ConnectionError("connection refused"))
    with pytest.raises(CheckFailed, match="connection refused"):
        asyncio.run(ask_model(Settings(), provider=refused))
    with pytest.raises(CheckFailed) as empty:
        asyncio.run(ask_model(Settings(), provider=_Provider("   ")))
    assert empty.value.words == Words("The model answered, but with no text.")
    assert asyncio.run(ask_model(Settings(), provider=_Provider(" Hi,\n  you! "))) == "Hi, you!"

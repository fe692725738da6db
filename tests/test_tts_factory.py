"""`tts.engine` in the settings picks the engine, with the configured voice, rate and key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.config import Settings, TTSSettings, load_settings, masked_dump
from app.session import build_tts
from app.tts import TTSEngine, create_tts_engine
from app.tts.auto_voice import AutoVoice
from app.tts.hibari_engine import HibariEngine
from app.tts.openai_speech import OpenAISpeechEngine
from app.tts.pyttsx3_engine import Pyttsx3Engine


async def test_the_default_engine_is_the_natural_voice_with_the_system_voice_beside_it() -> None:
    engine = build_tts(Settings())
    try:
        assert isinstance(engine, AutoVoice) and isinstance(engine, TTSEngine)
        assert isinstance(engine.neural, HibariEngine)
        assert isinstance(engine.system, Pyttsx3Engine)
    finally:
        await engine.aclose()  # hibari had started loading in the background


def test_the_system_voice_alone_is_one_setting_away() -> None:
    assert isinstance(build_tts(Settings(tts=TTSSettings(engine="pyttsx3"))), Pyttsx3Engine)


async def test_each_engine_name_builds_its_engine() -> None:
    hibari = create_tts_engine(TTSSettings(engine="hibari"))
    await hibari.aclose()  # it had started loading in the background
    assert isinstance(hibari, HibariEngine)
    engine = create_tts_engine(TTSSettings(engine="openai_speech", endpoint="http://x:1/v1/"))
    assert isinstance(engine, OpenAISpeechEngine) and engine.endpoint == "http://x:1/v1"


def test_the_engine_comes_from_the_config_file() -> None:
    path = Path(os.environ["COMPANION_CONFIG"])  # a per-test file (conftest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[tts]\nengine = "openai_speech"\nendpoint = "http://127.0.0.1:8880/v1"\n'
        'voice = "af_heart"\nmodel = "kokoro"\napi_key = "sk-from-file-123456"\n'
    )
    settings = load_settings()
    engine = build_tts(settings)
    assert isinstance(engine, OpenAISpeechEngine)
    assert masked_dump(settings)["tts"]["api_key"] == "****3456"
    assert "sk-from-file" not in repr(settings.tts)


def test_openai_takes_the_environment_key_only_for_openai(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key")
    openai = create_tts_engine(TTSSettings(engine="openai_speech"))
    assert openai._headers() == {"Authorization": "Bearer sk-env-key"}  # type: ignore[attr-defined]
    local = create_tts_engine(
        TTSSettings(engine="openai_speech", endpoint="http://127.0.0.1:8880/v1")
    )
    assert local._headers() == {}  # type: ignore[attr-defined]
    configured = create_tts_engine(
        TTSSettings(engine="openai_speech", api_key=SecretStr("sk-configured"))
    )
    assert configured._headers() == {"Authorization": "Bearer sk-configured"}  # type: ignore[attr-defined]

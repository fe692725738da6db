"""The speech recognition contract and the factory that picks an adapter."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Mapping
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from app.speech.errors import SpeechAuthError

Adapter = Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"]

ADAPTERS: tuple[Adapter, ...] = (
    "whisper_local",
    "openai_transcribe",
    "doubao_asr",
    "dashscope_funasr",
)


class SpeechConfig(BaseModel):
    """Which recognizer to use. Construction of a client from it connects nothing.

    `model` and `endpoint` left as `None` mean the adapter's own default.
    `provider_api_keys` maps an adapter name to its key; `app_id` and
    `resource_id` are Volcengine's (doubao_asr) extra credentials.
    """

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    adapter: Adapter = "whisper_local"
    endpoint: str | None = None
    model: str | None = None
    model_path: Path | None = None
    language: str | None = "en"
    threads: int | None = None
    provider_api_keys: Mapping[str, SecretStr] = {}
    app_id: str | None = None
    resource_id: str | None = None
    # whisper_local re-transcribes the growing utterance after this much new audio
    # (seconds) to show partial text while the user speaks; 0 turns partials off.
    partial_interval_s: float = Field(1.0, ge=0.0)
    timeout_s: float = Field(30.0, gt=0.0)


class TranscriptionEvent(BaseModel):
    """`text` is the whole text heard so far, not a delta; `is_final` marks the one last event."""

    model_config = ConfigDict(frozen=True)

    text: str
    is_final: bool


@runtime_checkable
class SpeechClient(Protocol):
    async def load(self) -> None:
        """Prepare the model ahead of the first utterance (optional speed-up; no network)."""

    def stream(self, audio: AsyncIterable[bytes]) -> AsyncGenerator[TranscriptionEvent, None]:
        """Transcribe 16 kHz s16le mono PCM chunks; a successful end yields one final event.

        An async generator, so a consumer that stops early can close it at once
        (`contextlib.aclosing`), which closes `audio` too.
        """
        ...


def language_code(language: str | None) -> str | None:
    """The base ISO 639 code of a configured language ("en-US" → "en"); None = detect."""
    if not language or language.lower() in ("auto", "detect"):
        return None
    return language.replace("_", "-").split("-")[0].lower()


def resolve_api_key(config: SpeechConfig, api_key: str | None) -> str | None:
    """The key for `config.adapter`: the explicit one, else `provider_api_keys[adapter]`.

    Never the chat model's key and never an environment variable meant for it:
    a speech service is billed and trusted separately.
    """
    if api_key:
        return api_key
    stored = config.provider_api_keys.get(config.adapter)
    if stored is not None and stored.get_secret_value():
        return stored.get_secret_value()
    return None


def require_key(key: str | None, adapter: str, service: str) -> str:
    """`key`, or a `SpeechAuthError` saying where to put one."""
    if not key:
        raise SpeechAuthError(
            f"No API key is configured for {service}: set speech.api_key "
            f"(provider_api_keys['{adapter}'])"
        )
    return key


def create_speech_client(
    config: SpeechConfig, *, api_key: str | None = None
) -> SpeechClient | None:
    """The client for `config.adapter`, or `None` when speech is disabled.

    A key comes from `api_key` or `config.provider_api_keys[adapter]`, never from
    the chat model's key. Nothing connects here: a missing key is reported by
    the first `stream()`.
    """
    if not config.enabled:
        return None
    key = resolve_api_key(config, api_key)
    if config.adapter == "whisper_local":
        from app.speech.adapters.whisper_local import WhisperLocalClient

        return WhisperLocalClient(config)
    if config.adapter == "openai_transcribe":
        from app.speech.adapters.openai_transcribe import OpenAITranscribeClient

        return OpenAITranscribeClient(config, api_key=key)
    if config.adapter == "doubao_asr":
        from app.speech.adapters.doubao_asr import DoubaoASRClient

        return DoubaoASRClient(config, api_key=key)
    if config.adapter == "dashscope_funasr":
        from app.speech.adapters.dashscope_funasr import DashScopeFunASRClient

        return DashScopeFunASRClient(config, api_key=key)
    raise ValueError(f"unknown speech adapter {config.adapter!r}; choose one of {ADAPTERS}")

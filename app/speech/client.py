"""The speech recognition contract and the factory that picks an adapter."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, SecretStr

Adapter = Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"]


class SpeechConfig(BaseModel):
    """Which recognizer to use. Construction of a client from it connects nothing."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    adapter: Adapter = "whisper_local"
    endpoint: str | None = None
    model: str = "tiny.en"
    model_path: Path | None = None
    language: str | None = "en"
    threads: int | None = None
    provider_api_keys: Mapping[str, SecretStr] = {}


class TranscriptionEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    is_final: bool


@runtime_checkable
class SpeechClient(Protocol):
    async def load(self) -> None:
        """Prepare the model or connection ahead of the first utterance (optional speed-up)."""

    def stream(self, audio: AsyncIterable[bytes]) -> AsyncIterator[TranscriptionEvent]:
        """Transcribe 16 kHz s16le mono PCM chunks; a successful end yields one final event."""
        ...


def create_speech_client(
    config: SpeechConfig, *, api_key: str | None = None
) -> SpeechClient | None:
    """The client for `config.adapter`, or `None` when speech is disabled.

    A key comes from `api_key` or `config.provider_api_keys[adapter]`, never from
    the chat model's key.
    """
    if not config.enabled:
        return None
    if config.adapter == "whisper_local":
        from app.speech.adapters.whisper_local import WhisperLocalClient

        return WhisperLocalClient(config)
    key = api_key
    if key is None and config.adapter in config.provider_api_keys:
        key = config.provider_api_keys[config.adapter].get_secret_value()
    raise NotImplementedError(
        f"The {config.adapter} speech adapter is not available in this build; "
        "use adapter = 'whisper_local'"
    )

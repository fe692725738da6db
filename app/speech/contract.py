"""The speech recognition contract: the config, the events, the adapter protocol every
recognizer implements (`SpeechClient` enforces the rest), and the key and language
rules the adapters share."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from app.speech.errors import SpeechAuthError

if TYPE_CHECKING:
    from app.config import SpeechSettings

Adapter = Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"]

# Words wanted in a hurry (a barge-in: the companion's voice is paused until they are
# in): a recognizer that can trade accuracy for speed does (whisper_local decodes
# greedily instead of with its beams). Set with `hurried()`; copied into the threads
# `asyncio.to_thread` runs.
HURRIED: ContextVar[bool] = ContextVar("speech_hurried", default=False)


@contextlib.contextmanager
def hurried() -> Iterator[None]:
    """Recognitions started inside are wanted fast rather than best (`HURRIED`)."""
    token = HURRIED.set(True)
    try:
        yield
    finally:
        HURRIED.reset(token)


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
    `resource_id` are Volcengine's (doubao_asr) extra credentials. `language` "auto"
    (or None) follows `ui_language` (the windows' language; None: the system's) unless
    the recognizer is sure it heard another (`app.speech.languages`). `known_words`
    are names and rare words to listen for (whisper_local: its `hotwords`);
    `SpeechClient.set_known_words` replaces them at any time.
    """

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    adapter: Adapter = "whisper_local"
    endpoint: str | None = None
    model: str | None = None
    model_path: Path | None = None
    language: str | None = "en"
    threads: int | None = None
    ui_language: str | None = None
    known_words: tuple[str, ...] = ()
    provider_api_keys: Mapping[str, SecretStr] = {}
    app_id: str | None = None
    resource_id: str | None = None
    # whisper_local re-transcribes the growing utterance after this much new audio
    # (seconds) to show partial text while the user speaks; 0 turns partials off.
    partial_interval_s: float = Field(1.0, ge=0.0)
    timeout_s: float = Field(30.0, gt=0.0)

    @classmethod
    def from_settings(
        cls, settings: SpeechSettings, *, enabled: bool = True, ui_language: str | None = None
    ) -> SpeechConfig:
        """The recognizer the user's speech settings describe; their key is the adapter's.
        `ui_language` is the windows' language (`ui.language`), which `auto` follows."""
        key = settings.api_key
        return cls(
            enabled=enabled,
            ui_language=ui_language,
            provider_api_keys={settings.adapter: key} if key else {},
            **settings.model_dump(exclude={"api_key"}),
        )


class TranscriptionEvent(BaseModel):
    """`text` is the whole text heard so far, not a delta; `is_final` marks the one last
    event. `language` is the language the text is in (whisper's code, "en", "zh"), when
    the recognizer knows it (None: it does not say)."""

    model_config = ConfigDict(frozen=True)

    text: str
    is_final: bool
    language: str | None = None


@runtime_checkable
class SpeechAdapter(Protocol):
    """One recognizer behind `SpeechClient`: it only turns audio into events.

    `audio` is already checked PCM (16 kHz s16le mono, non-empty chunks aligned to
    2 bytes, no WAV header), at least one chunk of it; the adapter yields
    `TranscriptionEvent`s whose `text` is the whole text heard so far, ending with
    one final event once the audio has ended. Everything else (checking, closing,
    holding the final back, refusing a final after a failure or a cancellation) is
    the client's. An adapter may also have `async load()` (prepare a model; no
    network) and `async aclose()`.
    """

    def stream(self, audio: AsyncIterator[bytes]) -> AsyncIterator[TranscriptionEvent]: ...


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

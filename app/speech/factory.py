"""Picks the speech recognition adapter a config (or the user's speech settings) names."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from app.speech.client import SpeechClient
from app.speech.contract import ADAPTERS, SpeechAdapter, SpeechConfig, resolve_api_key

if TYPE_CHECKING:
    from app.config import SpeechSettings


@overload
def create_speech_client(
    config: SpeechConfig, *, api_key: str | None = None, ui_language: str | None = None
) -> SpeechClient | None: ...


@overload
def create_speech_client(
    config: SpeechSettings, *, api_key: str | None = None, ui_language: str | None = None
) -> SpeechClient: ...


def create_speech_client(
    config: SpeechConfig | SpeechSettings,
    *,
    api_key: str | None = None,
    ui_language: str | None = None,
) -> SpeechClient | None:
    """`SpeechClient(adapter)` for `config.adapter`, or `None` when speech is disabled. The user's
    speech settings (`Settings.speech`) always give one (`SpeechConfig.from_settings`).

    A key comes from `api_key` or `config.provider_api_keys[adapter]`, never from
    the chat model's key. Nothing connects here: a missing key is reported by
    the first `stream()`. The adapters are imported only when chosen (they bring
    numpy, httpx or websockets). `ui_language` (the windows' language, `ui.language`)
    is what `speech.language = "auto"` follows; None follows the system's.
    """
    if not isinstance(config, SpeechConfig):
        config = SpeechConfig.from_settings(config, ui_language=ui_language)
    elif ui_language is not None:
        config = config.model_copy(update={"ui_language": ui_language})
    if not config.enabled:
        return None
    key = resolve_api_key(config, api_key)
    adapter: SpeechAdapter
    if config.adapter == "whisper_local":
        from app.speech.adapters.whisper_local import WhisperLocalAdapter

        adapter = WhisperLocalAdapter(config)
    elif config.adapter == "openai_transcribe":
        from app.speech.adapters.openai_transcribe import OpenAITranscribeAdapter

        adapter = OpenAITranscribeAdapter(config, api_key=key)
    elif config.adapter == "doubao_asr":
        from app.speech.adapters.doubao_asr import DoubaoASRAdapter

        adapter = DoubaoASRAdapter(config, api_key=key)
    elif config.adapter == "dashscope_funasr":
        from app.speech.adapters.dashscope_funasr import DashScopeFunASRAdapter

        adapter = DashScopeFunASRAdapter(config, api_key=key)
    else:
        raise ValueError(f"unknown speech adapter {config.adapter!r}; choose one of {ADAPTERS}")
    # Each adapter enforces `timeout_s` per network step itself, with a better word for
    # what hung; the client's own watch is the backstop behind it.
    return SpeechClient(adapter, stall_timeout_s=2 * config.timeout_s)

"""Settings: defaults, then the user's TOML file, then `COMPANION_*` environment variables.

The file lives in the user's config directory (platformdirs) and is meant to be
edited by hand. Secrets are `SecretStr`: they print masked everywhere.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

APP_NAME = "companion"
CONFIG_ENV = "COMPANION_CONFIG"


def config_path() -> Path:
    """The config file: `$COMPANION_CONFIG` if set, else `<user config dir>/config.toml`."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def data_dir() -> Path:
    """Where history and captures are kept; `$COMPANION_DATA_DIR` overrides."""
    explicit = os.environ.get("COMPANION_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class ChatSettings(BaseModel):
    """The chat model. `model` is `provider/name`; `local/smollm2` is the embedded default."""

    model: str = "local/smollm2"
    base_url: str | None = None
    api_key: SecretStr | None = None
    api_style: Literal["chat", "responses"] = "chat"
    temperature: float | None = 0.7
    max_tokens: int | None = 200
    timeout_s: float = 60.0
    local_model_path: Path | None = None
    local_threads: int | None = None
    local_context: int = 2048


class SpeechSettings(BaseModel):
    """Speech recognition. `model`/`endpoint` unset = the adapter's default (tiny.en for
    whisper_local). `api_key` is the speech service's own key, never the chat model's;
    doubao_asr also needs `app_id` (Volcengine APP ID) and may take `resource_id`."""

    adapter: Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"] = (
        "whisper_local"
    )
    model: str | None = None
    model_path: Path | None = None
    language: str | None = "en"
    threads: int | None = None
    endpoint: str | None = None
    api_key: SecretStr | None = None
    app_id: str | None = None
    resource_id: str | None = None
    # whisper_local: re-transcribe the growing utterance after this many seconds of new
    # audio to show partial text while the user speaks; 0 turns partials off.
    partial_interval_s: float = Field(1.0, ge=0.0, le=30.0)
    timeout_s: float = Field(30.0, gt=0.0)


class VadSettings(BaseModel):
    start_threshold: float = Field(0.5, ge=0.0, le=1.0)
    stop_threshold: float = Field(0.35, ge=0.0, le=1.0)
    end_silence_ms: int = Field(640, ge=100, le=5000)
    pre_speech_pad_ms: int = Field(300, ge=0, le=2000)
    min_speech_ms: int = Field(250, ge=0, le=5000)
    max_utterance_s: float = Field(30.0, ge=1.0)
    # Barge-in: user speech lasting this long while the companion speaks interrupts it.
    barge_in_ms: int = Field(500, ge=100, le=5000)


class AudioSettings(BaseModel):
    input_device: str | int | None = None
    output_device: str | int | None = None
    volume: float = Field(1.0, ge=0.0, le=2.0)
    # Without headphones the mic hears the companion: ignore it while speaking,
    # plus this tail for the room's echo.
    echo_tail_ms: int = 250
    # always_on: the VAD decides; push_to_talk: only while the key/button is held;
    # muted: the microphone is ignored.
    mic_mode: Literal["always_on", "push_to_talk", "muted"] = "always_on"
    # Letting the user interrupt the companion by speaking over it (always-on mode).
    # It needs echo cancellation (echo_mode aec/auto with pywebrtc-audio): with
    # half_duplex the mic is ignored while the companion speaks, whatever this says.
    # On by default: in the simulated room (bench/bench_barge_in.py) 0 of 324
    # sentences interrupted themselves, warm-up included, and 324/324 users were heard.
    barge_in: bool = True
    # aec: WebRTC echo cancellation on the mic, with the played audio as reference;
    # half_duplex: the mic is ignored while the companion speaks; auto: aec when
    # pywebrtc-audio is installed, else half_duplex.
    echo_mode: Literal["aec", "half_duplex", "auto"] = "auto"
    # A barge-in stops the voice at once; when it brings no words (the user's speech
    # ends within this time with no utterance, or its transcript is empty), nothing
    # is stored as interrupted and the companion speaks on from where it stopped.
    resume_timeout_s: float = Field(1.5, ge=0.1, le=10.0)


class TTSSettings(BaseModel):
    """The voice. `engine`: `pyttsx3` (the system voice), `hibari` (an offline neural
    voice that ships in its package) or `openai_speech` (OpenAI or any server with an
    OpenAI-compatible `/audio/speech`). `voice` is an id from that engine's voice list;
    `rate` is words per minute (175 = the engine's normal pace)."""

    engine: Literal["pyttsx3", "hibari", "openai_speech"] = "pyttsx3"
    voice: str | None = None
    rate: int = 175
    lookahead: int = Field(2, ge=1, le=8)
    # hibari: another voice model file (for example one copied by hand)
    model_path: Path | None = None
    # openai_speech: the API base (it ends in /v1), the model name, the key, the format
    endpoint: str = "https://api.openai.com/v1"
    model: str | None = None
    api_key: SecretStr | None = None
    audio_format: Literal["pcm", "wav"] = "pcm"
    timeout_s: float = Field(30.0, gt=0)


class PersonaSettings(BaseModel):
    """The character. `character_file` (TOML: name, system_prompt, expressions) is the
    default character when unset; `name` and `system_prompt` set here override it."""

    name: str = "Mika"
    system_prompt: str | None = None
    character_file: Path | None = None


class AgentSettings(BaseModel):
    """The agent's tool loop and how images reach the model."""

    enable_tool: bool = True
    max_tool_rounds: int = Field(6, ge=0, le=50)
    tool_timeout_s: float = Field(30.0, gt=0)
    # None: from the model catalogue (unknown models are taken as text-only).
    chat_supports_vision: bool | None = None
    # Also keep a text summary of every image in the history (a vision pre-call each).
    require_detailed: bool = False
    # Ask the user before each screenshot the model wants to take.
    confirm_screenshots: bool = False
    allow_clipboard: bool = False
    # None: from the model catalogue (local models: chat.local_context).
    context_window: int | None = Field(None, gt=0)
    # The vision model that describes images for a text-only chat model (a route).
    vision_model: str | None = None
    vision_base_url: str | None = None
    vision_api_key: SecretStr | None = None
    vision_api_style: Literal["chat", "responses"] = "chat"


class ToolParameter(BaseModel):
    type: Literal["string", "integer", "number", "boolean"] = "string"
    description: str = ""
    required: bool | None = None  # default: required unless a default is given
    default: str | int | float | bool | None = None


class UserToolSettings(BaseModel):
    """A user tool: a program run without a shell; `{param}` in an argument is replaced
    by the model's value. Its standard output is what the model reads."""

    command: str | list[str]
    description: str = ""
    parameters: dict[str, ToolParameter] = Field(default_factory=dict)
    timeout_s: float = Field(30.0, gt=0)


class McpServerSettings(BaseModel):
    """An MCP server started as a child process and spoken to over stdio."""

    command: str | list[str]
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float = Field(30.0, gt=0)
    enabled: bool = True


class McpSettings(BaseModel):
    servers: dict[str, McpServerSettings] = Field(default_factory=dict)


class VTubeStudioSettings(BaseModel):
    """The VTube Studio bridge: its plugin API on `host:port`, and which of the model's
    hotkeys (ids or names, from VTube Studio's hotkey list) shows each expression."""

    host: str = "127.0.0.1"
    port: int = Field(8001, ge=1, le=65535)
    hotkeys: dict[str, str] = Field(default_factory=dict)
    mouth_parameter: str = "MouthOpen"
    plugin_name: str = "Companion"
    plugin_developer: str = "Companion"


class AvatarSettings(BaseModel):
    """The avatar. `pack`: a sprite pack folder (frames + `avatar.toml`); unset, the
    default character. `renderer`: `sprite` (in the window) or `vtube_studio` (also
    drive a VTube Studio model). `idle_s`: back to neutral after this long without a
    new expression (unset: `expression_idle_s`)."""

    pack: Path | None = None
    renderer: Literal["sprite", "vtube_studio"] = "sprite"
    idle_s: float | None = Field(None, gt=0)
    vtube_studio: VTubeStudioSettings = VTubeStudioSettings()


class UiSettings(BaseModel):
    """The desktop shell. Geometry is `[x, y, width, height]` per screen name, so the
    window and the pet come back where they were on each monitor."""

    window_geometry: dict[str, list[int]] = Field(default_factory=dict)
    pet_geometry: dict[str, list[int]] = Field(default_factory=dict)
    # The pet lets clicks through to the windows under it (its menu is then in the tray).
    click_through: bool = False
    start_in_pet_mode: bool = False
    first_run_done: bool = False
    # System-wide hotkeys (pynput key combinations; "" turns one off). On Linux they
    # need an X11 display (XWayland under Wayland). The in-app shortcuts always work.
    global_hotkeys: bool = True
    hotkey_push_to_talk: str = "<ctrl>+<alt>+<space>"
    hotkey_interrupt: str = "<ctrl>+<alt>+s"
    hotkey_mute: str = "<ctrl>+<alt>+m"


class Settings(BaseSettings):
    """All settings. Environment: `COMPANION_CHAT__MODEL=...` etc. (double underscore nests)."""

    model_config = SettingsConfigDict(
        env_prefix="COMPANION_", env_nested_delimiter="__", extra="ignore"
    )

    chat: ChatSettings = ChatSettings()
    speech: SpeechSettings = SpeechSettings()
    vad: VadSettings = VadSettings()
    audio: AudioSettings = AudioSettings()
    tts: TTSSettings = TTSSettings()
    persona: PersonaSettings = PersonaSettings()
    agent: AgentSettings = AgentSettings()
    tools: dict[str, UserToolSettings] = Field(default_factory=dict)
    mcp: McpSettings = McpSettings()
    avatar: AvatarSettings = AvatarSettings()
    ui: UiSettings = UiSettings()
    expression_idle_s: float = 20.0

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = config_path()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


class ConfigError(Exception):
    """The config file cannot be used; the message says where and what to fix."""


def load_settings(**overrides: Any) -> Settings:
    """Load settings; a broken config file becomes a `ConfigError` naming the file and the field."""
    path = config_path()
    if path.is_file():
        try:
            tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML ({exc}); fix or delete it") from exc
    try:
        return resolve_secrets(Settings(**overrides))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Settings in {path} or COMPANION_* are invalid: {problems}") from exc


def masked_dump(settings: Settings) -> dict[str, Any]:
    """Settings as plain data with every secret masked (for `companion config show`)."""

    def mask(value: Any) -> Any:
        if isinstance(value, SecretStr):
            raw = value.get_secret_value()
            return "" if not raw else "****" + (raw[-4:] if len(raw) >= 12 else "")
        if isinstance(value, dict):
            return {k: mask(v) for k, v in value.items()}
        if isinstance(value, Path):
            return str(value)
        return value

    data: dict[str, Any] = mask(settings.model_dump())
    return data


# -- writing the file back -------------------------------------------------------------

KEYRING_SERVICE = "companion"
KEYRING_PREFIX = "keyring:"  # a secret's value in the file when the keyring holds it


def _store_secret(name: str, value: str) -> str:
    """Put a secret in the system keyring; returns what the file holds instead (a
    reference), or the value itself when no keyring works on this system."""
    try:
        import keyring
        from keyring.errors import KeyringError

        keyring.set_password(KEYRING_SERVICE, name, value)
    except (ImportError, KeyringError, RuntimeError, OSError):
        return value
    return KEYRING_PREFIX + name


def _resolve_secret(reference: str) -> str | None:
    try:
        import keyring
        from keyring.errors import KeyringError

        return keyring.get_password(KEYRING_SERVICE, reference[len(KEYRING_PREFIX) :])
    except (ImportError, KeyringError, RuntimeError, OSError):
        return None


def resolve_secrets(settings: Settings) -> Settings:
    """Replace every `keyring:NAME` secret with the keyring's value (in place)."""

    def walk(model: BaseModel) -> None:
        for name in type(model).model_fields:
            value = getattr(model, name)
            if isinstance(value, SecretStr):
                raw = value.get_secret_value()
                if raw.startswith(KEYRING_PREFIX):
                    found = _resolve_secret(raw)
                    setattr(model, name, SecretStr(found) if found is not None else None)
            elif isinstance(value, BaseModel):
                walk(value)

    walk(settings)
    return settings


def _plain(value: Any, secret_name: str, secrets: bool) -> Any:
    if isinstance(value, SecretStr):
        raw = value.get_secret_value()
        if not raw or raw.startswith(KEYRING_PREFIX) or not secrets:
            return raw
        return _store_secret(secret_name, raw)
    if isinstance(value, BaseModel):
        return {
            k: _plain(getattr(value, k), _join(secret_name, k), secrets)
            for k in type(value).model_fields
        }
    if isinstance(value, dict):
        return {str(k): _plain(v, _join(secret_name, str(k)), secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, secret_name, secrets) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _merge(table: Any, values: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Write `values` into a tomlkit table, keeping the user's comments and order: a
    value equal to its default is written only if the file already had the key."""
    import tomlkit

    for key, value in values.items():
        default = defaults.get(key) if isinstance(defaults, dict) else None
        if isinstance(value, dict):
            if key in table and isinstance(table[key], dict):
                _merge(table[key], value, default if isinstance(default, dict) else {})
            elif value != default:
                sub = tomlkit.table()
                _merge(sub, value, default if isinstance(default, dict) else {})
                if len(sub):
                    table[key] = sub
        elif value is None:
            if key in table:
                del table[key]
        elif value != default or key in table:
            table[key] = value
    if isinstance(defaults, dict) and not defaults and isinstance(values, dict):
        for key in [k for k in table if k not in values]:  # a map entry the user removed
            del table[key]


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write `settings` to the config file (default `config_path()`), keeping the user's
    comments and layout. Secrets go to the system keyring when it works (the file
    holds `keyring:NAME`); only without a keyring are they written to the file."""
    import tomlkit

    path = path or config_path()
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    doc = tomlkit.parse(text)
    values = _plain(settings, "", secrets=True)
    defaults = _plain(Settings.model_construct(), "", secrets=False)
    _merge(doc, values, defaults)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)  # a crash mid-write never leaves half a file
    return path

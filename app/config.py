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

    model: str = Field(
        "local/smollm2",
        description="The chat model that answers you, as provider/name; "
        "local/smollm2 runs offline on this computer.",
    )
    base_url: str | None = Field(
        None,
        description="The address of the chat model's server, such as "
        "http://127.0.0.1:8080/v1; empty uses the provider's usual address.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="Your secret key for the chat model's provider; empty uses the "
        "provider's environment variable (such as OPENAI_API_KEY).",
    )
    api_style: Literal["chat", "responses"] = Field(
        "chat",
        description="For OpenAI models only: chat uses the Chat Completions API, "
        "responses the newer Responses API.",
    )
    temperature: float | None = Field(
        0.7,
        description="How varied the replies are: lower is steadier, higher more "
        "playful; automatic leaves it to the model.",
    )
    max_tokens: int | None = Field(
        200,
        description="The longest reply, in tokens (a token is about three quarters of "
        "a word); automatic leaves it to the model.",
    )
    timeout_s: float = Field(
        60.0,
        description="How long to wait for the chat model (and the vision model), in "
        "seconds, before giving up.",
    )
    local_model_path: Path | None = Field(
        None,
        description="Offline model only: a GGUF model file to use instead of the built-in one.",
    )
    local_threads: int | None = Field(
        None,
        description="Offline model only: how many processor threads it may use; "
        "automatic uses all of them.",
    )
    local_context: int = Field(
        2048,
        description="Offline model only: how much conversation it can keep in mind "
        "at once, in tokens.",
    )


class SpeechSettings(BaseModel):
    """Speech recognition. `model`/`endpoint` unset = the adapter's default (tiny.en for
    whisper_local). `api_key` is the speech service's own key, never the chat model's;
    doubao_asr also needs `app_id` (Volcengine APP ID) and may take `resource_id`."""

    adapter: Literal["whisper_local", "openai_transcribe", "doubao_asr", "dashscope_funasr"] = (
        Field(
            "whisper_local",
            description="What turns your voice into text: whisper_local works offline, "
            "the others are online services.",
        )
    )
    model: str | None = Field(
        None,
        description="The recognition model's name; empty uses the recognizer's default "
        "(tiny.en for whisper_local).",
    )
    model_path: Path | None = Field(
        None,
        description="whisper_local only: a folder holding a faster-whisper model to use "
        "instead of the built-in one.",
    )
    language: str | None = Field(
        "en",
        description="The language you speak, as a code such as en or zh; empty or auto detects it.",
    )
    threads: int | None = Field(
        None,
        description="whisper_local only: how many processor threads recognition may "
        "use; automatic uses all of them.",
    )
    endpoint: str | None = Field(
        None,
        description="The speech service's address; empty uses the service's usual address.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="Your secret key for the speech service (never the chat model's key).",
    )
    app_id: str | None = Field(None, description="doubao_asr only: your Volcengine APP ID.")
    resource_id: str | None = Field(
        None,
        description="doubao_asr only: the Volcengine resource ID; empty uses "
        "volc.bigasr.sauc.duration.",
    )
    # whisper_local re-transcribes the growing utterance after this much new audio.
    partial_interval_s: float = Field(
        1.0,
        ge=0.0,
        le=30.0,
        description="whisper_local only: seconds of new speech between live previews of "
        "your words while you talk; 0 turns the preview off.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0.0,
        description="How long to wait for the speech service, in seconds, before giving up.",
    )


class VadSettings(BaseModel):
    """Voice detection: when your speech starts and when your turn is over."""

    start_threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="How sure the detector must be (0 to 1) that you started speaking; "
        "higher ignores more background noise.",
    )
    stop_threshold: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Below this certainty (0 to 1) a moment counts as a pause in your "
        "speech; keep it under the start threshold.",
    )
    end_silence_ms: int = Field(
        640,
        ge=100,
        le=5000,
        description="Silence after speech, in milliseconds, before your turn ends.",
    )
    pre_speech_pad_ms: int = Field(
        300,
        ge=0,
        le=2000,
        description="Sound kept from just before your speech was noticed, in "
        "milliseconds, so the first word is not cut off.",
    )
    min_speech_ms: int = Field(
        250,
        ge=0,
        le=5000,
        description="Sounds shorter than this, in milliseconds, are ignored as noise "
        "(a cough, a click).",
    )
    max_utterance_s: float = Field(
        30.0,
        ge=1.0,
        description="The longest one turn of speech can be, in seconds; longer speech "
        "is cut and sent at that point.",
    )
    # Barge-in: user speech lasting this long while the companion speaks interrupts it.
    barge_in_ms: int = Field(
        500,
        ge=100,
        le=5000,
        description="How long you must speak over the companion, in milliseconds, before "
        "it stops to listen.",
    )


class AudioSettings(BaseModel):
    """The microphone and the speaker, and how they get along while the companion talks."""

    input_device: str | int | None = Field(
        None,
        description="The microphone, by name or number; empty uses the system default.",
    )
    output_device: str | int | None = Field(
        None,
        description="The speaker or headphones for the companion's voice, by name or "
        "number; empty uses the system default.",
    )
    volume: float = Field(
        1.0,
        ge=0.0,
        le=2.0,
        description="How loud the companion's voice is: 1 is normal, 0 silent, 2 twice as loud.",
    )
    # Without headphones the mic hears the companion's voice and the room's echo of it.
    echo_tail_ms: int = Field(
        250,
        description="How long the room's echo of the companion's voice lasts, in "
        "milliseconds; the microphone ignores that echo.",
    )
    mic_mode: Literal["always_on", "push_to_talk", "muted"] = Field(
        "always_on",
        description="When the microphone listens: always, only while you hold the "
        "push-to-talk key or button, or never (muted).",
    )
    # Letting the user interrupt the companion by speaking over it (always-on mode).
    # It needs echo cancellation (echo_mode aec/auto with pywebrtc-audio): with
    # half_duplex the mic is ignored while the companion speaks, whatever this says.
    # On by default: in the simulated room (bench/bench_barge_in.py) 0 of 324
    # sentences interrupted themselves, warm-up included, and 324/324 users were heard.
    barge_in: bool = Field(
        True,
        description="Let you interrupt the companion by speaking over it (needs echo "
        "cancellation and the always-on microphone mode).",
    )
    # aec: WebRTC echo cancellation on the mic, with the played audio as reference;
    # half_duplex: the mic is ignored while the companion speaks; auto: aec when
    # pywebrtc-audio is installed, else half_duplex.
    echo_mode: Literal["aec", "half_duplex", "auto"] = Field(
        "auto",
        description="How the microphone avoids hearing the companion: aec cancels the "
        "echo, half_duplex ignores the mic while it speaks, auto picks aec when possible.",
    )
    # A barge-in stops the voice at once; when it brings no words (the user's speech
    # ends within this time with no utterance, or its transcript is empty), nothing
    # is stored as interrupted and the companion speaks on from where it stopped.
    resume_timeout_s: float = Field(
        1.5,
        ge=0.1,
        le=10.0,
        description="When you speak over the companion but say no words, it carries on "
        "where it stopped after this many seconds.",
    )


class TTSSettings(BaseModel):
    """The voice. `engine`: `pyttsx3` (the system voice), `hibari` (an offline neural
    voice that ships in its package) or `openai_speech` (OpenAI or any server with an
    OpenAI-compatible `/audio/speech`). `voice` is an id from that engine's voice list;
    `rate` is words per minute (175 = the engine's normal pace)."""

    engine: Literal["pyttsx3", "hibari", "openai_speech"] = Field(
        "pyttsx3",
        description="What speaks: pyttsx3 is the system's voice, hibari an offline "
        "natural voice, openai_speech an online speech service.",
    )
    voice: str | None = Field(
        None,
        description="The voice's ID from the engine's list of voices; empty uses the "
        "engine's default voice.",
    )
    rate: int = Field(
        175,
        description="How fast the companion speaks, in words per minute; 175 is the normal pace.",
    )
    lookahead: int = Field(
        2,
        ge=1,
        le=8,
        description="How many sentences are turned into sound ahead of the one being "
        "spoken (1 to 8).",
    )
    model_path: Path | None = Field(
        None,
        description="hibari only: another voice model file to use instead of the one "
        "that comes with it.",
    )
    endpoint: str = Field(
        "https://api.openai.com/v1",
        description="openai_speech only: the speech server's address (it ends in /v1).",
    )
    model: str | None = Field(
        None,
        description="openai_speech only: the speech model's name; empty uses gpt-4o-mini-tts.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="openai_speech only: your secret key for the speech server; empty "
        "uses OPENAI_API_KEY for OpenAI itself.",
    )
    audio_format: Literal["pcm", "wav"] = Field(
        "pcm",
        description="openai_speech only: the sound format asked of the server; choose "
        "wav if the server cannot send raw pcm.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        description="openai_speech only: how long to wait for the speech server, in "
        "seconds, before giving up.",
    )


class PersonaSettings(BaseModel):
    """The character. `character_file` (TOML: name, system_prompt, expressions) is the
    default character when unset; `name` and `system_prompt` set here override it."""

    name: str = Field(
        "Mika",
        description="The companion's name; with a character file, set it only to "
        "change the file's name.",
    )
    system_prompt: str | None = Field(
        None,
        description="The instructions that give the companion its personality; empty "
        "uses the character file's ({name} becomes its name).",
    )
    character_file: Path | None = Field(
        None,
        description="A character file (TOML with a name, instructions and expressions); "
        "empty uses the default character.",
    )


class AgentSettings(BaseModel):
    """The agent's tool loop and how images reach the model."""

    enable_tool: bool = Field(
        True,
        description="Let the model use tools, such as the clock and screenshots (not "
        "with the offline model).",
    )
    max_tool_rounds: int = Field(
        6,
        ge=0,
        le=50,
        description="How many times in a row the model may use tools before it must answer you.",
    )
    tool_timeout_s: float = Field(
        30.0,
        gt=0,
        description="The longest a built-in tool (screenshot, clock, clipboard) may run, in "
        "seconds; your own tools and MCP servers have their own limits.",
    )
    chat_supports_vision: bool | None = Field(
        None,
        description="Whether the chat model can see images; automatic looks it up in "
        "the model list (unknown models count as text-only).",
    )
    require_detailed: bool = Field(
        False,
        description="Also keep a written description of every image in the history "
        "(one extra call to the vision model per image).",
    )
    confirm_screenshots: bool = Field(
        False,
        description="Ask you before each screenshot the model wants to take.",
    )
    allow_clipboard: bool = Field(
        False,
        description="Let the model read the text you copied to the clipboard.",
    )
    context_window: int | None = Field(
        None,
        gt=0,
        description="How much conversation the chat model can read at once, in tokens; "
        "automatic looks it up in the model list.",
    )
    vision_model: str | None = Field(
        None,
        description="A model that describes images for a chat model that cannot see, "
        "as provider/name; empty: none.",
    )
    vision_base_url: str | None = Field(
        None,
        description="The address of the vision model's server; empty uses the "
        "provider's usual address.",
    )
    vision_api_key: SecretStr | None = Field(
        None,
        description="Your secret key for the vision model's provider; empty uses the "
        "provider's environment variable.",
    )
    vision_api_style: Literal["chat", "responses"] = Field(
        "chat",
        description="For OpenAI vision models only: chat uses the Chat Completions API, "
        "responses the newer Responses API.",
    )


class ToolParameter(BaseModel):
    """One value the model passes to a user tool."""

    type: Literal["string", "integer", "number", "boolean"] = Field(
        "string",
        description="The kind of value: string (text), integer, number or boolean (true or false).",
    )
    description: str = Field(
        "", description="What the value means, told to the model so it fills it in well."
    )
    required: bool | None = Field(
        None,
        description="Whether the model must give this value; unset means required "
        "unless a default is given.",
    )
    default: str | int | float | bool | None = Field(
        None, description="The value used when the model gives none."
    )


class UserToolSettings(BaseModel):
    """A user tool: a program run without a shell; `{param}` in an argument is replaced
    by the model's value. Its standard output is what the model reads."""

    command: str | list[str] = Field(
        description="The program to run and its arguments (one line or a list); {name} "
        "in an argument becomes the model's value for name.",
    )
    description: str = Field(
        "", description="What the tool does, told to the model so it knows when to use it."
    )
    parameters: dict[str, ToolParameter] = Field(
        default_factory=dict,
        description="The values the model passes to the tool, by name (each with type, "
        "description, required, default).",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        description="How long the program may run, in seconds, before it is stopped.",
    )


class McpServerSettings(BaseModel):
    """An MCP server started as a child process and spoken to over stdio."""

    command: str | list[str] = Field(
        description="The program that starts the server (alone, or as a list with its arguments).",
    )
    args: list[str] = Field(
        default_factory=list, description="More arguments given to the program."
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra environment variables for the server, by name.",
    )
    cwd: Path | None = Field(
        None,
        description="The folder the server runs in; empty uses the folder the app was started in.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        description="How long to wait for each answer from the server, in seconds.",
    )
    enabled: bool = Field(
        True,
        description="Start this server with the app; off keeps it in the file, unused.",
    )


class McpSettings(BaseModel):
    """MCP servers: programs that give the model more tools."""

    servers: dict[str, McpServerSettings] = Field(
        default_factory=dict,
        description="MCP servers that give the model more tools, by name (each with "
        "command, args, env, cwd, timeout_s, enabled).",
    )


class VTubeStudioSettings(BaseModel):
    """The VTube Studio bridge: its plugin API on `host:port`, and which of the model's
    hotkeys (ids or names, from VTube Studio's hotkey list) shows each expression."""

    host: str = Field(
        "127.0.0.1",
        description="The computer VTube Studio runs on; 127.0.0.1 is this computer.",
    )
    port: int = Field(
        8001,
        ge=1,
        le=65535,
        description="The port of VTube Studio's plugin API (8001 unless you changed it "
        "in VTube Studio).",
    )
    hotkeys: dict[str, str] = Field(
        default_factory=dict,
        description="Which VTube Studio hotkey (ID or name) shows each expression, such "
        'as {"happy": "Smile"}.',
    )
    mouth_parameter: str = Field(
        "MouthOpen",
        description="The model's parameter that opens its mouth while the companion speaks.",
    )
    plugin_name: str = Field(
        "Companion",
        description="The plugin name VTube Studio shows when it asks you to allow access.",
    )
    plugin_developer: str = Field(
        "Companion",
        description="The developer name VTube Studio shows when it asks you to allow access.",
    )


class AvatarSettings(BaseModel):
    """The avatar. `pack`: a sprite pack folder (frames + `avatar.toml`); unset, the
    default character. `renderer`: `sprite` (in the window) or `vtube_studio` (also
    drive a VTube Studio model). `idle_s`: back to neutral after this long without a
    new expression (unset: `expression_idle_s`)."""

    pack: Path | None = Field(
        None,
        description="A sprite pack folder (pictures plus avatar.toml); empty uses the "
        "default character.",
    )
    renderer: Literal["sprite", "vtube_studio"] = Field(
        "sprite",
        description="How the avatar is shown: sprite draws it in the window, "
        "vtube_studio also moves a VTube Studio model.",
    )
    idle_s: float | None = Field(
        None,
        gt=0,
        description="Seconds without a new expression before the face goes back to "
        "neutral; automatic uses the general expression idle time.",
    )
    vtube_studio: VTubeStudioSettings = VTubeStudioSettings()


class UiSettings(BaseModel):
    """The desktop shell. Geometry is `[x, y, width, height]` per screen name, so the
    window and the pet come back where they were on each monitor."""

    window_geometry: dict[str, list[int]] = Field(
        default_factory=dict,
        description="Where the main window was on each screen, as [x, y, width, height].",
    )
    pet_geometry: dict[str, list[int]] = Field(
        default_factory=dict,
        description="Where the desktop pet was on each screen, as [x, y, width, height].",
    )
    click_through: bool = Field(
        False,
        description="Clicks go through the desktop pet to the windows under it (its menu "
        "is then in the tray icon).",
    )
    start_in_pet_mode: bool = Field(
        False,
        description="Start as the desktop pet (the avatar alone on the desktop) instead "
        "of the main window.",
    )
    first_run_done: bool = Field(
        False, description="Whether the first-run guide has been completed."
    )
    language: Literal["auto", "en", "zh_CN"] = Field(
        "auto",
        description="The language of the windows: auto follows the system; en is "
        "English, zh_CN Chinese.",
    )
    # Key combinations are pynput's; the in-app shortcuts always work.
    global_hotkeys: bool = Field(
        True,
        description="The hotkeys below work in every program, not only in this window "
        "(on Linux this needs X11 or XWayland).",
    )
    hotkey_push_to_talk: str = Field(
        "<ctrl>+<alt>+<space>",
        description="The key combination you hold to talk, anywhere; empty turns it off.",
    )
    hotkey_interrupt: str = Field(
        "<ctrl>+<alt>+s",
        description="The key combination that makes the companion stop talking, "
        "anywhere; empty turns it off.",
    )
    hotkey_mute: str = Field(
        "<ctrl>+<alt>+m",
        description="The key combination that turns the microphone off and on, anywhere; "
        "empty turns it off.",
    )


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
    tools: dict[str, UserToolSettings] = Field(
        default_factory=dict,
        description="Your own programs the model may run as tools, by name (each with "
        "command, description, parameters, timeout_s).",
    )
    mcp: McpSettings = McpSettings()
    avatar: AvatarSettings = AvatarSettings()
    ui: UiSettings = UiSettings()
    expression_idle_s: float = Field(
        20.0,
        description="Seconds without a new expression before the avatar's face goes back "
        "to neutral.",
    )

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

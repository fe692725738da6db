"""The settings models besides the voice ones (the chat model, the character, the memory, the
agent and its tools, MCP, the avatar, the desktop shell) and `Settings`, which joins
them all and reads defaults, then the user's TOML file, then `COMPANION_*` variables.
Secrets are `SecretStr`: they print masked everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from app.config.locations import config_path
from app.config.tools import McpSettings, UserToolSettings
from app.config.turn import TurnSettings
from app.config.voice import AudioSettings, SpeechSettings, TTSSettings, VadSettings

ENV_PREFIX = "COMPANION_"
ENV_NESTING = "__"  # COMPANION_CHAT__MODEL sets chat.model


class ChatSettings(BaseModel):
    """The chat model. `model` is `provider/name`; `local/qwen2.5-coder-1.5b` is the
    embedded default, `local/smollm2` the small embedded choice."""

    model: str = Field(
        "local/qwen2.5-coder-1.5b",
        description="The chat model that answers you, as provider/name; "
        "local/qwen2.5-coder-1.5b (smart) and local/smollm2 (small) run offline on this "
        "computer.",
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
    allow_plain_http: bool = Field(
        False,
        description="Send your key to a server outside this computer over plain http:// "
        "(readable on the way: only on a network you trust); off, such a server needs "
        "https://.",
    )
    api_style: Literal["chat", "responses"] = Field(
        "chat",
        description="For OpenAI models only: chat uses the Chat Completions API, "
        "responses the newer Responses API.",
    )
    temperature: float | None = Field(
        0.7,
        ge=0.0,
        le=2.0,
        description="How varied the replies are, from 0 to 2: lower is steadier, higher "
        "more playful; automatic leaves it to the model.",
    )
    max_tokens: int | None = Field(
        200,
        ge=1,
        le=1_000_000,
        description="The longest reply, in tokens, from 1 to 1,000,000 (a token is about "
        "three quarters of a word); automatic leaves it to the model.",
    )
    timeout_s: float = Field(
        60.0,
        gt=0.0,
        le=3600.0,
        description="How long to wait for the chat model (and the vision model), in "
        "seconds (more than 0, at most 3,600), before giving up.",
    )
    aws_region: str | None = Field(
        None,
        description="Amazon Bedrock only: the AWS region to use, such as us-east-1; empty "
        "uses AWS_REGION or the AWS profile's region.",
    )
    aws_profile: str | None = Field(
        None,
        description="Amazon Bedrock only: the AWS profile whose credentials sign the "
        "requests (from ~/.aws); empty uses AWS_PROFILE or the default credentials.",
    )
    local_model_path: Path | None = Field(
        None,
        description="Embedded model only: a GGUF model file to use instead of the one that "
        "comes with Companion.",
    )
    local_threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="Embedded model only: how many processor threads it may use, from 1 "
        "to 256; automatic uses all of them.",
    )
    local_context: int = Field(
        2048,
        ge=256,
        le=262_144,
        description="Embedded model only: how much conversation it can keep in mind "
        "at once, in tokens, from 256 to 262,144.",
    )
    local_gpu: Literal["auto", "off"] = Field(
        "auto",
        description="Embedded model only: auto runs it on the graphics card when "
        "llama-cpp-python was built for one (CUDA, Vulkan or Metal) and falls back to "
        "the processor if that fails; off always uses the processor.",
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
    max_sentences: int = Field(
        3,
        ge=0,
        le=50,
        description="The most sentences in one reply, 0 to 50 (0: no limit); short "
        "replies suit a voice.",
    )


class AgentSettings(BaseModel):
    """The agent's tool loop and how images reach the model."""

    enable_tool: bool = Field(
        True,
        description="Let the model use tools, such as the clock and screenshots. The "
        "embedded model looks at your screen when you ask about it and always knows the "
        "time, but it cannot run your own tools or MCP servers.",
    )
    max_tool_rounds: int = Field(
        6,
        ge=0,
        le=50,
        description="How many times in a row the model may use tools before it must "
        "answer you, from 0 to 50.",
    )
    max_tool_calls_per_round: int = Field(
        4,
        ge=1,
        le=50,
        description="How many tools the model may use at once, from 1 to 50; calls "
        "beyond that are not run, and the model is told so.",
    )
    max_tool_calls: int = Field(
        12,
        ge=1,
        le=200,
        description="How many tools the model may use while it answers one message, "
        "from 1 to 200; then it must answer with what it has.",
    )
    tool_timeout_s: float = Field(
        30.0,
        gt=0,
        le=600,
        description="The longest a built-in tool (screenshot, clock, clipboard) may run, in "
        "seconds (more than 0, at most 600); your own tools and MCP servers have their "
        "own limits.",
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
        ge=256,
        le=10_000_000,
        description="How much conversation the chat model can read at once, in tokens, "
        "from 256 to 10,000,000; automatic looks it up in the model list.",
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
        description="The port of VTube Studio's plugin API, from 1 to 65,535 (8001 unless "
        "you changed it in VTube Studio).",
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


class Live2DSettings(BaseModel):
    """Your own Live2D model (made with Cubism 3 or later), shown instead of the built-in
    avatar in the window and as the desktop pet. How it shows each expression is in
    companion-expressions.toml beside the model, which you may edit."""

    folder: Path | None = Field(
        None,
        description="The folder of your Live2D model (the one with the .model3.json file); "
        "empty shows the built-in avatar.",
    )
    scale: float = Field(
        1.0,
        ge=0.2,
        le=5.0,
        description="How big the model is drawn: 1 fits it in the avatar's place; from 0.2 to 5.",
    )
    x: float = Field(
        0.0,
        ge=-2.0,
        le=2.0,
        description="Moves the model right (or left, below 0); 1 is half the avatar's width; "
        "from -2 to 2.",
    )
    y: float = Field(
        0.0,
        ge=-2.0,
        le=2.0,
        description="Moves the model up (or down, below 0); 1 is half the avatar's height; "
        "from -2 to 2.",
    )
    follow_mouse: bool = Field(
        True, description="The model's eyes and head turn towards the mouse pointer."
    )
    frame_rate: int = Field(
        30,
        ge=5,
        le=60,
        description="Frames drawn per second while the model is on screen; fewer use less "
        "of the processor; from 5 to 60.",
    )


class AvatarSettings(BaseModel):
    """The avatar. `pack`: a sprite pack folder (frames + `avatar.toml`); unset, the
    default character. `live2d`: your own Live2D model instead. `renderer`: `sprite` (in
    the window) or `vtube_studio` (also drive a VTube Studio model). `idle_s`: back to
    neutral after this long without a new expression (unset: `expression_idle_s`)."""

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
        le=3600,
        description="Seconds without a new expression before the face goes back to "
        "neutral (more than 0, at most 3,600); automatic uses the general expression "
        "idle time.",
    )
    live2d: Live2DSettings = Live2DSettings()
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


class MemorySettings(BaseModel):
    """Long-term memory: what the companion remembers about you across conversations,
    kept in one file in the data folder, memory.sqlite3; each character has its own."""

    enabled: bool = Field(
        True,
        description="Remember what you tell the companion from one conversation to the "
        "next (kept on this computer; only the chat model you chose reads it).",
    )
    learn: bool = Field(
        True,
        description="After each reply, ask the chat model what you said that is worth "
        "remembering; off: only what you ask it to remember (\"remember that …\").",
    )
    recall_tokens: int = Field(
        300,
        ge=50,
        le=4000,
        description="How much of its memory the companion reads before each reply, in "
        "tokens, from 50 to 4,000 (a token is about three quarters of a word).",
    )


class Settings(BaseSettings):
    """All settings. Environment: `COMPANION_CHAT__MODEL=...` etc. (double underscore nests)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTING, extra="ignore"
    )

    chat: ChatSettings = ChatSettings()
    speech: SpeechSettings = SpeechSettings()
    vad: VadSettings = VadSettings()
    turn: TurnSettings = TurnSettings()
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
    memory: MemorySettings = MemorySettings()
    expression_idle_s: float = Field(
        20.0,
        gt=0,
        le=3600,
        description="Seconds without a new expression before the avatar's face goes back "
        "to neutral (more than 0, at most 3,600).",
    )
    # What is wrong in the file but did not stop it loading (an unknown key), in words:
    # `load_settings` fills it; the window and the command line tell it.
    _file_warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def file_warnings(self) -> list[str]:
        """Problems in the config file that were ignored (unknown keys), one line each."""
        return list(self._file_warnings)

    # The fields a command-line option set for this run (dotted path -> the option): the
    # settings dialog shows them locked, and they are never saved into the file.
    _command_line: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def command_line(self) -> dict[str, str]:
        """Dotted field path -> the command-line option that set it for this run."""
        return dict(self._command_line)

    def set_by_option(self, path: str, option: str) -> None:
        """Note that the command-line `option` set the field at dotted `path`."""
        self._command_line[path] = option

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

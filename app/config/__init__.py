"""Settings: defaults, then the user's TOML file, then `COMPANION_*` environment variables.

The file lives in the user's config directory (platformdirs) and is meant to be
edited by hand; saving keeps its comments and layout, writes only what the user
changed, and puts keys in the system keyring.

* `locations`: where the file and the data folder are.
* `voice`, `turn`, `models`: the settings models (`Settings` is the whole).
* `loading`: reading them, with a broken file named in words.
* `secret_store`: keys in the keyring (`keyring:NAME` in the file).
* `saving`: merging a person's changes into the file, and writing it.
"""

from app.config.loading import (
    ConfigError,
    describe_validation,
    env_variable,
    load_settings,
    masked_dump,
)
from app.config.locations import (
    APP_NAME,
    CONFIG_ENV,
    DATA_DIR_ENV,
    config_path,
    data_dir,
    private_folder,
    private_profile,
)
from app.config.models import (
    ENV_NESTING,
    ENV_PREFIX,
    AgentSettings,
    AvatarSettings,
    ChatSettings,
    Live2DSettings,
    MemorySettings,
    PersonaSettings,
    Settings,
    UiSettings,
    VTubeStudioSettings,
)
from app.config.saving import (
    ConfigFileUnreadable,
    changes,
    keep_fields_set,
    save_settings,
    settings_to_save,
    validate_plain,
)
from app.config.secret_store import (
    KEYRING_PREFIX,
    KEYRING_SERVICE,
    resolve_secrets,
    secret_fields,
)
from app.config.tools import McpServerSettings, McpSettings, ToolParameter, UserToolSettings
from app.config.turn import TurnSettings
from app.config.voice import AudioSettings, SpeechSettings, TTSSettings, VadSettings

__all__ = [
    "APP_NAME",
    "CONFIG_ENV",
    "DATA_DIR_ENV",
    "ENV_NESTING",
    "ENV_PREFIX",
    "KEYRING_PREFIX",
    "KEYRING_SERVICE",
    "AgentSettings",
    "AudioSettings",
    "AvatarSettings",
    "ChatSettings",
    "ConfigError",
    "ConfigFileUnreadable",
    "Live2DSettings",
    "McpServerSettings",
    "McpSettings",
    "MemorySettings",
    "PersonaSettings",
    "Settings",
    "SpeechSettings",
    "TTSSettings",
    "ToolParameter",
    "TurnSettings",
    "UiSettings",
    "UserToolSettings",
    "VTubeStudioSettings",
    "VadSettings",
    "changes",
    "config_path",
    "data_dir",
    "describe_validation",
    "env_variable",
    "keep_fields_set",
    "load_settings",
    "masked_dump",
    "private_folder",
    "private_profile",
    "resolve_secrets",
    "save_settings",
    "secret_fields",
    "settings_to_save",
    "validate_plain",
]

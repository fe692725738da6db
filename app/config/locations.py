"""Where the settings file and the user's data live (platformdirs), and the variables
that move them."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "companion"
CONFIG_ENV = "COMPANION_CONFIG"
DATA_DIR_ENV = "COMPANION_DATA_DIR"


def config_path() -> Path:
    """The config file: `$COMPANION_CONFIG` if set, else `<user config dir>/config.toml`."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def data_dir() -> Path:
    """Where history and captures are kept; `$COMPANION_DATA_DIR` overrides."""
    explicit = os.environ.get(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))

"""Where the settings file and the user's data live (platformdirs), and the variables
that move them. Both folders hold what is the user's alone (their history, memories,
screenshots, logs, keys without a keyring): they are kept readable by the user only."""

from __future__ import annotations

import contextlib
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


def private_folder(folder: Path) -> Path:
    """`folder`, made if missing, readable and writable by its owner only (0700, where
    the platform has modes): what is inside is then the user's alone, whatever the
    files' own modes (those of an older version included). Left as it is when another
    user owns it or it cannot be changed (the app's files are still written 0600)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and not _shared(folder):
        with contextlib.suppress(OSError):
            info = folder.stat()
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                folder.chmod(0o700)
    return folder


def _shared(folder: Path) -> bool:
    """A folder that is more than the app's: the home folder or one above it (a data
    folder moved there with `$COMPANION_DATA_DIR` must not close the user's home)."""
    try:
        real, home = folder.resolve(), Path.home().resolve()
    except (OSError, RuntimeError):
        return True
    return real == home or real in home.parents


def private_profile() -> None:
    """The data folder and the settings' own folder kept private (a folder named by
    `$COMPANION_CONFIG` may be shared: only the file is then)."""
    with contextlib.suppress(OSError):
        private_folder(data_dir())
    if not os.environ.get(CONFIG_ENV):
        with contextlib.suppress(OSError):
            private_folder(config_path().parent)

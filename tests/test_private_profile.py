"""What is the user's stays theirs on a shared computer: the data folder (history,
memories, screenshots, logs) and the settings' folder are readable by the user only,
the settings file too (it holds keys when there is no keyring), and two programs saving
the settings at once never trip over one temporary file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import Settings, private_folder, save_settings

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_app_keeps_its_data_folder_private_even_one_made_before(tmp_path: Path) -> None:
    data = Path(os.environ["COMPANION_DATA_DIR"])
    data.mkdir(parents=True)
    data.chmod(0o755)  # as an older version left it
    named = Path(os.environ["COMPANION_CONFIG"]).parent  # a folder the user named
    named.mkdir(parents=True)
    named.chmod(0o755)
    (data / "memory.sqlite3").write_text("the user's memories")
    done = subprocess.run(
        [sys.executable, "-m", "app", "config", "path"], capture_output=True, text=True,
        env=dict(os.environ), timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert _mode(data) == 0o700  # what is inside is the user's alone
    assert _mode(named) == 0o755  # may be shared: only the settings file is made private


def test_a_private_folder_is_made_so_and_an_open_one_is_closed(tmp_path: Path) -> None:
    made = private_folder(tmp_path / "new" / "data")
    assert _mode(made) == 0o700
    open_one = tmp_path / "open"
    open_one.mkdir(mode=0o755)
    open_one.chmod(0o755)
    assert _mode(private_folder(open_one)) == 0o700


def test_the_settings_file_is_readable_by_the_user_only(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    settings = Settings()
    settings.persona.name = "Juniper"
    save_settings(settings, path)
    assert _mode(path) == 0o600
    assert 'name = "Juniper"' in path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]  # no temporary left


SAVER = """
import sys
from pathlib import Path
from app.config import Settings, save_settings
path = Path(sys.argv[1])
settings = Settings()
for n in range(150):
    settings.persona.name = f"{sys.argv[2]}{n}"
    save_settings(settings, path)
"""


def test_two_programs_saving_at_once_never_fail(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    root = Path(__file__).resolve().parents[1]
    savers = [
        subprocess.Popen([sys.executable, "-c", SAVER, str(path), who], cwd=root,
                         stderr=subprocess.PIPE, text=True)
        for who in ("a", "b")
    ]
    errors = [saver.communicate(timeout=300)[1] for saver in savers]
    assert [saver.returncode for saver in savers] == [0, 0], errors
    assert 'name = "a149"' in path.read_text() or 'name = "b149"' in path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_where_a_key_goes_is_said_truly_with_or_without_a_keyring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.ui.settings_fields as fields

    monkeypatch.setattr(fields, "keyring_works", lambda: False)  # as on this machine
    told = fields.key_place_text()
    assert "No system keyring works here" in told and "readable only by you" in told
    assert "OPENAI_API_KEY" in told  # the other choice: the environment
    monkeypatch.setattr(fields, "keyring_works", lambda: True)
    assert fields.key_place_text().startswith("The key is kept in your system's keyring")


def test_a_refusing_keyring_backend_counts_as_none() -> None:
    import keyring
    from keyring.backends import fail

    from app.config.secret_store import keyring_works

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert keyring_works() is False
    finally:
        keyring.set_keyring(previous)


def test_a_data_folder_moved_to_the_home_folder_leaves_home_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    assert _mode(private_folder(home)) == 0o755  # `COMPANION_DATA_DIR=~`: not closed
    tmp_path.chmod(0o755)
    assert _mode(private_folder(tmp_path)) == 0o755  # nor a folder above it
    assert _mode(private_folder(home / "companion")) == 0o700  # its own folder is

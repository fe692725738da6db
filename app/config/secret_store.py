"""Keys in the system keyring: the settings file holds `keyring:NAME` in place of a
key whenever the keyring works, and loading puts the key back."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, SecretStr

from app.config.models import Settings

KEYRING_SERVICE = "companion"
KEYRING_PREFIX = "keyring:"  # a secret's value in the file when the keyring holds it


def store_secret(name: str, value: str) -> str:
    """Put a secret in the system keyring; returns what the file holds instead (a
    reference), or the value itself when no keyring works on this system."""
    try:
        import keyring
        from keyring.errors import KeyringError

        keyring.set_password(KEYRING_SERVICE, name, value)
    except (ImportError, KeyringError, RuntimeError, OSError):
        return value
    return KEYRING_PREFIX + name


def keyring_works() -> bool:
    """Whether a system keyring can keep a key here (no D-Bus secret service, a headless
    box or a locked-down session: the `keyring` package falls back to a backend that
    refuses everything)."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            return False
        return float(getattr(backend, "priority", 1)) > 0
    except Exception:  # a broken keyring backend: no keyring, whatever it raised
        return False


def resolve_secret(reference: str) -> str | None:
    """The keyring's value for a `keyring:NAME` reference; None when it has none."""
    try:
        import keyring
        from keyring.errors import KeyringError

        return keyring.get_password(KEYRING_SERVICE, reference[len(KEYRING_PREFIX) :])
    except (ImportError, KeyringError, RuntimeError, OSError):
        return None


def secret_fields(model: BaseModel) -> Iterator[tuple[BaseModel, str, SecretStr]]:
    """(the model holding it, the field's name, the value) of every key in `model`,
    nested models included."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            yield model, name, value
        elif isinstance(value, BaseModel):
            yield from secret_fields(value)


def resolve_secrets(settings: Settings) -> Settings:
    """Replace every `keyring:NAME` secret with the keyring's value (in place)."""
    for owner, name, value in list(secret_fields(settings)):
        raw = value.get_secret_value()
        if raw.startswith(KEYRING_PREFIX):
            found = resolve_secret(raw)
            setattr(owner, name, SecretStr(found) if found is not None else None)
    return settings


def keyring_paths(data: dict[str, object], prefix: str = "") -> frozenset[str]:
    """The dotted paths of the keys a settings file's `data` keeps in the keyring (their
    value there is a `keyring:NAME` reference), so the settings can say where a key is."""
    found: set[str] = set()
    for name, value in data.items():
        path = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, str) and value.startswith(KEYRING_PREFIX):
            found.add(path)
        elif isinstance(value, dict):
            found |= keyring_paths(value, path)
    return frozenset(found)

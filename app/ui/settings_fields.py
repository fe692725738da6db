"""What the settings dialog shows for each field of the config model, before any
widget exists: its tab and section, its label and hints, the providers the model
picker offers, and the kind of editor its type calls for (read from the pydantic
annotations, so a new field needs no code here)."""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from PySide6.QtCore import QCoreApplication

from app.config.secret_store import keyring_works
from app.ui.settings_words import CHECKBOX_TEXT as CHECKBOX_TEXT
from app.ui.settings_words import CHOICE_LABELS as CHOICE_LABELS
from app.ui.settings_words import DEFAULT_HEADERS as DEFAULT_HEADERS
from app.ui.settings_words import HELP as HELP
from app.ui.settings_words import LABELS as LABELS
from app.ui.settings_words import PLACEHOLDERS as PLACEHOLDERS
from app.ui.settings_words import SUFFIXES as SUFFIXES
from app.ui.settings_words import TABLE_HEADERS as TABLE_HEADERS
from app.ui.settings_words import UNIT_SUFFIXES as UNIT_SUFFIXES
from app.ui.settings_words import is_expert
from app.ui.settings_words import suffix_of as suffix_of

CONTEXT = "SettingsDialog"
ERROR_STYLE = "color: #c62828;"


def _tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


EMBEDDED = "local"
PROVIDERS = (
    EMBEDDED,
    "openai",
    "anthropic",
    "gemini",
    "ollama",
    "openrouter",
    "deepseek",
    "openai-compatible",
)
NEEDS_BASE_URL = ("openai-compatible",)
TAKES_BASE_URL = ("openai-compatible", "ollama")


# The providers by their own names (brands: the same in every language).
PROVIDER_NAMES = {
    "openai": "OpenAI",
    "anthropic": "Anthropic (Claude)",
    "gemini": "Google Gemini",
    "ollama": "Ollama",
    "openrouter": "OpenRouter",
    "deepseek": "DeepSeek",
    "bedrock": "Amazon Bedrock",
}


def provider_label(provider: str) -> str:
    if provider == EMBEDDED:
        return _tr("Embedded (offline, on this computer)")
    if provider == "openai-compatible":
        return _tr("Another OpenAI-compatible server")
    return PROVIDER_NAMES.get(provider, provider)


def key_kept_text() -> str:
    return _tr("(saved — leave empty to keep it)")


def key_place_text() -> str:
    """Where a key typed here goes, true for this system (a keyring may not work)."""
    if keyring_works():
        return _tr("The key is kept in your system's keyring, not in the settings file.")
    return _tr(
        "No system keyring works here: the key is kept in the settings file, readable "
        "only by you. To keep it out of the file, leave this empty and set it in the "
        "environment instead (OPENAI_API_KEY, ANTHROPIC_API_KEY, …)."
    )


# -- where each field goes ----------------------------------------------------------------

TABS: tuple[tuple[str, str], ...] = (
    ("model", "Model"),
    ("voice_in", "Voice in"),
    ("voice_out", "Voice out"),
    ("avatar", "Avatar"),
    ("behaviour", "Behaviour"),
    ("privacy", "Privacy"),
    ("advanced", "Advanced"),
)
ADVANCED = "advanced"

# A dotted field path (or a prefix of one) -> its tab; the longest match wins; a field
# no entry matches goes to "Advanced".
PLACEMENT: dict[str, str] = {
    "chat": "model",
    "agent.vision_model": "model",
    "agent.vision_base_url": "model",
    "agent.vision_api_key": "model",
    "agent.vision_api_style": "model",
    "agent.chat_supports_vision": "model",
    "agent.context_window": "model",
    "speech": "voice_in",
    "vad": "voice_in",
    "turn": "voice_in",
    "audio": "voice_in",
    "audio.output_device": "voice_out",
    "audio.volume": "voice_out",
    "tts": "voice_out",
    "avatar": "avatar",
    "expression_idle_s": "avatar",
    "persona": "behaviour",
    "agent": "behaviour",
    "ui": "behaviour",
    "agent.confirm_screenshots": "privacy",
    "agent.allow_clipboard": "privacy",
    "memory": "privacy",
}
# The shell's own state, not settings a person edits.
HIDDEN = frozenset({"ui.window_geometry", "ui.pet_geometry", "ui.first_run_done"})

SECTION_TITLES: dict[str, str] = {
    "": "General",
    "chat": "Chat model",
    "speech": "Speech recognition",
    "vad": "Voice detection",
    "turn": "Turn-taking",
    "audio": "Sound",
    "tts": "Voice",
    "persona": "Character",
    "agent": "Agent",
    "avatar": "Avatar",
    "avatar.live2d": "Live2D model",
    "avatar.vtube_studio": "VTube Studio",
    "ui": "Desktop",
    "mcp": "MCP servers",
    "memory": "Memory",
}
# Folders picked with a "Choose…" button; those listed in FOLDER_CHOICES also get a choice
# in front: (shown when the folder is empty, shown when one is chosen).
FOLDERS = frozenset({"avatar.live2d.folder", "avatar.pack"})
FOLDER_CHOICES: dict[str, tuple[str, str]] = {
    "avatar.live2d.folder": ("Built-in", "Live2D model…"),
}
FOLDER_TITLES: dict[str, str] = {
    "avatar.live2d.folder": "Choose the folder of your Live2D model",
    "avatar.pack": "Choose the folder of an avatar pack",
}
INT_MAX = 2**31 - 1
FLOAT_MAX = 1e9
DECIMALS = 2


ACRONYMS = {
    "api": "API",
    "url": "URL",
    "id": "ID",
    "mcp": "MCP",
    "tts": "TTS",
    "ui": "UI",
    "aws": "AWS",
}
# The section shown first in a tab (the one a person looks for first).
FIRST_SECTIONS = {"voice_in": "audio", "voice_out": "tts"}


def humanize(name: str) -> str:
    """`max_tool_rounds` -> "Max tool rounds", `timeout_s` -> "Timeout (s)"."""
    unit = ""
    for suffix, text in (("_ms", " (ms)"), ("_s", " (s)")):
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], text
            break
    words = [ACRONYMS.get(w, w) for w in name.replace("_", " ").split()]
    if not words:
        return name
    text = " ".join(words)
    return text[:1].upper() + text[1:] + unit


def tab_of(path: str) -> str:
    if is_expert(path):
        return ADVANCED
    best, tab = -1, ADVANCED
    for prefix, target in PLACEMENT.items():
        if (path == prefix or path.startswith(prefix + ".")) and len(prefix) > best:
            best, tab = len(prefix), target
    return tab


# -- reading a field's type ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldKind:
    """What editor a field gets."""

    kind: Literal[
        "bool",
        "choice",
        "int",
        "float",
        "secret",
        "text",
        "model",
        "mapping",
        "list",
        "entries",
        "json",
    ]
    optional: bool = False
    choices: tuple[Any, ...] = ()
    int_text: bool = False  # text that is an int when it is all digits (a device number)
    path: bool = False
    model: type[BaseModel] | None = None  # a section's model, or the model of each entry
    command: bool = False  # a command line, which the file may hold as a list of words


def field_kind(annotation: Any) -> FieldKind:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return field_kind(typing.get_args(annotation)[0])
    args: tuple[Any, ...] = (annotation,)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
    optional = type(None) in args
    rest = tuple(a for a in args if a is not type(None))
    if len(rest) == 1:
        only = rest[0]
        only_origin = typing.get_origin(only)
        if only is bool:
            return FieldKind("bool", optional)
        if only_origin is Literal:
            return FieldKind("choice", optional, tuple(typing.get_args(only)))
        if isinstance(only, type) and issubclass(only, enum.Enum):
            return FieldKind("choice", optional, tuple(m.value for m in only))
        if only is int:
            return FieldKind("int", optional)
        if only is float:
            return FieldKind("float", optional)
        if only is SecretStr:
            return FieldKind("secret", optional)
        if only is str:
            return FieldKind("text", optional)
        if isinstance(only, type) and issubclass(only, Path):
            return FieldKind("text", optional, path=True)
        if isinstance(only, type) and issubclass(only, BaseModel) and not optional:
            return FieldKind("model", False, model=only)
    if set(rest) == {str, int}:
        return FieldKind("text", optional, int_text=True)
    if set(rest) == {str, list[str]}:
        return FieldKind("text", optional, command=True)
    if len(rest) == 1:
        return _collection_kind(rest[0], optional)
    return FieldKind("json", optional)


SCALARS = (str, int, float)


def _collection_kind(annotation: Any, optional: bool) -> FieldKind:
    """A map of names to plain values gets a table, a list of plain values a list;
    anything deeper (maps of tables) stays a JSON text."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is dict and len(args) == 2 and args[0] is str and args[1] in SCALARS:
        return FieldKind("mapping", optional, choices=(args[1],))
    if origin in (list, tuple) and len(args) == 1 and args[0] in SCALARS:
        return FieldKind("list", optional, choices=(args[0],))
    if origin is dict and len(args) == 2 and args[0] is str and _simple_model(args[1]):
        return FieldKind("entries", optional, model=args[1])
    return FieldKind("json", optional)


def _simple_model(annotation: Any) -> bool:
    """A model whose every field has an editor of its own (no deeper maps of tables)."""
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return False
    kinds = [field_kind(f.annotation).kind for f in annotation.model_fields.values()]
    return not any(kind in ("json", "model", "entries") for kind in kinds)


def walk_fields(
    model: type[BaseModel], values: BaseModel | None, prefix: str = ""
) -> Iterator[tuple[str, str, FieldInfo, FieldKind, Any]]:
    """(section, path, field, kind, value) of every leaf field, depth first."""
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if path in HIDDEN:
            continue
        value = getattr(values, name, None) if values is not None else field.default
        kind = field_kind(field.annotation)
        if kind.kind == "model" and kind.model is not None:
            yield from walk_fields(
                kind.model, value if isinstance(value, BaseModel) else None, path
            )
        else:
            yield prefix, path, field, kind, value

"""The UI's view of the session is one declared protocol, `SessionPort`: the real
session and every stand-in provide all of it, and the UI uses nothing else."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported

import ast
import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.config import Settings
from app.session import VoiceSession
from app.ui import SessionLike
from app.ui.app import _UnmadeSession
from app.ui.session_port import SessionPort
from tests.ui_sessions import ScriptedSession

UI = Path(__file__).resolve().parents[1] / "app" / "ui"


def port_members() -> dict[str, Any]:
    return {name: value for name, value in vars(SessionPort).items() if not name.startswith("_")}


def parameters(function: Any) -> list[tuple[str, Any]]:
    signature = inspect.signature(function)
    return [(p.name, p.kind) for p in list(signature.parameters.values())[1:]]  # after self


@pytest.fixture(scope="module")
def voice_session() -> Iterator[VoiceSession]:
    session = VoiceSession(Settings(), sink=MemorySink(), storage=InMemoryStorage())
    yield session
    asyncio.run(session.aclose())


def stand_in(kind: str, voice_session: VoiceSession) -> object:
    if kind == "VoiceSession":
        return voice_session
    if kind == "unmade":
        return _UnmadeSession(RuntimeError("no model"))
    return ScriptedSession()


def test_session_like_is_the_port() -> None:
    assert SessionLike is SessionPort


def test_the_port_lists_what_the_shell_uses() -> None:
    assert set(port_members()) == {
        "events",
        "settings",
        "character",
        "avatar_pack",
        "live2d_model",
        "expressions",
        "memory",
        "start",
        "aclose",
        "send_text",
        "interrupt",
        "answer_capture",
        "mic_mode",
        "set_mic_mode",
        "set_mic_enabled",
        "set_push_to_talk",
        "set_turns_paused",
        "conversation_id",
        "conversations",
        "history_messages",
        "new_conversation",
        "switch_conversation",
        "rename_conversation",
        "delete_conversation",
    }


@pytest.mark.parametrize("kind", ["VoiceSession", "unmade", "scripted"])
def test_every_session_provides_every_member_of_the_port(
    kind: str, voice_session: VoiceSession
) -> None:
    session = stand_in(kind, voice_session)
    for name, declared in port_members().items():
        assert hasattr(session, name), f"{kind} has no {name}"
        found = getattr(session, name)
        if isinstance(declared, property):
            assert not inspect.ismethod(found), f"{kind}.{name} is a method, not a value"
            continue
        assert inspect.ismethod(found), f"{kind}.{name} is not a method"
        assert inspect.iscoroutinefunction(found) == inspect.iscoroutinefunction(declared), (
            f"{kind}.{name}: async in one and not the other"
        )
        wanted = parameters(declared)
        have = parameters(getattr(type(session), name))
        assert have[: len(wanted)] == wanted, f"{kind}.{name}{have} does not take {wanted}"
        extra = inspect.signature(found).parameters.values()
        assert all(
            p.default is not inspect.Parameter.empty
            for p in extra
            if p.name not in dict(wanted) and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ), f"{kind}.{name} needs more than the port gives"


def test_the_voice_session_values_have_the_ports_types(voice_session: VoiceSession) -> None:
    from app.agent.persona import Character
    from app.avatar.pack import AvatarPack
    from app.events import EventHub

    assert isinstance(voice_session.events, EventHub)
    assert isinstance(voice_session.settings, Settings)
    assert isinstance(voice_session.character, Character)
    assert isinstance(voice_session.avatar_pack, AvatarPack)
    assert isinstance(voice_session.expressions, tuple)
    assert isinstance(voice_session.mic_mode, str)
    assert isinstance(voice_session.conversation_id, str) and voice_session.conversation_id


def _session_expressions(node: ast.AST) -> bool:
    """`session`, `self.session` or `self._session`."""
    if isinstance(node, ast.Name):
        return node.id == "session"
    return isinstance(node, ast.Attribute) and node.attr in ("session", "_session")


def test_the_ui_touches_the_session_only_through_the_port() -> None:
    members = set(port_members())
    outside: list[str] = []
    probing: list[str] = []
    for path in sorted(UI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and _session_expressions(node.value)
                and node.attr not in members
            ):
                outside.append(f"{path.name}:{node.lineno} .{node.attr}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr", "isinstance")
                and node.args
                and _session_expressions(node.args[0])
            ):
                probing.append(f"{path.name}:{node.lineno} {node.func.id}")
    assert outside == []
    assert probing == []

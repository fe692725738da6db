"""Avatar packs without Qt: the manifest, and the expressions the model is told about."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.agent.storage import InMemoryStorage
from app.audio.playback import MemorySink
from app.avatar import (
    DEFAULT_PACK_DIR,
    EXPRESSIONS,
    AvatarPackError,
    ExpressionState,
    expressions_for,
    load_pack,
    load_pack_or_default,
)
from app.config import Settings
from app.session import VoiceSession


def write_pack(folder: Path, names: tuple[str, ...], *, blink: bool = False) -> Path:
    folder.mkdir(parents=True)
    lines = ['name = "Mine"']
    for name in names:
        (folder / f"{name}.png").write_bytes(b"png")
        lines += [f"[expressions.{name}]", f'closed = "{name}.png"']
        if blink:
            lines.append(f'blink = "{name}.png"')
    (folder / "avatar.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder


def session_with(tmp_path: Path, **settings: object) -> VoiceSession:
    config = Settings(**settings)  # type: ignore[arg-type]
    config.chat.model = "openai-compatible/x"
    config.chat.base_url = "http://127.0.0.1:9/v1"
    return VoiceSession(config, sink=MemorySink(), storage=InMemoryStorage())


def test_the_default_pack_has_every_frame_of_every_expression() -> None:
    pack = load_pack(DEFAULT_PACK_DIR)
    assert pack.names == EXPRESSIONS and pack.size and pack.eyes
    for frames in pack.expressions.values():
        assert frames.blink is not None
        assert len(set(frames.files())) == 4 and all(p.is_file() for p in frames.files())


def test_missing_mouth_frames_default_to_the_ones_given(tmp_path: Path) -> None:
    folder = write_pack(tmp_path / "p", ("neutral",))
    (folder / "o.png").write_bytes(b"png")
    text = (folder / "avatar.toml").read_text(encoding="utf-8") + '\nopen = "o.png"\n'
    (folder / "avatar.toml").write_text(text, encoding="utf-8")
    frames = load_pack(folder).expressions["neutral"]
    assert frames.half.name == frames.open.name == "o.png" and frames.blink is None


def test_a_pack_can_be_named_by_its_manifest_file(tmp_path: Path) -> None:
    folder = write_pack(tmp_path / "p", ("neutral", "wink"))
    assert load_pack(folder / "avatar.toml").names == ("neutral", "wink")


def test_a_missing_manifest_is_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(AvatarPackError, match=r"Could not read the avatar manifest .*avatar\.toml"):
        load_pack(tmp_path)


def test_a_broken_pack_falls_back_to_the_default_with_a_notice(tmp_path: Path) -> None:
    pack, problem = load_pack_or_default(tmp_path / "nowhere")
    assert pack.folder == DEFAULT_PACK_DIR
    assert problem and "nowhere" in problem and "default avatar" in problem


def test_expressions_come_from_the_pack_narrowed_by_the_character() -> None:
    pack = load_pack(DEFAULT_PACK_DIR)
    assert expressions_for(pack) == pack.names
    assert expressions_for(pack, ("joy", "wink", "neutral")) == ("joy", "neutral")
    assert expressions_for(pack, ("calm", "grin")) == ("calm", "grin")  # nothing to narrow to


def test_the_expression_state_knows_only_its_packs_names() -> None:
    state = ExpressionState(expressions=("neutral", "wink"))
    assert state.set("wink", now=0.0)
    assert not state.set("joy", now=0.0)
    assert state.tick(now=100.0) and state.current == "neutral"


def test_the_model_is_told_the_expressions_of_the_users_pack(tmp_path: Path) -> None:
    folder = write_pack(tmp_path / "mine", ("neutral", "wink", "pout"))
    session = session_with(tmp_path, avatar={"pack": folder})
    assert session.expressions == ("neutral", "wink", "pout")
    assert session.agent.expressions == ("neutral", "wink", "pout")
    assert "one of: [neutral], [wink], [pout]." in session.agent.core.system_prompt
    assert session.avatar.set("pout") and not session.avatar.set("joy")


def test_a_broken_user_pack_is_reported_and_the_default_expressions_are_used(
    tmp_path: Path,
) -> None:
    session = session_with(tmp_path, avatar={"pack": tmp_path / "nowhere"})
    assert session.expressions == EXPRESSIONS
    assert any("nowhere" in n and "default avatar" in n for n in session.notices)


def test_the_avatar_idle_time_is_a_setting(tmp_path: Path) -> None:
    assert session_with(tmp_path, avatar={"idle_s": 3.5}).avatar.idle_s == 3.5
    assert session_with(tmp_path, expression_idle_s=7.0).avatar.idle_s == 7.0

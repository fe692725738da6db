"""Images for the model: the import policy (`import_image`) and screen capture (mss)."""

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
    "sniff_image_type",
]

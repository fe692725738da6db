"""Pictures in the transcript: thumbnails in the bubbles and a full-size viewer.

Images are decoded off the UI thread (`QImageReader` with a scaled size, on Qt's
global thread pool); the UI thread only turns the finished `QImage` into a pixmap.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QSize, Qt, QThreadPool, Signal, Slot
from PySide6.QtGui import QGuiApplication, QImage, QImageReader, QMouseEvent, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from app.ui.style import repolish

log = logging.getLogger(__name__)

THUMBNAIL_BOX = QSize(240, 150)  # a thumbnail fits in this box, keeping its shape
VIEWER_SCREEN_SHARE = 0.9  # the viewer opens at most this share of the screen
LOADER_NAME = "companionImageLoader"

_CONTEXT = "TranscriptView"


def _tr(text: str) -> str:
    return QCoreApplication.translate(_CONTEXT, text)


# -- decoding off the UI thread -------------------------------------------------------------


def decode_image(paths: Sequence[Path], box: QSize | None) -> tuple[QImage, QSize, str]:
    """The first readable image of `paths`, scaled to fit `box` (full size when None) while
    it is decoded; with the image's own size. A null image and the reason when none reads.
    Safe on any thread (QImage, not QPixmap)."""
    reason = "no file"
    for path in paths:
        reader = QImageReader(str(path))
        reader.setAutoTransform(True)
        size = reader.size()
        if not size.isValid() or size.isEmpty():
            reason = reader.errorString() or "not an image"
            continue
        if box is not None and (size.width() > box.width() or size.height() > box.height()):
            reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
        image = reader.read()
        if image.isNull():
            reason = reader.errorString() or "the image could not be decoded"
            continue
        return image, size, ""
    return QImage(), QSize(), reason


class ImageLoader(QObject):
    """Runs `decode_image` on Qt's thread pool and hands the result to a callback on the
    UI thread, unless the widget that asked is gone by then."""

    _decoded = Signal(int, QImage, QSize, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: dict[int, tuple[QObject, Callable[[QImage, QSize, str], None]]] = {}
        self._ids = itertools.count(1)
        self._decoded.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def load(
        self,
        paths: Sequence[Path],
        box: QSize | None,
        owner: QObject,
        done: Callable[[QImage, QSize, str], None],
    ) -> None:
        job = next(self._ids)
        self._jobs[job] = (owner, done)
        paths = tuple(paths)
        box = QSize(box) if box is not None else None

        def work() -> None:
            try:
                image, size, reason = decode_image(paths, box)
            except Exception as exc:  # never let a bad file take a pool thread down
                image, size, reason = QImage(), QSize(), str(exc) or type(exc).__name__
            self._decoded.emit(job, image, size, reason)

        QThreadPool.globalInstance().start(work)

    @Slot(int, QImage, QSize, str)
    def _deliver(self, job: int, image: QImage, size: QSize, reason: str) -> None:
        owner, done = self._jobs.pop(job, (None, None))
        if owner is None or done is None or not shiboken6.isValid(owner):
            return
        try:
            done(image, size, reason)
        except RuntimeError:  # the widget went away meanwhile
            log.debug("an image arrived for a widget that is gone", exc_info=True)

    @property
    def pending(self) -> int:
        return len(self._jobs)


def image_loader() -> ImageLoader:
    """The application's picture loader, made on first use. It belongs to the
    QApplication: it lives on the UI thread and as long as the app, so a picture that
    finishes decoding after its widget is gone still has somewhere to arrive."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("pictures are loaded for widgets: make the QApplication first")
    loader = app.findChild(ImageLoader, LOADER_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    if loader is None:
        loader = ImageLoader(app)
        loader.setObjectName(LOADER_NAME)
    return loader


def wait_for_image_decoding(timeout_ms: int = 2000) -> bool:
    """Wait for pictures being decoded (call before quitting, so no pool thread is still
    in Python code while the interpreter shuts down); False if some were still busy."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)


# -- showing them -------------------------------------------------------------------------


class CaptureThumbnail(QLabel):
    """A picture as a thumbnail (decoded off the UI thread); a click opens it full size.
    A file that is missing or does not decode becomes a small "unavailable" chip."""

    clicked = Signal()

    def __init__(self, paths: Sequence[Path], *, unavailable_text: str) -> None:
        super().__init__()
        self.setObjectName("captureThumb")
        self.paths = tuple(paths)
        self.state: Literal["loading", "ready", "unavailable"] = "loading"
        self.full_size = QSize()
        self._unavailable_text = unavailable_text
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setFixedSize(THUMBNAIL_BOX.width() // 2, THUMBNAIL_BOX.height() // 2)
        self.setText("…")
        self.setToolTip(str(self.paths[0]) if self.paths else "")
        if not self.paths:
            self._show_unavailable("no file")
        else:
            image_loader().load(self.paths, THUMBNAIL_BOX, self, self._on_decoded)

    @property
    def path(self) -> Path | None:
        return self.paths[0] if self.paths else None

    def _on_decoded(self, image: QImage, size: QSize, reason: str) -> None:
        if image.isNull():
            self._show_unavailable(reason)
            return
        self.state = "ready"
        self.full_size = size
        pixmap = QPixmap.fromImage(image)
        self.setText("")
        self.setFixedSize(pixmap.size() + QSize(2, 2))
        self.setPixmap(pixmap)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(
            _tr("Click to see it full size ({w}×{h})").format(w=size.width(), h=size.height())
        )

    def _show_unavailable(self, reason: str) -> None:
        log.info("a picture could not be shown (%s): %s", self.path, reason)
        self.state = "unavailable"
        self.setMinimumSize(0, 0)
        self.setMaximumSize(16_777_215, 16_777_215)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setText(f"🖼 {self._unavailable_text}")
        self.setToolTip(reason)
        self.setProperty("unavailable", True)
        repolish(self)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.state == "ready":
            self.clicked.emit()
            event.accept()
            return
        super().mouseReleaseEvent(event)


class CaptureViewer(QDialog):
    """A picture at full size in a scrollable, non-modal window that fits the screen."""

    def __init__(self, paths: Sequence[Path], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("captureViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setModal(False)
        self.paths = tuple(paths)
        name = self.paths[0].name if self.paths else ""
        self.setWindowTitle(self.tr("Screenshot — {name}").format(name=name))
        self.image_label = QLabel(self.tr("Loading…"))
        self.image_label.setObjectName("viewerImage")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroller = QScrollArea()
        self.scroller.setWidget(self.image_label)
        self.scroller.setWidgetResizable(False)
        self.scroller.setAlignment(Qt.AlignmentFlag.AlignCenter)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.scroller)
        self.image_label.adjustSize()
        self.resize(self._fitting(QSize(480, 320)))
        image_loader().load(self.paths, None, self, self._on_decoded)

    @property
    def loaded(self) -> bool:
        pixmap = self.image_label.pixmap()
        return not pixmap.isNull()

    def _fitting(self, wanted: QSize) -> QSize:
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return wanted
        area = screen.availableGeometry().size()
        return QSize(
            min(wanted.width(), int(area.width() * VIEWER_SCREEN_SHARE)),
            min(wanted.height(), int(area.height() * VIEWER_SCREEN_SHARE)),
        )

    def _on_decoded(self, image: QImage, _size: QSize, reason: str) -> None:
        if image.isNull():
            self.image_label.setText(
                self.tr("This screenshot is unavailable: {reason}").format(reason=reason)
            )
            self.image_label.adjustSize()
            return
        pixmap = QPixmap.fromImage(image)
        self.image_label.setPixmap(pixmap)
        self.image_label.resize(pixmap.size())
        frame = 2 * self.scroller.frameWidth() + 4
        self.resize(self._fitting(pixmap.size() + QSize(frame, frame)))


__all__ = [
    "THUMBNAIL_BOX",
    "CaptureThumbnail",
    "CaptureViewer",
    "ImageLoader",
    "decode_image",
    "image_loader",
    "wait_for_image_decoding",
]

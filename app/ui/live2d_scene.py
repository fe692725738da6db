"""A Live2D model drawn offscreen with OpenGL, read back as a QImage.

Every scene draws in one OpenGL context on a `QOffscreenSurface` (kept by the
application), each into its own framebuffer object the size of its picture; the model
(live2d-py, the Cubism renderer) draws there and the pixels come back with their alpha.
The widgets then paint that image like any other, so the desktop pet keeps its
per-pixel transparency and click-through, and the same code renders
`companion avatar snapshot` with no window at all.

`Resize()` of the model, the framebuffer and the GL viewport always change together: a
viewport left at another size draws the model small in a corner (or not at all).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from PySide6.QtGui import (
    QGuiApplication,
    QImage,
    QOffscreenSurface,
    QOpenGLContext,
    QSurfaceFormat,
)
from PySide6.QtOpenGL import QOpenGLFramebufferObject, QOpenGLFramebufferObjectFormat

from app.avatar.live2d_library import Live2DUnavailable, live2d_library
from app.avatar.live2d_model import Live2DModel
from app.avatar.live2d_puppet import Live2DPuppet

__all__ = ["Live2DScene", "Live2DUnavailable", "shared_context"]

log = logging.getLogger(__name__)

MAX_SIDE = 4096  # framebuffers larger than this are refused by many drivers
GL_RENDERER, GL_VERSION = 0x1F01, 0x1F02
CONTEXT_NAME, SURFACE_NAME = "live2dContext", "live2dSurface"


def _no_opengl(why: str) -> Live2DUnavailable:
    return Live2DUnavailable(
        f"OpenGL is not available here ({why}), so the Live2D model cannot be drawn. A "
        "remote desktop or a broken graphics driver does this; update the driver, or run "
        "Companion on the computer's own screen."
    )


def shared_context() -> tuple[QOpenGLContext, QOffscreenSurface]:
    """The one OpenGL context every scene draws in, kept by the application object.

    One, because the Cubism renderer keeps its compiled shaders for the process: a second
    context would not know them and draws nothing. Raises `Live2DUnavailable`."""
    app = QGuiApplication.instance()
    if app is None:
        raise _no_opengl("no Qt application is running")
    context = app.findChild(QOpenGLContext, CONTEXT_NAME)
    surface = app.findChild(QOffscreenSurface, SURFACE_NAME)
    if context is not None and surface is not None:
        return context, surface
    context = QOpenGLContext(app)
    context.setObjectName(CONTEXT_NAME)
    wanted = QSurfaceFormat()
    wanted.setAlphaBufferSize(8)
    wanted.setStencilBufferSize(8)
    context.setFormat(wanted)
    if not context.create():
        context.deleteLater()
        raise _no_opengl("no OpenGL context could be made")
    surface = QOffscreenSurface(None, app)
    surface.setObjectName(SURFACE_NAME)
    surface.setFormat(context.format())
    surface.create()
    if not surface.isValid() or not context.makeCurrent(surface):
        context.deleteLater()
        surface.deleteLater()
        raise _no_opengl("the OpenGL context cannot be used")
    try:
        made = context.format()  # at least what was asked for: 2.0, or ES 2.0
        if made.majorVersion() < 2:
            raise _no_opengl(f"only OpenGL {made.majorVersion()}.{made.minorVersion()}")
        if not QOpenGLFramebufferObject.hasOpenGLFramebufferObjects():
            raise _no_opengl("no framebuffer objects")
        log.info("Live2D draws with %s", _describe(context))
    except Live2DUnavailable:
        context.doneCurrent()
        context.deleteLater()
        surface.deleteLater()
        raise
    context.doneCurrent()
    return context, surface


class Live2DScene:
    """One model, drawn in the shared offscreen OpenGL context into its own framebuffer.
    Raises `Live2DUnavailable` in words when there is no usable OpenGL or no library."""

    def __init__(self, model: Live2DModel, *, animate: bool = True) -> None:
        self.model = model
        library = live2d_library()  # before any context: see app.avatar.live2d_library
        self._library = library
        context, self._surface = shared_context()
        if not context.makeCurrent(self._surface):
            raise _no_opengl("the OpenGL context cannot be used")
        self._context: QOpenGLContext | None = context
        try:
            library.glInit()
            cubism = library.Model()
            cubism.LoadModelJson(str(model.model_json))  # its textures go into the context
            self.puppet = Live2DPuppet(model, cubism, animate=animate)
            self._cubism: Any = cubism
            self._fbo: QOpenGLFramebufferObject | None = None
            self._size = (0, 0)
            self._placement = (1.0, 0.0, 0.0)
        finally:
            context.doneCurrent()

    @property
    def open(self) -> bool:
        return self._context is not None

    def place(self, scale: float, x: float, y: float) -> None:
        """How big and where the model is drawn (kept across size changes)."""
        self._placement = (scale, x, y)
        self.puppet.place(scale, x, y)

    def draw(self, width: int, height: int) -> QImage:
        """The model as it is now, `width` × `height` pixels, premultiplied alpha."""
        width, height = max(1, min(MAX_SIDE, width)), max(1, min(MAX_SIDE, height))
        context = self._context
        if context is None or not context.makeCurrent(self._surface):
            image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(0)
            return image
        try:
            if self._fbo is None or self._size != (width, height):
                self._resize(width, height)
            assert self._fbo is not None
            self._fbo.bind()
            functions = context.functions()
            functions.glViewport(0, 0, width, height)
            self._library.clearBuffer(0.0, 0.0, 0.0, 0.0)
            self._cubism.Draw()
            image = self._fbo.toImage()
            self._fbo.release()
            return image
        finally:
            context.doneCurrent()

    def _resize(self, width: int, height: int) -> None:
        fmt = QOpenGLFramebufferObjectFormat()
        fmt.setAttachment(QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)
        self._fbo = QOpenGLFramebufferObject(width, height, fmt)
        self._size = (width, height)
        self._cubism.Resize(width, height)
        self.puppet.place(*self._placement)

    def drawables_at(self, x: float, y: float) -> list[str]:
        """The model's drawables under a point of the last drawn picture (pixels)."""
        return list(self._cubism.HitDrawable(x, y, False))

    def close(self) -> None:
        """Free the model and the context (the model's GL objects go with it)."""
        context, self._context = getattr(self, "_context", None), None
        if context is None:
            return
        with contextlib.suppress(Exception):
            context.makeCurrent(self._surface)
        puppet = getattr(self, "puppet", None)
        if puppet is not None:
            puppet.cubism = None
        self._cubism = None  # its renderer deletes its textures in the context
        self._fbo = None
        context.doneCurrent()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def _describe(context: QOpenGLContext) -> str:
    """The driver, as OpenGL names it ("llvmpipe (LLVM 15.0.6, 256 bits), 4.5 Mesa ...")."""
    functions = context.functions()
    try:
        return f"{functions.glGetString(GL_RENDERER)}, {functions.glGetString(GL_VERSION)}"
    except Exception:  # a binding without glGetString: the name is only for the log
        return "OpenGL"

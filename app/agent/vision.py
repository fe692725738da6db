"""Images for chat models that cannot see: the vision modes and `VisionSummarizer`.

The matrix (AgentCore applies it per request; history always keeps the images as
file references):

| chat_supports_vision | require_detailed | what the chat model gets                       |
|----------------------|------------------|------------------------------------------------|
| True                 | False            | the images themselves, no vision pre-call       |
| True                 | True             | the images; per-image summaries are also stored |
| False                | either           | a summary of each image from the vision model   |
| False, no vision model | either         | the text read from it (`ScreenTextDescriber`)   |
| False, no text reader | either          | a note that it cannot see the image             |

A describer is anything with `summarize(image, question=...)` (`ImageDescriber`): a
vision model (`VisionSummarizer`), or offline, the text in the image read by OCR with
the windows a screenshot shows (`ScreenTextDescriber`).

An image whose file was deleted becomes a short note in every mode (with its stored
summary, if any), so one missing file never breaks a conversation.

Summaries are stored in the message's `metadata["image_summaries"]` keyed by the
image label (`p1`, `tool1`), so each image is described once, and the structured
history keeps them.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.llm import (
    ContentBlock,
    ImageBlock,
    LLMRequest,
    Msg,
    StreamingProvider,
    TextBlock,
    ToolResultBlock,
)

if TYPE_CHECKING:  # app.media brings Pillow; the reader is made by the session
    from app.media.screen_text import ScreenTextReader
    from app.media.screenshot import Capture

log = logging.getLogger(__name__)

__all__ = [
    "SUMMARIES_KEY",
    "ImageDescriber",
    "ScreenTextDescriber",
    "VisionError",
    "VisionSummarizer",
    "images_as_text",
    "last_label_number",
    "message_images",
    "missing_images_as_notes",
    "no_vision_note",
]

SUMMARIES_KEY = "image_summaries"
DEFAULT_PROMPT = (
    "Describe this image for someone who cannot see it, in a few plain sentences: what "
    "it shows, any readable text that matters, and anything unusual. {question}"
)


class VisionError(Exception):
    """The vision model could not describe an image."""


class ImageDescriber(Protocol):
    """What AgentCore asks for an image's text summary (failures raise `VisionError`)."""

    async def summarize(self, image: ImageBlock, *, question: str = "") -> str: ...


@dataclass
class VisionSummarizer:
    """Turns an image into a text summary with a configured vision model, through the
    same neutral provider interface as the chat model."""

    provider: StreamingProvider
    model: str
    prompt: str = DEFAULT_PROMPT
    max_tokens: int | None = 400
    timeout_s: float | None = 60.0

    async def summarize(self, image: ImageBlock, *, question: str = "") -> str:
        asked = f'The user said: "{question.strip()}"' if question.strip() else ""
        request = LLMRequest(
            model=self.model,
            messages=[
                Msg.user(
                    [TextBlock(text=self.prompt.replace("{question}", asked).strip()), image]
                )
            ],
            max_tokens=self.max_tokens,
            timeout=self.timeout_s,
            stream=True,
        )
        parts: list[str] = []
        async for event in self.provider.stream(request):
            if event.kind == "block.delta" and event.channel == "text":
                parts.append(event.delta)
            elif event.kind == "response.completed":
                return event.response.text.strip() or "".join(parts).strip()
            elif event.kind in ("response.failed", "response.cancelled"):
                raise VisionError(str(event.error or "the vision model stopped"))
        raise VisionError("the vision model's reply ended without a result")


SCREEN_TEXT_CHARS = 1200  # about 300 tokens: room for a small model's answer beside it
_REMEMBERED = 16


@dataclass
class ScreenTextDescriber:
    """The `VisionSummarizer` role for a text-only chat model, offline: an image becomes
    the text read from it, row by row; in a screenshot, Companion's own windows are
    left out (the companion would read its own chat back). `remember` is told of each
    screenshot as it is taken (its windows), before the summary is asked for."""

    reader: ScreenTextReader
    max_chars: int = SCREEN_TEXT_CHARS
    _captures: OrderedDict[Path, Capture] = field(default_factory=OrderedDict, repr=False)

    def remember(self, capture: Capture) -> None:
        self._captures[Path(capture.path).resolve()] = capture
        while len(self._captures) > _REMEMBERED:
            self._captures.popitem(last=False)

    async def aclose(self) -> None:
        self.reader.close()

    async def summarize(self, image: ImageBlock, *, question: str = "") -> str:
        from app.media.screen_text import ScreenTextError, rows

        path = Path(image.original.path).resolve()
        capture = self._captures.pop(path, None)
        own = [w.box for w in capture.windows if w.own] if capture is not None else []
        try:
            lines = await self.reader.read(path, hide=own)
        except ScreenTextError as exc:
            raise VisionError(str(exc)) from exc
        what = "the screen" if capture is not None else "the image"
        left_out = " (Companion's own window left out)" if own else ""
        found = ["  ".join(piece.text for piece in row) for row in rows(lines)]
        if not found:
            return f"No readable text was found on {what}{left_out}."
        head = f"Text read from {what}{left_out}, top to bottom (OCR, may contain mistakes):"
        kept: list[str] = []
        size = len(head)
        for line in found:
            if size + len(line) + 1 > self.max_chars:
                break
            kept.append(line)
            size += len(line) + 1
        more = len(found) - len(kept)
        tail = [f"... and {more} more line(s) not shown."] if more else []
        return "\n".join([head, *kept, *tail])


def no_vision_note(label: str) -> str:
    return (
        f"[image {label}: this chat model cannot see images and no vision model is "
        "configured, so you cannot see it. Tell the user you cannot see images.]"
    )


def message_images(msg: Msg) -> list[ImageBlock]:
    """The images of a message, also those inside tool results, in order."""
    if isinstance(msg.content, str):
        return []
    out: list[ImageBlock] = []
    for block in msg.blocks:
        if isinstance(block, ImageBlock):
            out.append(block)
        elif isinstance(block, ToolResultBlock):
            out.extend(block.images)
    return out


def _describe(image: ImageBlock, summaries: dict[str, str], have_summarizer: bool) -> TextBlock:
    label = image.name or "image"
    summary = summaries.get(label)
    if summary:
        return TextBlock(text=f"[image {label}: {summary}]")
    if have_summarizer:
        return TextBlock(text=f"[image {label}: it could not be described]")
    return TextBlock(text=no_vision_note(label))


def _replace_images(
    messages: Iterable[Msg], replace: Callable[[ImageBlock, dict[str, str]], ContentBlock]
) -> list[Msg]:
    """`messages` with each image (also inside tool results) put through `replace`
    (given the message's stored summaries); an image it returns as is stays, and a
    message with nothing replaced is passed on as it is."""
    out: list[Msg] = []
    for msg in messages:
        if not message_images(msg):
            out.append(msg)
            continue
        summaries = msg.metadata.get(SUMMARIES_KEY)
        summaries = summaries if isinstance(summaries, dict) else {}
        blocks: list[ContentBlock] = []
        changed = False
        for block in msg.blocks:
            new: ContentBlock = block
            if isinstance(block, ImageBlock):
                new = replace(block, summaries)
            elif isinstance(block, ToolResultBlock) and block.images:
                content = [
                    replace(b, summaries) if isinstance(b, ImageBlock) else b
                    for b in block.content
                ]
                if any(a is not b for a, b in zip(content, block.content, strict=True)):
                    new = block.model_copy(update={"content": content})
            changed = changed or new is not block
            blocks.append(new)
        out.append(msg.model_copy(update={"content": blocks}) if changed else msg)
    return out


def images_as_text(messages: Iterable[Msg], *, have_summarizer: bool) -> list[Msg]:
    """`messages` with every image replaced by its stored summary (or a note), for a
    chat model that cannot see. Messages without images are passed on as they are."""
    return _replace_images(
        messages, lambda image, summaries: _describe(image, summaries, have_summarizer)
    )


def _gone_or_kept(image: ImageBlock, summaries: dict[str, str]) -> ContentBlock:
    if image.model.path.is_file():
        return image
    label = image.name or "image"
    summary = summaries.get(label)
    seen = f" It showed: {summary}" if isinstance(summary, str) and summary else ""
    return TextBlock(text=f"[image {label}: its file was deleted, so it cannot be shown.{seen}]")


def missing_images_as_notes(messages: Iterable[Msg]) -> list[Msg]:
    """`messages` with every image whose file is gone (deleted from the data folder)
    replaced by a short note, its stored summary included: for a chat model that sees
    images, one deleted file must not make every later turn fail."""
    return _replace_images(messages, _gone_or_kept)


def last_label_number(messages: Sequence[Msg], prefix: str) -> int:
    """The highest `<prefix>N` image label used so far (0 if none)."""
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    best = 0
    for msg in messages:
        for image in message_images(msg):
            match = pattern.match(image.name or "")
            if match:
                best = max(best, int(match.group(1)))
    return best

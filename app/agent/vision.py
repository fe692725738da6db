"""Images for chat models that cannot see: the vision modes and `VisionSummarizer`.

The matrix (AgentCore applies it per request; history always keeps the images as
file references):

| chat_supports_vision | require_detailed | what the chat model gets                       |
|----------------------|------------------|------------------------------------------------|
| True                 | False            | the images themselves, no vision pre-call       |
| True                 | True             | the images; per-image summaries are also stored |
| False                | either           | a summary of each image from the vision model   |
| False, no summarizer | either           | a note that it cannot see the image             |

Summaries are stored in the message's `metadata["image_summaries"]` keyed by the
image label (`p1`, `tool1`), so each image is described once, and the structured
history keeps them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from app.llm import (
    ContentBlock,
    ImageBlock,
    LLMRequest,
    Msg,
    StreamingProvider,
    TextBlock,
    ToolResultBlock,
)

log = logging.getLogger(__name__)

__all__ = [
    "SUMMARIES_KEY",
    "VisionError",
    "VisionSummarizer",
    "images_as_text",
    "message_images",
    "no_vision_note",
]

SUMMARIES_KEY = "image_summaries"
DEFAULT_PROMPT = (
    "Describe this image for someone who cannot see it, in a few plain sentences: what "
    "it shows, any readable text that matters, and anything unusual. {question}"
)


class VisionError(Exception):
    """The vision model could not describe an image."""


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


def images_as_text(messages: Iterable[Msg], *, have_summarizer: bool) -> list[Msg]:
    """`messages` with every image replaced by its stored summary (or a note), for a
    chat model that cannot see. Messages without images are passed on as they are."""
    out: list[Msg] = []
    for msg in messages:
        if not message_images(msg):
            out.append(msg)
            continue
        summaries = dict(msg.metadata.get(SUMMARIES_KEY) or {})
        blocks: list[ContentBlock] = []
        for block in msg.blocks:
            if isinstance(block, ImageBlock):
                blocks.append(_describe(block, summaries, have_summarizer))
            elif isinstance(block, ToolResultBlock) and block.images:
                content = [
                    _describe(b, summaries, have_summarizer) if isinstance(b, ImageBlock) else b
                    for b in block.content
                ]
                blocks.append(block.model_copy(update={"content": content}))
            else:
                blocks.append(block)
        out.append(msg.model_copy(update={"content": blocks}))
    return out

"""Stored history as bubbles to build: what a saved conversation showed live (the user's
words and pictures, the companion's answers, thinking, tool calls and tool pictures),
without the Qt widgets that show it."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.agent.notes import without_notes
from app.agent.speech_text import INLINE_TAG, tidy_spaces
from app.llm.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

ItemKind = Literal["text", "thinking", "tool", "image"]


@dataclass(slots=True)
class RowPlan:
    """A bubble to build from stored history."""

    speaker: Literal["user", "companion"]
    turn_id: int
    items: list[tuple[ItemKind, str | tuple[Path, ...]]] = field(default_factory=list)
    interrupted: bool = False


_BRACKET_TAG = re.compile(
    r"\[\s*([A-Za-z][\w-]*)\s*(?::\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*)?\](?!\()"
)
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)


def shown_text(text: str, expressions: Collection[str]) -> str:
    """Stored reply text as the transcript showed it live: the tags of `expressions` (any
    case, with or without an intensity) and inline `<|...|>` tags gone; a bracket aside
    that is no expression (`[laughs]`) stays, as it did live."""
    known = {name.lower() for name in expressions}

    def drop_known(match: re.Match[str]) -> str:
        return " " if match[1].lower() in known else match[0]

    return tidy_spaces(INLINE_TAG.sub(" ", _BRACKET_TAG.sub(drop_known, text))).strip()


def _split_think(text: str, expressions: Collection[str]) -> list[tuple[ItemKind, str]]:
    """Text with inline `<think>` … `</think>` as thinking and answer pieces, in order."""
    out: list[tuple[ItemKind, str]] = []
    at = 0
    for match in _THINK.finditer(text):
        out.append(("text", text[at : match.start()]))
        out.append(("thinking", match[1]))
        at = match.end()
    out.append(("text", text[at:]))
    cleaned: list[tuple[ItemKind, str]] = []
    for kind, piece in out:
        piece = piece.strip() if kind == "thinking" else shown_text(piece, expressions)
        if piece:
            cleaned.append((kind, piece))
    return cleaned


def _picture_paths(image: ImageBlock) -> tuple[Path, ...]:
    """Where a stored picture can be read: the user's original, else the model's copy."""
    paths = [image.original.path]
    if image.model.path != image.original.path:
        paths.append(image.model.path)
    return tuple(paths)


def plan_history(messages: Sequence[Msg], expressions: Collection[str]) -> list[RowPlan]:
    """The bubbles a stored conversation makes: one for each user message, one for the
    companion's whole reply to it (its tool round trips included). `expressions`: the
    session's expression tags, taken out of the replies as the live view had them."""
    plans: list[RowPlan] = []
    turn = 0
    reply: RowPlan | None = None
    for msg in messages:
        if msg.role == Role.SYSTEM:
            continue
        if msg.role == Role.USER:
            turn += 1
            reply = None
            plan = RowPlan("user", -turn)
            for block in msg.blocks:
                if isinstance(block, TextBlock) and block.text.strip():
                    plan.items.append(("text", block.text.strip()))
                elif isinstance(block, ImageBlock):
                    plan.items.append(("image", _picture_paths(block)))
            if plan.items:
                plans.append(plan)
            continue
        if reply is None:
            if turn == 0:
                turn = 1
            reply = RowPlan("companion", -turn)
            plans.append(reply)
        for block in msg.blocks:
            if isinstance(block, TextBlock):  # notes for the model are not its words
                reply.items.extend(_split_think(without_notes(block.text), expressions))
            elif isinstance(block, ThinkingBlock) and not block.redacted and block.text.strip():
                reply.items.append(("thinking", block.text.strip()))
            elif isinstance(block, ToolUseBlock):
                reply.items.append(("tool", block.name))
            elif isinstance(block, ImageBlock):
                reply.items.append(("image", _picture_paths(block)))
            elif isinstance(block, ToolResultBlock):
                reply.items.extend(("image", _picture_paths(image)) for image in block.images)
        if msg.role == Role.ASSISTANT and msg.metadata.get("interrupted"):
            reply.interrupted = True
    return [plan for plan in plans if plan.items or plan.interrupted]


__all__ = ["ItemKind", "RowPlan", "plan_history", "shown_text"]

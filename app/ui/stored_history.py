"""Stored history as bubbles to build: what a saved conversation showed live (the user's
words and pictures, the companion's answers, thinking, tool calls and tool pictures),
without the Qt widgets that show it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.agent.markup import SentenceSplitter, take_tags
from app.agent.notes import without_notes
from app.agent.speech_text import tidy_spaces
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


def _shown_pieces(text: str, known: Mapping[str, str]) -> list[tuple[ItemKind, str]]:
    """A stored reply's text as the transcript showed it live: cut into the sentences the
    reply pipeline cut, reasoning (`<think>`) as thinking shown as written, the answer
    without its tags (`app.agent.markup.take_tags`, as the live reply) and with the
    spaces they left tidied."""
    splitter = SentenceSplitter()
    out: list[tuple[ItemKind, str]] = []
    for piece in [*splitter.feed(text), *splitter.finish()]:
        if piece.is_thinking:
            out.append(("thinking", piece.text))
            continue
        shown = tidy_spaces(take_tags(piece.text, known)[0])
        if shown:
            out.append(("text", shown))
    return out


def _picture_paths(image: ImageBlock) -> tuple[Path, ...]:
    """Where a stored picture can be read: the user's original, else the model's copy."""
    paths = [image.original.path]
    if image.model.path != image.original.path:
        paths.append(image.model.path)
    return tuple(paths)


def plan_history(messages: Sequence[Msg], expressions: Collection[str]) -> list[RowPlan]:
    """The bubbles a stored conversation makes: one for each user message, one for the
    companion's whole reply to it (its tool round trips included). `expressions`: the
    session's expression names, which its replies' tags resolve to as they did live."""
    known = {name.lower(): name for name in expressions}
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
                reply.items.extend(_shown_pieces(without_notes(block.text), known))
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


__all__ = ["ItemKind", "RowPlan", "plan_history"]

"""What a session starts beside its turns: loading the models ahead (with progress), the
MCP servers whose tools join the model's, and the VTube Studio bridge."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from app.agent.core import AgentCore
from app.config import Settings, data_dir
from app.events import EventHub, LoadProgress, Notice, Status, StatusChanged
from app.llm import ModelClient

log = logging.getLogger(__name__)

# What the embedded model's preparation says it is doing, as the status line says it.
PREPARING_WORDS = {
    "joining the parts": "preparing the embedded chat model: joining its parts",
    "verifying": "preparing the embedded chat model: checking it",
    "loading": "loading the embedded chat model",
}


async def load_all(loaders: Sequence[tuple[str, Awaitable[Any]]], events: EventHub) -> None:
    """Run the named loads side by side with progress; a failure becomes a notice."""
    total = len(loaders)
    done = 0
    events.emit(LoadProgress("loading " + ", ".join(w for w, _ in loaders), 0, total))

    async def one(what: str, load: Awaitable[Any]) -> None:
        nonlocal done
        try:
            await load
        except Exception as exc:
            events.emit(Notice(f"The {what} could not be loaded: {exc}", error=True))
        finally:
            done += 1
            events.emit(LoadProgress(f"{what} ready", done, total))

    await asyncio.gather(*(one(what, load) for what, load in loaders))
    from app.heap import return_freed_memory

    # What loading freed goes back to the system (tens of MB; see app/heap.py).
    await asyncio.to_thread(return_freed_memory)


def preparing_progress(events: EventHub) -> Callable[[str, int, int], None]:
    """Progress of the embedded model's first preparation (joining its parts, checking
    them, loading) as `LoadProgress` and a status line that says how far it is."""
    last: list[tuple[str, int]] = []

    def report(what: str, done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        if last and last[-1] == (what, percent):
            return
        last[:] = [(what, percent)]
        words = PREPARING_WORDS.get(what, what)
        if what == "loading":  # no steps to count: the words alone, not a frozen 0 %
            events.emit(StatusChanged(Status.LOADING, words))
            return
        events.emit(LoadProgress(f"{words} ({percent} %)", done, total))
        events.emit(StatusChanged(Status.LOADING, f"{words} ({percent} %)"))

    return report


async def load_chat_model(provider: ModelClient, events: EventHub, warm: AgentCore | None) -> None:
    """Load the chat model (the first start joins the embedded model's parts: that shows
    as progress, not a frozen "loading"), then have `warm` read its system prompt."""
    await provider.load(preparing_progress(events) if provider.needs_preparing else None)
    for notice in provider.drain_notices():  # e.g. the GPU failed: it runs on the CPU
        events.emit(Notice(notice, error=True))
    if warm is not None:
        await warm.warm_up()


def vtube_studio_token_file() -> Path:
    """Where the VTube Studio plugin token is kept (a secret: masked like the keys)."""
    return data_dir() / "vtube_studio_token"


def vtube_studio_bridge(
    settings: Settings, events: EventHub, *, on_token: Callable[[str], None] | None = None
) -> Any:
    """With `avatar.renderer = "vtube_studio"`: the bridge that drives a VTube Studio
    model from the expression and mouth events (not yet running), else None.
    `on_token` hears a new plugin token as it is stored."""
    if settings.avatar.renderer != "vtube_studio":
        return None
    from app.avatar.vtube_studio import VTubeStudioBridge

    vts = settings.avatar.vtube_studio
    return VTubeStudioBridge(
        host=vts.host,
        port=vts.port,
        hotkeys=vts.hotkeys,
        token_file=vtube_studio_token_file(),
        plugin_name=vts.plugin_name,
        plugin_developer=vts.plugin_developer,
        mouth_parameter=vts.mouth_parameter,
        on_notice=lambda text: events.emit(Notice(text, error=True)),
        on_token=on_token,
    )

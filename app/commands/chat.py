"""`companion chat --text TEXT`: one typed turn through the same session as the window,
saved to its history (`--conversation`: `latest` by default, so turns from a shell
continue one conversation; `new` starts one; an ID picks one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.commands.common import EXIT_USAGE, fail
from app.commands.one_turn import Report, check_out_path, run_headless_turn

DEFAULT_CONVERSATION = "latest"


def run_chat_command(
    settings: Any,
    text: str,
    *,
    conversation: str = DEFAULT_CONVERSATION,
    out: Path | None = None,
    as_json: bool = False,
) -> int:
    if not text.strip():
        return fail('--text is empty: say something, e.g. --text "Hi!"', EXIT_USAGE)
    problem = check_out_path(out)
    if problem:
        return fail(problem, EXIT_USAGE)

    async def start(session: Any) -> Any:
        return await session.send_text(text)

    return run_headless_turn(settings, start, Report(conversation, out, as_json, spoken=False))

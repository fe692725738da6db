"""`companion chat --text TEXT`: one typed turn through the same session as the window,
saved to its history (`--conversation`: `latest` by default, so turns from a shell
continue one conversation; `new` starts one; an ID picks one). Bytes of `--text` that
are not UTF-8 are sent as U+FFFD, and that is said."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.commands.common import EXIT_USAGE, fail
from app.commands.one_turn import Report, check_out_path, run_headless_turn
from app.text_input import read_text, replaced_words

DEFAULT_CONVERSATION = "latest"


def run_chat_command(
    settings: Any,
    text: str,
    *,
    conversation: str = DEFAULT_CONVERSATION,
    out: Path | None = None,
    as_json: bool = False,
) -> int:
    read = read_text(text)  # bytes that are not UTF-8 arrive as lone surrogates
    text = read.text
    if not text.strip():
        return fail('--text is empty: say something, e.g. --text "Hi!"', EXIT_USAGE)
    if read.replaced:
        print(f"companion: {replaced_words('--text', read.replaced)}", file=sys.stderr)
    problem = check_out_path(out)
    if problem:
        return fail(problem, EXIT_USAGE)

    async def start(session: Any) -> Any:
        return await session.send_text(text)

    return run_headless_turn(settings, start, Report(conversation, out, as_json, spoken=False))

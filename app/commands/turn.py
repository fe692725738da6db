"""`companion turn --wav FILE`: one spoken turn from a file, without a microphone.

With `--conversation new|latest|ID` the turn joins a saved conversation like a window
turn; without it, nothing is saved (a dry run, for trying a file or a benchmark)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app.commands.common import EXIT_USAGE, fail
from app.commands.one_turn import Refused, Report, check_out_path, run_headless_turn


def run_turn_command(
    settings: Any,
    wav: Path,
    out: Path | None,
    *,
    as_json: bool,
    conversation: str | None = None,
) -> int:
    from app.audio.wav import AudioFileError, read_wav_16k

    try:
        pcm = read_wav_16k(wav)
    except AudioFileError as exc:
        return fail(str(exc), EXIT_USAGE)
    problem = check_out_path(out)  # before the model is asked: its reply must be kept
    if problem:
        return fail(problem, EXIT_USAGE)

    async def start(session: Any) -> Any:
        from app.session import trim_to_speech

        speech = await asyncio.to_thread(trim_to_speech, pcm, settings)
        if not speech:
            raise Refused("no speech was found in the WAV file (only silence or noise)")
        return await session.turn_from_pcm(speech)

    return run_headless_turn(settings, start, Report(conversation, out, as_json, spoken=True))

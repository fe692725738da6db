"""`companion turn --wav FILE --live`: the file goes through the listening path in real
time, exactly as a microphone would feed it (VAD, the turn model, the words heard while
speaking, speculative replies), and every turn the session decides is printed with its
words, its reply and its timings; `--json` prints one document with a list of turns.

Positions (`speech_end_s`, `decided_s`) are seconds into the file; timings are
milliseconds from the end of that turn's speech, as for `companion turn`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from app.audio.format import BYTES_PER_SECOND, FRAME_BYTES
from app.commands.common import EXIT_USAGE, fail

# After the file, the microphone keeps hearing silence this long beyond the longest
# silence a turn may wait, so the last turn ends as it would live.
_AFTER_S = 1.0


class _PacedFile:
    """The file's audio as a microphone delivers it: 32 ms chunks in real time, on an
    absolute clock, then silence; `started_at` is when its first sample was heard."""

    def __init__(self, pcm: bytes, silence_s: float) -> None:
        silence = bytes(int(silence_s * BYTES_PER_SECOND) // 2 * 2)
        whole = pcm + silence
        self._chunks = [whole[i : i + FRAME_BYTES] for i in range(0, len(whole), FRAME_BYTES)]
        self.started_at = 0.0

    async def chunks(self) -> AsyncIterator[bytes]:
        self.started_at = time.perf_counter()
        heard = 0
        for chunk in self._chunks:
            heard += len(chunk)
            wait = self.started_at + heard / BYTES_PER_SECOND - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            yield chunk

    async def aclose(self) -> None:
        return None


def run_live_command(settings: Any, wav: Path, out: Path | None, *, as_json: bool) -> int:
    from app.audio.wav import AudioFileError, read_wav_16k

    try:
        pcm = read_wav_16k(wav)
    except AudioFileError as exc:
        return fail(str(exc), EXIT_USAGE)
    if out is not None and not out.parent.exists():
        return fail(f"{out.parent}: no such folder for --out", EXIT_USAGE)
    try:
        return asyncio.run(_live(settings, wav, pcm, out, as_json))
    except KeyboardInterrupt:
        return 130


async def _live(settings: Any, wav: Path, pcm: bytes, out: Path | None, as_json: bool) -> int:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.audio.wav import write_wav
    from app.events import EventHub, Notice, UserTranscript
    from app.llm.errors import ProviderError
    from app.session import TurnResult, VoiceSession

    notices: list[str] = []
    partials: dict[int, list[str]] = {}

    def seen(event: object) -> None:
        if isinstance(event, Notice):
            if event.error and not event.side:
                notices.append(event.message)
            else:  # told, and the turns go on (the voice fell back, the memory failed)
                print(f"companion: {event.message}", file=sys.stderr)
        elif isinstance(event, UserTranscript) and not event.final and event.text:
            partials.setdefault(event.turn_id, []).append(event.text)

    hub = EventHub()
    hub.subscribe(seen)
    sink = MemorySink()
    try:
        session = VoiceSession(settings, sink=sink, storage=InMemoryStorage(), events=hub)
    except (ProviderError, ValueError) as exc:
        return fail(str(exc))
    results: list[TurnResult] = []
    session.host.on_turn_result(results.append)
    source = _PacedFile(pcm, settings.turn.fallback_ms / 1000 + _AFTER_S)
    try:
        started = time.perf_counter()
        await session.load_models()
        if notices:
            return fail(notices[0])
        load_ms = (time.perf_counter() - started) * 1000
        await session.listen(source)
        await session.host.until_idle(timeout_s=float("inf"))
    finally:
        await session.aclose()
    if out is not None and sink.sample_rate:
        write_wav(out, sink.pcm, sink.sample_rate)
    doc: dict[str, Any] = {
        "input": str(wav),
        "input_s": round(len(pcm) / BYTES_PER_SECOND, 2),
        "model": settings.chat.model,
        "endpointing": settings.turn.endpointing,
        "speculative_replies": session.host.figures().speculative_replies,
        "load_ms": round(load_ms, 1),
        "turns": [_turn_doc(r, source.started_at, partials) for r in results],
        "speculation": session.host.figures().speculation.to_json(),
    }
    if out is not None:
        doc["out"] = str(out)
    if as_json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        _print(doc)
    if not results:
        if not as_json:
            print("companion: no speech was recognised in the WAV file", file=sys.stderr)
        return 1
    return 1 if any(r.error for r in results) else 0


def _turn_doc(result: Any, started_at: float, partials: dict[int, list[str]]) -> dict[str, Any]:
    doc: dict[str, Any] = result.to_json()
    how = doc.pop("endpointing", {})
    speech_end, ended = how.pop("speech_end_at", None), how.pop("ended_at", None)
    doc["turn"] = result.turn_id
    doc["speech_end_s"] = round(speech_end - started_at, 2) if speech_end else None
    doc["decided_s"] = round(ended - started_at, 2) if ended else None
    doc["ended_by"] = how.get("ended_by")
    doc["heard_while_speaking"] = how.get("heard_while_speaking", False)
    doc["speculation"] = how.get("speculation")
    doc["partials"] = partials.get(result.turn_id, [])
    return doc


_STAGES = [
    ("endpoint_ms", "turn decided"),
    ("transcript_ms", "transcript"),
    ("first_token_ms", "first token"),
    ("first_audio_ms", "first audio"),
]


def _print(doc: dict[str, Any]) -> None:
    print(f"{doc['input']} ({doc['input_s']} s), heard live; turns end by {doc['endpointing']}")
    for turn in doc["turns"]:
        where = f"speech ended at {turn['speech_end_s']} s" if turn["speech_end_s"] else ""
        if turn["decided_s"] is not None:
            where += f", decided at {turn['decided_s']} s ({turn['ended_by']})"
        print(f"turn {turn['turn']}: {where}")
        ahead = "heard while speaking" if turn["heard_while_speaking"] else "transcribed after"
        print(f"  heard: {turn['heard']}  [{ahead}, {len(turn['partials'])} partial(s)]")
        for s in turn["sentences"]:
            tag = f"[{', '.join(s['expressions'])}] " if s["expressions"] else ""
            print(f"  reply: {'(thinking) ' if s['thinking'] else ''}{tag}{s['text']}")
        if turn["speculation"]:
            print(f"  speculative reply: {turn['speculation']}")
        timings = turn["timings_ms"]
        shown = [f"{label} {timings[key]:.0f}" for key, label in _STAGES if key in timings]
        print("  ms from the end of speech: " + ", ".join(shown))
        if turn["error"]:
            print(f"  error: {turn['error']}")
    spec = doc["speculation"]
    print(
        f"speculative replies: {spec['started']} started, {spec['used']} used, "
        f"{spec['discarded']} thrown away (model calls {spec['model_calls']}, "
        f"wasted {spec['wasted_calls']})"
    )
    if "out" in doc:
        print(f"replies' audio: {doc['out']}")

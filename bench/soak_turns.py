"""What one turn costs the app as a conversation grows (`bench_soak.py --turns`).

A typed turn through the window's session (`VoiceSession.send_text`), against a model
on loopback that answers at once (a scripted OpenAI-compatible server), after a
conversation of N earlier turns kept in a real history folder, with the long-term
memory on: the time from the message to the turn done, and the CPU time of this process
over it, p50 of `repeats` turns at each size. What is measured is the app's own work
per turn (history, context trimming, the memory's look at the turn), the model's being
nothing here. Goal (issue 42): at 5,000 earlier turns at most 1.2× the time at 10.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.agent.building import CONF_UID  # noqa: E402
from app.agent.storage import FileStorage  # noqa: E402
from app.audio.playback import MemorySink  # noqa: E402
from app.config import Settings  # noqa: E402
from app.llm import Msg  # noqa: E402
from app.session import VoiceSession  # noqa: E402
from tests.llm_servers import Reply, ScriptedChatServer  # noqa: E402

EMPTY_MEMORY = '{"memories": []}'


def _history(storage: FileStorage, turns: int) -> str:
    uid = storage.create_history(CONF_UID)
    batch: list[Msg] = []
    for n in range(turns):
        batch += [Msg.user(f"Today I walked {n} steps by the river."), Msg.assistant(f"Nice, {n}!")]
        if len(batch) >= 2000:
            storage.append(CONF_UID, uid, batch)
            batch = []
    if batch:
        storage.append(CONF_UID, uid, batch)
    return uid


async def _turns(size: int, repeats: int, folder: Path) -> tuple[float, float]:
    storage = FileStorage(folder / "history")
    uid = _history(storage, size)
    settings = Settings()
    replies = [Reply.text_stream(["[joy] Lovely walk!"])]
    with ScriptedChatServer(replies) as server:
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        settings.memory.learn = False  # the model is not asked; the memory still looks
        session = VoiceSession(settings, sink=MemorySink(), storage=storage, history_uid=uid)
        await session.load_models()
        walls: list[float] = []
        cpus: list[float] = []
        try:
            for n in range(repeats + 1):
                wall, cpu = time.perf_counter(), time.process_time()
                result = await session.send_text(f"I also saw {n} herons today.")
                assert result.error is None, result.error
                if n:  # the first warms the caches
                    walls.append(time.perf_counter() - wall)
                    cpus.append(time.process_time() - cpu)
        finally:
            await session.aclose()
    return statistics.median(walls), statistics.median(cpus)


def run(sizes: tuple[int, ...] = (10, 5_000), repeats: int = 7) -> None:
    print(f"one typed turn after N earlier turns, p50 of {repeats} (model on loopback, instant)")
    results = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            wall, cpu = asyncio.run(_turns(size, repeats, Path(folder)))
        results[size] = (wall, cpu)
        print(f"  {size:>6} earlier turns: {wall * 1000:7.1f} ms wall, {cpu * 1000:7.1f} ms CPU")
    small, large = results[min(sizes)], results[max(sizes)]
    print(
        f"  ratio {max(sizes)} / {min(sizes)}: wall {large[0] / small[0]:.2f}x, "
        f"CPU {large[1] / small[1]:.2f}x (goal ≤ 1.2x)"
    )

"""Long-term memory's costs: recall per turn with 10,000 memories, database size per
1,000 memories, extraction time per turn with the embedded model, and time to first
audio with memory on against off (the extraction runs between turns, off the voice
path: the ratio shows whether it got in the way).

    python bench/bench_memory.py [--memories 10000] [--turns 300]
                                 [--model local/qwen2.5-coder-1.5b] [--model-path GGUF]
                                 [--dialogue-turns 6] [--rounds 2] [--gap-s 2.5] [--no-model]
                                 [--prefill 0]

Recall is the whole hook a turn runs before the model is asked (command check, FTS5
search, weighing, the note), on a real file in a temporary folder, over varied English
and Chinese utterances. The dialogue part runs the real session with the embedded
model and pyttsx3 into a memory sink: the same typed messages, the next one sent
`--gap-s` after a reply ends (so an extraction is under way when it comes; the first
`--gap-s` after the models are loaded, as a user takes a moment to start), in
sessions with memory on and off, alternating; `--prefill N` stores N memories before
each memory-on session, so the note is full (what reading ahead is for). It prints
figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.memory import LongTermMemory, MemoryDraft, MemoryStore

PEOPLE = ["sister", "brother", "mother", "father", "friend", "boss", "neighbour", "cousin"]
NAMES = ["Anna", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goro", "Hana", "Ivan", "Jia"]
PETS = ["cat", "dog", "parrot", "hamster", "rabbit", "turtle"]
PLACES = ["Berlin", "Osaka", "Lisbon", "Toronto", "Nairobi", "Lima", "Hanoi", "Oslo"]
FOODS = ["ramen", "tacos", "oolong tea", "dark chocolate", "pho", "dumplings", "curry"]
HOBBIES = ["climbing", "chess", "painting", "running", "the piano", "gardening", "baking"]
ZH = ["用户的猫叫露娜", "用户喜欢喝乌龙茶", "用户住在上海", "用户的妹妹叫小雨", "用户每周去游泳"]
QUESTIONS = [
    "What should I cook tonight?",
    "Do you remember my sister's name?",
    "I'm going to Berlin next week, any tips?",
    "My cat knocked over a plant again.",
    "Hi! How are you today?",
    "Can you recommend something to watch?",
    "I had a rough day at work.",
    "What was the name of my dog?",
    "我今天想喝点茶。",
    "我妹妹明天来看我。",
    "Tell me a joke about chess.",
    "I'm thinking about learning the piano.",
]


def fake_memory(rng: random.Random, n: int) -> str:
    kind = n % 6
    if kind == 0:
        return f"The user's {rng.choice(PEOPLE)} is called {rng.choice(NAMES)}{n}."
    if kind == 1:
        return f"The user has a {rng.choice(PETS)} called {rng.choice(NAMES)} (note {n})."
    if kind == 2:
        return f"The user visited {rng.choice(PLACES)} in trip {n} and loved it."
    if kind == 3:
        return f"The user likes {rng.choice(FOODS)}, especially on day {n}."
    if kind == 4:
        return f"The user has been into {rng.choice(HOBBIES)} since event {n}."
    return f"{rng.choice(ZH)}（第{n}条）"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_recall(count: int, turns: int, folder: Path) -> None:
    rng = random.Random(7)
    path = folder / "memory.sqlite3"
    store = MemoryStore(path)
    now = time.time()
    drafts = [
        MemoryDraft(
            fake_memory(rng, n),
            importance=rng.random(),
            created_at=now - rng.random() * 365 * 86_400,
        )
        for n in range(count)
    ]
    started = time.perf_counter()
    store.add_many("Mika", drafts[:1000])
    store.close()
    size_1k = sum(p.stat().st_size for p in folder.glob("memory.sqlite3*"))
    store.open()
    store.add_many("Mika", drafts[1000:])
    filled_s = time.perf_counter() - started
    memory = LongTermMemory(store, character="Mika")
    questions = [
        QUESTIONS[i % len(QUESTIONS)] + ("" if i < len(QUESTIONS) else f" #{i}")
        for i in range(turns)
    ]
    for question in questions[:20]:  # warm the page cache and the statements
        memory.before_turn(question, "bench", 0)
    hook: list[float] = []
    cpu: list[float] = []
    chosen: list[int] = []
    for question in questions:
        t0, c0 = time.perf_counter(), time.thread_time()
        note = memory.before_turn(question, "bench", 0)
        hook.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        chosen.append(note.count("\n- ["))
    store.close()
    size = sum(p.stat().st_size for p in folder.glob("memory.sqlite3*"))
    print(f"memories stored: {count} in {filled_s:.1f} s (one transaction per 1,000+)")
    print(
        f"recall per turn with {count} memories (the whole before-turn hook): "
        f"p50 {statistics.median(hook):.2f} ms, p95 {percentile(hook, 0.95):.2f} ms, "
        f"max {max(hook):.2f} ms over {turns} turns; {statistics.median(chosen):.0f} "
        "memories in the note (300-token budget)"
    )
    print(
        f"  the same, CPU time of the thread (what a busy machine does not inflate): "
        f"p50 {statistics.median(cpu):.2f} ms, p95 {percentile(cpu, 0.95):.2f} ms"
    )
    print(
        f"database size: {size / 1e6:.2f} MB for {count} memories = "
        f"{size / count * 1000 / 1e6:.2f} MB per 1,000 (at 1,000: {size_1k / 1e6:.2f} MB)"
    )


async def bench_dialogue(args: argparse.Namespace) -> None:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.config import Settings
    from app.llm import create_provider_client
    from app.session import VoiceSession

    settings = Settings()
    settings.chat.model = args.model
    if args.model_path:
        settings.chat.local_model_path = Path(args.model_path)
    settings.chat.temperature = 0.0
    provider = create_provider_client(
        settings.chat.model,
        model_path=settings.chat.local_model_path,
        n_threads=settings.chat.local_threads,
        n_ctx=settings.chat.local_context,
    )
    await provider.load()  # type: ignore[attr-defined]
    read = count_read_tokens()
    messages = [
        "Hi! My name is Sam and my cat is called Luna.",
        "I work as a nurse in Berlin, mostly night shifts.",
        "What should I cook after a night shift?",
        "Actually, my cat is called Nori, not Luna.",
        "My sister Anna visits me next weekend.",
        "Any idea what Anna and I could do together?",
        "I'm allergic to peanuts, by the way.",
        "What snack would you suggest?",
    ][: args.dialogue_turns]
    first_audio: dict[bool, list[float]] = {True: [], False: []}
    turn_read: dict[bool, list[int]] = {True: [], False: []}
    extraction_s: list[float] = []
    yielded = 0
    for round_number in range(args.rounds):
        for memory_on in (True, False) if round_number % 2 == 0 else (False, True):
            settings.memory = settings.memory.model_copy(update={"enabled": memory_on})
            session = VoiceSession(
                settings, provider=provider, sink=MemorySink(), storage=InMemoryStorage()
            )
            stored: set[str] = set()
            if memory_on and args.prefill and session.memory is not None:
                rng = random.Random(round_number)
                drafts = [MemoryDraft(fake_memory(rng, n)) for n in range(args.prefill)]
                items = session.memory.store.add_many(session.memory.character, drafts)
                stored = {item.text for item in items}
            await session.load_models()
            await asyncio.sleep(args.gap_s)  # a user takes a moment before the first words
            try:
                for text in messages:
                    before = read[0]
                    result = await session.send_text(text)
                    turn_read[memory_on].append(read[0] - before)
                    if "first_audio_ms" in result.timings_ms:
                        first_audio[memory_on].append(result.timings_ms["first_audio_ms"])
                    await asyncio.sleep(args.gap_s)
                    if session.memory.last_extraction_s is not None:
                        extraction_s.append(session.memory.last_extraction_s)
                        session.memory.last_extraction_s = None
                yielded += session.memory.writer.yielded
                await session.memory.writer.aclose(wait_s=600)
                if session.memory.last_extraction_s is not None:
                    extraction_s.append(session.memory.last_extraction_s)
                learned = [
                    item.text for item in session.memory.items() if item.text not in stored
                ]
            finally:
                await session.aclose()
                provider_memory = Path(os.environ["COMPANION_DATA_DIR"]) / "memory.sqlite3"
                for part in provider_memory.parent.glob("memory.sqlite3*"):
                    part.unlink()
            if memory_on:
                print(f"  round {round_number + 1}, learned: {learned}")
    await provider.aclose()  # type: ignore[attr-defined]
    on, off = first_audio[True], first_audio[False]
    print(
        f"model: {args.model} ({len(messages)} turns x {args.rounds} rounds, gap {args.gap_s} s, "
        f"{args.prefill} memories stored before)"
    )
    if extraction_s:
        print(
            f"extraction per turn with the embedded model: "
            f"p50 {statistics.median(extraction_s):.2f} s, "
            f"p95 {percentile(extraction_s, 0.95):.2f} s (n = {len(extraction_s)}); "
            f"{yielded} extraction(s) stopped to give the model to a turn"
        )
    if turn_read[True] and turn_read[False]:
        print(
            "tokens the model evaluated during a turn (the prompt not read ahead, and the "
            "reply), memory on: "
            f"p50 {statistics.median(turn_read[True]):.0f}, off: "
            f"p50 {statistics.median(turn_read[False]):.0f}"
        )
    if on and off:
        print(
            f"typed message -> first audio: memory on p50 {statistics.median(on):.0f} ms "
            f"(p95 {percentile(on, 0.95):.0f}), off p50 {statistics.median(off):.0f} ms "
            f"(p95 {percentile(off, 0.95):.0f}); ratio on/off of medians "
            f"{statistics.median(on) / statistics.median(off):.3f}"
        )


def count_read_tokens() -> list[int]:
    """A counter of the tokens llama.cpp evaluates (prompt and reply), from now on."""
    import llama_cpp

    read = [0]
    evaluate = llama_cpp.Llama.eval

    def counted(self: llama_cpp.Llama, tokens: list[int]) -> None:
        read[0] += len(tokens)
        evaluate(self, tokens)

    llama_cpp.Llama.eval = counted  # type: ignore[method-assign]
    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    parser.add_argument("--model-path", default=None, help="a GGUF file (default: the app's)")
    parser.add_argument("--dialogue-turns", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--gap-s", type=float, default=2.5)
    parser.add_argument(
        "--prefill", type=int, default=0, help="memories stored before the dialogue starts"
    )
    parser.add_argument("--no-model", action="store_true", help="recall and size only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["COMPANION_DATA_DIR"] = str(Path(folder) / "data")
        os.environ.setdefault("COMPANION_CONFIG", str(Path(folder) / "config.toml"))
        recall_folder = Path(folder) / "recall"
        recall_folder.mkdir()
        bench_recall(args.memories, args.turns, recall_folder)
        if not args.no_model:
            asyncio.run(bench_dialogue(args))


if __name__ == "__main__":
    main()

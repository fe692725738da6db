"""Scripted conversations with the embedded models, scored: is the companion someone you
would talk to twice?

    python bench/bench_dialogue.py [--models local/qwen2.5-coder-1.5b local/smollm2]
                                   [--grammar] [--free] [--screen] [--show]
                                   [--kinds arithmetic time ...] [--spoken]

Each conversation (3 to 6 turns: greetings, feelings, small facts, arithmetic, the
time, follow-ups that refer to an earlier turn, Chinese, a screen question) is typed
into a real `VoiceSession` (`send_text`, the window's path) on each model in turn,
with a silent voice so only the brain is measured. Every reply is scored: 1-3
sentences, a tag the avatar knows, no loop, no bracket left in the text, the right
answer where there is one (2+2, the hour, the cat's name), first-token and
whole-reply times. Then a 10-turn conversation measures the first token on turn 1 and
turn 10 with llama.cpp's cached prefix and with it forgotten before each turn, and
`--grammar` measures what the reply's GBNF grammar (one tag, then at most three
sentences: `app.llm.reply_form`) costs per token. The app holds the embedded models to
that grammar; `--free` runs them without it (the form asked for in the prompt only),
for the comparison. The long-term memory learns as in the app, in a temporary data
folder; typed turns follow each other at once, so it learns mostly after the last, while
`--spoken` waits for it before each turn, as the time a user takes to speak lets it do,
and the turns then read the memory's notes. `--kinds` runs only the conversations with
a turn of those kinds (sums and the time: `--kinds arithmetic time`). It prints
figures; it asserts nothing.

The screen conversation needs the offline screen description (the OCR half of issue
14): with `--screen` it runs under the current DISPLAY with a window showing known
text; without it, it is reported as skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agent.storage import InMemoryStorage
from app.config import load_settings
from app.session import VoiceSession
from app.tts import SynthesizedAudio

Check = Callable[[str], bool]


def says(*options: str) -> Check:
    """The reply mentions one of `options` (case-insensitive, whole words for ASCII)."""

    def check(reply: str) -> bool:
        low = reply.lower()
        for option in options:
            if option.isascii():
                if re.search(rf"(?<![\w]){re.escape(option.lower())}(?![\w])", low):
                    return True
            elif option in reply:
                return True
        return False

    return check


ASKED_AT: list[datetime] = []  # when the turn being scored was asked (set by `talk`)


def says_the_hour(reply: str) -> bool:
    """The reply tells the local time, from five minutes before the question was asked
    to now (a turn can take minutes on a busy machine)."""
    now = datetime.now()
    since = ASKED_AT[-1] if ASKED_AT else now
    for match in re.finditer(r"(\d{1,2})[:.](\d{2})(?:\s*([ap])\.?\s*m\.?)?", reply.lower()):
        hour, minute = int(match[1]), int(match[2])
        if match[3] == "p" and hour < 12:
            hour += 12
        if match[3] == "a" and hour == 12:
            hour = 0
        for candidate in {hour, hour + 12}:
            moment = now.replace(hour=candidate % 24, minute=minute % 60, second=0)
            if (since - moment).total_seconds() <= 300 and (moment - now).total_seconds() <= 60:
                return True
    hour12 = now.hour % 12 or 12
    return bool(re.search(rf"\b{hour12}\s*(o'clock|[ap]\.?m\b)", reply.lower()))


def says_the_day(reply: str) -> bool:
    """The reply names today's weekday (in English or Chinese)."""
    now = datetime.now()
    chinese = "星期" + "一二三四五六日"[now.weekday()]
    sunday = ("星期天", "周日") if now.weekday() == 6 else ()
    return says(now.strftime("%A"), chinese, "周" + chinese[-1], *sunday)(reply)


def says_the_date(reply: str) -> bool:
    """The reply gives today's date: the day of the month beside the month's name (or
    its number, in Chinese)."""
    now = datetime.now()
    month, day = now.strftime("%B").lower(), now.day
    low = reply.lower()
    nth = r"(?:st|nd|rd|th)?"
    english = rf"\b{month}\s+{day}{nth}\b|\b{day}{nth}\s+(?:of\s+)?{month}\b"
    chinese = rf"{now.month}\s*月\s*{day}\s*[日号]"
    return bool(re.search(english, low) or re.search(chinese, reply))


def says_the_hour_in_chinese(reply: str) -> bool:
    """The reply tells the hour as Chinese does (下午4点13分, 16点, 4:13)."""
    if says_the_hour(reply):
        return True
    now = datetime.now()
    for match in re.finditer(r"(上午|中午|下午|晚上|早上)?\s*(\d{1,2})\s*[点點]", reply):
        hour = int(match[2])
        if match[1] in ("下午", "晚上") and hour < 12:
            hour += 12
        if hour % 24 == now.hour or (match[1] is None and hour % 12 == now.hour % 12):
            return True
        near = (now.hour + 1) % 24 if now.minute >= 55 else None
        if near is not None and hour % 24 == near:
            return True
    return False


def now_word(fmt: str) -> Check:
    return says(datetime.now().strftime(fmt))


def says_part_of_day(reply: str) -> bool:
    hour = datetime.now().hour
    part = (
        ("morning",) if 5 <= hour < 12 else ("afternoon",) if hour < 17 else ("evening", "night")
    )
    return says(*part)(reply)


@dataclass(frozen=True)
class Turn:
    text: str
    kind: str
    check: Check | None = None


CONVERSATIONS: list[list[Turn]] = [
    [
        Turn("Hi! Who are you?", "greeting", says("Mika")),
        Turn("What can you do?", "greeting"),
        Turn("Nice to meet you. What's your favourite colour?", "greeting"),
        Turn("Thanks, bye for now!", "greeting"),
    ],
    [
        Turn("I feel sad today.", "feeling"),
        Turn("My friend didn't call me back.", "feeling"),
        Turn("Can you cheer me up?", "feeling"),
        Turn("Thank you, that helps.", "feeling"),
    ],
    [
        Turn("My cat's name is Tofu.", "recall"),
        Turn("She is three years old and loves boxes.", "recall"),
        Turn("What do cats like to eat?", "fact"),
        Turn("What's my cat called?", "recall", says("Tofu")),
        Turn("How old is she?", "recall", says("three", "3")),
    ],
    [
        Turn("What is 2+2?", "arithmetic", says("4", "four")),
        Turn("And 7 times 6?", "arithmetic", says("42", "forty-two", "forty two")),
        Turn("What is 100 minus 1?", "arithmetic", says("99", "ninety-nine", "ninety nine")),
        Turn("Is 17 a prime number?", "arithmetic", says("yes", "is a prime", "is prime")),
    ],
    [
        Turn("What time is it?", "time", says_the_hour),
        Turn("What day of the week is it today?", "time", says_the_day),
        Turn("Is it morning, afternoon or evening now?", "time", says_part_of_day),
    ],
    [  # the time asked as speech recognition writes it: lower case, little punctuation
        Turn("can you tell me what time it is right now", "time", says_the_hour),
        Turn("Do you know the time?", "time", says_the_hour),
        Turn("what's the date today", "time", says_the_date),
        Turn("what day is it", "time", says_the_day),
    ],
    [  # sums said in words, as they are heard
        Turn("What is twelve plus seven?", "arithmetic", says("19", "nineteen")),
        Turn(
            "how much is a hundred minus thirty-five", "arithmetic",
            says("65", "sixty-five", "sixty five"),
        ),
        Turn("what's 12 times 3", "arithmetic", says("36", "thirty-six", "thirty six")),
        Turn(
            "What is 7 divided by 2?", "arithmetic",
            says("3.5", "three and a half", "three point five", "3 and a half"),
        ),
    ],
    [
        Turn("现在几点？", "time", says_the_hour_in_chinese),
        Turn("十二加七等于多少？", "arithmetic", says("19", "十九")),
        Turn("今天星期几？", "time", says_the_day),
    ],
    [
        Turn("What is the capital of France?", "fact", says("Paris")),
        Turn("How many legs does a spider have?", "fact", says("8", "eight")),
        Turn("What colour is the sky on a clear day?", "fact", says("blue")),
        Turn("What is the weather like on the moon today?", "fact"),
    ],
    [
        Turn("I'm planning a trip to Japan in the spring.", "recall"),
        Turn("What should I pack?", "fact"),
        Turn("Which country did I say I was going to?", "recall", says("Japan")),
        Turn("And in which season?", "recall", says("spring")),
    ],
    [
        Turn("My name is Sam and I love jazz.", "recall"),
        Turn("Can you recommend a song for me?", "fact"),
        Turn("What's my name?", "recall", says("Sam")),
        Turn("What music do I like?", "recall", says("jazz")),
    ],
    [
        Turn("你好！你是谁？", "chinese"),
        Turn("我今天有点累。", "chinese"),
        Turn("二加三等于几？", "chinese", says("5", "五")),
        Turn("谢谢你！", "chinese"),
    ],
    [
        Turn("Tell me a joke.", "greeting"),
        Turn("Another one, please!", "greeting"),
        Turn("Why is that funny?", "greeting"),
    ],
    [
        Turn("I just got a new job!", "feeling"),
        Turn("But I'm nervous about the first day.", "feeling"),
        Turn("What should I wear?", "fact"),
    ],
]
SCREEN_TEXT = "Invoice 4711 is due on Friday"
SCREEN = [
    Turn("What's on my screen?", "screen", says("4711", "invoice")),
    Turn("When is it due?", "screen", says("Friday")),
    Turn("Thanks!", "screen"),
]
SCREEN_SKIPPED = (
    "needs the offline screen description (OCR, the other half of issue 14): "
    "run with --screen under Xvfb once it is on main"
)
CACHE_TURNS = [
    "Hi! I'm Alex.",
    "I live by the sea.",
    "I like to swim in the morning.",
    "What do you like to do?",
    "Do you know any sea animals?",
    "Which one is your favourite?",
    "Why that one?",
    "Have you ever seen a whale?",
    "What do whales eat?",
    "What did I say my name was?",
]

_TAG = re.compile(r"[\[【]\s*([^\]】\n]{1,40}?)\s*(?::[^\]】]*)?[\]】]")
_SENTENCE_END = re.compile(r"[.!?。！？]+[\"')\]”」』]*(?:\s+|$)")


class SilentTTS:
    """A voice that says nothing quickly: the bench measures the brain, not the voice."""

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        return SynthesizedAudio(b"\0\0" * 160, 16_000)

    async def voices(self) -> list[object]:
        return []

    async def aclose(self) -> None:
        return None


@dataclass
class Scored:
    kind: str
    text: str
    reply: str
    raw: str
    sentences: int
    tag_ok: bool
    loop: bool
    bracket_shown: bool
    fallback: bool
    right: bool | None
    first_token_ms: float | None
    reply_ms: float


@dataclass
class ModelRun:
    model: str
    scored: list[Scored] = field(default_factory=list)
    cache: dict[str, list[float]] = field(default_factory=dict)
    load_ms: float = 0.0


def count_sentences(text: str) -> int:
    body = text.strip()
    if not body:
        return 0
    ends = len(_SENTENCE_END.findall(body))
    return ends + (0 if _SENTENCE_END.search(body[-3:] + " ") else 1)


def score(turn: Turn, result: Any, stored: Any, expressions: tuple[str, ...], ms: float) -> Scored:
    spoken = [s for s in result.sentences if not s.is_thinking]
    reply = " ".join(s.display_text for s in spoken if s.display_text).strip()
    raw = stored.text if stored is not None else ""
    tags = [t.strip().lower() for t in _TAG.findall(raw)]
    first_tag = bool(tags) and raw.lstrip().startswith(("[", "【")) and tags[0] in expressions
    metadata = stored.metadata if stored is not None else {}
    timings = result.timings_ms
    first = None
    if "first_token_ms" in timings and "request_sent_ms" in timings:
        first = timings["first_token_ms"] - timings["request_sent_ms"]
    return Scored(
        kind=turn.kind,
        text=turn.text,
        reply=reply,
        raw=raw,
        sentences=count_sentences(reply),
        tag_ok=first_tag,
        loop=metadata.get("cut") == "loop",
        bracket_shown=bool(_TAG.search(reply)),
        fallback=bool(metadata.get("fallback")),
        right=turn.check(reply) if turn.check else None,
        first_token_ms=first,
        reply_ms=ms,
    )


async def make_session(model: str, *, free: bool = False) -> tuple[VoiceSession, float]:
    settings = load_settings()
    settings.chat.model = model
    session = VoiceSession(settings, storage=InMemoryStorage(), tts=SilentTTS())  # type: ignore[arg-type]
    if free:  # the reply's form in the prompt only, no grammar (how it was before)
        session.agent.core.reply_form = None
    started = time.perf_counter()
    await session.provider.load()
    await session.agent.core.warm_up()
    return session, (time.perf_counter() - started) * 1000


async def settle(session: VoiceSession, limit_s: float = 600.0) -> None:
    """Wait until the long-term memory has looked at every turn, as it does while a
    user speaks the next one: the next message then carries the memories it made."""
    memory = session.memory
    if memory is None:
        return
    waited = 0.0
    while memory.writer.pending and waited < limit_s:
        await asyncio.sleep(0.5)
        waited += 0.5


async def talk(
    session: VoiceSession, turns: list[Turn], run: ModelRun, show: bool, *, spoken: bool = False
) -> None:
    session.agent.history.clear()
    for turn in turns:
        if spoken:
            await settle(session)
        ASKED_AT[:] = [datetime.now()]
        started = time.perf_counter()
        result = await session.send_text(turn.text)
        ms = (time.perf_counter() - started) * 1000
        history = session.agent.history
        stored = history[-1] if history and history[-1].role == "assistant" else None
        scored = score(turn, result, stored, session.expressions, ms)
        run.scored.append(scored)
        if show:
            mark = "" if scored.right is None else (" ✔" if scored.right else " ✘")
            print(f"  [{run.model}] {turn.text}\n      -> {scored.raw!r}{mark}", flush=True)


async def cache_figures(session: VoiceSession, run: ModelRun) -> None:
    """First-token time per turn of one long conversation, with the prefix cached and
    with the model's state forgotten before each turn."""
    local = getattr(session.provider, "local_model", None)
    for label, forget in (("cached prefix", False), ("prefix forgotten", True)):
        session.agent.history.clear()
        times: list[float] = []
        for text in CACHE_TURNS:
            if forget and local is not None:
                local.forget_prefix()
            result = await session.send_text(text)
            t = result.timings_ms
            times.append(t.get("first_token_ms", 0.0) - t.get("request_sent_ms", 0.0))
        run.cache[label] = times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def report(runs: list[ModelRun], screen_note: str | None) -> None:
    models = [r.model.split("/", 1)[-1] for r in runs]
    width = max(14, *(len(m) + 2 for m in models))
    print("\n" + f"{'':<34}" + "".join(f"{m:>{width}}" for m in models))

    def row(name: str, values: list[str]) -> None:
        print(f"{name:<34}" + "".join(f"{v:>{width}}" for v in values))

    def share(pred: Callable[[Scored], bool], runs_: list[ModelRun] = runs) -> list[str]:
        out = []
        for r in runs_:
            n = len(r.scored)
            k = sum(1 for s in r.scored if pred(s))
            out.append(f"{k}/{n} {100 * k / max(n, 1):.0f}%")
        return out

    row("replies", [str(len(r.scored)) for r in runs])
    row("1-3 sentences", share(lambda s: 1 <= s.sentences <= 3))
    row("starts with a valid tag", share(lambda s: s.tag_ok))
    row("both (the goal: >= 90 %)", share(lambda s: 1 <= s.sentences <= 3 and s.tag_ok))
    row("loops stopped by the guard", [str(sum(s.loop for s in r.scored)) for r in runs])
    row("a bracket shown in the text", [str(sum(s.bracket_shown for s in r.scored)) for r in runs])
    row("fallback line said", [str(sum(s.fallback for s in r.scored)) for r in runs])
    kinds = sorted({s.kind for r in runs for s in r.scored if s.right is not None})
    for kind in kinds:
        values = []
        for r in runs:
            checked = [s for s in r.scored if s.kind == kind and s.right is not None]
            values.append(f"{sum(bool(s.right) for s in checked)}/{len(checked)}")
        row(f"right answers: {kind}", values)
    for name, attr in (("first token", "first_token_ms"), ("whole reply", "reply_ms")):
        values = []
        for r in runs:
            ms = [getattr(s, attr) for s in r.scored if getattr(s, attr) is not None]
            values.append(f"{statistics.median(ms):.0f}/{pct(ms, 0.95):.0f}" if ms else "-")
        row(f"{name} ms p50/p95", values)
    row("load + warm-up ms", [f"{r.load_ms:.0f}" for r in runs])
    for label in ("cached prefix", "prefix forgotten"):
        values = []
        for r in runs:
            times = r.cache.get(label)
            values.append(f"{times[0]:.0f}/{times[-1]:.0f}" if times else "-")
        row(f"first token turn 1/{len(CACHE_TURNS)} ms, {label}", values)
    if screen_note:
        print(f"\nscreen conversation: skipped ({screen_note})")


def grammar_figures(model_path: Path, expressions: tuple[str, ...]) -> None:
    """Decode speed and first token without a grammar, with the reply's GBNF grammar as
    llama-cpp-python checks it (every candidate, every token), and as the app checks it
    (`app.llm.wire.local_grammar`: the likeliest first); same prompts, same sampling."""
    from llama_cpp import Llama, LlamaGrammar

    from app.llm.reply_form import ReplyForm, reply_grammar
    from app.llm.wire.llama_cpu import safe_model_params
    from app.llm.wire.local_grammar import fast_grammar

    grammar_text = reply_grammar(ReplyForm(tags=expressions, max_sentences=3))
    grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
    with safe_model_params():
        plain = Llama(model_path=str(model_path), n_ctx=2048, n_threads=2, verbose=False)
        fast = Llama(model_path=str(model_path), n_ctx=2048, n_threads=2, verbose=False)
    stats = fast_grammar(fast)
    system = "You are Mika, a cheerful companion. Start with a tag, then one to three sentences."
    prompts = ["Tell me about the moon.", "What do you like to do?", "Tell me a story.", "你好！"]
    labels = ("free", "library grammar", "app grammar")
    rows: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    for _ in range(2):
        for label in labels:  # interleaved, so both see the same machine
            llm = fast if label == "app grammar" else plain
            for prompt in prompts:
                messages = [
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ]
                extra = {"grammar": grammar} if label != "free" else {}
                started = time.perf_counter()
                stamps: list[float] = []
                for chunk in llm.create_chat_completion(
                    messages=messages, max_tokens=60, temperature=0.7, stream=True, **extra
                ):
                    if chunk["choices"][0]["delta"].get("content"):
                        stamps.append(time.perf_counter())
                if len(stamps) > 2:
                    per_token = (stamps[-1] - stamps[0]) / (len(stamps) - 1) * 1000
                    rows[label].append(((stamps[0] - started) * 1000, per_token))
    print("\nGBNF grammar (one tag, at most three sentences), same prompts:")
    for label, values in rows.items():
        first = statistics.median(v[0] for v in values)
        per = statistics.median(v[1] for v in values)
        print(f"  {label:<16} first token {first:6.0f} ms   {per:5.1f} ms per token", end="")
        print(f"  (n={len(values)})")
    if stats is not None:
        widened = f"{stats.widened} of {stats.tokens}"
        print(f"  app grammar: {widened} tokens checked the whole vocabulary")


def screen_window() -> Any:
    """A window showing `SCREEN_TEXT` on the current display (a child process)."""
    import subprocess

    code = (
        "import sys; from PySide6.QtWidgets import QApplication, QLabel; "
        "a = QApplication(sys.argv); w = QLabel(sys.argv[1]); "
        "w.setStyleSheet('font-size: 48px; background: white; color: black; padding: 40px'); "
        "w.showMaximized(); a.exec()"
    )
    process = subprocess.Popen([sys.executable, "-c", code, SCREEN_TEXT])
    time.sleep(2.0)
    return process


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", nargs="+", default=["local/qwen2.5-coder-1.5b", "local/smollm2"]
    )
    parser.add_argument("--conversations", type=int, default=len(CONVERSATIONS))
    parser.add_argument("--no-cache-figures", action="store_true")
    parser.add_argument("--grammar", action="store_true", help="measure a GBNF grammar's cost")
    parser.add_argument(
        "--free", action="store_true", help="no reply grammar: the form in the prompt only"
    )
    parser.add_argument("--screen", action="store_true", help="run the screen conversation")
    parser.add_argument("--show", action="store_true", help="print every reply")
    parser.add_argument(
        "--kinds", nargs="+", help="only the conversations with a turn of these kinds "
        "(greeting feeling recall fact arithmetic time chinese)",
    )
    parser.add_argument(
        "--spoken", action="store_true", help="before each turn, wait for the long-term "
        "memory to finish, as it does while the user speaks (its notes are then read)",
    )
    args = parser.parse_args()
    # The long-term memory learns as it would for a user, in a folder of its own: the
    # figures do not depend on what earlier runs (or the user's own app) remembered.
    os.environ["COMPANION_DATA_DIR"] = tempfile.mkdtemp(prefix="bench-dialogue-")
    conversations = CONVERSATIONS[: args.conversations]
    if args.kinds:
        conversations = [c for c in conversations if {t.kind for t in c} & set(args.kinds)]
    screen_note: str | None = SCREEN_SKIPPED
    window = None
    if args.screen:
        conversations = [*conversations, SCREEN]
        screen_note = None
        window = screen_window()
    runs: list[ModelRun] = []
    try:
        for model in args.models:
            session, load_ms = await make_session(model, free=args.free)
            run = ModelRun(model + (" (free)" if args.free else ""), load_ms=load_ms)
            try:
                for turns in conversations:
                    await talk(session, turns, run, args.show, spoken=args.spoken)
                if not args.no_cache_figures:
                    await cache_figures(session, run)
                if args.grammar and model == args.models[0]:
                    path = session.provider.local_model.path
                    expressions = session.expressions
            finally:
                await session.aclose()
            runs.append(run)
    finally:
        if window is not None:
            window.terminate()
    print(f"\n{sum(len(c) for c in conversations)} turns in {len(conversations)} conversations")
    report(runs, screen_note)
    if args.grammar:
        grammar_figures(path, expressions)


if __name__ == "__main__":
    asyncio.run(main())

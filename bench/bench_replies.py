"""The companion's own words, measured on a corpus no one here wrote (issue 37), typed.

    python bench/bench_replies.py --language en --seed 123 [--openings 40] [--model local/...]

Every reply is the model's: nothing in the app picks its words or its face from the
user's. This bench runs the app's own `VoiceSession` (the embedded default unless
`--model` says otherwise) with long-term memory on, in a fresh profile, and types:

* **openings**: conversation openings sampled with the printed seed from
  `chatterbot-corpus` (BSD-3; every category, round robin), said one after another in
  conversations of `--per-conversation` turns;
* **trivia**: the corpus's trivia questions, scored against its answers;
* **requests**: harmless requests (the corpus's humor openings and the bench's own: a
  song, a story, a game), scored for refusals;
* **news**: a labelled set of good and bad news (`bench/replies_items.py`), scored by
  the sign of the reply's first face;
* **memory**: facts told in varied phrasings, asked back later in the same
  conversation and in a new one (after the memory's writer has learned them), and facts
  never told asked for.

It prints, per language: told facts recalled, never-told facts stated as facts,
requests refused, the face's sign, trivia right, replies said word for word twice in one
conversation, replies about "the user", replies in the language asked in (Chinese), and
the time per reply. Nothing here asserts. Needs `chatterbot-corpus==1.3.3` (dev extra)
and the embedded model (`make run` prepares it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.replies_items import (
    CONVERSATION_FILLERS,
    REQUESTS,
    Fact,
    corpus_openings,
    corpus_requests,
    corpus_trivia,
    news,
    told_and_untold,
)

REFUSAL = re.compile(
    r"\b(?:can(?:no|')t|can not|unable to|not able to|don't (?:know|have) any|"
    r"as an ai|language model|i'?m (?:just )?an? (?:ai|assistant|program))\b"
    r"|不能|无法|不会|做不到|作为一?个?(?:AI|人工智能|语言模型)",
    re.IGNORECASE,
)
NOT_KNOWN = re.compile(
    r"\b(?:don't|do not|didn't|did not|haven't|have not|never) (?:know|told|tell|mention|"
    r"remember|said|say|shared|share)|\bnot sure\b|\bno idea\b|\bnot told\b|\bwhat is it\b"
    r"|不知道|没有?告诉|没说|不记得|不清楚|还没",
    re.IGNORECASE,
)
# An answer about them said as if it were the companion's own: "I live in Lisbon."
AS_THEIRS = re.compile(r"^(?:(?:yes|no|well|oh|sure)[,!.]?\s+)?(?:I|I'm|I am|my|My)\b|^我")
THE_USER = re.compile(r"\bthe user\b|用户", re.IGNORECASE)
GOOD_FACES = {"joy", "smirk", "surprise"}
BAD_FACES = {"sadness", "fear", "anger"}


@dataclass(slots=True)
class Reply:
    kind: str
    said: str
    reply: str
    faces: list[str]
    seconds: float
    conversation: int


@dataclass(slots=True)
class Run:
    language: str
    replies: list[Reply] = field(default_factory=list)
    recalled: list[tuple[Fact, Reply, str]] = field(default_factory=list)  # fact, reply, where
    untold: list[tuple[str, Reply]] = field(default_factory=list)
    trivia: list[tuple[str, Reply]] = field(default_factory=list)  # expected answer
    news: list[tuple[str, Reply]] = field(default_factory=list)  # "good" or "bad"


def _chinese(text: str) -> bool:
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    return han > 0 and han >= len(re.findall(r"[A-Za-z]+", text))


def answer_right(expected: str, reply: str, language: str) -> bool:
    """Whether `reply` gives the corpus's answer: one of its words of four letters or
    more (or its number) in English; a part of two characters or more in Chinese."""
    low = reply.lower()
    if language == "zh":
        parts = [p for p in re.split(r"[·・\s,，.。、和]+", expected) if len(p) >= 2]
        return any(p in reply for p in parts) or (not parts and expected.strip(". ") in reply)
    words = [w for w in re.findall(r"[a-z0-9]+", expected.lower()) if len(w) >= 4 or w.isdigit()]
    skip = {"the", "that", "this", "with", "from", "what", "which", "were", "have"}
    words = [w for w in words if w not in skip]
    return any(re.search(rf"\b{re.escape(w)}", low) for w in words) if words else False


class Talk:
    """The app's session, typed to."""

    def __init__(self, session: Any, run: Run) -> None:
        self.session, self.run, self.conversation = session, run, 0

    async def new(self) -> None:
        await self.session.new_conversation()
        self.conversation += 1

    async def say(self, kind: str, words: str) -> Reply:
        started = time.perf_counter()
        result = await self.session.send_text(words)
        seconds = time.perf_counter() - started
        faces = [e for s in result.sentences for e in s.actions.expressions]
        text = " ".join(s.display_text for s in result.sentences if not s.is_thinking)
        reply = Reply(kind, words, text, faces, seconds, self.conversation)
        self.run.replies.append(reply)
        print(f"  [{kind}] {words}\n      -> {faces[:1]} {text}", flush=True)
        return reply

    async def learned(self, timeout_s: float = 600.0) -> None:
        """Wait until the memory's writer has looked at every turn so far."""
        memory = self.session.memory
        if memory is None:
            return
        deadline = time.monotonic() + timeout_s
        while memory.writer.pending and time.monotonic() < deadline:
            await asyncio.sleep(0.5)


async def run_language(language: str, seed: int, args: argparse.Namespace) -> Run:
    from app.audio.playback import MemorySink
    from app.config import Settings
    from app.session import VoiceSession

    rng = random.Random(f"{seed}-{language}")
    settings = Settings()
    if args.model:
        settings.chat.model = args.model
    run = Run(language)
    session = VoiceSession(settings, sink=MemorySink())  # history and memory: the profile's
    await session.load_models()
    talk = Talk(session, run)
    try:
        # The memory first: every turn after it is queued for the memory's writer too,
        # and the script waits for what it learned before asking in a new conversation.
        for _ in range(args.memory_rounds):
            await memory_script(talk, language, rng)
        per = args.per_conversation
        openings = corpus_openings(language, args.openings, rng)
        for start in range(0, len(openings), per):
            await talk.new()
            for words in openings[start : start + per]:
                await talk.say("opening", words)
        await talk.new()
        for question, expected in corpus_trivia(language, args.trivia, rng):
            if len([r for r in run.replies if r.conversation == talk.conversation]) >= per:
                await talk.new()
            run.trivia.append((expected, await talk.say("trivia", question)))
        await talk.new()
        requests = corpus_requests(language, rng) + REQUESTS[language]
        for words in rng.sample(requests, min(args.requests, len(requests))):
            if len([r for r in run.replies if r.conversation == talk.conversation]) >= per:
                await talk.new()
            await talk.say("request", words)
        for sign, words in news(language, args.news, rng):
            await talk.new()  # each alone: the last one's mood is not this one's
            run.news.append((sign, await talk.say("news", words)))
        if session.memory is not None:
            print("  memory learned:", [item.text for item in session.memory.items()])
    finally:
        await session.aclose(memory_wait_s=5)
    return run


async def memory_script(talk: Talk, language: str, rng: random.Random) -> None:
    told, untold = told_and_untold(language, rng)
    memory = talk.session.memory
    if memory is not None and talk.conversation:  # each round starts knowing nothing
        await talk.learned()
        memory.forget_everything()
    await talk.new()
    for fact in told:
        await talk.say("tell", fact.telling)
    for words in rng.sample(CONVERSATION_FILLERS[language], 2):
        await talk.say("filler", words)
    for fact in rng.sample(told, len(told)):
        talk.run.recalled.append((fact, await talk.say("ask", fact.question), "same"))
    await talk.learned()
    await talk.new()
    for fact in rng.sample(told, len(told)):
        talk.run.recalled.append((fact, await talk.say("ask", fact.question), "new"))
    for question in untold:
        talk.run.untold.append((question, await talk.say("untold", question)))


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def report(run: Run, seed: int) -> None:
    language = run.language
    replies = run.replies
    print(f"\n== {language}, seed {seed}: {len(replies)} replies")
    for where in ("same", "new"):
        rows = [(f, r) for f, r, w in run.recalled if w == where]
        got = sum(f.value.lower() in r.reply.lower() for f, r in rows)
        label = "this conversation" if where == "same" else "a new conversation"
        print(f"told facts recalled, {label}: {_share(got, len(rows))}")
    asked = [r for _, r, _ in run.recalled] + [r for _, r in run.untold]
    swapped = [r for r in asked if AS_THEIRS.search(r.reply)]
    print(
        f"questions about them answered as if about the companion: "
        f"{_share(len(swapped), len(asked))}"
    )
    invented = [r for _, r in run.untold if not NOT_KNOWN.search(r.reply)]
    print(f"never-told facts stated as facts: {_share(len(invented), len(run.untold))}")
    for r in invented:
        print(f"    {r.said!r} -> {r.reply!r}")
    requests = [r for r in replies if r.kind == "request"]
    refused = [r for r in requests if REFUSAL.search(r.reply)]
    print(f"harmless requests refused: {_share(len(refused), len(requests))}")
    for r in refused:
        print(f"    {r.said!r} -> {r.reply!r}")
    right = wrong = 0
    for sign, r in run.news:
        face = r.faces[0] if r.faces else ""
        right += face in (GOOD_FACES if sign == "good" else BAD_FACES)
        wrong += face in (BAD_FACES if sign == "good" else {"joy", "smirk"})
    print(
        f"face's sign right for good and bad news: {_share(right, len(run.news))}; "
        f"the opposite sign: {_share(wrong, len(run.news))}"
    )
    trivia = sum(answer_right(expected, r.reply, language) for expected, r in run.trivia)
    print(f"trivia right (typed): {_share(trivia, len(run.trivia))}")
    twice = 0
    by_conversation: dict[int, list[str]] = {}
    for r in replies:
        said = by_conversation.setdefault(r.conversation, [])
        twice += r.reply in said
        said.append(r.reply)
    print(f"replies said word for word twice in one conversation: {twice}")
    print(f'replies about "the user": {sum(bool(THE_USER.search(r.reply)) for r in replies)}')
    if language == "zh":
        chinese = sum(_chinese(r.reply) for r in replies)
        print(f"answered in Chinese: {_share(chinese, len(replies))}")
    seconds = [r.seconds for r in replies]
    print(f"time per typed reply: p50 {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", choices=["en", "zh", "both"], default="both")
    parser.add_argument("--seed", type=int, default=None, help="default: a new one")
    parser.add_argument("--openings", type=int, default=40)
    parser.add_argument("--trivia", type=int, default=16)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--news", type=int, default=20)
    parser.add_argument("--memory-rounds", type=int, default=2)
    parser.add_argument("--per-conversation", type=int, default=8)
    parser.add_argument("--model", default="", help="a chat model route; default: embedded")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    print(f"seed {seed}")
    profile = Path(tempfile.mkdtemp(prefix="bench-replies-"))
    os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))  # the model's file
    for name, sub in (
        ("HOME", ""),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
    ):
        os.environ[name] = str(profile / sub)
    languages = ["en", "zh"] if args.language == "both" else [args.language]
    runs = [asyncio.run(run_language(language, seed, args)) for language in languages]
    for run in runs:
        report(run, seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How much the reply pipeline adds between the model's tokens and the sentences out.

    python bench/bench_transformers.py [--runs 20]

Prints, as p50/p95 (it asserts nothing):
- overhead per token: from a token handed to the pipeline to the pipeline asking for the
  next one, all four stages included (budget: 20 µs per token, on average); shown also
  apart for the tokens that complete a fragment, which carry that fragment's way
  through actions_extractor, display_processor and tts_filter;
- token that completes a fragment -> its SentenceOutput out of the pipeline (budget 5 ms);
- time per character as the reply grows from 25k to 200k characters (flat = linear).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agent.transformers import reply_pipeline, sentence_divider

TOKEN_BUDGET_US = 20.0
FRAGMENT_BUDGET_MS = 5.0

# A reply with every kind of thing the pipeline handles, English and Chinese.
MIXED_REPLY = (
    "<think>Plan: greet, answer, suggest. Keep it short, e.g. three sentences.</think>\n"
    "[joy] Hello! Pi is 3.14, and Mr. Smith says v1.2.3 is out at https://example.com/a.b. "
    "The U.S. Army pays $29.99, write to a.b@example.com. Here is a list:\n"
    "1. **first** item, with `code`\n2. second item (an aside) 🎉\n"
    '你好！今天天气很好。<|ACT {"emotion": "surprise", "intensity": 0.7}|>我们去公园吧？'
    "嗯……好的，走吧！ Wait... I think so. [laughs] That's all, etc. See you soon! [smirk]\n\n"
)

# A plain conversational reply: sentences of ordinary length, a tag now and then.
PLAIN_REPLY = (
    "[joy] Oh, that sounds like a lovely plan for the weekend, and I think the weather "
    "will be kind to you. If you leave early in the morning, you can reach the lake before "
    "the crowds and find a quiet spot near the water. Don't forget to bring a warm jacket, "
    "because it gets chilly once the sun goes down. 听起来真不错！周末去湖边走走，"
    "呼吸一下新鲜空气，对身体也有好处。记得早点出发，带上外套。[smirk] And please send me "
    "a photo of the sunset, I would love to see it.\n"
)

FIRST_FRAGMENT_REPLIES = {
    "english sentence": "[joy] Hello there, friend. How are you doing today? I missed you!",
    "english comma cut": "Well, I think that, in fact, we should go outside. It is sunny.",
    "chinese sentence": "[joy:0.6]你好呀！今天天气很好。我们去公园吧？",
    "thinking then markdown": (
        "<think>The user greets me. Reply warmly.</think>**Hi** 😊 there (waves). How are you?"
    ),
}


def word_pieces(text: str) -> list[str]:
    """Roughly how a chat model streams: " word", punctuation, 1-2 CJK characters."""
    return re.findall(r"\s*[A-Za-z']+|\s*\d+|\s*[^\sA-Za-z\d]{1,2}|\s+", text)


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Timings:
    """One pass, in ns: each token's processing time (split by whether the token completed
    a fragment, which then went through all four stages) and each output's delay."""

    def __init__(self) -> None:
        self.quiet_tokens: list[int] = []
        self.completing_tokens: list[int] = []
        self.to_output: list[int] = []

    @property
    def per_token(self) -> list[int]:
        return self.quiet_tokens + self.completing_tokens


async def timed_pass(tokens: list[str], run: Callable[..., AsyncIterator[object]]) -> Timings:
    """Feed `tokens`; time each token's processing and each output's delay."""
    timings = Timings()
    handed_at = 0

    async def model() -> AsyncIterator[str]:
        nonlocal handed_at
        clock = time.perf_counter_ns
        for token in tokens:
            outputs_before = len(timings.to_output)
            handed_at = clock()
            yield token
            took = clock() - handed_at
            completed = len(timings.to_output) > outputs_before
            (timings.completing_tokens if completed else timings.quiet_tokens).append(took)

    async for _ in run(model()):
        timings.to_output.append(time.perf_counter_ns() - handed_at)
    return timings


def line(label: str, values_ns: Sequence[float], unit: str, budget: float | None = None) -> str:
    """p50/p95/mean; with a budget, the verdict is on the mean for per-token cost (the
    pipeline's share of each token) and on p95 for delays."""
    scale = {"µs": 1e3, "ms": 1e6}[unit]
    p50, p95 = percentile(values_ns, 0.5) / scale, percentile(values_ns, 0.95) / scale
    mean = sum(values_ns) / len(values_ns) / scale
    text = (
        f"  {label:<40} p50 {p50:7.2f} {unit}  p95 {p95:7.2f} {unit}  mean {mean:7.2f} {unit}"
        f"  n={len(values_ns):,}"
    )
    if budget is not None:
        judged, name = (mean, "mean") if unit == "µs" else (p95, "p95")
        text += (
            f"  ({name} {'within' if judged <= budget else 'OVER'} the {budget:g} {unit} budget)"
        )
    return text


async def main(runs: int) -> None:
    gc.collect()
    reply, plain = MIXED_REPLY * 40, PLAIN_REPLY * 30
    print(f"overhead per token ({runs} passes over each reply)")
    for label, tokens in (
        (f"plain reply ({len(plain):,} chars), model-like tokens", word_pieces(plain)),
        (f"mixed reply ({len(reply):,} chars), model-like tokens", word_pieces(reply)),
        (f"mixed reply ({len(reply):,} chars), one character a token", list(reply)),
    ):
        whole, divider = Timings(), Timings()
        for _ in range(runs):
            for total, run in ((whole, reply_pipeline), (divider, sentence_divider)):
                one = await timed_pass(tokens, run)
                total.quiet_tokens += one.quiet_tokens
                total.completing_tokens += one.completing_tokens
        print(f" {label}:")
        print(line("whole pipeline, every token", whole.per_token, "µs", TOKEN_BUDGET_US))
        print(line("  tokens completing no fragment", whole.quiet_tokens, "µs"))
        print(line("  tokens completing a fragment", whole.completing_tokens, "µs"))
        print(line("sentence_divider alone, every token", divider.per_token, "µs"))

    print("\ntoken that completes a fragment -> its SentenceOutput")
    for name, text in (("plain", plain), ("mixed", reply)):
        delays: list[int] = []
        for _ in range(runs):
            delays += (await timed_pass(word_pieces(text), reply_pipeline)).to_output
        print(line(f"every fragment of the {name} reply", delays, "ms", FRAGMENT_BUDGET_MS))
    for name, text in FIRST_FRAGMENT_REPLIES.items():
        tokens = word_pieces(text)
        first: list[int] = []
        for _ in range(runs * 50):
            first.append((await timed_pass(tokens, reply_pipeline)).to_output[0])
        print(line(f"first fragment, {name}", first, "ms", FRAGMENT_BUDGET_MS))

    print("\ngrowing replies, one character a token (flat time per character = linear)")
    shapes: dict[str, Callable[[int], str]] = {
        "mixed reply": lambda n: (MIXED_REPLY * (n // len(MIXED_REPLY) + 1))[:n],
        "one endless sentence": lambda n: ("word " * n)[:n],
        "CJK without a mark": lambda n: "好" * n,
    }
    for name, build in shapes.items():
        cells = []
        for size in (25_000, 50_000, 100_000, 200_000):
            text = build(size)
            started = time.perf_counter()
            async for _ in reply_pipeline(_chars(text)):
                pass
            cells.append(
                f"{size // 1000:>3}k {(time.perf_counter() - started) / size * 1e6:5.2f} µs"
            )
        print(f"  {name:<22} " + "   ".join(cells) + "  per character")


async def _chars(text: str) -> AsyncIterator[str]:
    for c in text:
        yield c


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))

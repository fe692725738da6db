"""How fast the reply pipeline turns model tokens into sentences.

Prints the delay from the token that completes the first fragment to that fragment's
SentenceOutput leaving the pipeline (budget 5 ms), and throughput in tokens per second.
Run: python bench/bench_transformers.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agent.transformers import reply_pipeline, sentence_divider

BUDGET_MS = 5.0

FIRST_FRAGMENT_REPLIES = {
    # English: the "." is only known to end the sentence when " How" arrives.
    "english sentence": "[joy] Hello there, friend. How are you doing today? I missed you!",
    # Comma cut: the first fragment ends at "," once it has three words.
    "english comma cut": "Well, I think that, in fact, we should go outside. It is sunny.",
    # CJK: "！" ends the sentence in the token that carries it.
    "chinese sentence": "[joy:0.6]你好呀！今天天气很好。我们去公园吧？",
    # Thinking first, then speech; markdown and emoji to filter.
    "thinking then markdown": (
        "<think>The user greets me. Reply warmly.</think>**Hi** 😊 there (waves). How are you?"
    ),
}

LONG_REPLY = (
    "<think>Plan: greet, answer, suggest. Keep it short, e.g. three sentences.</think>\n"
    "[joy] Hello! Pi is 3.14, and Mr. Smith says v1.2.3 is out at example.com/a.b. "
    "Here is a list:\n- **first** item, with `code`\n- second item (an aside) 🎉\n"
    "你好！今天天气很好。[surprise:0.7]我们去公园吧？嗯……好的，走吧！ "
    "Wait... I think so. [laughs] That's all, etc. See you soon! [smirk]\n\n"
)


def word_pieces(text: str) -> list[str]:
    """Roughly how a chat model streams: " word", punctuation, 1-2 CJK characters."""
    return re.findall(r"\s*[A-Za-z']+|\s*\d+|\s*[^\sA-Za-z\d]{1,2}|\s+", text)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def first_fragment_delay_ms(tokens: list[str]) -> float:
    """Time from the last token pulled (the one that completed the fragment) to its output."""
    arrived = 0.0

    async def model() -> AsyncIterator[str]:
        nonlocal arrived
        for token in tokens:
            arrived = time.perf_counter()
            yield token

    pipeline = reply_pipeline(model())
    await anext(pipeline)
    left = time.perf_counter()
    await pipeline.aclose()
    return (left - arrived) * 1000


async def throughput(
    tokens: list[str], run: Callable[[AsyncIterator[str]], AsyncIterator[object]]
) -> tuple[float, int]:
    async def model() -> AsyncIterator[str]:
        for token in tokens:
            yield token

    started = time.perf_counter()
    outputs = 0
    async for _ in run(model()):
        outputs += 1
    return len(tokens) / (time.perf_counter() - started), outputs


async def main(runs: int) -> None:
    print(f"first fragment: token that completes it -> SentenceOutput out ({runs} runs each)")
    for name, text in FIRST_FRAGMENT_REPLIES.items():
        tokens = word_pieces(text)
        for _ in range(50):  # warm up caches and the regex engine
            await first_fragment_delay_ms(tokens)
        delays = [await first_fragment_delay_ms(tokens) for _ in range(runs)]
        p50, p95 = percentile(delays, 0.50), percentile(delays, 0.95)
        verdict = "within" if p95 <= BUDGET_MS else "OVER"
        print(
            f"  {name:<24} p50 {p50 * 1000:7.1f} µs  p95 {p95 * 1000:7.1f} µs  "
            f"max {max(delays) * 1000:7.1f} µs  ({verdict} the {BUDGET_MS:.0f} ms budget)"
        )

    long_text = LONG_REPLY * 200
    print(f"\nthroughput over a {len(long_text):,}-character mixed reply")
    for label, tokens in (
        ("model-like tokens", word_pieces(long_text)),
        ("one character a token", list(long_text)),
    ):
        for stage, run in (
            ("whole pipeline", reply_pipeline),
            ("sentence_divider alone", sentence_divider),
        ):
            rates = [await throughput(tokens, run) for _ in range(3)]
            rate, outputs = max(rates)
            chars_per_s = rate * len(long_text) / len(tokens)
            print(
                f"  {label:<22} {stage:<23} {rate:>10,.0f} tokens/s {chars_per_s:>10,.0f} chars/s"
                f"  ({len(tokens):,} tokens -> {outputs:,} outputs)"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    asyncio.run(main(parser.parse_args().runs))

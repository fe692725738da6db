"""llama.cpp's own settings on the embedded chat model (Qwen2.5-Coder-1.5B Q4_K_M), side
by side: how fast a turn's prompt is read and how fast the reply is decoded.

    python bench/bench_llama_settings.py [--rounds 2] [--reps 2] [--json] [--grid]
                                         [--only t2-b512-fa0-f16,t2-b512-fa1-q8]

By default the baseline and each setting changed alone (5 set-ups); `--grid` runs all 12
combinations. Each set-up is llama.cpp's threads (1 or 2, for reading and decoding alike), n_batch
(64 or 512; n_ubatch follows it), flash attention (off/on) and the KV cache type (f16,
or q8_0 for K and V, which needs flash attention). The app today: 2 threads (all the
cores), n_batch 512, flash attention off, f16 (`t2-b512-fa0-f16`, the baseline).

A turn is measured as the app reads it: a kept prefix of about 300 tokens (the system
prompt and earlier turns, evaluated once per load and kept), then
- prompt reading: the new user message of about 60 tokens with the assistant header
  after that prefix (tokens/s; the prefix is kept between repetitions, as llama.cpp's
  prefix cache keeps it between turns);
- decode: 40 tokens, greedy, one at a time (tokens/s).
Per set-up the median over `rounds` x `reps` is printed with its ratio to the baseline;
rounds go over all set-ups in turn so that a change in the machine's load falls on all
of them. The machine's load average is printed: on a shared machine run it twice. It
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.llm.wire.llama_cpu import safe_model_params
from app.llm.wire.local import default_model_path

PREFIX_TOKENS = 300
MESSAGE_TOKENS = 60
DECODE_TOKENS = 40
N_CTX = 2048
BASELINE = "t2-b512-fa0-f16"

SYSTEM = (
    "You are Mika, a warm and playful companion who talks with the user by voice. Speak to "
    "the user directly as you, never about them in the third person. Keep every reply to "
    "one to three short sentences that sound natural when spoken aloud, with no lists, no "
    "markdown and no emoji. If you do not know something, say so plainly. Start each reply "
    "with one expression tag from neutral, happy, sad, surprise, angry or thinking. "
    "The time now is 19:42 on Thursday, 3 December 2026. Notes you remember about the user: "
    "their name is Tomas; they adopted a kitten called Pepper; they work as a nurse; they "
    "like hiking on weekends and are learning to play the guitar."
)
TURNS = [
    ("user", "Hi! My name is Tomas and I just adopted a kitten called Pepper."),
    ("assistant", "[happy] Hi Tomas! Pepper is a lovely name for a kitten."),
    ("user", "What is twelve plus seven?"),
    ("assistant", "[neutral] Twelve plus seven is nineteen."),
    ("user", "Can you tell me what time it is right now?"),
    ("assistant", "[neutral] It is 19:42 right now, on a Thursday evening."),
    ("user", "I'm a bit nervous about my job interview tomorrow."),
    ("assistant", "[sad] That's understandable. You've prepared well, and I believe in you."),
    ("user", "Thanks. Pepper kept me awake last night, running around the flat."),
    ("assistant", "[happy] Kittens are full of energy at night! She'll settle down soon."),
]
MESSAGE = (
    "Anyway, I was wondering whether you could help me think of a few good questions to "
    "ask at the end of the interview tomorrow, because I always freeze when they ask me "
    "if I have any questions for them, and I would like to sound curious and prepared "
    "rather than nervous."
)


@dataclass(frozen=True)
class Setup:
    threads: int
    n_batch: int
    flash_attn: bool
    kv: str  # "f16" or "q8"

    @property
    def name(self) -> str:
        return f"t{self.threads}-b{self.n_batch}-fa{int(self.flash_attn)}-{self.kv}"

    def params(self) -> dict[str, Any]:
        import llama_cpp

        kv_type = llama_cpp.GGML_TYPE_Q8_0 if self.kv == "q8" else llama_cpp.GGML_TYPE_F16
        return {
            "n_threads": self.threads,
            "n_threads_batch": self.threads,
            "n_batch": self.n_batch,
            "n_ubatch": self.n_batch,
            "flash_attn": self.flash_attn,
            "type_k": kv_type,
            "type_v": kv_type,
        }


def all_setups(grid: bool = False) -> list[Setup]:
    """The baseline and each setting changed alone (q8_0 with flash attention, which it
    needs); `grid`: every combination (12 set-ups)."""
    if not grid:
        return [
            Setup(2, 512, False, "f16"),
            Setup(1, 512, False, "f16"),
            Setup(2, 64, False, "f16"),
            Setup(2, 512, True, "f16"),
            Setup(2, 512, True, "q8"),
        ]
    out = []
    for threads in (2, 1):
        for n_batch in (512, 64):
            for flash, kv in ((False, "f16"), (True, "f16"), (True, "q8")):
                out.append(Setup(threads, n_batch, flash, kv))
    return out


def last_logits(llama: Any) -> Any:
    """The logits of the last token evaluated (llama-cpp-python keeps them only in
    llama.cpp unless every token's are asked for)."""
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))


def _chatml(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def prompt_tokens(llama: Any) -> tuple[list[int], list[int]]:
    """(the kept prefix, the new message with the assistant header), about 300 and 60."""
    prefix_text = _chatml("system", SYSTEM) + "".join(_chatml(r, t) for r, t in TURNS)
    prefix = llama.tokenize(prefix_text.encode(), add_bos=False, special=True)
    message = llama.tokenize(
        (_chatml("user", MESSAGE) + "<|im_start|>assistant\n").encode(),
        add_bos=False,
        special=True,
    )
    return prefix, message


@dataclass
class Figures:
    setup: str
    prefix_tokens: int
    message_tokens: int
    prompt_tps: list[float]
    decode_tps: list[float]

    @property
    def prompt(self) -> float:
        return statistics.median(self.prompt_tps)

    @property
    def decode(self) -> float:
        return statistics.median(self.decode_tps)


def measure(path: Path, setup: Setup, reps: int) -> tuple[int, int, list[float], list[float]]:
    from llama_cpp import Llama

    with safe_model_params():
        llama = Llama(model_path=str(path), n_ctx=N_CTX, verbose=False, **setup.params())
    try:
        prefix, message = prompt_tokens(llama)
        llama.eval(prefix)  # the kept prefix, read once per load
        prompt_tps, decode_tps = [], []
        for _ in range(reps):
            llama.n_tokens = len(prefix)  # the next eval drops what came after the prefix
            started = time.perf_counter()
            llama.eval(message)
            read = time.perf_counter() - started
            started = time.perf_counter()
            for _ in range(DECODE_TOKENS):
                token = int(np.argmax(last_logits(llama)))
                llama.eval([token])
            decoded = time.perf_counter() - started
            prompt_tps.append(len(message) / read)
            decode_tps.append(DECODE_TOKENS / decoded)
        return len(prefix), len(message), prompt_tps, decode_tps
    finally:
        llama.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="passes over all set-ups")
    parser.add_argument("--reps", type=int, default=2, help="turns measured per load")
    parser.add_argument("--only", default="", help="comma-separated set-up names")
    parser.add_argument("--grid", action="store_true", help="every combination (12)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    setups = all_setups(args.grid or bool(args.only))
    if args.only:
        wanted = set(args.only.split(","))
        setups = [s for s in setups if s.name in wanted]
        if not setups:
            known = [s.name for s in all_setups(True)]
            parser.error(f"no set-up named {args.only}; known: {known}")
    path = default_model_path()
    figures = {s.name: Figures(s.name, 0, 0, [], []) for s in setups}
    load_before = os.getloadavg()
    for round_no in range(args.rounds):
        for setup in setups:
            kept, new, prompt_tps, decode_tps = measure(path, setup, args.reps)
            got = figures[setup.name]
            got.prefix_tokens, got.message_tokens = kept, new
            got.prompt_tps += prompt_tps
            got.decode_tps += decode_tps
            if not args.json:
                print(
                    f"  round {round_no + 1} {setup.name:<16} prompt "
                    f"{statistics.median(prompt_tps):6.1f} tok/s  decode "
                    f"{statistics.median(decode_tps):5.1f} tok/s",
                    file=sys.stderr,
                )
    load_after = os.getloadavg()
    base = figures.get(BASELINE)
    rows = []
    for got in figures.values():
        row = asdict(got) | {"prompt_median": got.prompt, "decode_median": got.decode}
        if base is not None:
            row["prompt_ratio"] = got.prompt / base.prompt
            row["decode_ratio"] = got.decode / base.decode
        rows.append(row)
    machine = {
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "model": path.name,
        "rounds": args.rounds,
        "reps": args.reps,
    }
    if args.json:
        print(json.dumps({"machine": machine, "setups": rows}, indent=2))
        return
    first = next(iter(figures.values()))
    print(
        f"{path.name}: {first.prefix_tokens} tokens kept, {first.message_tokens} new "
        f"tokens read, {DECODE_TOKENS} decoded; {os.cpu_count()} CPUs, load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; median of "
        f"{args.rounds * args.reps}"
    )
    print(f"{'set-up':<17} {'prompt tok/s':>12} {'x base':>7} {'decode tok/s':>13} {'x base':>7}")
    for row in rows:
        print(
            f"{row['setup']:<17} {row['prompt_median']:12.1f} "
            f"{row.get('prompt_ratio', float('nan')):7.2f} {row['decode_median']:13.1f} "
            f"{row.get('decode_ratio', float('nan')):7.2f}"
        )


if __name__ == "__main__":
    main()

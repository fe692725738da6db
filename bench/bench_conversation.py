"""A spoken conversation with the window app on its embedded defaults, measured from
the audio (issue 25): what a user of the default meets.

The app runs as `make run` runs it (`companion`, no options) on a newcomer's desktop
(tests/desktop.py: Xvfb, a fresh profile with the first-run guide done, a private
PulseAudio). Two null sinks: the questions, said by espeak-ng in several voices, are
played into `mic`, whose monitor is the app's default microphone; the app speaks into
`test_sink`, whose monitor is recorded. Both monitors are recorded from the start, on
one clock, so for each turn:

- end of question → first reply sound: the last loud 10 ms of the question in the
  microphone's recording → the first loud 10 ms after it in the speaker's recording;
- each stage from the app's own `turn N timings` log line (turn decided, request
  sent, first token, first sentence, first audio), from the end of speech as the app
  saw it;
- the words it heard, the words it answered (the saved conversation), the faces the
  avatar showed, and a score: the answers that have one (a sum, the time, a name said
  earlier) right or not, and replies that speak of the user in the third person.

    python bench/bench_conversation.py                     # the conversation
    python bench/bench_conversation.py --memories 300      # with 300 memories stored
    python bench/bench_conversation.py --history 20        # after 20 earlier turns

Nothing here asserts; it prints figures (and `--json FILE` writes them).
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.desktop import Desktop  # noqa: E402
from tests.pulse import MONITOR, PulseServer  # noqa: E402

RATE = 16_000
MIC = "mic"
MODEL_LOAD_S = 400.0
REPLY_TIMEOUT_S = 300.0  # a bound for a very busy machine, not a budget
NUMBERS = {
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "twelve": 12, "nineteen": 19,
    "forty-eight": 48, "forty eight": 48, "sixty-five": 65, "sixty five": 65,
}  # fmt: skip
THIRD_PERSON = re.compile(
    r"\b(the user|the user's|they said|he said|she said|the person|my user)\b", re.I
)


def _has_number(value: int) -> Callable[[str], bool]:
    def check(reply: str) -> bool:
        text = reply.lower()
        if re.search(rf"(?<![\d.]){value}(?![\d])", text):
            return True
        return any(n == value and word in text for word, n in NUMBERS.items())

    return check


def _has_word(*words: str) -> Callable[[str], bool]:
    return lambda reply: any(w.lower() in reply.lower() for w in words)


def _tells_the_time(reply: str) -> bool:
    now = dt.datetime.now()
    hours = {now.hour, (now.hour % 12) or 12}
    before = now - dt.timedelta(minutes=3)
    hours |= {before.hour, (before.hour % 12) or 12}
    for match in re.finditer(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|o'clock)?", reply):
        if int(match.group(1)) in hours and (match.group(2) or match.group(3)):
            return True
    return False


def _tells_the_day(reply: str) -> bool:
    return dt.datetime.now().strftime("%A").lower() in reply.lower()


@dataclass(frozen=True)
class Question:
    text: str
    voice: str
    check: Callable[[str], bool] | None = None  # None: no single right answer
    pause_before_s: float = 1.5


SCRIPT = [
    Question("Hi! My name is Tomas and I just adopted a kitten called Pepper.", "en-us"),
    Question("What is twelve plus seven?", "en-gb", _has_number(19)),
    Question("Can you tell me what time it is right now?", "en-us+f3", _tells_the_time),
    Question("I'm a bit nervous about my job interview tomorrow.", "en-us+m3"),
    Question("Do you have any advice to help me calm down?", "en-gb-x-rp"),
    Question("What is eight times six?", "en-us+f2", _has_number(48)),
    Question("What day of the week is it today?", "en-gb", _tells_the_day),
    Question("I love rainy days, because I can read all afternoon.", "en-us+f3"),
    Question("Do you remember my name?", "en-us", _has_word("Tomas", "Thomas"), 20.0),
    Question("What was my kitten's name again?", "en-us+m3", _has_word("Pepper")),
    Question("How much is one hundred minus thirty five?", "en-gb-x-rp", _has_number(65)),
    Question("Thank you, that's all for now. Goodbye!", "en-us+f2"),
]


# -- sound -------------------------------------------------------------------------------


class Recorder:
    """`parec` of one source into memory, with the monotonic time of its first sample
    (the earliest start the reads allow: a read comes at or after its samples)."""

    def __init__(self, pulse: PulseServer, device: str) -> None:
        self._process = subprocess.Popen(
            ["parec", f"--device={device}", "--format=s16le", f"--rate={RATE}",
             "--channels=1", "--latency-msec=10", "--raw"],
            env=pulse.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._data = bytearray()
        self._lock = threading.Lock()
        self.start = float("inf")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        out = self._process.stdout
        assert out is not None
        while chunk := out.read1(3200):  # type: ignore[attr-defined]
            now = time.monotonic()
            with self._lock:
                self._data += chunk
                self.start = min(self.start, now - len(self._data) / 2 / RATE)

    def samples(self) -> np.ndarray:
        with self._lock:
            data = bytes(self._data[: len(self._data) // 2 * 2])
        return np.frombuffer(data, dtype="<i2")

    def length(self) -> int:
        with self._lock:
            return len(self._data) // 2

    def segment(self, start: int, end: int | None = None) -> np.ndarray:
        """Samples `start` to `end` (the last one heard when None)."""
        with self._lock:
            stop = len(self._data) // 2 if end is None else min(end, len(self._data) // 2)
            data = bytes(self._data[2 * max(0, start) : 2 * stop])
        return np.frombuffer(data, dtype="<i2")

    def time_of(self, index: int) -> float:
        return self.start + index / RATE

    def index_at(self, when: float) -> int:
        return max(0, int((when - self.start) * RATE))

    def stop(self) -> None:
        self._process.kill()
        self._process.wait(timeout=5)


def loud_frames(samples: np.ndarray, threshold: float = 600.0) -> np.ndarray:
    """Indexes (in samples) of the 10 ms frames whose RMS is above `threshold`."""
    n = samples.size // 160
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    frames = samples[: n * 160].astype(np.float32).reshape(n, 160)
    rms = np.sqrt((frames**2).mean(axis=1))
    return np.flatnonzero(rms > threshold) * 160


def speak(text: str, voice: str, path: Path) -> Path:
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", str(RATE), "-c", "1", "-b", "16", str(path)], check=True)
    raw.unlink()
    return path


# -- a profile to start from ------------------------------------------------------------


def seed_memories(desk: Desktop, count: int) -> None:
    from app.memory import MemoryDraft, MemoryStore
    from bench.bench_memory import fake_memory

    rng = random.Random(7)
    store = MemoryStore(desk.home / ".data" / "companion" / "memory.sqlite3")
    store.open()
    store.add_many("Mika", [MemoryDraft(fake_memory(rng, n)) for n in range(count)])
    store.close()


def seed_history(desk: Desktop, turns: int) -> None:
    """An earlier conversation of `turns` exchanges, the one the app reopens."""
    topics = ["the weather", "my garden", "a film I saw", "cooking pasta", "a long walk"]
    folder = desk.home / ".data" / "companion" / "history" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    start = time.time() - 3600
    lines = []
    for n in range(turns):
        topic = topics[n % len(topics)]
        when = dt.datetime.fromtimestamp(start + n * 60, dt.UTC).isoformat().replace("+00:00", "Z")
        lines.append({"op": "add", "msg": {"role": "user", "content": f"Let me tell you about "
                      f"{topic}, part {n + 1}.", "sender": "user", "timestamp": when,
                      "metadata": {}}})  # fmt: skip
        lines.append({"op": "add", "msg": {"role": "assistant", "content": [{"kind": "text",
                      "text": f"[joy] That sounds lovely! Tell me more about {topic}."}],
                      "sender": "", "timestamp": when, "metadata": {}}})  # fmt: skip
    name = dt.datetime.now().strftime("%Y%m%d-%H%M%S000000") + "-bench0"
    (folder / f"{name}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )


# -- the run ----------------------------------------------------------------------------


@dataclass
class TurnFigures:
    question: str
    voice: str
    heard: str = ""
    reply: str = ""
    first_sound_s: float | None = None
    stages_ms: dict[str, float] = field(default_factory=dict)
    faces: list[str] = field(default_factory=list)
    right: bool | None = None
    third_person: bool = False


def _messages(desk: Desktop, role: str) -> list[str]:
    found = []
    for line in desk.history_text().splitlines():
        try:
            msg = json.loads(line).get("msg", {})
        except (json.JSONDecodeError, AttributeError):
            continue
        if msg.get("role") != role:
            continue
        content = msg.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        found.append(re.sub(r"\[[a-z_]+\]\s*", "", str(content)).strip())
    return found


def run(args: argparse.Namespace, folder: Path) -> list[TurnFigures]:
    figures: list[TurnFigures] = []
    with Desktop(folder / "desk") as desk:
        desk.seed_embedded_model()
        config = desk.home / ".config" / "companion"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text("[ui]\nfirst_run_done = true\n", encoding="utf-8")
        if args.memories:
            seed_memories(desk, args.memories)
        if args.history:
            seed_history(desk, args.history)
        desk.pulse.pactl("load-module", "module-null-sink", f"sink_name={MIC}", f"rate={RATE}")
        desk.pulse.pactl("set-default-source", f"{MIC}.monitor")
        mic, speaker = Recorder(desk.pulse, f"{MIC}.monitor"), Recorder(desk.pulse, MONITOR)
        try:
            desk.launch(*(["-vv"] if args.debug else []))
            desk.wait_for_log(r"status line: (Listening|Ready)", MODEL_LOAD_S)
            time.sleep(2.0)
            for number, question in enumerate(SCRIPT[: args.turns]):
                figures.append(ask(desk, mic, speaker, question, folder / f"q{number}.wav"))
                print(_row(number + 1, figures[-1]), flush=True)
        finally:
            mic.stop()
            speaker.stop()
            desk.quit_app()
    return figures


def ask(
    desk: Desktop, mic: Recorder, speaker: Recorder, question: Question, wav: Path
) -> TurnFigures:
    turn = TurnFigures(question.text, question.voice)
    speak(question.text, question.voice, wav)
    time.sleep(question.pause_before_s)
    mark = len(desk.log())
    replies_before = len(_messages(desk, "assistant"))
    started = time.monotonic()
    subprocess.run(["paplay", f"--device={MIC}", str(wav)], env=desk.pulse.env(), check=True)
    played = time.monotonic()
    # The reply: its timings line, then 1.5 s of silence from the speaker.
    deadline = played + REPLY_TIMEOUT_S
    while time.monotonic() < deadline:
        log = desk.log()[mark:]
        answered = len(_messages(desk, "assistant")) > replies_before
        if re.search(r"turn \d+ timings", log) and answered:
            recent = speaker.samples()[speaker.index_at(time.monotonic() - 1.5) :]
            if recent.size and loud_frames(recent).size == 0:
                break
        time.sleep(0.2)
    log = desk.log()[mark:]
    said = loud_frames(mic.samples()[mic.index_at(started) : mic.index_at(played + 0.5)])
    if said.size:
        end_of_question = mic.time_of(mic.index_at(started) + int(said[-1]) + 160)
        first = speaker.index_at(end_of_question)
        sound = loud_frames(speaker.samples()[first:])
        if sound.size:
            turn.first_sound_s = speaker.time_of(first + int(sound[0])) - end_of_question
    timings = re.search(r"turn \d+ timings (\{[^\n]*\})", log)
    if timings:
        turn.stages_ms = {k: float(v) for k, v in ast.literal_eval(timings.group(1)).items()}
    turn.faces = [f for f in re.findall(r"avatar face: (\S+)", log) if f != "thinking"]
    users, replies = _messages(desk, "user"), _messages(desk, "assistant")
    turn.heard = users[-1] if users else ""
    turn.reply = replies[-1] if len(replies) > replies_before else ""
    turn.right = question.check(turn.reply) if question.check else None
    turn.third_person = bool(THIRD_PERSON.search(turn.reply))
    return turn


def _row(number: int, t: TurnFigures) -> str:
    sound = f"{t.first_sound_s:5.2f} s" if t.first_sound_s is not None else "  —    "
    mark = {True: "right", False: "WRONG", None: ""}[t.right]
    return (
        f"{number:2d}. {sound}  {mark:5s}  faces {','.join(t.faces) or '-'}\n"
        f"    said:  {t.question}\n    heard: {t.heard}\n    reply: {t.reply}"
    )


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(figures: list[TurnFigures]) -> dict[str, object]:
    sounds = [t.first_sound_s for t in figures if t.first_sound_s is not None]
    stages: dict[str, list[float]] = {}
    for t in figures:
        for key, value in t.stages_ms.items():
            stages.setdefault(key, []).append(value)
    checked = [t for t in figures if t.right is not None]
    faces = {f for t in figures for f in t.faces}
    return {
        "turns": len(figures),
        "answered": len(sounds),
        "first_sound_p50_s": statistics.median(sounds) if sounds else None,
        "first_sound_p95_s": _percentile(sounds, 0.95) if sounds else None,
        "stages_p50_ms": {k: statistics.median(v) for k, v in stages.items()},
        "right": sum(1 for t in checked if t.right),
        "with_an_answer": len(checked),
        "third_person": sum(1 for t in figures if t.third_person),
        "faces": sorted(faces),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=len(SCRIPT))
    parser.add_argument("--memories", type=int, default=0, help="memories stored before")
    parser.add_argument("--history", type=int, default=0, help="earlier turns to reopen")
    parser.add_argument("--folder", type=Path, default=None, help="keep the run's files here")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--debug", action="store_true", help="the app logs at debug level")
    args = parser.parse_args()
    import signal
    import tempfile

    # Stopped from outside (kill, a CI timeout): leave through the desktop's cleanup, so
    # no app, X server or sound server is left running behind the bench.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with tempfile.TemporaryDirectory(prefix="bench-conversation-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        figures = run(args, folder)
    result = summary(figures)
    p50, p95 = result["first_sound_p50_s"], result["first_sound_p95_s"]
    print(f"\nembedded default, {result['turns']} spoken turns, memories {args.memories}, "
          f"earlier turns {args.history}")  # fmt: skip
    if p50 is not None and p95 is not None:
        print(f"end of question → first reply sound: p50 {p50:.2f} s, p95 {p95:.2f} s "
              f"({result['answered']} of {result['turns']} answered)")  # fmt: skip
    stages = result["stages_p50_ms"]
    assert isinstance(stages, dict)
    print("app's stages, p50 (ms after the end of speech): "
          + ", ".join(f"{k} {v:.0f}" for k, v in stages.items()))  # fmt: skip
    faces = result["faces"]
    assert isinstance(faces, list)
    print(f"answers right: {result['right']} of {result['with_an_answer']}; "
          f"third person: {result['third_person']}; faces: {', '.join(faces)}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"summary": result, "turns": [asdict(t) for t in figures]},
                                        indent=2, default=str))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

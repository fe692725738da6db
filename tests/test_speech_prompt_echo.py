"""Whisper writes back the prompt it was given when it cannot make out the speech: on
espeak-ng's pinyin voice saying "你喜欢什么样的音乐？", Whisper base wrote "以下是普通话
的句子。" (the recognizer's Chinese prompt), or its start "以下是普通话的句" — words
nobody said, which the app would take for a turn of the user's (seen with the same phrase
padded with half a second of silence, as the microphone hands an utterance over; not on
every run, so the strings are the ones base wrote). The prompt
(whole, most of its start, or before real words) is not taken for what was said; the
same words inside what the user said are kept."""

from __future__ import annotations

import pytest

from app.speech.adapters.whisper_hallucinations import (
    WhisperSegment,
    spoken_text,
    without_prompt,
)

ZH_PROMPT = "以下是普通话的句子。"
EN_PROMPT = "Mika, Pepper and Biscuit."


@pytest.mark.parametrize(
    ("text", "prompt", "kept"),
    [
        ("以下是普通话的句子。", ZH_PROMPT, ""),  # the prompt, as base wrote it
        ("以下是普通话的句", ZH_PROMPT, ""),  # its start, cut off by the token limit
        ("以下是普通话的句子", ZH_PROMPT, ""),
        ("以下是普通的句子。", ZH_PROMPT, ""),  # one character short, as base wrote it
        ("以下是普通话的句子啊。", ZH_PROMPT, ""),
        ("以下是我的计划。", ZH_PROMPT, "以下是我的计划。"),  # the user's own words
        ("以下是普通话考试的句子。", ZH_PROMPT, "以下是普通话考试的句子。"),
        ("以下是普通話的句子。", ZH_PROMPT, ""),  # in traditional characters
        ("以下是普通话的句子。你好，今天天气怎么样？", ZH_PROMPT, "你好，今天天气怎么样？"),
        ("以下是", ZH_PROMPT, "以下是"),  # too little of it to say
        ("我的猫叫小白。", ZH_PROMPT, "我的猫叫小白。"),
        ("Mika, Pepper and Biscuit.", EN_PROMPT, ""),
        ("mika pepper", EN_PROMPT, ""),
        ("Mika, Pepper and Biscuit. Where is my cat?", EN_PROMPT, "Where is my cat?"),
        ("Mika, where is Pepper?", EN_PROMPT, "Mika, where is Pepper?"),
        ("以下是普通话的句子。", None, "以下是普通话的句子。"),  # no prompt given
    ],
)
def test_the_prompt_written_back_is_not_what_was_said(
    text: str, prompt: str | None, kept: str
) -> None:
    assert without_prompt(text, prompt) == kept
    assert spoken_text([WhisperSegment(text)], prompt) == kept


def test_segments_of_the_prompt_leave_the_others() -> None:
    segments = [WhisperSegment("以下是普通话的句子。"), WhisperSegment("我今天有点累。")]
    assert spoken_text(segments, ZH_PROMPT) == "我今天有点累。"
    assert spoken_text(segments[:1], ZH_PROMPT) == ""


class _Said:
    """A faster-whisper segment (the fields the adapter reads)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.no_speech_prob, self.avg_logprob, self.compression_ratio = 0.1, -0.5, 1.2


class _WritesItsPromptBack:
    """A whisper model that writes back the prompt it is given, as base did."""

    class model:  # faster-whisper's attribute name
        is_multilingual = True

    def __init__(self) -> None:
        self.prompts: list[str | None] = []

    def transcribe(self, audio: object, **options: object) -> tuple[list[_Said], None]:
        prompt = options.get("initial_prompt")
        self.prompts.append(prompt if isinstance(prompt, str) else None)
        return [_Said(f" {prompt}" if isinstance(prompt, str) else " you")], None


def test_the_recognizer_leaves_out_the_prompt_it_gave() -> None:
    from app.speech.adapters.whisper_local import WhisperLocalAdapter
    from app.speech.contract import SpeechConfig

    whisper = WhisperLocalAdapter(SpeechConfig(enabled=True, language="zh"))
    model = _WritesItsPromptBack()
    whisper._model, whisper._loaded = model, whisper.model_name
    speech = b"\x00\x10\x00\xf0" * 8000  # loud enough not to be silence
    assert whisper.transcribe_sync(speech) == ""
    assert model.prompts and model.prompts[0], "no prompt was given for Chinese"

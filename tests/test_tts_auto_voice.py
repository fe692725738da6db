"""The default voice (`tts.engine = "auto"`): hibari for Latin-alphabet sentences, the
system voice (espeak-ng through pyttsx3) for other scripts and whenever hibari cannot
load, with a notice. Real engines throughout; one stand-in neural engine shows a single
failing sentence."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from app.audio.playback import MemorySink
from app.config import Settings, TTSSettings
from app.events import Notice
from app.tts import SynthesizedAudio, TTSError, Voice, create_tts_engine
from app.tts.auto_voice import AutoVoice, language_of, neural_can_speak
from app.tts.mandarin import PINYIN_VOICE as PINYIN
from app.tts.pyttsx3_engine import Pyttsx3Engine

pytest.importorskip("hibari")

HIBARI_RATE = 24_000  # hibari's clips; espeak-ng's are 22,050 Hz


@pytest.fixture(autouse=True)
def empty_voice_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIBARI_HOME", str(tmp_path / "hibari-cache"))


@pytest.fixture(scope="module")
def voice() -> Iterator[AutoVoice]:
    engine = create_tts_engine(TTSSettings())
    assert isinstance(engine, AutoVoice)
    asyncio.run(engine.load())
    yield engine
    asyncio.run(engine.aclose())


def voiced(audio: SynthesizedAudio) -> bool:
    return int(np.abs(np.frombuffer(audio.pcm, "<i2")).max()) > 1000


@pytest.mark.parametrize(
    ("text", "latin"),
    [
        ("Hello there, I'm Mika.", True),
        ("Café au lait, s'il vous plaît!", True),
        ("It costs $5.50 on Jan. 5. 😊", True),
        ("3 + 4 = 7", True),
        ("你好，我是米卡。", False),
        ("我喜欢 Python。", False),
        ("こんにちは", False),
        ("안녕하세요", False),
        ("Привет, как дела?", False),
        ("Γεια σου", False),
    ],
)
def test_the_neural_voice_speaks_exactly_the_latin_alphabet(text: str, latin: bool) -> None:
    assert neural_can_speak(text) is latin


def test_a_sentence_s_script_names_the_system_voice_s_language() -> None:
    assert language_of("你好") == ("cmn", "zh")
    assert language_of("日本語のテキスト") == ("ja",)  # kana decides over Han characters
    assert language_of("안녕") == ("ko",)
    assert language_of("Привет")[0] == "ru"
    assert language_of("Hello") == ()


def test_the_default_engine_is_the_auto_voice_and_a_named_system_voice_is_the_system() -> None:
    assert isinstance(create_tts_engine(TTSSettings()), AutoVoice)
    assert isinstance(create_tts_engine(TTSSettings(voice="heart")), AutoVoice)
    chosen = create_tts_engine(TTSSettings(voice="gmw/en-us"))
    assert isinstance(chosen, Pyttsx3Engine)
    assert Settings().tts.engine == "auto"


async def test_english_is_spoken_by_hibari_and_chinese_by_the_chinese_voice(
    voice: AutoVoice,
) -> None:
    english = await voice.synthesize("Hi! It's sunny today.")
    assert english.sample_rate == HIBARI_RATE and voiced(english)
    assert voice.chinese is not None  # installed with the app (app.tts.kokoro_mandarin)
    chinese = await voice.synthesize("你好，今天天气很好。")
    direct = await voice.chinese.synthesize("你好，今天天气很好。")
    assert voiced(chinese) and chinese.pcm == direct.pcm  # the Chinese voice said it
    assert chinese.duration_s > 1.0


async def test_without_the_chinese_voice_the_system_s_mandarin_says_chinese() -> None:
    from app.tts.hibari_engine import HibariEngine

    voice = AutoVoice(HibariEngine(), Pyttsx3Engine(), chinese=None)
    try:
        chinese = await voice.synthesize("你好，今天天气很好。")
        assert chinese.sample_rate != HIBARI_RATE and voiced(chinese)
        if sys.platform.startswith("linux"):
            # espeak-ng's pinyin voice reading it as pinyin (app.tts.mandarin): not its
            # Mandarin voice reading the characters as English words and digits
            pinyin = await voice.system.synthesize(
                "ni2 hao3, jin1 tian1 tian1 qi4 hen3 hao3.", PINYIN
            )
            assert abs(chinese.duration_s - pinyin.duration_s) < 0.05
        chunks = [c async for c in voice.stream("谢谢你。")]
        assert len(chunks) == 1 and chunks[0].sample_rate != HIBARI_RATE
    finally:
        await voice.aclose()


async def test_streaming_hands_out_hibari_and_chinese_voice_chunks(voice: AutoVoice) -> None:
    english = [c async for c in voice.stream("One sentence. And another one.")]
    assert english and all(c.sample_rate == HIBARI_RATE for c in english)
    chinese = [c async for c in voice.stream("谢谢你。")]
    assert chinese and all(voiced(c) for c in chinese)


async def test_when_hibari_cannot_load_the_system_voice_speaks_and_the_user_is_told(
    tmp_path: Path,
) -> None:
    notices: list[str] = []
    broken = TTSSettings(model_path=tmp_path / "missing.onnx")
    voice = create_tts_engine(broken, on_notice=notices.append)
    assert isinstance(voice, AutoVoice)
    try:
        await voice.load()  # no exception: speech still works
        first = await voice.synthesize("Hello there.")
        second = await voice.synthesize("Still talking.")
    finally:
        await voice.aclose()
    assert first.sample_rate != HIBARI_RATE and voiced(first) and voiced(second)
    assert len(notices) == 1
    assert "natural voice could not be loaded" in notices[0]
    assert "missing.onnx" in notices[0] and "system voice speaks instead" in notices[0]


class _Stumbles:
    """A neural engine that cannot say one sentence (and says the others)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        if "stumble" in text:
            raise TTSError("the model choked on that one")
        self.said.append(text)
        return SynthesizedAudio(b"\x10\x27" * 2400, HIBARI_RATE)

    def stream(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> AsyncIterator[SynthesizedAudio]:
        async def chunks() -> AsyncIterator[SynthesizedAudio]:
            yield await self.synthesize(text, voice, rate)

        return chunks()

    async def voices(self) -> list[Voice]:
        return []

    async def aclose(self) -> None:
        pass


async def test_a_sentence_hibari_fails_on_is_said_by_the_system_voice_alone() -> None:
    neural = _Stumbles()
    voice = AutoVoice(neural, Pyttsx3Engine())
    try:
        fallen = await voice.synthesize("Here I stumble.")
        after = await voice.synthesize("And here I do not.")
    finally:
        await voice.aclose()
    assert fallen.sample_rate != HIBARI_RATE and voiced(fallen)
    assert after.sample_rate == HIBARI_RATE and voice.uses_neural
    assert neural.said == ["And here I do not."]


async def test_a_voice_asked_for_by_name_goes_to_the_engine_that_has_it(voice: AutoVoice) -> None:
    system = await voice.synthesize("Hello.", voice="gmw/en-us")
    assert system.sample_rate != HIBARI_RATE
    neural = await voice.synthesize("Hello.", voice="heart")
    assert neural.sample_rate == HIBARI_RATE
    names = {v.id for v in await voice.voices()}
    assert {"heart", "gmw/en-us", "sit/cmn"} <= names


async def test_a_session_whose_natural_voice_fails_says_so_and_still_speaks(
    tmp_path: Path,
) -> None:
    from app.agent.storage import InMemoryStorage
    from app.session import VoiceSession
    from tests.llm_servers import Reply, ScriptedChatServer

    with ScriptedChatServer([Reply.text_stream(["Hello there.", " I am here."])]) as server:
        settings = Settings()
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        settings.tts.model_path = tmp_path / "missing.onnx"
        sink = MemorySink()
        session = VoiceSession(settings, sink=sink, storage=InMemoryStorage())
        notices: list[Notice] = []
        session.events.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
        try:
            await session.load_models()
            result = await session.send_text("hi")
        finally:
            await session.aclose()
    said = [n for n in notices if "natural voice could not be loaded" in n.message]
    assert len(said) == 1 and not said[0].error
    assert result.error is None and sink.sample_rate == 22_050 and len(sink.pcm) > 22_050


class _Broken(_Stumbles):
    """A Chinese voice that cannot load (its model missing), or says one sentence badly."""

    def __init__(self, unavailable: bool) -> None:
        super().__init__()
        self.unavailable = unavailable
        self.asked = 0

    async def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None
    ) -> SynthesizedAudio:
        from app.tts import TTSUnavailableError

        self.asked += 1
        if self.unavailable:
            raise TTSUnavailableError("the Chinese voice's model is not installed")
        return await super().synthesize(text, voice, rate)


@pytest.mark.parametrize("unavailable", [True, False])
async def test_a_chinese_voice_that_fails_leaves_chinese_to_the_system_voice(
    unavailable: bool,
) -> None:
    """Unavailable: said once, and never asked again; one sentence it stumbles on: that
    sentence only goes to the system voice. English never goes to it."""
    from app.tts.hibari_engine import HibariEngine

    notices: list[str] = []
    chinese = _Broken(unavailable)
    voice = AutoVoice(HibariEngine(), Pyttsx3Engine(), chinese=chinese, on_notice=notices.append)
    try:
        first = await voice.synthesize("你好，stumble。" if not unavailable else "你好。")
        second = await voice.synthesize("谢谢你。")
        english = await voice.synthesize("Thank you.")
    finally:
        await voice.aclose()
    assert voiced(first) and first.sample_rate != HIBARI_RATE  # the system voice said it
    assert voiced(english) and english.sample_rate == HIBARI_RATE
    if unavailable:
        assert chinese.asked == 1 and second.sample_rate != HIBARI_RATE
        assert len(notices) == 1 and "Chinese voice could not be loaded" in notices[0]
        assert "system voice speaks Chinese instead" in notices[0]
    else:
        assert chinese.said == ["谢谢你。"] and second.sample_rate == HIBARI_RATE
        assert notices == [] and voice.chinese_failure is None

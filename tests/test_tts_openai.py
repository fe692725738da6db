"""The `openai_speech` engine against a loopback server that follows `/v1/audio/speech`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest

from app.tts import StreamingTTSEngine, TTSError, TTSUnavailableError, stream_speech
from app.tts.openai_speech import OpenAISpeechEngine
from tests.tts_servers import SAMPLE_RATE, SECONDS_PER_CHARACTER, SpeechServer, tone

KEY = "sk-" + "test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[SpeechServer]:
    with SpeechServer(api_key=KEY) as srv:
        yield srv


def engine_for(server: SpeechServer, **options: object) -> OpenAISpeechEngine:
    settings: dict[str, object] = {"endpoint": server.base_url, "api_key": KEY, "model": "tts-1"}
    settings.update(options)
    return OpenAISpeechEngine(**settings)  # type: ignore[arg-type]


@pytest.mark.parametrize("audio_format", ["pcm", "wav"])
async def test_a_sentence_comes_back_as_the_servers_audio(
    server: SpeechServer, audio_format: str
) -> None:
    engine = engine_for(server, audio_format=audio_format, voice="nova")
    try:
        audio = await engine.synthesize("Hello there, how are you?")
    finally:
        await engine.aclose()
    expected = tone("Hello there, how are you?", "nova", 1.0)
    assert audio.sample_rate == SAMPLE_RATE
    assert np.array_equal(np.frombuffer(audio.pcm, "<i2"), expected)
    request = server.requests[-1]
    assert (request.method, request.path) == ("POST", "/v1/audio/speech")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json() == {
        "model": "tts-1",
        "input": "Hello there, how are you?",
        "voice": "nova",
        "response_format": audio_format,
        "speed": 1.0,
    }


async def test_audio_streams_before_the_sentence_is_complete() -> None:
    text = "A long sentence that the server sends in many small pieces, slowly."
    with SpeechServer(api_key=KEY, chunk_ms=100, chunk_delay=0.02) as server:
        engine = engine_for(server)
        try:
            assert isinstance(engine, StreamingTTSEngine)
            sent_at_first_chunk = None
            chunks = []
            async for chunk in stream_speech(engine, text):
                if sent_at_first_chunk is None:
                    sent_at_first_chunk = server.chunks_sent
                chunks.append(chunk)
        finally:
            await engine.aclose()
    total = server.chunks_sent
    assert sent_at_first_chunk is not None and sent_at_first_chunk < total / 2
    assert len(chunks) > 5
    duration = sum(c.duration_s for c in chunks)
    assert duration == pytest.approx(len(text) * SECONDS_PER_CHARACTER, abs=0.01)


async def test_the_rate_becomes_the_speed(server: SpeechServer) -> None:
    engine = engine_for(server, rate=350)
    try:
        fast = await engine.synthesize("Quickly now.")
        slow = await engine.synthesize("Quickly now.", rate=100)
    finally:
        await engine.aclose()
    assert [r.json()["speed"] for r in server.requests] == [2.0, pytest.approx(100 / 175)]
    assert slow.duration_s / fast.duration_s == pytest.approx(3.5, rel=0.02)


async def test_an_error_body_is_reported_in_words(server: SpeechServer) -> None:
    engine = engine_for(server, voice="robot")
    try:
        with pytest.raises(TTSError) as caught:
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()
    message = str(caught.value)
    assert "refused the sentence (400)" in message and "Invalid value: 'robot'" in message


async def test_an_unknown_model_says_so(server: SpeechServer) -> None:
    engine = engine_for(server, model="tts-9000")
    try:
        with pytest.raises(TTSUnavailableError, match="tts-9000` does not exist"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_a_wrong_key_is_refused_without_showing_the_key() -> None:
    with SpeechServer(api_key=KEY, echo_key=True) as server:
        engine = engine_for(server, api_key="sk-" + "wrong-key-that-is-secret")
        try:
            with pytest.raises(TTSUnavailableError) as caught:
                await engine.synthesize("Hello.")
        finally:
            await engine.aclose()
    message = str(caught.value)
    assert "refused the API key (HTTP 401)" in message
    assert "sk-" + "wrong-key-that-is-secret" not in message and "****" in message


async def test_a_server_error_is_reported_and_the_next_sentence_works(
    server: SpeechServer,
) -> None:
    server.fail_next("server_error")
    engine = engine_for(server)
    try:
        with pytest.raises(TTSError, match=r"failed \(HTTP 500\): The server had an error"):
            await engine.synthesize("Hello.")
        assert (await engine.synthesize("Hello again.")).pcm
    finally:
        await engine.aclose()


async def test_a_dropped_connection_mid_sentence_is_an_error(server: SpeechServer) -> None:
    server.fail_next("drop")
    engine = engine_for(server)
    received = []
    try:
        with pytest.raises(TTSError, match="closed the connection before the sentence"):
            async for chunk in engine.stream("This sentence will be cut off in the middle."):
                received.append(chunk)
        assert (await engine.synthesize("Still here.")).pcm
    finally:
        await engine.aclose()
    assert received  # the part that arrived was handed out before the cut


async def test_a_wrong_content_type_is_refused(server: SpeechServer) -> None:
    server.fail_next("wrong_content_type")
    engine = engine_for(server)
    try:
        with pytest.raises(TTSError, match="answered with text/html, not audio"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_compressed_audio_is_refused_in_words(server: SpeechServer) -> None:
    engine = engine_for(server)
    engine._format = "mp3"  # type: ignore[assignment]  # a server that ignores the format asked
    try:
        with pytest.raises(TTSError, match="sent audio/mpeg audio"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_a_silent_server_times_out(server: SpeechServer) -> None:
    server.fail_next("silent")
    engine = engine_for(server, timeout_s=0.5)
    try:
        with pytest.raises(TTSError, match="did not answer in time"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_an_unreachable_server_is_an_error_in_words() -> None:
    with SpeechServer() as server:
        endpoint = server.base_url
    engine = OpenAISpeechEngine(endpoint=endpoint, model="tts-1")
    try:
        with pytest.raises(TTSError, match="could not reach the speech server"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_openai_without_a_key_asks_for_one_before_connecting() -> None:
    engine = OpenAISpeechEngine()
    try:
        with pytest.raises(TTSUnavailableError, match="needs an API key"):
            await engine.synthesize("Hello.")
    finally:
        await engine.aclose()


async def test_voices_come_from_a_self_hosted_server_with_languages() -> None:
    listed = ["af_heart", "bm_george", {"id": "custom", "name": "Custom", "language": "de"}]
    with SpeechServer(list_voices=listed) as server:
        engine = OpenAISpeechEngine(endpoint=server.base_url)
        try:
            voices = await engine.voices()
        finally:
            await engine.aclose()
    assert [(v.id, v.languages) for v in voices] == [
        ("af_heart", ("en-us",)),
        ("bm_george", ("en-gb",)),
        ("custom", ("de",)),
    ]


async def test_voices_fall_back_to_openais_list(server: SpeechServer) -> None:
    engine = engine_for(server)
    try:
        voices = await engine.voices()
    finally:
        await engine.aclose()
    assert {"alloy", "nova", "shimmer"} <= {v.id for v in voices}
    assert all(v.languages for v in voices)


async def test_sentences_can_be_synthesised_concurrently(server: SpeechServer) -> None:
    engine = engine_for(server)
    texts = ["One.", "Number two is longer.", "And three is the longest of them all."]
    try:
        clips = await asyncio.gather(*(engine.synthesize(t) for t in texts))
    finally:
        await engine.aclose()
    assert [c.duration_s for c in clips] == sorted(c.duration_s for c in clips)

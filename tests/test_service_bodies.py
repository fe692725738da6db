"""The speech services' answers are read with a limit: a recognition server sending a
transcript of megabytes, a voice server streaming audio without end, or an error page
of megabytes is stopped with a sentence, not held in memory whole."""

from __future__ import annotations

import json

import httpx
import pytest

from app.http_bodies import BodyTooLarge, read_body
from app.speech import SpeechConfig, SpeechProtocolError, SpeechServiceError, create_speech_client
from app.tts import TTSError, openai_speech
from app.tts.openai_speech import OpenAISpeechEngine
from tests.llm_servers import Reply, ScriptedChatServer
from tests.speech_servers import AudioSource, tone

KEY = "sk-" + "test-bodies-0123456789"


async def transcribe(server: ScriptedChatServer) -> str:
    config = SpeechConfig(enabled=True, adapter="openai_transcribe", endpoint=server.base_url)
    client = create_speech_client(config, api_key=KEY)
    assert client is not None
    text = ""
    async for event in client.stream(AudioSource.from_pcm(tone(0.3)).chunks()):
        text = event.text
    return text


async def test_a_transcript_of_megabytes_is_refused() -> None:
    huge = Reply.json({"text": "you " * 600_000})  # 2.4 MB
    refused = pytest.raises(SpeechProtocolError, match="sent more than a transcript")
    with ScriptedChatServer([huge]) as server, refused:
        await transcribe(server)


async def test_a_transcript_streamed_without_a_length_is_refused_too() -> None:
    body = json.dumps({"text": "you " * 600_000}).encode()
    reply = Reply(
        headers={"content-type": "application/json"},
        chunks=[body[i : i + 65536] for i in range(0, len(body), 65536)],
        delay=0.005,
    )
    with ScriptedChatServer([reply]) as server:
        with pytest.raises(SpeechProtocolError, match="sent more than a transcript"):
            await transcribe(server)
        assert server.chunks_sent < len(reply.chunks)  # it stopped reading


async def test_a_huge_error_page_is_cut_to_a_sentence() -> None:
    page = Reply.error(500, "<html><title>Gateway trouble</title>" + "x" * 3_000_000 + "</html>")
    with ScriptedChatServer([page]) as server, pytest.raises(SpeechServiceError) as caught:
        await transcribe(server)
    assert "failed (HTTP 500)" in str(caught.value)
    assert len(str(caught.value)) < 1000


async def test_endless_audio_for_one_sentence_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_speech, "MAX_SENTENCE_AUDIO_BYTES", 480_000)  # 10 s at 24 kHz
    audio = Reply(
        headers={"content-type": "audio/pcm"}, chunks=[b"\0\1" * 24_000] * 100, delay=0.002
    )  # 100 s
    with ScriptedChatServer([audio]) as server:
        engine = OpenAISpeechEngine(endpoint=server.base_url, api_key=KEY)
        try:
            with pytest.raises(TTSError, match="more than ten minutes of audio"):
                await engine.synthesize("Hello.")
        finally:
            await engine.aclose()
        assert server.chunks_sent < 100


async def test_a_huge_voice_server_error_is_cut() -> None:
    error = Reply.error(503, {"error": {"message": "busy " * 500_000}})
    with ScriptedChatServer([error]) as server:
        engine = OpenAISpeechEngine(endpoint=server.base_url, api_key=KEY)
        try:
            with pytest.raises(TTSError) as caught:
                await engine.synthesize("Hello.")
        finally:
            await engine.aclose()
    assert "failed (HTTP 503)" in str(caught.value)
    assert len(str(caught.value)) < 1000


async def test_read_body_stops_at_the_limit() -> None:
    reply = Reply(headers={"content-type": "text/plain"}, chunks=[b"a" * 1000] * 50)
    with ScriptedChatServer([reply, reply]) as server:
        async with httpx.AsyncClient() as http:
            async with http.stream("GET", server.base_url) as response:
                with pytest.raises(BodyTooLarge):
                    await read_body(response, 10_000)
            async with http.stream("GET", server.base_url) as response:
                assert await read_body(response, 10_000, cut=True) == b"a" * 10_000

"""openai_transcribe: OpenAI-compatible `POST /audio/transcriptions` against a loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from app.speech import (
    SpeechAuthError,
    SpeechClient,
    SpeechConfig,
    SpeechConnectionError,
    SpeechError,
    SpeechProtocolError,
    SpeechRateLimitError,
    SpeechServiceError,
    TranscriptionEvent,
    create_speech_client,
)
from app.speech.adapters.openai_transcribe import OpenAITranscribeAdapter
from tests.speech_servers import AudioSource, TranscriptionServer, tone


def client_for(server: TranscriptionServer, **changes: Any) -> SpeechClient:
    fields: dict[str, Any] = {
        "enabled": True,
        "adapter": "openai_transcribe",
        "endpoint": server.base_url,
    }
    fields.update(changes)
    client = create_speech_client(SpeechConfig(**fields), api_key=server.api_key)
    assert client is not None and isinstance(client.adapter, OpenAITranscribeAdapter)
    return client


async def run(client: SpeechClient, pcm: bytes) -> list[TranscriptionEvent]:
    return [e async for e in client.stream(AudioSource.from_pcm(pcm).chunks())]


async def run_failing(client: SpeechClient, error: type[SpeechError]) -> SpeechError:
    events: list[TranscriptionEvent] = []
    with pytest.raises(error) as caught:
        async for event in client.stream(AudioSource.from_pcm(tone(0.5)).chunks()):
            events.append(event)
    assert events == []
    return caught.value


async def test_the_utterance_goes_as_one_multipart_wav_request() -> None:
    pcm = tone(0.7)
    with TranscriptionServer("what is the weather like") as server:
        events = await run(client_for(server), pcm)
    assert events == [TranscriptionEvent(text="what is the weather like", is_final=True)]
    (request,) = server.requests
    assert request.headers["Authorization"] == f"Bearer {server.api_key}"
    assert request.fields == {"model": "whisper-1", "language": "en", "response_format": "json"}
    assert request.filename == "speech.wav" and request.content_type == "audio/wav"
    assert request.pcm() == (pcm, 16000, 1, 2)


async def test_model_and_language_come_from_the_config() -> None:
    with TranscriptionServer() as server:
        await run(client_for(server, model="whisper-large-v3-turbo", language="de-DE"), tone(0.2))
        await run(client_for(server, language=None), tone(0.2))
    assert server.requests[0].fields["model"] == "whisper-large-v3-turbo"
    assert server.requests[0].fields["language"] == "de"
    assert "language" not in server.requests[1].fields


async def test_an_endpoint_with_a_trailing_slash_works() -> None:
    with TranscriptionServer("ok then") as server:
        events = await run(client_for(server, endpoint=server.base_url + "/"), tone(0.2))
    assert events[-1].text == "ok then"


async def test_a_refused_key_is_an_auth_error_that_shows_no_part_of_it() -> None:
    with TranscriptionServer(reply="unauthorized") as server:
        error = await run_failing(client_for(server), SpeechAuthError)
    message = str(error)
    assert "401" in message
    assert server.api_key[:5] not in message and server.api_key[-4:] not in message


async def test_rate_limiting_carries_retry_after() -> None:
    with TranscriptionServer(reply="rate_limited") as server:
        error = await run_failing(client_for(server), SpeechRateLimitError)
    assert isinstance(error, SpeechRateLimitError) and error.retry_after == 7.0


async def test_a_server_error_is_a_service_error() -> None:
    with TranscriptionServer(reply="server_error") as server:
        error = await run_failing(client_for(server), SpeechServiceError)
    assert isinstance(error, SpeechServiceError) and error.code == 500


async def test_a_refused_request_names_the_reason_but_never_the_key() -> None:
    with TranscriptionServer(reply="bad_request") as server:
        error = await run_failing(client_for(server), SpeechServiceError)
    assert "Invalid file format" in str(error) and server.api_key not in str(error)


@pytest.mark.parametrize("reply", ["not_json", "no_text"])
async def test_an_answer_without_a_transcript_is_a_protocol_error(reply: str) -> None:
    with TranscriptionServer(reply=reply) as server:
        await run_failing(client_for(server), SpeechProtocolError)


async def test_a_dropped_connection_is_a_connection_error() -> None:
    with TranscriptionServer(reply="drop") as server:
        await run_failing(client_for(server), SpeechConnectionError)


async def test_a_slow_server_times_out() -> None:
    with TranscriptionServer(reply="slow") as server:
        error = await run_failing(client_for(server, timeout_s=0.3), SpeechConnectionError)
    assert "did not answer" in str(error)


async def test_an_unreachable_server_is_a_connection_error() -> None:
    config = SpeechConfig(
        enabled=True, adapter="openai_transcribe", endpoint="http://127.0.0.1:9/v1"
    )
    client = create_speech_client(config, api_key="sk-" + "test-unreachable-000")
    assert client is not None and isinstance(client.adapter, OpenAITranscribeAdapter)
    error = await run_failing(client, SpeechConnectionError)
    assert "sk-" + "test-unreachable-000" not in str(error)


def test_the_default_endpoint_and_model_are_openais() -> None:
    client = OpenAITranscribeAdapter(
        SpeechConfig(enabled=True, adapter="openai_transcribe"), api_key="k"
    )
    assert client.endpoint == "https://api.openai.com/v1" and client.model == "whisper-1"

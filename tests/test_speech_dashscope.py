"""dashscope_funasr: DashScope's real-time recognition WebSocket protocol, against a
loopback server that follows the public documentation (tests/speech_servers.py)."""

from __future__ import annotations

import json
import re
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
from app.speech.adapters.dashscope_funasr import (
    DEFAULT_MODEL,
    PACKET_BYTES,
    DashScopeFunASRAdapter,
    Transcript,
    join_sentences,
)
from tests.speech_servers import AudioSource, DashScopeServer, tone


def client_for(server: DashScopeServer, **changes: Any) -> SpeechClient:
    fields: dict[str, Any] = {
        "enabled": True,
        "adapter": "dashscope_funasr",
        "endpoint": server.url,
    }
    fields.update(changes)
    client = create_speech_client(SpeechConfig(**fields), api_key=server.api_key)
    assert client is not None and isinstance(client.adapter, DashScopeFunASRAdapter)
    return client


async def run(client: SpeechClient, pcm: bytes, **source: Any) -> list[TranscriptionEvent]:
    return [e async for e in client.stream(AudioSource.from_pcm(pcm, **source).chunks())]


async def run_failing(client: SpeechClient, pcm: bytes, error: type[SpeechError]) -> SpeechError:
    events: list[TranscriptionEvent] = []
    with pytest.raises(error) as caught:
        async for event in client.stream(AudioSource.from_pcm(pcm).chunks()):
            events.append(event)
    assert not any(e.is_final for e in events)
    return caught.value


# ------------------------------------------------------------------ the task


async def test_an_utterance_streams_growing_text_then_one_final() -> None:
    pcm = tone(1.0)
    async with DashScopeServer(("Hello there.", "How are you?"), expected_bytes=len(pcm)) as server:
        events = await run(client_for(server), pcm)
        assert not server.errors
        assert bytes(server.audio) == pcm
    assert events[-1] == TranscriptionEvent(text="Hello there. How are you?", is_final=True)
    assert [e.is_final for e in events].count(True) == 1
    texts = [e.text for e in events[:-1]]
    assert "Hello" in texts[0] and any(t.startswith("Hello there. How") for t in texts)


async def test_run_task_follows_the_documented_shape() -> None:
    async with DashScopeServer() as server:
        await run(client_for(server, language="en-US"), tone(0.3))
        task = server.run_tasks[0]
        authorization = server.handshake_headers[0]["Authorization"]
    assert authorization == f"Bearer {server.api_key}"
    header, payload = task["header"], task["payload"]
    assert header["action"] == "run-task" and header["streaming"] == "duplex"
    assert re.fullmatch(r"[0-9a-f]{32}", header["task_id"])
    assert payload["task_group"] == "audio" and payload["task"] == "asr"
    assert payload["function"] == "recognition" and payload["model"] == DEFAULT_MODEL
    assert payload["parameters"] == {
        "format": "pcm",
        "sample_rate": 16000,
        "language_hints": ["en"],
    }
    assert payload["input"] == {}


async def test_audio_waits_for_task_started_and_finish_task_ends_it() -> None:
    pcm = tone(0.55)
    async with DashScopeServer() as server:
        await run(client_for(server), pcm, chunk=1000)
        assert not server.errors  # the server fails a task that gets audio before task-started
        assert server.actions == ["run-task", "finish-task"]
        assert server.frames == 6  # 100 ms frames, the last one shorter
        assert server.finished


async def test_heartbeat_results_are_skipped() -> None:
    async with DashScopeServer(heartbeats=True) as server:
        events = await run(client_for(server), tone(1.0))
    assert all(e.text for e in events)
    assert events[-1].text == "Hello there. How are you?"


def test_sentences_are_revised_until_they_end_and_joined_by_script() -> None:
    transcript = Transcript()
    transcript.update({"text": "Hello", "sentence_end": False})
    transcript.update({"text": "Hello there.", "sentence_end": True})
    transcript.update({"text": "How", "sentence_end": False})
    assert transcript.text == "Hello there. How"
    numbered = Transcript()
    numbered.update({"sentence_id": 2, "text": "Second.", "sentence_end": True})
    numbered.update({"sentence_id": 1, "text": "First.", "sentence_end": True})
    assert numbered.text == "First. Second."
    assert join_sentences(["你好。", "今天天气怎么样？"]) == "你好。今天天气怎么样？"


def test_packets_are_100_ms() -> None:
    assert PACKET_BYTES == 3200


# ------------------------------------------------------------------ failures


async def test_task_failed_is_a_service_error_with_code_and_message() -> None:
    async with DashScopeServer(fail="failed") as server:
        error = await run_failing(client_for(server), tone(1.0), SpeechServiceError)
    assert isinstance(error, SpeechServiceError) and error.code == "ResponseTimeout"
    assert "request timeout after 23 seconds" in str(error)


async def test_task_failed_at_run_task_ends_before_any_audio() -> None:
    async with DashScopeServer(fail="run_failed", error_code="ModelNotFound") as server:
        await run_failing(client_for(server), tone(1.0), SpeechServiceError)
        assert server.frames == 0


@pytest.mark.parametrize(
    ("code", "error"),
    [("InvalidApiKey", SpeechAuthError), ("Throttling.RateQuota", SpeechRateLimitError)],
)
async def test_task_failed_codes_map_to_typed_errors(code: str, error: type[SpeechError]) -> None:
    async with DashScopeServer(fail="run_failed", error_code=code) as server:
        await run_failing(client_for(server), tone(1.0), error)


async def test_a_refused_key_is_an_auth_error_without_the_key() -> None:
    async with DashScopeServer() as server:
        client = create_speech_client(
            SpeechConfig(enabled=True, adapter="dashscope_funasr", endpoint=server.url),
            api_key="sk-wrong-key-9999999",
        )
        assert client is not None and isinstance(client.adapter, DashScopeFunASRAdapter)
        error = await run_failing(client, tone(0.5), SpeechAuthError)
    assert "sk-wrong-key-9999999" not in str(error)


async def test_an_error_message_never_shows_the_key() -> None:
    fake_key = "sk-" + "dashscope-test-123456"  # split: no committed line looks like a key
    async with DashScopeServer(
        fail="failed", error_code="BadRequest", error_message=f"key {fake_key} is odd"
    ) as server:
        error = await run_failing(client_for(server), tone(1.0), SpeechServiceError)
    assert fake_key not in str(error)


@pytest.mark.parametrize("fail", ["close", "drop"])
async def test_a_socket_closed_mid_stream_is_a_connection_error(fail: str) -> None:
    async with DashScopeServer(fail=fail) as server:
        error = await run_failing(client_for(server), tone(1.0), SpeechConnectionError)
    assert "closed the connection" in str(error)


@pytest.mark.parametrize("fail", ["malformed", "no_event", "binary", "bad_sentence"])
async def test_a_malformed_event_is_a_protocol_error(fail: str) -> None:
    async with DashScopeServer(fail=fail) as server:
        await run_failing(client_for(server), tone(1.0), SpeechProtocolError)


def test_run_task_is_valid_json_without_a_language() -> None:
    config = SpeechConfig(enabled=True, adapter="dashscope_funasr", language=None)
    task = DashScopeFunASRAdapter(config, api_key="k").run_task("0" * 32)
    assert "language_hints" not in json.loads(json.dumps(task))["payload"]["parameters"]

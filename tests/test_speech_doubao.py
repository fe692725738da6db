"""doubao_asr: Volcengine's streaming ASR binary protocol, against a loopback server
that follows the public documentation (tests/speech_servers.py)."""

from __future__ import annotations

import gzip
import struct
import uuid
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
from app.speech.adapters.doubao_asr import DEFAULT_RESOURCE_ID, PACKET_BYTES, DoubaoASRAdapter
from app.speech.adapters.doubao_frames import (
    Compression,
    Flags,
    FrameError,
    MessageType,
    Serialization,
    decode,
    encode,
)
from tests.speech_servers import AudioSource, DoubaoServer, tone


def client_for(server: DoubaoServer, **changes: Any) -> SpeechClient:
    fields: dict[str, Any] = {
        "enabled": True,
        "adapter": "doubao_asr",
        "endpoint": server.url,
        "app_id": server.app_id,
    }
    fields.update(changes)
    client = create_speech_client(SpeechConfig(**fields), api_key=server.access_key)
    assert client is not None and isinstance(client.adapter, DoubaoASRAdapter)
    return client


async def run(client: SpeechClient, pcm: bytes, **source: Any) -> list[TranscriptionEvent]:
    return [e async for e in client.stream(AudioSource.from_pcm(pcm, **source).chunks())]


async def run_failing(
    client: SpeechClient, pcm: bytes, error: type[SpeechError]
) -> tuple[list[TranscriptionEvent], SpeechError]:
    events: list[TranscriptionEvent] = []
    with pytest.raises(error) as caught:
        async for event in client.stream(AudioSource.from_pcm(pcm).chunks()):
            events.append(event)
    assert not any(e.is_final for e in events)
    return events, caught.value


# ------------------------------------------------------------------ framing


def test_the_header_bytes_follow_the_documented_layout() -> None:
    frame = encode(
        MessageType.FULL_CLIENT_REQUEST, b"{}", flags=Flags.POSITIVE_SEQUENCE, sequence=1
    )
    # version 1 | header 1 word; full client request | positive sequence; JSON | gzip; reserved
    assert frame[:4] == bytes([0x11, 0x11, 0x11, 0x00])
    assert struct.unpack(">i", frame[4:8]) == (1,)
    (size,) = struct.unpack(">I", frame[8:12])
    assert size == len(frame) - 12
    assert gzip.decompress(frame[12:]) == b"{}"


def test_the_last_audio_packet_has_the_last_flag_and_a_negative_sequence() -> None:
    frame = encode(
        MessageType.AUDIO_ONLY_REQUEST, b"\x00\x00", flags=Flags.LAST_WITH_SEQUENCE, sequence=-7
    )
    assert frame[1] == 0x23  # audio-only request | last packet with sequence
    parsed = decode(frame)
    assert parsed.is_last and parsed.sequence == -7 and parsed.payload == b"\x00\x00"


def test_an_error_frame_carries_its_code_and_message() -> None:
    frame = encode(
        MessageType.SERVER_ERROR,
        b"empty audio",
        serialization=Serialization.NONE,
        compression=Compression.NONE,
        error_code=45000002,
    )
    assert frame[1] >> 4 == 0b1111
    assert frame[4:8] == struct.pack(">I", 45000002)
    parsed = decode(frame)
    assert parsed.error_code == 45000002 and parsed.error_message == "empty audio"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\x11\x90", "shorter than"),
        (b"\x21\x90\x11\x00" + b"\x00" * 8, "protocol version"),
        (b"\x11\x50\x11\x00" + b"\x00" * 8, "message type"),
        (b"\x14\x90\x11\x00\x00\x00\x00\x00", "header size"),
        (b"\x11\x90\x10\x00" + struct.pack(">I", 10) + b"{}", "payload size"),
        (b"\x11\x90\x11\x00" + struct.pack(">I", 3) + b"abc", "gzip"),
        (b"\x11\x91\x11\x00\x00\x00", "sequence"),
    ],
)
def test_malformed_frames_are_named(data: bytes, words: str) -> None:
    with pytest.raises(FrameError, match=words):
        decode(data)


# ------------------------------------------------------------------ the session


async def test_an_utterance_streams_partials_then_one_final() -> None:
    pcm = tone(1.0)
    async with DoubaoServer("hello there how are you", expected_bytes=len(pcm)) as server:
        events = await run(client_for(server), pcm)
        assert not server.errors
        assert bytes(server.audio) == pcm
    assert events[-1] == TranscriptionEvent(text="hello there how are you", is_final=True)
    partials = [e.text for e in events[:-1]]
    assert partials and all(not e.is_final for e in events[:-1])
    assert "hello there how are you".startswith(partials[0])


async def test_the_handshake_carries_the_documented_headers() -> None:
    async with DoubaoServer() as server:
        await run(client_for(server), tone(0.3))
        headers = server.handshake_headers[0]
    assert headers["X-Api-App-Key"] == "app-123"
    assert headers["X-Api-Access-Key"] == "volc-token-123"
    assert headers["X-Api-Resource-Id"] == DEFAULT_RESOURCE_ID
    uuid.UUID(headers["X-Api-Connect-Id"])


async def test_the_full_client_request_describes_the_audio() -> None:
    async with DoubaoServer() as server:
        await run(client_for(server), tone(0.3))
        request = server.requests[0]
        first = server.raw_frames[0]
    assert first[:4] == bytes([0x11, 0x11, 0x11, 0x00])
    assert request["audio"] == {
        "format": "pcm",
        "codec": "raw",
        "rate": 16000,
        "bits": 16,
        "channel": 1,
    }
    assert request["request"]["model_name"] == "bigmodel"
    assert request["request"]["show_utterances"] is True
    assert request["request"]["result_type"] == "full"


async def test_audio_goes_in_200_ms_packets_with_rising_sequences_and_a_last_flag() -> None:
    pcm = tone(1.1)
    async with DoubaoServer() as server:
        await run(client_for(server), pcm, chunk=1000)
        frames = [decode(raw) for raw in server.raw_frames[1:]]
    assert [f.sequence for f in frames] == [2, 3, 4, 5, 6, -7]
    assert [len(f.payload) for f in frames[:-1]] == [PACKET_BYTES] * 5
    assert len(frames[-1].payload) == len(pcm) - 5 * PACKET_BYTES
    assert [f.is_last for f in frames] == [False] * 5 + [True]
    assert all(f.message_type == MessageType.AUDIO_ONLY_REQUEST for f in frames)


def test_a_language_other_than_chinese_or_english_is_named_in_the_request() -> None:
    config = SpeechConfig(enabled=True, adapter="doubao_asr", app_id="a", language="ja")
    payload = DoubaoASRAdapter(config, api_key="k").request_payload()
    assert payload["audio"]["language"] == "ja-JP"
    english = DoubaoASRAdapter(config.model_copy(update={"language": "en"}), api_key="k")
    assert "language" not in english.request_payload()["audio"]


# ------------------------------------------------------------------ failures


async def test_an_error_frame_is_a_service_error_with_its_code_and_no_final() -> None:
    async with DoubaoServer(fail="error", error_code=45000081) as server:
        _, error = await run_failing(client_for(server), tone(1.0), SpeechServiceError)
    assert isinstance(error, SpeechServiceError) and error.code == 45000081
    assert "waited too long" in str(error)


async def test_a_busy_server_is_a_rate_limit() -> None:
    async with DoubaoServer(fail="error", error_code=55000031, error_message="busy") as server:
        await run_failing(client_for(server), tone(1.0), SpeechRateLimitError)


async def test_an_error_message_never_shows_the_key() -> None:
    async with DoubaoServer(
        fail="error", error_code=45000001, error_message="bad token volc-token-123"
    ) as server:
        _, error = await run_failing(client_for(server), tone(1.0), SpeechServiceError)
    assert "volc-token-123" not in str(error)


@pytest.mark.parametrize("fail", ["close", "drop"])
async def test_a_socket_closed_mid_stream_is_a_connection_error(fail: str) -> None:
    async with DoubaoServer(fail=fail) as server:
        events, error = await run_failing(client_for(server), tone(1.0), SpeechConnectionError)
    assert "closed the connection" in str(error)
    assert len(events) <= 1


@pytest.mark.parametrize("fail", ["malformed", "bad_size", "bad_json", "text"])
async def test_a_malformed_frame_is_a_protocol_error(fail: str) -> None:
    async with DoubaoServer(fail=fail) as server:
        _, error = await run_failing(client_for(server), tone(1.0), SpeechProtocolError)
    assert "Volcengine" in str(error)


async def test_a_server_that_goes_quiet_times_out() -> None:
    async with DoubaoServer(fail="silent") as server:
        _, error = await run_failing(
            client_for(server, timeout_s=0.5), tone(1.0), SpeechConnectionError
        )
    assert "sent nothing" in str(error)


async def test_refused_credentials_are_an_auth_error_without_the_key() -> None:
    async with DoubaoServer(access_key="the-right-one") as server:
        client = create_speech_client(
            SpeechConfig(enabled=True, adapter="doubao_asr", endpoint=server.url, app_id="app-123"),
            api_key="volc-wrong-token",
        )
        assert client is not None and isinstance(client.adapter, DoubaoASRAdapter)
        _, error = await run_failing(client, tone(0.5), SpeechAuthError)
    assert "volc-wrong-token" not in str(error) and "401" in str(error)


async def test_a_missing_app_id_is_said_before_connecting() -> None:
    async with DoubaoServer() as server:
        _, error = await run_failing(client_for(server, app_id=None), tone(0.5), SpeechAuthError)
        assert server.connections == 0
    assert "app_id" in str(error)


async def test_an_unreachable_endpoint_is_a_connection_error() -> None:
    config = SpeechConfig(
        enabled=True, adapter="doubao_asr", endpoint="ws://127.0.0.1:9/x", app_id="a"
    )
    client = create_speech_client(config, api_key="k")
    assert client is not None
    with pytest.raises(SpeechConnectionError, match="Could not connect"):
        async for _ in client.stream(AudioSource.from_pcm(tone(0.2)).chunks()):
            pass

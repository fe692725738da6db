"""Volcengine (Doubao) streaming ASR binary framing, as its public documentation lays it out.

Every message is one binary WebSocket frame; integers are big-endian::

    byte 0   protocol version (4 bits, 0b0001) | header size in 4-byte words (4 bits, 0b0001)
    byte 1   message type (4 bits)             | message-type-specific flags (4 bits)
    byte 2   serialization (4 bits: 0 none, 1 JSON) | compression (4 bits: 0 none, 1 gzip)
    byte 3   reserved
    [header extensions, when the header size is more than one word]
    [sequence, int32, when flags bit 0 is set]
    full client request / audio-only request / full server response:
             payload size (uint32), payload (compressed as byte 2 says)
    error message from the server:
             error code (uint32), message size (uint32), UTF-8 message

Flags: bit 0 = a sequence number follows the header, bit 1 = the last packet
(`0b0010` on the client's last audio, `0b0011` with a negative sequence).
"""

from __future__ import annotations

import gzip
import json
import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

PROTOCOL_VERSION = 0b0001
HEADER_WORDS = 0b0001


class MessageType(IntEnum):
    FULL_CLIENT_REQUEST = 0b0001
    AUDIO_ONLY_REQUEST = 0b0010
    FULL_SERVER_RESPONSE = 0b1001
    SERVER_ACK = 0b1011
    SERVER_ERROR = 0b1111


class Flags(IntEnum):
    NO_SEQUENCE = 0b0000
    POSITIVE_SEQUENCE = 0b0001
    LAST_NO_SEQUENCE = 0b0010
    LAST_WITH_SEQUENCE = 0b0011


class Serialization(IntEnum):
    NONE = 0b0000
    JSON = 0b0001


class Compression(IntEnum):
    NONE = 0b0000
    GZIP = 0b0001


class FrameError(ValueError):
    """Bytes that are not a well-formed frame of this protocol."""


@dataclass(frozen=True)
class Frame:
    message_type: MessageType
    flags: int
    serialization: int
    compression: int
    payload: bytes  # decompressed
    sequence: int | None = None
    error_code: int | None = None

    @property
    def is_last(self) -> bool:
        return bool(self.flags & 0b0010)

    def json(self) -> Any:
        if self.serialization != Serialization.JSON:
            raise FrameError(f"the payload is not JSON (serialization {self.serialization})")
        try:
            return json.loads(self.payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FrameError(f"the JSON payload does not parse: {exc}") from exc

    @property
    def error_message(self) -> str:
        """The text of an error frame (plain UTF-8, or JSON with an `error`/`message`)."""
        text = self.payload.decode("utf-8", "replace").strip()
        if self.serialization == Serialization.JSON:
            try:
                body = json.loads(text)
            except json.JSONDecodeError:
                return text
            if isinstance(body, dict):
                for key in ("error", "message", "msg"):
                    if isinstance(body.get(key), str):
                        return str(body[key])
        return text


def encode(
    message_type: MessageType,
    payload: bytes,
    *,
    flags: int = Flags.NO_SEQUENCE,
    serialization: int = Serialization.JSON,
    compression: int = Compression.GZIP,
    sequence: int | None = None,
    error_code: int | None = None,
) -> bytes:
    """One frame. `payload` is given uncompressed; `sequence` goes out when flags bit 0 is set."""
    header = bytes(
        [
            (PROTOCOL_VERSION << 4) | HEADER_WORDS,
            (int(message_type) << 4) | (flags & 0x0F),
            ((serialization & 0x0F) << 4) | (compression & 0x0F),
            0,
        ]
    )
    body = gzip.compress(payload, compresslevel=1) if compression == Compression.GZIP else payload
    out = bytearray(header)
    if flags & 0b0001:
        out += struct.pack(">i", sequence if sequence is not None else 0)
    if message_type == MessageType.SERVER_ERROR:
        out += struct.pack(">I", error_code or 0)
    out += struct.pack(">I", len(body))
    out += body
    return bytes(out)


def decode(data: bytes) -> Frame:
    """Parse one frame; `FrameError` says what is wrong with a malformed one."""
    if len(data) < 4:
        raise FrameError(f"a frame of {len(data)} bytes is shorter than the 4-byte header")
    version, words = data[0] >> 4, data[0] & 0x0F
    if version != PROTOCOL_VERSION:
        raise FrameError(f"unknown protocol version {version}")
    if words < 1 or words * 4 > len(data):
        raise FrameError(f"header size {words * 4} bytes does not fit a {len(data)}-byte frame")
    try:
        message_type = MessageType(data[1] >> 4)
    except ValueError:
        raise FrameError(f"unknown message type {data[1] >> 4:#06b}") from None
    flags = data[1] & 0x0F
    serialization, compression = data[2] >> 4, data[2] & 0x0F
    if compression not in (Compression.NONE, Compression.GZIP):
        raise FrameError(f"unknown compression {compression}")
    rest = data[words * 4 :]
    sequence = None
    if flags & 0b0001:
        sequence, rest = _take_int(rest, ">i", "sequence")
    error_code = None
    if message_type == MessageType.SERVER_ERROR:
        error_code, rest = _take_int(rest, ">I", "error code")
    if message_type == MessageType.SERVER_ACK and not rest:
        return Frame(message_type, flags, serialization, compression, b"", sequence)
    size, rest = _take_int(rest, ">I", "payload size")
    if size != len(rest):
        raise FrameError(f"the payload size says {size} bytes but {len(rest)} follow")
    payload = rest
    if compression == Compression.GZIP:
        try:
            payload = gzip.decompress(rest)
        except (OSError, EOFError, zlib.error) as exc:
            raise FrameError(f"the gzip payload does not decompress: {exc}") from exc
    return Frame(message_type, flags, serialization, compression, payload, sequence, error_code)


def _take_int(data: bytes, fmt: str, what: str) -> tuple[int, bytes]:
    if len(data) < 4:
        raise FrameError(f"the frame ends before its {what}")
    (value,) = struct.unpack(fmt, data[:4])
    return int(value), data[4:]

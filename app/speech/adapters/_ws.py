"""What the WebSocket adapters share: opening a socket with typed errors, and reading
the service's messages while a task sends the audio."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
)

from app.redaction import redact
from app.speech.errors import (
    SpeechAuthError,
    SpeechConnectionError,
    SpeechRateLimitError,
    SpeechServiceError,
)

# Enough for any transcript message; a service sending more is not speaking the protocol.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


async def open_socket(
    url: str,
    headers: Mapping[str, str],
    *,
    service: str,
    secrets: list[str | None],
    timeout: float,
) -> ClientConnection:
    """A connected WebSocket, or the typed error for why there is none."""
    try:
        return await connect(
            url,
            additional_headers=dict(headers),
            open_timeout=timeout,
            max_size=MAX_MESSAGE_BYTES,
            close_timeout=2.0,
            user_agent_header="companion-speech",
        )
    except InvalidStatus as exc:
        status = exc.response.status_code
        body = redact(exc.response.body.decode("utf-8", "replace")[:300].strip(), secrets)
        detail = f": {body}" if body else ""
        if status in (401, 403):
            raise SpeechAuthError(
                f"{service} refused the credentials (HTTP {status}); check speech.api_key"
                + (" and speech.app_id" if "Volcengine" in service else "")
            ) from exc
        if status == 429:
            raise SpeechRateLimitError(
                f"{service} is rate limiting connections (HTTP 429){detail}"
            ) from exc
        raise SpeechServiceError(
            f"{service} refused the connection (HTTP {status}){detail}", code=status
        ) from exc
    except InvalidURI as exc:
        raise SpeechConnectionError(
            f"speech.endpoint {url!r} is not a ws:// or wss:// address"
        ) from exc
    except (OSError, TimeoutError, InvalidHandshake) as exc:
        reason = redact(str(exc) or type(exc).__name__, secrets)
        raise SpeechConnectionError(f"Could not connect to {service}: {reason}") from exc


def closed_error(service: str, exc: ConnectionClosed, secrets: list[str | None]) -> Exception:
    """The error for a socket that closed before the transcript was complete."""
    frame = exc.rcvd
    how = ""
    if frame is not None:
        reason = f", {frame.reason}" if frame.reason else ""
        how = redact(f" (close code {frame.code}{reason})", secrets)
    return SpeechConnectionError(
        f"{service} closed the connection before the transcript was complete{how}"
    )


async def send(
    ws: ClientConnection, message: str | bytes, *, service: str, secrets: list[str | None]
) -> None:
    """Send one message; a closed socket is a `SpeechConnectionError`."""
    try:
        await ws.send(message)
    except ConnectionClosed as exc:
        raise closed_error(service, exc, secrets) from exc


async def next_message(
    ws: ClientConnection,
    sender: asyncio.Task[None] | None,
    *,
    service: str,
    timeout: float,
    secrets: list[str | None],
) -> str | bytes:
    """The service's next message, while `sender` streams the audio.

    A failure in the sender (bad input, a dropped socket) is raised here at once,
    not after the next message. Once the audio is all sent (or while nothing is
    being sent: `sender` is None), the service has `timeout` seconds per message.
    """
    recv: asyncio.Future[str | bytes] = asyncio.ensure_future(ws.recv())
    try:
        while True:
            if sender is None or sender.done():
                error = sender.exception() if sender is not None else None
                if error is not None:
                    raise error
                done, _ = await asyncio.wait({recv}, timeout=timeout)
                if not done:
                    raise SpeechConnectionError(
                        f"{service} sent nothing for {timeout:g} s after the audio ended"
                    )
            else:
                both: list[asyncio.Future[Any]] = [recv, sender]
                await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
            if recv.done():
                return recv.result()
    except ConnectionClosed as exc:
        raise closed_error(service, exc, secrets) from exc
    finally:
        if not recv.done():
            recv.cancel()
            await asyncio.wait([recv])
        _retrieve(recv)


async def stop_sender(sender: asyncio.Task[None] | None) -> None:
    """Cancel the audio sender (if still running) and wait until it has let go of the audio."""
    if sender is None:
        return
    if not sender.done():
        sender.cancel()
    await asyncio.wait([sender])
    _retrieve(sender)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a finished task's outcome as seen, so asyncio does not log it as lost."""
    if task.done() and not task.cancelled():
        task.exception()


def load_json(text: str | bytes) -> Any:
    """JSON from a text frame; `ValueError` for anything else."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return json.loads(text)

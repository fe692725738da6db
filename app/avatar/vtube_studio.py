"""The VTube Studio bridge: drives a VTube Studio model through its public WebSocket plugin API.

Expressions become `HotkeyTriggerRequest`s (the config maps each expression to one of
the model's hotkeys), and the mouth level of the voice that is playing is injected
into the `MouthOpen` parameter (`InjectParameterDataRequest`) at `rate_hz` while
speaking. The plugin's token is asked for once (VTube Studio shows the user a
prompt), kept in a file, and reused; a lost connection is retried with backoff.

`handle(event)` may be called from any thread (the sound device's callback thread
publishes mouth levels); everything else runs on the bridge's own task.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException
from websockets.protocol import State

from app.events import ExpressionChanged, MouthLevel

__all__ = ["API_NAME", "API_VERSION", "VTubeStudioBridge", "VTubeStudioError"]

log = logging.getLogger(__name__)

API_NAME = "VTubeStudioPublicAPI"
API_VERSION = "1.0"
USER_DENIED = 50  # errorID: the user refused (or revoked) the plugin's access
SPEAKING_TAIL_S = 0.3  # levels stop for this long: the voice has stopped


class VTubeStudioError(Exception):
    """VTube Studio answered with an `APIError` or an unexpected message."""

    def __init__(self, message: str, error_id: int | None = None) -> None:
        super().__init__(message)
        self.error_id = error_id


class VTubeStudioBridge:
    """One plugin connection to VTube Studio; `run()` keeps it up until cancelled."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8001,
        hotkeys: Mapping[str, str] | None = None,
        token_file: Path,
        plugin_name: str = "Companion",
        plugin_developer: str = "Companion",
        mouth_parameter: str = "MouthOpen",
        rate_hz: float = 20.0,
        backoff_s: tuple[float, float] = (0.5, 30.0),
        request_timeout_s: float = 60.0,  # the token request waits for the user's click
        on_notice: Callable[[str], None] | None = None,
        on_token: Callable[[str], None] | None = None,  # a new token (a secret) was given
    ) -> None:
        self.url = f"ws://{host}:{port}"
        self.hotkeys = dict(hotkeys or {})
        self.token_file = token_file
        self.plugin = {"pluginName": plugin_name, "pluginDeveloper": plugin_developer}
        self.mouth_parameter = mouth_parameter
        self.interval_s = 1.0 / max(rate_hz, 1.0)
        self.backoff_s = backoff_s
        self.request_timeout_s = request_timeout_s
        self.on_notice = on_notice
        self.on_token = on_token
        self.authenticated = asyncio.Event()
        self.connections = 0
        self._ids = itertools.count(1)
        self._level = 0.0
        self._level_at = -1.0
        self._expression: str | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what to show (any thread) -------------------------------------------------------

    def handle(self, event: object) -> None:
        """An `EventHub` listener: expressions and mouth levels; other events are ignored."""
        if isinstance(event, MouthLevel):
            self._level, self._level_at = event.level, time.monotonic()
        elif isinstance(event, ExpressionChanged) and event.expression in self.hotkeys:
            self._expression = event.expression
            loop, wake = self._loop, self._wake
            if loop is not None and wake is not None and not loop.is_closed():
                loop.call_soon_threadsafe(wake.set)

    # -- the connection ------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, authenticate and drive the model; reconnect with backoff when it drops."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        delay, reported = self.backoff_s[0], False
        while True:
            try:
                async with connect(self.url, open_timeout=10, max_size=2**20) as ws:
                    self.connections += 1
                    await self._authenticate(ws)
                    self.authenticated.set()
                    if reported:
                        self._notice("VTube Studio is connected again.")
                    delay, reported = self.backoff_s[0], False
                    await self._drive(ws)
            except (OSError, WebSocketException, VTubeStudioError, TimeoutError) as exc:
                self.authenticated.clear()
                if not reported:
                    self._notice(
                        f"VTube Studio at {self.url} is not reachable ({_why(exc)}); "
                        "retrying in the background. Is “Allow Plugin API access” on?"
                    )
                    reported = True
                log.debug("VTube Studio connection failed: %s", exc)
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, self.backoff_s[1])

    async def _authenticate(self, ws: ClientConnection) -> None:
        token = self._stored_token()
        for attempt in range(2):
            if token is None:
                data = await self._request(ws, "AuthenticationTokenRequest", self.plugin)
                token = str(data.get("authenticationToken", ""))
                if not token:
                    raise VTubeStudioError("VTube Studio gave no authentication token")
                self._store_token(token)
            data = await self._request(
                ws, "AuthenticationRequest", {**self.plugin, "authenticationToken": token}
            )
            if data.get("authenticated"):
                return
            if attempt == 0:  # revoked or from another install: ask for a new one once
                token = None
                with contextlib.suppress(OSError):
                    self.token_file.unlink()
        raise VTubeStudioError("VTube Studio refused the plugin's token", USER_DENIED)

    async def _drive(self, ws: ClientConnection) -> None:
        assert self._wake is not None
        sent_level = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval_s)
            self._wake.clear()
            if ws.state is not State.OPEN:  # noticed between requests too, not only on a send
                raise VTubeStudioError("VTube Studio closed the connection")
            expression, self._expression = self._expression, None
            if expression is not None:
                await self._request(
                    ws, "HotkeyTriggerRequest", {"hotkeyID": self.hotkeys[expression]}
                )
            now = time.monotonic()
            speaking = now - self._level_at < SPEAKING_TAIL_S
            level = self._level if speaking else 0.0
            # While speaking, every tick; after, one closing 0 and then nothing, so VTube
            # Studio's own tracking takes the mouth back (it does after 1 s without data).
            if speaking or sent_level > 0.0:
                await self._request(
                    ws,
                    "InjectParameterDataRequest",
                    {
                        "faceFound": False,
                        "mode": "set",
                        "parameterValues": [
                            {"id": self.mouth_parameter, "value": round(level, 3), "weight": 1}
                        ],
                    },
                )
                sent_level = level

    async def _request(
        self, ws: ClientConnection, message_type: str, data: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        request_id = f"companion-{next(self._ids)}"
        message: dict[str, Any] = {
            "apiName": API_NAME,
            "apiVersion": API_VERSION,
            "requestID": request_id,
            "messageType": message_type,
        }
        if data is not None:
            message["data"] = dict(data)
        await ws.send(json.dumps(message))
        async with asyncio.timeout(self.request_timeout_s):
            while True:  # skip anything else VTube Studio sends (events)
                reply = json.loads(await ws.recv())
                if reply.get("requestID") == request_id:
                    break
        body = reply.get("data") or {}
        if reply.get("messageType") == "APIError":
            raise VTubeStudioError(
                f"{message_type}: {body.get('message', 'error')}", body.get("errorID")
            )
        expected = message_type.removesuffix("Request") + "Response"
        if reply.get("messageType") != expected:
            raise VTubeStudioError(f"{message_type} was answered with {reply.get('messageType')}")
        return dict(body)

    # -- the token -----------------------------------------------------------------------

    def _stored_token(self) -> str | None:
        try:
            token = self.token_file.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return token or None

    def _store_token(self, token: str) -> None:
        if self.on_token is not None:
            self.on_token(token)
        self.token_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.token_file.with_suffix(".tmp")
        tmp.write_text(token, encoding="utf-8")
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o600)  # a token lets a program drive the user's model
        tmp.replace(self.token_file)

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__

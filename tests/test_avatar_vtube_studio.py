"""The VTube Studio bridge against a loopback WebSocket server that answers with the
public plugin API's documented messages (DenchiSoft/VTubeStudio README)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from app.avatar.vtube_studio import API_NAME, API_VERSION, VTubeStudioBridge
from app.events import ExpressionChanged, MouthLevel

HOTKEYS = {"joy": "HotkeyJoyID", "sadness": "Sad face"}


@dataclass
class FakeVTubeStudio:
    """Answers like VTube Studio: tokens, authentication, hotkeys, parameter injection."""

    token: str = "token-from-vts-1"
    requests: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    connections: list[ServerConnection] = field(default_factory=list)
    port: int = 0

    def of(self, message_type: str) -> list[dict[str, Any]]:
        return [m for _, m in self.requests if m["messageType"] == message_type]

    async def handler(self, ws: ServerConnection) -> None:
        self.connections.append(ws)
        authenticated = False
        async for raw in ws:
            message = json.loads(raw)
            self.requests.append((time.monotonic(), message))
            kind, data = message["messageType"], message.get("data") or {}
            reply: dict[str, Any] = {}
            if kind == "AuthenticationTokenRequest":
                reply = {"authenticationToken": self.token}
            elif kind == "AuthenticationRequest":
                authenticated = data.get("authenticationToken") == self.token
                reason = "Token valid." if authenticated else "Token invalid."
                reply = {"authenticated": authenticated, "reason": reason}
            elif not authenticated:
                await ws.send(self.answer(message, "APIError", {"errorID": 8, "message": "no"}))
                continue
            elif kind == "HotkeyTriggerRequest":
                reply = {"hotkeyID": data["hotkeyID"]}
            elif kind == "InjectParameterDataRequest":
                reply = {}
            # an event VTube Studio might send in between: the bridge must skip it
            await ws.send(self.answer({"requestID": "event"}, "TestEvent", {}))
            await ws.send(self.answer(message, kind.removesuffix("Request") + "Response", reply))

    @staticmethod
    def answer(request: dict[str, Any], kind: str, data: dict[str, Any]) -> str:
        return json.dumps(
            {
                "apiName": API_NAME,
                "apiVersion": API_VERSION,
                "timestamp": int(time.time() * 1000),
                "messageType": kind,
                "requestID": request["requestID"],
                "data": data,
            }
        )


@pytest.fixture
async def vts() -> AsyncIterator[FakeVTubeStudio]:
    fake = FakeVTubeStudio()
    server: Server = await serve(fake.handler, "127.0.0.1", 0)
    fake.port = server.sockets[0].getsockname()[1]
    try:
        yield fake
    finally:
        server.close()
        await server.wait_closed()


@contextlib.asynccontextmanager
async def running(bridge: VTubeStudioBridge) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(bridge.run())
    try:
        await asyncio.wait_for(bridge.authenticated.wait(), 5)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def bridge_for(vts: FakeVTubeStudio, tmp_path: Path, **kw: Any) -> VTubeStudioBridge:
    return VTubeStudioBridge(
        port=vts.port,
        hotkeys=HOTKEYS,
        token_file=tmp_path / "vts_token",
        backoff_s=(0.05, 0.2),
        **kw,
    )


async def until(condition: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_the_first_run_asks_for_a_token_keeps_it_and_authenticates(
    vts: FakeVTubeStudio, tmp_path: Path
) -> None:
    bridge = bridge_for(vts, tmp_path, plugin_name="Companion", plugin_developer="Tester")
    async with running(bridge):
        pass
    (token_request,) = vts.of("AuthenticationTokenRequest")
    assert token_request["data"] == {"pluginName": "Companion", "pluginDeveloper": "Tester"}
    (auth,) = vts.of("AuthenticationRequest")
    assert auth["data"]["authenticationToken"] == vts.token
    assert (tmp_path / "vts_token").read_text(encoding="utf-8") == vts.token
    for _, message in vts.requests:  # the documented envelope on every request
        assert message["apiName"] == "VTubeStudioPublicAPI" and message["apiVersion"] == "1.0"
        assert 1 <= len(message["requestID"]) <= 64 and message["requestID"].isascii()


async def test_a_kept_token_is_reused_without_asking_the_user_again(
    vts: FakeVTubeStudio, tmp_path: Path
) -> None:
    (tmp_path / "vts_token").write_text(vts.token, encoding="utf-8")
    async with running(bridge_for(vts, tmp_path)):
        pass
    assert not vts.of("AuthenticationTokenRequest")
    assert len(vts.of("AuthenticationRequest")) == 1


async def test_a_revoked_token_is_replaced_by_a_new_one(
    vts: FakeVTubeStudio, tmp_path: Path
) -> None:
    (tmp_path / "vts_token").write_text("revoked", encoding="utf-8")
    async with running(bridge_for(vts, tmp_path)):
        pass
    assert len(vts.of("AuthenticationTokenRequest")) == 1
    assert [m["data"]["authenticationToken"] for m in vts.of("AuthenticationRequest")] == [
        "revoked",
        vts.token,
    ]
    assert (tmp_path / "vts_token").read_text(encoding="utf-8") == vts.token


async def test_expressions_trigger_their_hotkeys(vts: FakeVTubeStudio, tmp_path: Path) -> None:
    bridge = bridge_for(vts, tmp_path)
    async with running(bridge):
        bridge.handle(ExpressionChanged("joy"))
        await until(lambda: len(vts.of("HotkeyTriggerRequest")) == 1)
        bridge.handle(ExpressionChanged("anger"))  # no hotkey for it: nothing is sent
        bridge.handle(ExpressionChanged("sadness"))
        await until(lambda: len(vts.of("HotkeyTriggerRequest")) == 2)
    assert [m["data"]["hotkeyID"] for m in vts.of("HotkeyTriggerRequest")] == [
        "HotkeyJoyID",
        "Sad face",
    ]


async def test_the_mouth_is_injected_at_10_hz_or_more_while_speaking_then_closed(
    vts: FakeVTubeStudio, tmp_path: Path
) -> None:
    bridge = bridge_for(vts, tmp_path, rate_hz=20)
    sent = 0
    async with running(bridge):
        for chunk in range(25):  # a second of 40 ms chunks, as playback reports them
            bridge.handle(MouthLevel(0.8 if chunk // 3 % 2 else 0.3))
            sent += 1
            await asyncio.sleep(0.04)
        stopped_at = len(vts.requests)
        bridge.handle(MouthLevel(0.0))  # playback ended
        await asyncio.sleep(0.6)
        count_after_stop = len(vts.of("InjectParameterDataRequest"))
        await asyncio.sleep(0.3)
        assert len(vts.of("InjectParameterDataRequest")) == count_after_stop  # quiet again
    injections = [
        (t, m["data"]) for t, m in vts.requests if m["messageType"] == "InjectParameterDataRequest"
    ]
    speaking = [
        (t, m["data"])
        for t, m in vts.requests[:stopped_at]
        if m["messageType"] == "InjectParameterDataRequest"
    ]
    # The bridge ticks at 20 Hz and the levels come at 25 Hz: while speaking, nearly every
    # tick injects (counted against the levels sent, so a slow machine slows both).
    assert len(speaking) >= 0.4 * sent
    for _, data in injections:
        assert data["mode"] == "set" and data["faceFound"] is False
        (value,) = data["parameterValues"]
        assert value["id"] == "MouthOpen" and 0.0 <= value["value"] <= 1.0
    assert {0.3, 0.8} <= {d["parameterValues"][0]["value"] for _, d in speaking}
    assert injections[-1][1]["parameterValues"][0]["value"] == 0.0


async def test_a_dropped_connection_is_reconnected_with_the_kept_token(
    vts: FakeVTubeStudio, tmp_path: Path
) -> None:
    notices: list[str] = []
    bridge = bridge_for(vts, tmp_path, on_notice=notices.append)
    async with running(bridge):
        await vts.connections[0].close()
        await until(lambda: bridge.connections == 2 and bridge.authenticated.is_set())
        bridge.handle(ExpressionChanged("joy"))
        await until(lambda: len(vts.of("HotkeyTriggerRequest")) == 1)
    assert len(vts.of("AuthenticationTokenRequest")) == 1  # the user was asked only once
    assert len(vts.of("AuthenticationRequest")) == 2
    assert any("not reachable" in n for n in notices)
    assert any("connected again" in n for n in notices)


async def test_it_keeps_retrying_until_vtube_studio_starts(tmp_path: Path) -> None:
    fake = FakeVTubeStudio()
    server: Server = await serve(fake.handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()  # nothing listens on `port` now
    notices: list[str] = []
    bridge = VTubeStudioBridge(
        port=port, token_file=tmp_path / "t", backoff_s=(0.05, 0.1), on_notice=notices.append
    )
    task = asyncio.create_task(bridge.run())
    try:
        await asyncio.sleep(0.3)
        assert len(notices) == 1 and "not reachable" in notices[0]  # said once, not per retry
        server = await serve(fake.handler, "127.0.0.1", port)
        await asyncio.wait_for(bridge.authenticated.wait(), 5)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        server.close()
        await server.wait_closed()


async def test_the_session_drives_vtube_studio_when_it_is_the_renderer(
    vts: FakeVTubeStudio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.agent.storage import InMemoryStorage
    from app.audio.playback import MemorySink
    from app.config import Settings
    from app.session import VoiceSession
    from tests.llm_servers import Reply, ScriptedChatServer

    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path))
    settings = Settings(
        avatar={
            "renderer": "vtube_studio",
            "vtube_studio": {"port": vts.port, "hotkeys": {"joy": "HotkeyJoyID"}},
        }
    )
    with ScriptedChatServer([Reply.text_stream(["[joy] Hello there, how are you?"])]) as server:
        settings.chat.model = "openai-compatible/scripted"
        settings.chat.base_url = server.base_url
        session = VoiceSession(settings, sink=MemorySink(realtime=True), storage=InMemoryStorage())
        try:
            await session.start(listen=False)
            await asyncio.wait_for(session.vtube_studio.authenticated.wait(), 5)
            result = await session.send_text("hi")
            assert result.error is None
        finally:
            await session.aclose()
    assert (tmp_path / "vtube_studio_token").read_text(encoding="utf-8") == vts.token
    assert [m["data"]["hotkeyID"] for m in vts.of("HotkeyTriggerRequest")] == ["HotkeyJoyID"]
    mouth = [m["data"]["parameterValues"][0]["value"] for m in vts.of("InjectParameterDataRequest")]
    assert len(mouth) >= 10 and max(mouth) > 0.5  # the voice moved the model's mouth
    assert session.vtube_studio.handle not in session.events.listeners  # unsubscribed

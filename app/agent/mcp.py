"""Model Context Protocol servers over stdio: their tools become `Tool`s.

Our own small JSON-RPC 2.0 client (initialize, paginated tools/list, tools/call,
ping) rather than the official SDK, which would bring a web server stack along for
a client that only needs stdio. Not handled: list_changed, resources, prompts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.agent.child_env import child_environment
from app.agent.tools import Tool, ToolContext, ToolError, ToolRegistry, _json_text
from app.media import import_image_async

if TYPE_CHECKING:
    from app.config import McpServerSettings

log = logging.getLogger(__name__)

__all__ = ["McpError", "McpServer", "start_mcp_servers"]


class McpError(Exception):
    """The MCP server failed or answered with a JSON-RPC error."""


@dataclass
class McpServer:
    """A Model Context Protocol server run as a child process, spoken to over stdio
    (newline-delimited JSON-RPC 2.0): `start()` initialises it and lists its tools,
    which become `Tool`s named `<server>__<tool>`."""

    name: str
    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float = 30.0
    protocol_version: str = "2025-06-18"
    _proc: asyncio.subprocess.Process | None = field(default=None, init=False, repr=False)
    _pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict, init=False, repr=False)
    _last_id: int = field(default=0, init=False, repr=False)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list, init=False, repr=False)

    async def start(self) -> list[Tool]:
        argv = list(self.command)
        exe = shutil.which(argv[0]) or argv[0]
        try:
            self._proc = await asyncio.create_subprocess_exec(
                exe,
                *argv[1:],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_environment(self.env),  # never the app's keys
                cwd=self.cwd,
                limit=32 * 1024 * 1024,  # one line carries a whole base64 image
            )
        except OSError as exc:
            raise McpError(f"MCP server {self.name!r} could not start: {exc}") from exc
        self._tasks = [
            asyncio.create_task(self._read_loop(), name=f"mcp-{self.name}-out"),
            asyncio.create_task(self._drain_stderr(), name=f"mcp-{self.name}-err"),
        ]
        await self._request(
            "initialize",
            {
                "protocolVersion": self.protocol_version,
                "capabilities": {},
                "clientInfo": {"name": "companion", "version": "0.1.0"},
            },
        )
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self._request("tools/list", {"cursor": cursor} if cursor else {})
            for spec in page.get("tools", []):
                tools.append(self._tool(spec))
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    def _tool(self, spec: Mapping[str, Any]) -> Tool:
        remote = str(spec["name"])
        local = re.sub(r"[^A-Za-z0-9_-]", "_", f"{self.name}__{remote}")[:64]

        async def call(arguments: dict[str, Any], context: ToolContext) -> list[Any]:
            return await self.call_tool(remote, arguments, context)

        schema = dict(spec.get("inputSchema") or {"type": "object", "properties": {}})
        return Tool(
            local,
            call,
            description=str(spec.get("description", "")),
            timeout_s=self.timeout_s,
            input_schema=schema,
        )

    async def call_tool(
        self, remote: str, arguments: Mapping[str, Any], context: ToolContext
    ) -> list[Any]:
        result = await self._request("tools/call", {"name": remote, "arguments": dict(arguments)})
        out: list[Any] = []
        for item in result.get("content", []):
            kind = item.get("type")
            if kind == "text":
                out.append(str(item.get("text", "")))
            elif kind == "image":
                data = base64.b64decode(item.get("data", ""), validate=False)
                out.append(
                    await import_image_async(
                        data, session_id=context.session_id, root=context.media_root
                    )
                )
            elif kind == "resource" and "text" in item.get("resource", {}):
                out.append(str(item["resource"]["text"]))
            else:
                out.append(f"[{kind} content this app cannot show]")
        if not out and "structuredContent" in result:
            out.append(_json_text(result["structuredContent"]))
        if result.get("isError"):
            raise ToolError(" ".join(o for o in out if isinstance(o, str)) or "the tool failed")
        return out or ["(no output)"]

    async def _send(self, message: Mapping[str, Any]) -> None:
        if self._proc is None or self._proc.stdin is None or self._proc.returncode is not None:
            raise McpError(f"MCP server {self.name!r} is not running.")
        self._proc.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        await self._proc.stdin.drain()

    async def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self._last_id += 1
        request_id = self._last_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            result = await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError as exc:
            raise McpError(f"MCP server {self.name!r} did not answer {method} in time.") from exc
        finally:
            self._pending.pop(request_id, None)
        return result if isinstance(result, dict) else {}

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while line := await self._proc.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    log.info("MCP %s wrote a non-JSON line: %.200s", self.name, line)
                    continue
                if not isinstance(message, dict):
                    continue
                if "method" in message:
                    await self._answer_server(message)
                    continue
                future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                if future is None or future.done():
                    continue
                if "error" in message:
                    err = message["error"] or {}
                    future.set_exception(McpError(f"{self.name}: {err.get('message', err)}"))
                else:
                    future.set_result(message.get("result"))
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(McpError(f"MCP server {self.name!r} stopped."))

    async def _answer_server(self, message: Mapping[str, Any]) -> None:
        if "id" not in message:
            return  # a notification (tools/list_changed, logging): nothing to answer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if message["method"] == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"{message['method']} is not supported"}
        with contextlib.suppress(McpError, ConnectionError):
            await self._send(reply)

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while line := await self._proc.stderr.readline():
            log.debug("MCP %s: %s", self.name, line.decode("utf-8", "replace").rstrip())

    async def aclose(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
            except TimeoutError:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 2.0)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        self._tasks = []


async def start_mcp_servers(
    servers: Mapping[str, McpServerSettings], tools: ToolRegistry
) -> tuple[list[McpServer], list[str]]:
    """Start the enabled servers of the config and offer their tools in `tools`; the
    servers running, and a problem in words for each one that could not start."""
    started: list[McpServer] = []
    problems: list[str] = []
    for name, spec in servers.items():
        if not spec.enabled:
            continue
        command = [spec.command] if isinstance(spec.command, str) else list(spec.command)
        server = McpServer(
            name, [*command, *spec.args], env=spec.env, cwd=spec.cwd, timeout_s=spec.timeout_s
        )
        try:
            offered = await server.start()
        except Exception as exc:
            await server.aclose()
            problems.append(f"The MCP server {name!r} could not start: {exc}")
            continue
        started.append(server)
        for tool in offered:
            tools.add(tool, replace=True)
        log.info("MCP server %s offers %d tool(s)", name, len(offered))
    return started, problems

"""Tools: the registry, the built-ins, user command tools and MCP stdio servers."""

from __future__ import annotations

import base64
import io
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image
from pydantic import BaseModel

from app.agent.builtin_tools import builtin_tools, get_time_tool
from app.agent.mcp import McpServer
from app.agent.tools import (
    ToolContext,
    ToolRegistry,
    clipboard_tool,
    command_tool,
    screenshot_tool,
)
from app.llm import ImageBlock, ToolUseBlock
from app.media import Capture
from tests.test_media_screenshot import xvfb_display  # noqa: F401  (a fixture)


def use(tool_name: str, /, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(name=tool_name, input=arguments)


class Greeting(BaseModel):
    name: str
    times: int = 1


async def test_a_tool_schema_comes_from_its_argument_model() -> None:
    registry = ToolRegistry()

    @registry.tool("greet", Greeting, description="Say hello.")
    async def greet(args: Greeting, ctx: ToolContext) -> str:
        return " ".join([f"Hello {args.name}!"] * args.times)

    spec = registry.specs()[0]
    assert spec.name == "greet" and spec.description == "Say hello."
    assert spec.input_schema["required"] == ["name"]
    assert spec.input_schema["properties"]["times"]["type"] == "integer"
    ok = await registry.run(use("greet", name="Ada", times=2))
    assert ok.text == "Hello Ada! Hello Ada!" and not ok.is_error
    bad = await registry.run(use("greet", times="many"))
    assert bad.is_error and "name: Field required" in bad.text and "times" in bad.text


async def test_get_time_answers_for_a_time_zone_and_refuses_an_unknown_one() -> None:
    registry = ToolRegistry([get_time_tool()])
    result = await registry.run(use("get_time", timezone="Asia/Tokyo"))
    assert '"timezone": "Asia/Tokyo"' in result.text and "+09:00" in result.text
    unknown = await registry.run(use("get_time", timezone="Mars/Olympus"))
    assert unknown.is_error and "Unknown time zone" in unknown.text


async def test_a_command_tool_passes_values_as_arguments_never_to_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    tool = command_tool(
        "echo_back",
        command=[sys.executable, "-c", "import sys; print(sys.argv[1])", "{text}"],
        description="Echo text.",
        parameters={"text": {"type": "string", "description": "what to echo"}},
    )
    assert tool.spec().input_schema["required"] == ["text"]
    registry = ToolRegistry([tool])
    hostile = f"hi; touch {marker}"
    result = await registry.run(use("echo_back", text=hostile))
    assert result.text == hostile and not marker.exists()


async def test_a_failing_command_reports_its_exit_code_and_error() -> None:
    tool = command_tool(
        "fail", command=[sys.executable, "-c", "import sys; sys.exit('broken pipe dream')"]
    )
    result = await ToolRegistry([tool]).run(use("fail"))
    assert result.is_error and "exited with code 1" in result.text and "broken pipe" in result.text


def test_a_command_template_must_name_declared_parameters() -> None:
    with pytest.raises(ValueError, match="not a parameter"):
        command_tool("bad", command="echo {missing}")


async def test_the_clipboard_tool_is_off_unless_allowed() -> None:
    assert "read_clipboard" not in ToolRegistry(builtin_tools())
    assert "read_clipboard" in ToolRegistry(builtin_tools(allow_clipboard=True))


async def test_the_clipboard_is_read_with_the_platform_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "xclip"
    fake.write_text("#!/bin/sh\nprintf 'copied text'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = await ToolRegistry([clipboard_tool()]).run(use("read_clipboard"))
    assert result.text == "copied text" and not result.is_error


async def test_without_a_clipboard_program_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = await ToolRegistry([clipboard_tool()]).run(use("read_clipboard"))
    assert result.is_error and "xclip" in result.text and "install" in result.text


async def test_take_screenshot_returns_an_image_and_reports_the_capture(
    xvfb_display: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    captures: list[Capture] = []
    tool = screenshot_tool(captures_dir=tmp_path / "captures", on_capture=captures.append)
    assert "under_mouse" in str(tool.spec().input_schema)
    context = ToolContext(session_id="s", media_root=tmp_path)
    result = await ToolRegistry([tool]).run(use("take_screenshot"), context)
    assert not result.is_error, result.text
    assert "monitor 1 (1280x720 pixels)" in result.text
    [image] = result.images
    assert isinstance(image, ImageBlock) and image.original.path == captures[0].path
    assert captures[0].width == 1280


async def test_a_declined_screenshot_is_not_taken(tmp_path: Path) -> None:
    asked: list[str] = []

    async def decline(monitor: str) -> bool:
        asked.append(monitor)
        return False

    tool = screenshot_tool(captures_dir=tmp_path, confirm=decline)
    result = await ToolRegistry([tool]).run(use("take_screenshot", monitor="all"))
    assert asked == ["all"] and result.is_error and "did not allow" in result.text
    assert list(tmp_path.iterdir()) == []


async def test_a_screenshot_without_a_display_is_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    registry = ToolRegistry([screenshot_tool(captures_dir=tmp_path)])
    result = await registry.run(use("take_screenshot"))
    assert result.is_error and "no display" in result.text


# ---------------------------------------------------------------- MCP

MCP_SERVER = textwrap.dedent(
    """
    import json, sys
    PNG = sys.argv[1]
    TOOLS = [
        {"name": "echo", "description": "Echo a message.",
         "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                         "required": ["message"]}},
        {"name": "picture", "description": "A picture.", "inputSchema": {"type": "object"}},
        {"name": "broken", "inputSchema": {"type": "object"}},
    ]
    def send(msg):
        sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            assert msg["params"]["protocolVersion"]
            send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}})
        elif method == "notifications/initialized":
            sys.stderr.write("ready\\n")
        elif method == "tools/list":
            page = 0 if not msg["params"].get("cursor") else 1
            result = {"tools": TOOLS[:2] if page == 0 else TOOLS[2:]}
            if page == 0:
                result["nextCursor"] = "2"
            send({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "tools/call":
            name, args = msg["params"]["name"], msg["params"]["arguments"]
            if name == "echo":
                content = [{"type": "text", "text": "echo: " + args["message"]}]
                send({"jsonrpc": "2.0", "id": mid, "result": {"content": content}})
            elif name == "picture":
                content = [{"type": "image", "data": PNG, "mimeType": "image/png"}]
                send({"jsonrpc": "2.0", "id": mid, "result": {"content": content}})
            else:
                send({"jsonrpc": "2.0", "id": mid, "result": {"isError": True,
                      "content": [{"type": "text", "text": "it broke"}]}})
    """
)


async def test_mcp_server_tools_are_listed_and_called(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(MCP_SERVER)
    png = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(png, "PNG")
    encoded = base64.b64encode(png.getvalue()).decode()
    server = McpServer("files", [sys.executable, str(script), encoded])
    try:
        tools = await server.start()
        registry = ToolRegistry(tools)
        assert registry.names == ["files__echo", "files__picture", "files__broken"]
        assert registry.get("files__echo").spec().input_schema["required"] == ["message"]  # type: ignore[union-attr]
        context = ToolContext(session_id="s", media_root=tmp_path)
        echoed = await registry.run(use("files__echo", message="hi"), context)
        assert echoed.text == "echo: hi" and not echoed.is_error
        picture = await registry.run(use("files__picture"), context)
        assert picture.images and picture.images[0].original.path.read_bytes() == png.getvalue()
        broken = await registry.run(use("files__broken"), context)
        assert broken.is_error and "it broke" in broken.text
    finally:
        await server.aclose()


async def test_an_mcp_server_that_cannot_start_raises_in_words(tmp_path: Path) -> None:
    server = McpServer("ghost", [str(tmp_path / "no-such-program")])
    with pytest.raises(Exception, match="could not start"):
        await server.start()
    await server.aclose()


def test_the_configured_limit_applies_to_the_built_in_tools(tmp_path: Path) -> None:
    from app.agent.builtin_tools import builtin_tools

    tools = {
        t.name: t for t in builtin_tools(captures_dir=tmp_path, allow_clipboard=True, timeout_s=3.5)
    }
    assert {n: t.timeout_s for n, t in tools.items() if n != "take_screenshot"} == {
        "get_time": 3.5,
        "calculate": 3.5,
        "read_clipboard": 3.5,
    }
    # The screenshot's own work is limited the same way (the user's answer is not counted).
    assert tools["take_screenshot"].timeout_s == 3.5

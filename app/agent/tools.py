"""Tools the chat model may call: a registry, the built-in tools, user tools and MCP.

A tool is an async function taking a pydantic argument model (its JSON schema is
what the model sees) and a `ToolContext`. `ToolRegistry.run` validates the model's
arguments first, runs the tool with a timeout, and turns every failure (bad
arguments, an exception, a timeout, an unknown name) into an error tool result the
model reads: a tool never crashes a turn. What a tool returns becomes the result:
text, an `ImageBlock`, a list of both, or any JSON-able value (anything else is
shown as its `repr`); its text made valid Unicode (`app.text_input`).

Built-ins here: `take_screenshot` and `read_clipboard` (text only; registered only
when the user allows it); the clock and the calculator, and the set offered, are in
`app.agent.builtin_tools`. User tools come from config as command templates
(`command_tool`), run without a shell. MCP stdio servers (`app.agent.mcp`) add theirs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shlex
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic import ValidationError as ArgumentsError

from app.agent.child_env import child_environment
from app.agent.command_args import PLACEHOLDER, fill_command
from app.llm import ImageBlock, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock
from app.text_input import readable

if TYPE_CHECKING:  # app.media (Pillow, mss) is imported when a screenshot tool is made
    from app.media import Capture, ScreenGrabber

log = logging.getLogger(__name__)

__all__ = [
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "clipboard_tool",
    "command_tool",
    "screenshot_tool",
]

MAX_RESULT_CHARS = 20_000
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolError(Exception):
    """A tool's failure in words the model reads (and may pass on to the user)."""


@dataclass(slots=True)
class ToolContext:
    """What a running tool may know about its turn."""

    session_id: str = "default"
    media_root: Path | None = None  # the data folder images are kept in (None: default)
    call_id: str = ""


ToolFunc = Callable[[Any, ToolContext], Awaitable[Any]]


class _AnyArguments(BaseModel):
    """Arguments checked by the tool itself (MCP servers validate their own)."""

    model_config = ConfigDict(extra="allow")


@dataclass(slots=True)
class Tool:
    """One tool. `args` validates the model's input; `input_schema` overrides its schema."""

    name: str
    func: ToolFunc
    args: type[BaseModel] = _AnyArguments
    description: str = ""
    timeout_s: float = 30.0
    input_schema: dict[str, Any] | None = None
    _spec: ToolSpec | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a tool name is 1-64 letters, digits, _ or -, not {self.name!r}")

    def spec(self) -> ToolSpec:
        if self._spec is None:
            schema = self.input_schema or self.args.model_json_schema()
            schema = {k: v for k, v in schema.items() if k != "title"}
            schema.setdefault("type", "object")
            schema.setdefault("properties", {})
            self._spec = ToolSpec(name=self.name, input_schema=schema, description=self.description)
        return self._spec


def _json_text(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return f"{value!r} (not JSON data; shown as text)"


def _result_blocks(value: Any) -> list[TextBlock | ImageBlock]:
    if value is None:
        return [TextBlock(text="(done)")]
    if isinstance(value, str):
        return [TextBlock(text=value)]
    if isinstance(value, TextBlock | ImageBlock):
        return [value]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, str | TextBlock | ImageBlock) for v in value)
    ):
        return [TextBlock(text=v) if isinstance(v, str) else v for v in value]
    return [TextBlock(text=_json_text(value))]


def _readable(block: TextBlock | ImageBlock) -> TextBlock | ImageBlock:
    """A result's text made valid Unicode (an MCP server's JSON may hold a lone
    `\ud800`): a wire could not send it, nor the history keep it."""
    if isinstance(block, TextBlock):
        text = readable(block.text)
        if text is not block.text:
            return TextBlock(text=text)
    return block


def _clip(blocks: list[TextBlock | ImageBlock]) -> list[TextBlock | ImageBlock]:
    out: list[TextBlock | ImageBlock] = []
    for block in blocks:
        if isinstance(block, TextBlock) and len(block.text) > MAX_RESULT_CHARS:
            kept = block.text[:MAX_RESULT_CHARS]
            block = TextBlock(text=f"{kept}\n[... {len(block.text) - len(kept)} more characters]")
        out.append(block)
    return out


class ToolRegistry:
    """The tools offered to the model, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool, *, replace: bool = False) -> None:
        if tool.name in self._tools and not replace:
            raise ValueError(f"there is already a tool named {tool.name!r}")
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)

    def tool(
        self, name: str, args: type[BaseModel], *, description: str = "", timeout_s: float = 30.0
    ) -> Callable[[ToolFunc], ToolFunc]:
        """Decorator form of `add`."""

        def register(func: ToolFunc) -> ToolFunc:
            self.add(Tool(name, func, args, description, timeout_s))
            return func

        return register

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec() for tool in self._tools.values()]

    async def run(self, call: ToolUseBlock, context: ToolContext | None = None) -> ToolResultBlock:
        """Run one call; every failure becomes an error result (cancellation propagates)."""
        context = context or ToolContext()
        context = ToolContext(context.session_id, context.media_root, call.id)

        def error(message: str) -> ToolResultBlock:
            return ToolResultBlock(
                tool_use_id=call.id, name=call.name, is_error=True, content=readable(message)
            )

        if call.refused is not None:  # cut off, not JSON, or over a limit: never run
            return error(call.refused)
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return error(f"There is no tool named {call.name!r} (tools: {known}).")
        try:
            if tool.args is _AnyArguments:
                arguments: Any = dict(call.input)
            else:
                arguments = tool.args.model_validate(call.input)
        except ArgumentsError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return error(f"Invalid arguments for {call.name}: {problems}")
        try:
            value = await asyncio.wait_for(tool.func(arguments, context), tool.timeout_s)
            blocks = _clip([_readable(block) for block in _result_blocks(value)])
        except TimeoutError:
            return error(f"{call.name} did not finish within {tool.timeout_s:g} seconds.")
        except ToolError as exc:
            return error(str(exc))
        except Exception as exc:
            log.warning("tool %s failed", call.name, exc_info=True)
            return error(f"{call.name} failed: {type(exc).__name__}: {exc}")
        return ToolResultBlock(tool_use_id=call.id, name=call.name, content=blocks)


# ---------------------------------------------------------------- built-in tools


class ScreenshotArgs(BaseModel):
    monitor: Literal["under_mouse", "all"] | int = Field(
        "under_mouse",
        description=(
            "Which screen: 'under_mouse' (the one the user is looking at, the default), "
            "a monitor number from 1, or 'all'."
        ),
    )


CaptureHook = Callable[["Capture"], None]
ConfirmHook = Callable[[str], Awaitable[bool]]


def screenshot_tool(
    *,
    captures_dir: Path,
    on_capture: CaptureHook | None = None,
    confirm: ConfirmHook | None = None,
    timeout_s: float = 20.0,
    confirm_timeout_s: float = 60.0,
    grabber: ScreenGrabber | None = None,
) -> Tool:
    """`take_screenshot`: the capture gets its model copy under the import policy
    (`media.capture_for_model`) and comes back to the model as a tool-result image.
    `confirm` (the user's permission) is asked before each capture; `on_capture` is
    told of each one so the user can see it. `grabber` keeps mss open between
    captures (one is made when not given; its owner closes it)."""
    if grabber is None:
        from app.media import ScreenGrabber

        grabber = ScreenGrabber()

    async def take_screenshot(args: ScreenshotArgs, context: ToolContext) -> list[Any]:
        if args.monitor != "all" and isinstance(args.monitor, int) and args.monitor < 1:
            raise ToolError("Monitors are numbered from 1.")
        which = str(args.monitor)
        if confirm is not None:
            try:
                allowed = await asyncio.wait_for(confirm(which), confirm_timeout_s)
            except TimeoutError:
                allowed = False
            if not allowed:
                raise ToolError("The user did not allow a screenshot this time.")
        capture, image = await grabber.capture_for_model(
            args.monitor,
            folder=captures_dir,
            session_id=context.session_id,
            root=context.media_root,
        )
        if on_capture is not None:
            on_capture(capture)
        from app.media import screenshot_caption

        return [screenshot_caption(capture), image]

    limit = timeout_s + (confirm_timeout_s if confirm is not None else 0.0)
    return Tool(
        "take_screenshot",
        take_screenshot,
        ScreenshotArgs,
        "Look at the user's screen: captures it and shows you the image.",
        limit,
    )


class _NoArgs(BaseModel):
    pass


def _clipboard_commands() -> list[list[str]]:
    if sys.platform.startswith("win"):
        shell = ["-NoProfile", "-NonInteractive", "-Command", "Get-Clipboard -Raw"]
        return [["powershell", *shell], ["pwsh", *shell]]
    if sys.platform == "darwin":
        return [["pbpaste"]]
    commands = []
    if os.environ.get("WAYLAND_DISPLAY"):
        commands.append(["wl-paste", "--no-newline", "--type", "text/plain"])
    commands += [
        ["xclip", "-selection", "clipboard", "-o", "-t", "UTF8_STRING"],
        ["xsel", "--clipboard", "--output"],
    ]
    return commands


async def _read_clipboard(args: _NoArgs, context: ToolContext) -> str:
    for command in _clipboard_commands():
        exe = shutil.which(command[0])
        if exe is None:
            continue
        proc = await asyncio.create_subprocess_exec(
            exe, *command[1:], stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 5.0)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode != 0 or b"\0" in out:
            raise ToolError("The clipboard is empty or does not hold text.")
        text = out.decode("utf-8", "replace")
        return text if text.strip() else "(the clipboard is empty)"
    names = ", ".join(c[0] for c in _clipboard_commands())
    raise ToolError(f"No clipboard program was found (looked for {names}); install one.")


def clipboard_tool() -> Tool:
    return Tool(
        "read_clipboard",
        _read_clipboard,
        _NoArgs,
        "Read the text the user has copied to the clipboard.",
        10.0,
    )


# ---------------------------------------------------------------- user tools (config)

_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def command_tool(
    name: str,
    *,
    command: str | Sequence[str],
    description: str = "",
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    timeout_s: float = 30.0,
    accepts_options: bool = False,
    env: Mapping[str, str] | None = None,
) -> Tool:
    """A user tool that runs a program: `{param}` in an argument is replaced by the
    model's value for that parameter. No shell is involved, so a value can never
    become a second command; a value starting with "-" is refused unless it comes
    after `--` or `accepts_options` (`app.agent.command_args`). Its standard output
    is the result; a non-zero exit is an error with its standard error. It runs with
    `child_environment(env)`: never the app's keys.

    `parameters` maps a name to `{type: string|integer|number|boolean, description,
    required (default true), default}`.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError(f"tool {name!r} has an empty command")
    params = dict(parameters or {})
    fields: dict[str, Any] = {}
    for pname, spec in params.items():
        kind = _TYPES.get(str(spec.get("type", "string")))
        if kind is None:
            raise ValueError(f"tool {name!r}: parameter {pname!r} has an unknown type")
        required = bool(spec.get("required", "default" not in spec))
        default = ... if required else spec.get("default")
        annotation: Any = kind if required else kind | None
        fields[pname] = (annotation, Field(default, description=str(spec.get("description", ""))))
    for arg in argv:
        for placeholder in PLACEHOLDER.findall(arg):
            if placeholder not in params:
                raise ValueError(f"tool {name!r}: {{{placeholder}}} is not a parameter")
    model = create_model(f"{name.title().replace('_', '')}Args", **fields)

    async def run(args: BaseModel, context: ToolContext) -> str:
        values = {k: "" if v is None else str(v) for k, v in args.model_dump().items()}
        try:
            final = fill_command(argv, values, accepts_options=accepts_options)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        exe = shutil.which(final[0]) or final[0]
        try:
            proc = await asyncio.create_subprocess_exec(
                exe,
                *final[1:],
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_environment(env),  # never the app's keys
            )
        except OSError as exc:
            raise ToolError(f"Could not start {final[0]}: {exc}") from exc
        try:
            out, err = await proc.communicate()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        text = out.decode("utf-8", "replace").strip()
        if proc.returncode != 0:
            detail = err.decode("utf-8", "replace").strip() or text
            raise ToolError(f"{name} exited with code {proc.returncode}: {detail[:2000]}")
        return text or "(no output)"

    return Tool(name, run, model, description, timeout_s)

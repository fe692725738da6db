"""The settings of the tools the user adds: commands under `[tools.NAME]` and MCP
servers under `[mcp.servers.NAME]`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class ToolParameter(BaseModel):
    """One value the model passes to a user tool."""

    type: Literal["string", "integer", "number", "boolean"] = Field(
        "string",
        description="The kind of value: string (text), integer, number or boolean (true or false).",
    )
    description: str = Field(
        "", description="What the value means, told to the model so it fills it in well."
    )
    required: bool | None = Field(
        None,
        description="Whether the model must give this value; unset means required "
        "unless a default is given.",
    )
    default: str | int | float | bool | None = Field(
        None, description="The value used when the model gives none."
    )


class UserToolSettings(BaseModel):
    """A user tool: a program run without a shell; `{param}` in an argument is replaced
    by the model's value. Its standard output is what the model reads."""

    command: str | list[str] = Field(
        description="The program to run and its arguments (one line or a list); {name} "
        "in an argument becomes the model's value for name.",
    )
    description: str = Field(
        "", description="What the tool does, told to the model so it knows when to use it."
    )
    parameters: dict[str, ToolParameter] = Field(
        default_factory=dict,
        description="The values the model passes to the tool, by name (each with type, "
        "description, required, default).",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="How long the program may run, in seconds (more than 0, at most "
        "3,600), before it is stopped.",
    )
    accepts_options: bool = Field(
        False,
        description="Let the model's values start with '-', so they can be options of "
        "the program; off, such a value is refused unless it comes after -- in the command.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables for the program, by name (it gets only "
        "these and the basics such as PATH and HOME, never your keys).",
    )


class McpServerSettings(BaseModel):
    """An MCP server started as a child process and spoken to over stdio."""

    command: str | list[str] = Field(
        description="The program that starts the server (alone, or as a list with its arguments).",
    )
    args: list[str] = Field(
        default_factory=list, description="More arguments given to the program."
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables for the server, by name (it gets only "
        "these and the basics such as PATH and HOME, never your keys).",
    )
    cwd: Path | None = Field(
        None,
        description="The folder the server runs in; empty uses the folder the app was started in.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="How long to wait for each answer from the server, in seconds (more "
        "than 0, at most 3,600).",
    )
    enabled: bool = Field(
        True,
        description="Start this server with the app; off keeps it in the file, unused.",
    )


class McpSettings(BaseModel):
    """MCP servers: programs that give the model more tools."""

    servers: dict[str, McpServerSettings] = Field(
        default_factory=dict,
        description="MCP servers that give the model more tools, by name (each with "
        "command, args, env, cwd, timeout_s, enabled).",
    )
